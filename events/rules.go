package events

import (
	"cmp"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// A field's rules are written once, in its check tag (see "Adding a
// field" in the package doc), and read twice: by checkFields, which every
// Validate calls, and by the generator of the JSON Schemas
// (schemagen_test.go).

// field is what missing and checkFields need of a struct field.
type field struct {
	index    int
	name     string // its JSON name
	required bool   // no omitempty, no omitzero, not inline
	rule            // its check tag
}

// fieldsOf returns the members of t if it is a struct of this package,
// else nil.
func fieldsOf(t reflect.Type) []field {
	if t.Kind() != reflect.Struct || t.PkgPath() != ourPkg {
		return nil
	}
	if fs, ok := fieldCache.Load(t); ok {
		return fs.([]field)
	}
	var fs []field
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, ok := sf.Tag.Lookup("json")
		if !sf.IsExported() || !ok || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		opts = "," + opts + ","
		fs = append(fs, field{index: i, name: name, required: !strings.Contains(opts, ",omitempty,") &&
			!strings.Contains(opts, ",omitzero,") && !strings.Contains(opts, ",inline,"), rule: parseRule(sf.Tag.Get("check"))})
	}
	fieldCache.Store(t, fs)
	return fs
}

var fieldCache sync.Map // reflect.Type → []field

var ourPkg = reflect.TypeFor[FieldError]().PkgPath()

// enums are the lists a check tag's enum= names.
var enums = map[string][]string{
	"role":             {RoleUser, RoleAssistant, RoleSystem, RoleTool},
	"direction":        {DirectionInbound, DirectionOutbound},
	"extractionReason": {ReasonQuiet, ReasonTokenCap, ReasonCompressing, ReasonSessionEnded, ReasonSweep, ReasonManual, ReasonRedrive},
	"extractor":        {ExtractorRules, ExtractorLLM},
	"pass":             {PassTurn},
	"kind":             {KindFact, KindPreference, KindRule, KindSkill, KindError, KindContext, KindIdentity},
	"category": {CategoryIdentity, CategoryConfig, CategoryCredential, CategoryDecision, CategorySolution,
		CategoryEvent, CategoryConversation, CategoryTemp, CategoryDebug},
	"outcome":          {OutcomeCompleted, OutcomePartial, OutcomeFailed, OutcomeAbandoned, OutcomeOngoing},
	"episodeSource":    {SourceSessionEnd, SourceCompression, SourceSweep},
	"scratchpadSource": {SourceEpisode, SourcePerson},
	"dailySource":      {SourceExtraction, SourceCompression, SourceMigration},
	"archiveReason":    {ArchiveDecay, ArchiveExpired, ArchiveCap, ArchiveManual},
}

// limits are the names a check tag's max=, min= and items= may use.
var limits = map[string]int64{
	"MaxCount": MaxCount, "MaxAttachmentSize": MaxAttachmentSize, "TierCore": TierCore, "TierKnowledge": TierKnowledge,
	"MaxExtractionTurns": MaxExtractionTurns, "MaxCandidates": MaxCandidates, "MaxMemorySubjectBytes": MaxMemorySubjectBytes,
	"MaxPredicateBytes": MaxPredicateBytes, "MaxMemoryContentBytes": MaxMemoryContentBytes, "MaxReasonBytes": MaxReasonBytes,
	"MaxEpisodeSummaryBytes": MaxEpisodeSummaryBytes, "MaxEpisodeActions": MaxEpisodeActions, "MaxEpisodeEntities": MaxEpisodeEntities,
	"MaxEpisodeTurns": MaxEpisodeTurns, "MaxNoteBytes": MaxNoteBytes, "MaxScratchpadBytes": MaxScratchpadBytes,
	"MaxScratchpadItems": MaxScratchpadItems, "MaxProfileMemories": MaxProfileMemories, "MaxDailySummaryBytes": MaxDailySummaryBytes,
	"MaxMemoryBatch": MaxMemoryBatch, "MaxEmbeddingModelBytes": MaxEmbeddingModelBytes, "MaxEmbeddingDims": MaxEmbeddingDims,
	"MaxEmbeddedVectors": MaxEmbeddedVectors, "MaxIdentityItems": MaxIdentityItems, "MaxReportBytes": MaxReportBytes,
	"MaxReportedTraits": MaxReportedTraits,
}

var calendarDatePat = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)

// rule is a field's check tag, read.
type rule struct {
	kind                 string // id, text, date, hash or ascending
	enum                 []string
	min, max             int64 // max 0: the kind's default
	items                int64 // 0: no limit
	nonempty, set, empty bool
}

func parseRule(tag string) rule {
	var r rule
	for opt := range strings.SplitSeq(tag, ",") {
		key, val, _ := strings.Cut(opt, "=")
		switch key {
		case "", "id", "text", "date", "hash", "ascending":
			r.kind = cmp.Or(key, r.kind)
		case "enum":
			if r.enum = enums[val]; r.enum == nil {
				panic("events: no enum " + val)
			}
		case "max":
			r.max = limit(val)
		case "min":
			r.min = limit(val)
		case "items":
			r.items = limit(val)
		case "nonempty":
			r.nonempty = true
		case "set":
			r.set = true
		case "empty":
			r.empty = true
		default:
			panic("events: unknown check " + opt)
		}
	}
	if r.kind == "id" && r.max == 0 {
		r.max = MaxIDBytes
	}
	return r
}

func limit(s string) int64 {
	if n, ok := limits[s]; ok {
		return n
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		panic("events: no limit " + s)
	}
	return n
}

// checkFields checks the struct p points to by its fields' tags, in their
// order, and a struct within it by its Validate (or its tags, if it has
// none).
func checkFields(p any) error {
	v := reflect.ValueOf(p).Elem()
	for _, f := range fieldsOf(v.Type()) {
		if err := f.check(v.Field(f.index), f.required, f.name); err != nil {
			return within(f.name, err)
		}
	}
	return nil
}

var timeType = reflect.TypeFor[time.Time]()

// check checks one value; required says it must not be empty (a member
// the reader required, or one given through a pointer).
func (r rule) check(v reflect.Value, required bool, name string) error {
	switch {
	case v.Type() == timeType:
		return when(required && v.IsZero(), "", "required")
	case v.Kind() == reflect.Pointer && v.IsNil():
		return nil
	case v.Kind() == reflect.Pointer:
		return r.check(v.Elem(), true, name)
	case v.Kind() == reflect.String:
		return r.text(v.String(), required && !r.empty)
	case v.Kind() == reflect.Int || v.Kind() == reflect.Int64:
		return checkInt(v.Int(), r.min, cmp.Or(r.max, MaxCount))
	case v.Kind() == reflect.Uint64:
		return checkInt(v.Uint(), uint64(r.min), uint64(cmp.Or(r.max, MaxCount)))
	case v.Kind() == reflect.Float64 && !(v.Float() >= 0 && v.Float() <= 1): // as written: the reader compared it
		return fieldErr("", fmt.Sprintf("must be a number from 0 to 1, not %v", v.Float()))
	case v.Kind() == reflect.Struct:
		return validate(v.Addr())
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() != reflect.Uint8:
		return r.list(v, name)
	}
	return nil
}

func (r rule) text(s string, required bool) error {
	switch {
	case s == "":
		return when(required, "", "required")
	case r.enum != nil && !slices.Contains(r.enum, s):
		list := r.enum[len(r.enum)-1]
		if len(r.enum) > 1 {
			list = strings.Join(r.enum[:len(r.enum)-1], ", ") + " or " + list
		}
		return fieldErr("", fmt.Sprintf("must be %s, not %s", list, quote(s)))
	case r.kind == "date" && !calendarDatePat.MatchString(s):
		return fieldErr("", "must be a date like 2025-06-01, not "+quote(s))
	case r.kind == "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return fieldErr("", "is not a real date: "+quote(s))
		}
	case r.kind == "hash" && !textHashPat.MatchString(s):
		return fieldErr("", "must be a TextHash, 32 lower-case hex digits, not "+quote(s))
	case r.max > 0 && len(s) > int(r.max):
		return fieldErr("", fmt.Sprintf("is %d bytes long; the limit is %d", len(s), r.max))
	case r.max > 0 && !utf8.ValidString(s):
		return fieldErr("", "is not valid UTF-8") // only a Go producer's value can be
	case r.kind == "id" && strings.ContainsFunc(s, unicode.IsControl):
		c, _ := utf8.DecodeRuneInString(s[strings.IndexFunc(s, unicode.IsControl):])
		return fieldErr("", fmt.Sprintf("contains the control character %U", c))
	}
	return nil
}

// list checks a list's length and its items: a list of strings or turn
// indices by the field's rule, a list of structs by their Validate.
func (r rule) list(v reflect.Value, name string) error {
	n := v.Len()
	switch {
	case r.items > 0 && int64(n) > r.items:
		noun := strings.ReplaceAll(name, "_", " ")
		switch {
		case r.kind == "ascending":
			noun = "turn indices"
		case !strings.HasSuffix(noun, "s"):
			noun = "items" // demoted, merged, …
		}
		return fieldErr("", fmt.Sprintf("holds more than %d %s", r.items, noun))
	case r.nonempty && n == 0:
		return fieldErr("", "must not be empty")
	}
	if v.Type().Elem().Kind() == reflect.Float32 {
		return nil // a vector: the reader checked each component's range
	}
	var seen map[string]bool
	if r.set {
		seen = make(map[string]bool, n)
	}
	item := rule{kind: r.kind, max: r.max, enum: r.enum}
	return each("", n, func(i int) error {
		e := v.Index(i)
		switch {
		case r.set && seen[e.String()]:
			return fieldErr("", quote(e.String())+" is listed twice")
		case r.set:
			seen[e.String()] = true
		case r.kind == "ascending" && i > 0 && e.Int() <= v.Index(i-1).Int():
			return fieldErr("", fmt.Sprintf("is %d after %d; turn indices must be ascending, each once", e.Int(), v.Index(i-1).Int()))
		}
		return item.check(e, true, "")
	})
}

func checkInt[T int64 | uint64](n, lo, hi T) error {
	if n < lo || n > hi {
		return fieldErr("", fmt.Sprintf("must be an integer from %d to %d, not %d", lo, hi, n))
	}
	return nil
}

// validate checks a struct by its Validate, or by its tags.
func validate(p reflect.Value) error {
	if d, ok := p.Interface().(Data); ok {
		return d.Validate()
	}
	return checkFields(p.Interface())
}
