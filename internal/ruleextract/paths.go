package ruleextract

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/chars"
)

// Paths: "the config is at ./config.yaml", "配置文件在 /etc/app/config.yaml",
// "我的代码目录在 D:\code". A path counts only after a word that places
// something there, so a path mentioned in passing is not a fact; the thing
// placed becomes the subject, folded to a canonical noun where there is one
// so that "配置文件在…" and "the config is at…" supersede each other.
var (
	rePath = regexp.MustCompile(`[A-Za-z]:\\[^\s"'<>|*?，。；：！？（）\p{Han}]*` +
		`|~/[A-Za-z0-9._~@+/\-]*` +
		`|\.{1,2}/[A-Za-z0-9._~@+/\-]+` +
		`|/[A-Za-z0-9._~@+\-]+(?:/[A-Za-z0-9._~@+\-]*)*` +
		`|\.?(?:[A-Za-z0-9_\-]+/)+[A-Za-z0-9_.\-]*\.[A-Za-z0-9]{1,8}` +
		`|\.?[A-Za-z0-9_\-]*\.(?:ya?ml|json|toml|ini|env|conf|cfg|properties|xml)\b|\.(?:env|bashrc|zshrc|profile|npmrc|gitconfig)\b`)

	reZhPathTrigger = regexp.MustCompile(`(?:的(?:路径|目录|位置|地址)|路径|地址)?\s*(在|位于|放在|存在|存放在|保存在|放到了?|移到了?|搬到了?|挪到了?|改到了?|是|为|：|:)\s*$`)
	reEnPathTrigger = regexp.MustCompile(`(?:^|\s)(?:(?:is|are|lives|live|sits|resides|is located|are located|is stored|are stored|is kept|are kept|is saved|are saved|can be found|has moved|have moved|was moved|were moved|moved|is now|are now|now lives)\s+(?:at|in|under|on|to|into)|(?:path|location|directory|dir|folder)\s*(?:is|:|=))\s*$|:\s*$`)
)

func (x *extractor) paths(c *clause) {
	if !strings.ContainsAny(c.text, "/\\") && !mentionsConfigFile(c.low) {
		return
	}
	for _, loc := range rePath.FindAllStringIndex(c.text, 4) {
		start, end := loc[0], loc[1]
		if start > 0 && strings.IndexByte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/.:_-@", c.text[start-1]) >= 0 {
			continue // inside a word or a URL
		}
		path := strings.TrimRight(c.text[start:end], ".,;:)")
		if len(path) < 2 || path == "~/" {
			continue
		}
		// The trigger sits right before the path; matching only the last
		// few dozen bytes keeps the end-anchored patterns cheap.
		from := max(0, start-48)
		for from > 0 && !utf8.RuneStart(c.text[from]) {
			from++
		}
		before, lowBefore := c.text[from:start], c.low[from:start]
		if m := reZhPathTrigger.FindStringSubmatchIndex(before); m != nil && chars.HasHan(c.text[:start]) {
			if x.zhPath(c, c.text[:from+m[0]], before[m[2]:m[3]], path) {
				return
			}
			continue
		}
		if m := reEnPathTrigger.FindStringIndex(lowBefore); m != nil {
			if x.enPath(c, c.text[:from+m[0]], lowBefore[m[0]:m[1]], path) {
				return
			}
		}
	}
}

func (x *extractor) zhPath(c *clause, head, verb, path string) bool {
	thing := head
	mine := false
	for _, p := range []string{"我们的", "我的", "项目的", "这个", "那个", "我们", "我", "用户的"} {
		if strings.HasPrefix(thing, p) {
			mine = p == "我的" || p == "我" || p == "我们的" || p == "我们"
			thing = thing[len(p):]
			break
		}
	}
	thing = strings.TrimPrefix(strings.TrimPrefix(thing, "都"), "把")
	thing = strings.TrimSuffix(strings.TrimSpace(thing), "的")
	for _, adv := range []string{"都", "也", "全", "全部", "现在", "目前"} {
		thing = strings.TrimSuffix(thing, adv)
	}
	thing = trimEdges(thing)
	if thing == "" || runeLen(thing) > 20 || strings.ContainsAny(thing, "，,") {
		return false
	}
	owner := ""
	switch {
	case x.project != "":
		owner = "项目 " + x.project + " 的"
	case mine && x.user:
		owner = "用户的"
	}
	moved := strings.Contains(verb, "到")
	x.add(fact{pred: PredPath, subject: canonicalThing(thing), content: owner + thing + "在 " + path,
		conf: pathConfidence(path), updates: moved, scoped: true})
	return true
}

func (x *extractor) enPath(c *clause, head, verb, path string) bool {
	// "the CI uses GitHub Actions, config is in …": the thing placed is
	// named after the last comma.
	if i := strings.LastIndexAny(head, ",;"); i >= 0 {
		head = head[i+1:]
	}
	words := strings.Fields(head)
	if len(words) > 3 {
		words = words[len(words)-3:]
	}
	// Keep what follows the last determiner: "I think the config file" →
	// "config file"; "my" or "our" there makes it the user's.
	mine := false
	for i := len(words) - 1; i >= 0; i-- {
		if w := strings.ToLower(words[i]); enDeterminers[w] {
			mine = w == "my" || w == "our"
			words = words[i+1:]
			break
		}
	}
	thing := strings.TrimSuffix(strings.Join(words, " "), "'s")
	if thing == "" || len(words) > 3 || !hasASCIILetter(thing) {
		return false
	}
	for _, w := range words {
		if enNotThings[strings.ToLower(w)] {
			return false
		}
	}
	owner := "The "
	switch {
	case x.project != "":
		owner = "Project " + x.project + "'s "
	case mine && x.user:
		owner = "User's "
	}
	moved := strings.Contains(verb, "moved") || strings.Contains(verb, "now")
	be := " is at "
	if strings.HasSuffix(thing, "s") && !strings.HasSuffix(thing, "ss") {
		be = " are at "
	}
	x.add(fact{pred: PredPath, subject: canonicalThing(strings.ToLower(thing)), content: owner + thing + be + path,
		conf: pathConfidence(path), updates: moved, scoped: true})
	return true
}

func mentionsConfigFile(low string) bool {
	for _, ext := range []string{".yaml", ".yml", ".json", ".toml", ".ini", ".env", ".conf", ".cfg", ".properties", ".xml", ".bashrc", ".zshrc", ".profile", ".npmrc", ".gitconfig"} {
		if strings.Contains(low, ext) {
			return true
		}
	}
	return false
}

// pathConfidence: a real path is clear; a bare file name ("config.yaml")
// is a little less so.
func pathConfidence(path string) float64 {
	if strings.ContainsAny(path, "/\\") {
		return confClear
	}
	return confWeak
}

// canonicalThing folds the common things people place on disk, in either
// language, to one subject.
func canonicalThing(thing string) string {
	if canon, ok := thingAliases[thing]; ok {
		return canon
	}
	return strings.ToLower(strings.Join(strings.Fields(thing), " "))
}

var (
	thingAliases = map[string]string{
		"config": "config", "configuration": "config", "config file": "config", "configs": "config",
		"config files": "config", "settings": "config", "settings file": "config", "配置": "config",
		"配置文件": "config", "设置": "config", "设置文件": "config",
		"log": "logs", "logs": "logs", "log file": "logs", "log files": "logs", "日志": "logs",
		"日志文件": "logs", "日志目录": "logs",
		"code": "code", "source": "code", "source code": "code", "repo": "code", "repository": "code",
		"project": "code", "codebase": "code", "代码": "code", "源码": "code", "代码目录": "code",
		"源代码": "code", "仓库": "code", "代码仓库": "code", "项目": "code", "项目目录": "code", "工程": "code",
		"data": "data", "data directory": "data", "data dir": "data", "数据": "data", "数据目录": "data",
		"database": "database", "db": "database", "database file": "database", "db file": "database", "数据库": "database", "数据库文件": "database",
		"env file": "env", ".env": "env", "环境变量文件": "env",
	}
	enDeterminers = setOf("the", "my", "our", "your", "this", "that", "its", "their", "a", "an", "and", "also", "so", "now")
	enNotThings   = setOf("i", "it", "he", "she", "they", "we", "you", "what", "which", "who", "there", "here", "everything", "nothing", "something", "answer", "problem", "issue", "error", "bug", "difference")
)
