package ruleextract

import (
	"regexp"
	"strings"
)

// Tool calls: a package install or a runtime version switch the agent ran
// is a hint about the project's stack. It may have failed, or been a
// one-off, so these go to pending (confidence 0.65).
var (
	reInstall   = regexp.MustCompile(`\b(pip3?|uv pip|uv|poetry|pipenv|npm|pnpm|yarn|bun|go|cargo|brew|apt-get|apt|gem|composer)\s+(install|add|get|i)\s+([^;&|\n"\\]+)`)
	reRuntimeV  = regexp.MustCompile(`\b(nvm|pyenv|rbenv|rustup|volta)\s+(?:use|install|global|local|shell|default|alias default)\s+(?:node@)?v?(\d+(?:\.\d+){0,2})\b`)
	runtimeName = map[string]string{"nvm": "node", "volta": "node", "pyenv": "python", "rbenv": "ruby", "rustup": "rust"}
	// Flags whose next word is a file or URL, not a package.
	installArgFlags = setOf("-r", "--requirement", "-e", "--editable", "-c", "--constraint", "-t", "--target", "-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--prefix", "--registry")
)

func (x *extractor) toolCall(tc ToolCall) {
	in := strings.ToValidUTF8(tc.Input, " ")
	if len(in) > maxInputBytes {
		in = in[:maxInputBytes]
	}
	for _, m := range reInstall.FindAllStringSubmatch(in, 8) {
		mgr, pkgs := m[1], m[3]
		if mgr == "go" && m[2] != "get" && m[2] != "install" || mgr == "uv" && m[2] != "add" {
			continue
		}
		skip := false
		n := 0
		for _, arg := range strings.Fields(pkgs) {
			if skip {
				skip = false
				continue
			}
			if installArgFlags[arg] {
				skip = true
				continue
			}
			if strings.HasPrefix(arg, "-") || strings.HasPrefix(arg, ".") || strings.Contains(arg, "://") || strings.HasPrefix(arg, "/") {
				continue
			}
			name, version := splitPackage(mgr, arg)
			if name == "" || len(name) > 100 {
				continue
			}
			content := "Installed " + name + " with " + mgr
			pred := PredUses
			if version != "" {
				content = "Installed " + name + " " + version + " with " + mgr
				pred = PredVersion
			}
			x.add(fact{pred: pred, subject: strings.ToLower(name), content: content, conf: confToolRun, scoped: true})
			if n++; n == 5 {
				break
			}
		}
	}
	for _, m := range reRuntimeV.FindAllStringSubmatch(in, 4) {
		tool := runtimeName[m[1]]
		x.add(fact{pred: PredVersion, subject: tool, content: "Switched " + tool + " to " + m[2] + " with " + m[1],
			conf: confToolRun, updates: true, scoped: true})
	}
}

// splitPackage separates a pinned version: "django==4.2", "react@18.2.0",
// "github.com/nats-io/nats.go@v1.55.0", "serde@1".
func splitPackage(mgr, arg string) (name, version string) {
	arg = strings.Trim(arg, `'",`)
	for _, sep := range []string{"==", ">=", "~=", "<="} {
		if i := strings.Index(arg, sep); i > 0 {
			if sep == "==" {
				version = arg[i+2:]
			}
			arg = arg[:i]
		}
	}
	if i := strings.LastIndexByte(arg, '@'); i > 0 {
		v := strings.TrimPrefix(arg[i+1:], "v")
		if v != "" && v[0] >= '0' && v[0] <= '9' {
			version = v
		}
		arg = arg[:i]
	}
	if i := strings.IndexByte(arg, '['); i > 0 { // pip extras: "fastapi[all]"
		arg = arg[:i]
	}
	for _, r := range arg {
		if !(r == '/' || r == '.' || r == '-' || r == '_' || r == '@' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return "", ""
		}
	}
	if version != "" && !isVersionish(version) {
		version = ""
	}
	return arg, version
}

func isVersionish(v string) bool {
	if v == "" || len(v) > 32 || v[0] < '0' || v[0] > '9' {
		return false
	}
	for _, r := range v {
		if !(r >= '0' && r <= '9' || r == '.' || r >= 'a' && r <= 'z' || r == '-' || r == '+') {
			return false
		}
	}
	return true
}
