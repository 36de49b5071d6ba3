package events_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/engramhq/engram/events"
)

// The scanner (reader's fast mode) must never accept a document that
// encoding/json's tokenizer refuses, nor read one to other values; what it
// does not read, DecodeData and DecodeStructured read again the old way,
// so their errors are the old ones by construction. These tests hold it
// to that on every sample, the fuzz seeds, their mutations and a list of
// hostile inputs, and check that every valid sample takes the fast way.

// agree fails when the scanner accepts what the tokenizer refuses or
// reads it to another value. It reports whether the scanner accepted.
func agree[T any](t *testing.T, what string, b []byte, scan, token func([]byte) (T, error)) bool {
	t.Helper()
	got, err := scan(b)
	if err != nil {
		return false // any error: decodeTwice reads b again with the tokenizer
	}
	want, werr := token(b)
	if werr != nil {
		t.Fatalf("%s: the scanner accepted what encoding/json refuses (%v)\nin: %q", what, werr, b)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: the scanner read\n%#v\nencoding/json\n%#v\nin: %q", what, got, want, b)
	}
	return true
}

// agreeAll runs b through the three readers: as every type's data, as a
// structured event and as a batch.
func agreeAll(t *testing.T, b []byte) {
	t.Helper()
	for _, typ := range events.Types() {
		agree(t, typ, b,
			func(b []byte) (any, error) { return events.ScanData(typ, b) },
			func(b []byte) (any, error) { return events.TokenData(typ, b) })
	}
	agree(t, "structured", b, events.ScanStructured, events.TokenStructured)
	agree(t, "batch", b, events.ScanBatch, events.TokenBatch)
}

// Every sample, valid or not: the scanner agrees, and reads every valid
// one itself.
func TestScannerAgreesOnSamples(t *testing.T) {
	t.Parallel()
	for _, s := range dataSamples {
		ok := agree(t, s.name, []byte(s.body),
			func(b []byte) (any, error) { return events.ScanData(s.eventType, b) },
			func(b []byte) (any, error) { return events.TokenData(s.eventType, b) })
		if s.field == "" && !ok {
			t.Errorf("%s: the valid sample was left to encoding/json", s.name)
		}
	}
	for _, s := range eventSamples {
		ok := agree(t, s.name, []byte(s.body), events.ScanStructured, events.TokenStructured)
		if s.field == "" && !ok {
			t.Errorf("%s: the valid event was left to encoding/json", s.name)
		}
		agree(t, s.name+" in a batch", []byte("[ "+s.body+" ,\n"+s.body+"]"), events.ScanBatch, events.TokenBatch)
	}
	for _, b := range fuzzSeeds(t) {
		agreeAll(t, b)
	}
}

// hostile are documents made to find where two JSON readers part ways.
var hostile = []string{
	``, ` `, `{`, `}`, `{}`, `[]`, `[`, `null`, `"x"`, `1`, `{} {}`, `{}x`, `{} `, "\ufeff{}", "{}\x00",
	`{"session_id":"s","turn_index":0,"role":"user","content":"x",}`,
	`{"session_id":"s","turn_index":0,"role":"user","content":"x" "channel":"c"}`,
	`{"session_id":"s","turn_index":0,"role":"user","content":"x","content":"y"}`,
	`{"session_id":"s","turn_index":0,"role":"user","content":"x","\u0063ontent":"y"}`,
	`{"session_id":"s","turn_index":0,"role":"user","\u0063ontent":"y"}`,
	`{"session_id":"s","turn_index":0,"role":"user","content":"x","":1}`,
	`{"session_id":"s","turn_index":0,"role":"user","content":"x"}}`,
	`{"session_id":"s","turn_index":0,"role":"user","content":"x"]`,
	`{"session_id":"s","turn_index":0,"role":"user","content":"x"`,
	`{"session_id":"s","turn_index":0,"role":"user","content":"x`,
	`{"session_id":"s","turn_index":0,"role":"user","content":"x\`,
	`{"session_id":"s","turn_index":0,"role":"user","content":"x\u00"}`,
	`{"session_id":"s","turn_index":0,"role":"user","content":"x\u00zz"}`,
	`{"session_id":"s","turn_index":0,"role":"user","content":"\u00E9\u00e9\u0000\u001f\u007f\u2028"}`,
	`{"session_id":"s","turn_index":0,"role":"user","content":"\"\\\/\b\f\n\r\t"}`,
	`{"session_id":"s","turn_index":0,"role":"user","content":"\a"}`,
	`{"session_id":"s","turn_index":0,"role":"user","content":"\x"}`,
	`{"session_id":"s","turn_index":0,"role":"user","content":"\'"}`,
	`{"session_id":"s","turn_index":0,"role":"user","content":"\ud83d\ude00 \uD83D\uDE00"}`,
	`{"session_id":"s","turn_index":0,"role":"user","content":"\ud83d"}`,
	`{"session_id":"s","turn_index":0,"role":"user","content":"\ude00"}`,
	`{"session_id":"s","turn_index":0,"role":"user","content":"\ud83d\u0041"}`,
	`{"session_id":"s","turn_index":0,"role":"user","content":"\ud83d\ud83d"}`,
	`{"session_id":"s","turn_index":0,"role":"user","content":"\ude00\ude00"}`,
	`{"session_id":"s","turn_index":0,"role":"user","content":"\udbff\udfff\ud800\udc00"}`,
	`{"session_id":"s","turn_index":0,"role":"user","tool_calls":[{"name":"n","input":"\udc00\udc00"}]}`,
	`{"session_id":"s","turn_index":0,"role":"user","content":"\ud83d\\ude00"}`,
	`{"session_id":"s","turn_index":0,"role":"user","content":"\\ud83d"}`,
	"{\"session_id\":\"s\",\"turn_index\":0,\"role\":\"user\",\"content\":\"tab\there\"}",
	"{\"session_id\":\"s\",\"turn_index\":0,\"role\":\"user\",\"content\":\"nl\nhere\"}",
	"{\"session_id\":\"s\",\"turn_index\":0,\"role\":\"user\",\"content\":\"del\x7fhere\"}",
	"{\"session_id\":\"s\",\"turn_index\":0,\"role\":\"user\",\"content\":\"\xff\"}",
	"{\"session_id\":\"s\",\"turn_index\":0,\"role\":\"user\",\"content\":\"\xc0\x80\"}",
	"{\"session_id\":\"s\",\"turn_index\":0,\"role\":\"user\",\"content\":\"\xed\xa0\x80\"}",
	"{\"session_id\":\"s\",\"turn_index\":0,\"role\":\"user\",\"content\":\"\xe4\xb8\"}",
	"{\"session_id\":\"s\",\"turn_index\":0,\"role\":\"user\",\"content\":\"\xe4\xb8\\n\xad\"}",
	"{\"session_id\":\"s\",\"turn_index\":0,\"role\":\"user\",\"content\":\"中文 \xf0\x9f\x98\x80\"}",
	"{\"session_id\":\"s\",\"turn_index\":0,\"role\":\"user\",\"content\":\"x\"}\xff",
	"\t\r\n {\"session_id\" \t:\n\"s\" , \"turn_index\"\r:\r0,\"role\":\"user\",\"content\":\"x\"}\n\t ",
	"\v{\"session_id\":\"s\",\"turn_index\":0,\"role\":\"user\",\"content\":\"x\"}",
	"{\"session_id\":\"s\",\"turn_index\":0,\"role\":\"user\",\"content\":\"x\"}\f",
	"{\"session_id\":\"s\",\"turn_index\":0,\"role\":\"user\",\"content\":\"x\"}\u00a0",
	`{"session_id":"s","turn_index":-0,"role":"user","content":"x"}`,
	`{"session_id":"s","turn_index":1.0,"role":"user","content":"x"}`,
	`{"session_id":"s","turn_index":1e2,"role":"user","content":"x"}`,
	`{"session_id":"s","turn_index":1E+2,"role":"user","content":"x"}`,
	`{"session_id":"s","turn_index":10e-1,"role":"user","content":"x"}`,
	`{"session_id":"s","turn_index":1.5,"role":"user","content":"x"}`,
	`{"session_id":"s","turn_index":-1,"role":"user","content":"x"}`,
	`{"session_id":"s","turn_index":01,"role":"user","content":"x"}`,
	`{"session_id":"s","turn_index":1.,"role":"user","content":"x"}`,
	`{"session_id":"s","turn_index":.5,"role":"user","content":"x"}`,
	`{"session_id":"s","turn_index":1e,"role":"user","content":"x"}`,
	`{"session_id":"s","turn_index":1e+,"role":"user","content":"x"}`,
	`{"session_id":"s","turn_index":-,"role":"user","content":"x"}`,
	`{"session_id":"s","turn_index":+1,"role":"user","content":"x"}`,
	`{"session_id":"s","turn_index":0x1,"role":"user","content":"x"}`,
	`{"session_id":"s","turn_index":1 2,"role":"user","content":"x"}`,
	`{"session_id":"s","turn_index":99999999999999999999,"role":"user","content":"x"}`,
	`{"session_id":"s","turn_index":1e99999999999999999999,"role":"user","content":"x"}`,
	`{"session_id":"s","turn_index":"1","role":"user","content":"x"}`,
	`{"session_id":"s","turn_index":null,"role":"user","content":"x"}`,
	`{"session_id":"s","turn_index":true,"role":"user","content":"x"}`,
	`{"session_id":null,"turn_index":0,"role":"user","content":"x"}`,
	`{"session_id":"s","turn_index":0,"role":"user","tool_results":[{"tool_call_id":"c","is_error":true}]}`,
	`{"session_id":"s","turn_index":0,"role":"user","tool_results":[{"tool_call_id":"c","is_error":tru}]}`,
	`{"session_id":"s","turn_index":0,"role":"user","tool_results":[{"tool_call_id":"c","is_error":truex}]}`,
	`{"session_id":"s","turn_index":0,"role":"user","tool_results":[{"tool_call_id":"c","is_error":false}],}`,
	`{"session_id":"s","turn_index":0,"role":"user","tool_results":[{"tool_call_id":"c","is_error":null}]}`,
	`{"session_id":"s","turn_index":0,"role":"user","tool_results":[{"tool_call_id":"c"},]}`,
	`{"session_id":"s","turn_index":0,"role":"user","tool_results":[,]}`,
	`{"session_id":"s","turn_index":0,"role":"user","tool_results":[]}`,
	`{"session_id":"s","turn_index":0,"role":"user","tool_calls":[{"name":"n","input":{"a":[1,-2.5e3,"x",true,false,null,{},[]],"b":{"c":{}}}}]}`,
	`{"session_id":"s","turn_index":0,"role":"user","tool_calls":[{"name":"n","input":{"a":1,"a":2}}]}`,
	`{"session_id":"s","turn_index":0,"role":"user","tool_calls":[{"name":"n","input": "x" }]}`,
	`{"session_id":"s","turn_index":0,"role":"user","tool_calls":[{"name":"n","input":{"a":}}]}`,
	`{"session_id":"s","turn_index":0,"role":"user","tool_calls":[{"name":"n","input":{"a" 1}}]}`,
	`{"session_id":"s","turn_index":0,"role":"user","tool_calls":[{"name":"n","input":{1:1}}]}`,
	`{"session_id":"s","turn_index":0,"role":"user","tool_calls":[{"name":"n","input":[1,]}]}`,
	`{"session_id":"s","turn_index":0,"role":"user","tool_calls":[{"name":"n","input":{"a":1,}}]}`,
	`{"session_id":"s","turn_index":0,"role":"user","tool_calls":[{"name":"n","input":{"a":1]}]}`,
	`{"session_id":"s","turn_index":0,"role":"user","tool_calls":[{"name":"n","input":[1}]}]}`,
	`{"session_id":"s","turn_index":0,"role":"user","tool_calls":[{"name":"n","input":nul}]}`,
	`{"session_id":"s","turn_index":0,"role":"user","tool_calls":[{"name":"n","input":"\ud800"}]}`,
	`{"session_id":"s","turn_index":0,"role":"user","tool_calls":[{"name":"n","input":{"\ud800":1}}]}`,
	"{\"session_id\":\"s\",\"turn_index\":0,\"role\":\"user\",\"tool_calls\":[{\"name\":\"n\",\"input\":\"\xff\"}]}",
	"{\"session_id\":\"s\",\"turn_index\":0,\"role\":\"user\",\"tool_calls\":[{\"name\":\"n\",\"input\":\"a\x01\"}]}",
	`{"specversion":"1.0","id":"e1","source":"/a","type":"turn.recorded","user":"u","data":{"session_id":"s","turn_index":0,"role":"user","content":"x"}}`,
	`{"specversion":"1.0","id":"e1","source":"/a","type":"turn.recorded","user":"u","data":{"session_id":"s","turn_index":0,"role":"user","content":"x"},"data":{}}`,
	`{"specversion":"1.0","id":"e1","source":"/a","type":"turn.recorded","user":"u","data":[]}`,
	`{"specversion":"1.0","id":1,"source":"/a","type":"turn.recorded","user":"u","data":{}}`,
	`{"specversion":"1.0","\u0069d":"e1","id":"e2","source":"/a","type":"turn.recorded","user":"u","data":{}}`,
	`{"specversion":"1.0","id":"e1","source":"/a","type":"turn.recorded","user":"u","data":{"session_id":"s","turn_index":0,"role":"user","content":"x"}`,
	`[{"a":1},{"b":[2]},"x",3,null,true]`,
	`[{"a":1},]`,
	`[{"a":1}`,
	`[{"a":1}]]`,
	`[[[[]]]]`,
}

func TestScannerAgreesOnHostileInput(t *testing.T) {
	t.Parallel()
	for _, h := range hostile {
		agreeAll(t, []byte(h))
	}
	for _, depth := range []int{999, 1000, 1001, 10000, 10001} {
		input := strings.Repeat("[", depth) + strings.Repeat("]", depth)
		b := []byte(`{"session_id":"s","turn_index":0,"role":"user","tool_calls":[{"name":"n","input":` + input + `}]}`)
		agree(t, fmt.Sprintf("depth %d", depth), b,
			func(b []byte) (any, error) { return events.ScanData(events.TypeTurnRecorded, b) },
			func(b []byte) (any, error) { return events.TokenData(events.TypeTurnRecorded, b) })
	}
}

// Mutations of every sample: a byte taken out, put in or replaced, at
// positions drawn from a fixed seed.
func TestScannerAgreesOnMutations(t *testing.T) {
	t.Parallel()
	inserts := []string{`"`, `\`, `,`, `:`, `{`, `}`, `[`, `]`, ` `, "\n", "0", "-", ".", "e", "+", "n",
		"\x00", "\x1f", "\x7f", "\xff", "\xc3", "\xe4\xb8", `\u`, `\ud800`, `\udc00`, `\"`, `\\`, `\/`, "1e400"}
	rng := rand.New(rand.NewPCG(1, 2))
	perSample := 40
	if testing.Short() {
		perSample = 8
	}
	check := func(typ string, body string) {
		if len(body) == 0 || len(body) > 16<<10 {
			return
		}
		for range perSample {
			i := rng.IntN(len(body) + 1)
			var b string
			switch k := rng.IntN(3); {
			case k == 0 && i < len(body):
				b = body[:i] + body[i+1:]
			case k == 1 && i < len(body):
				b = body[:i] + inserts[rng.IntN(len(inserts))] + body[i+1:]
			default:
				b = body[:i] + inserts[rng.IntN(len(inserts))] + body[i:]
			}
			if typ != "" {
				agree(t, typ, []byte(b),
					func(b []byte) (any, error) { return events.ScanData(typ, b) },
					func(b []byte) (any, error) { return events.TokenData(typ, b) })
				continue
			}
			agree(t, "structured", []byte(b), events.ScanStructured, events.TokenStructured)
			agree(t, "batch", []byte("["+b+"]"), events.ScanBatch, events.TokenBatch)
		}
	}
	for _, s := range dataSamples {
		check(s.eventType, s.body)
	}
	for _, s := range eventSamples {
		check("", s.body)
	}
}

// FuzzScanner: on any input, the scanner agrees with encoding/json's
// tokenizer as data of each type, as a structured event and as a batch.
func FuzzScanner(f *testing.F) {
	for _, s := range dataSamples {
		if len(s.body) < 4<<10 {
			f.Add([]byte(s.body))
		}
	}
	for _, s := range eventSamples {
		if len(s.body) < 4<<10 {
			f.Add([]byte(s.body))
		}
	}
	for _, h := range hostile {
		f.Add([]byte(h))
	}
	f.Fuzz(func(t *testing.T, b []byte) { agreeAll(t, b) })
}

func fuzzSeeds(t *testing.T) [][]byte {
	t.Helper()
	files, err := filepath.Glob("testdata/fuzz/*/*")
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		_, arg, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
		lit, ok := strings.CutPrefix(arg, "[]byte(")
		if !ok {
			continue
		}
		body, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, []byte(body))
	}
	return out
}

// isRFC3339 stands for the pattern the schema holds.
func TestIsRFC3339(t *testing.T) {
	t.Parallel()
	valid := []string{"2025-01-02T15:04:05Z", "2025-01-02T15:04:05.1Z", "2025-01-02T15:04:05.123456789+05:30",
		"0000-00-00T00:00:00-00:00", "2025-13-45T99:99:99Z"}
	odd := []string{"", "Z", "2025-01-02T15:04:05", "2025-01-02t15:04:05Z", "2025-01-02T15:04:05z",
		"2025-01-02T15:04:05.Z", "2025-01-02T15:04:05.1234567890Z", "2025-01-02 15:04:05Z",
		"2025-01-02T15:04:05+0530", "2025-01-02T15:04:05+05:3", "2025-01-02T15:04:05+05:300",
		"2025-01-02T15:04:05Z ", " 2025-01-02T15:04:05Z", "+2025-01-02T15:04:05Z", "2025-1-02T15:04:05Z",
		"２０２５-01-02T15:04:05Z", "2025-01-02T15:04:05.+05:30", "2025-01-02T15:04:05.1a", "2025-01-02T15:04:05ZZ"}
	rng := rand.New(rand.NewPCG(3, 4))
	const alphabet = "0123456789-:T.Z+z t"
	for range 20000 {
		s := []byte(valid[rng.IntN(len(valid))])
		for range 1 + rng.IntN(3) {
			i := rng.IntN(len(s) + 1)
			c := alphabet[rng.IntN(len(alphabet))]
			switch rng.IntN(3) {
			case 0:
				if i < len(s) {
					s = append(s[:i:i], s[i+1:]...)
				}
			case 1:
				if i < len(s) {
					s[i] = c
				}
			default:
				s = append(s[:i:i], append([]byte{c}, s[i:]...)...)
			}
		}
		odd = append(odd, string(s))
	}
	for _, s := range append(valid, odd...) {
		if got, want := events.IsRFC3339(s), events.RFC3339.MatchString(s); got != want {
			t.Fatalf("isRFC3339(%q)=%v, the pattern says %v", s, got, want)
		}
	}
}
