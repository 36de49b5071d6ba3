package app

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/quiet"
)

// nodeModules installs npm packages (name → version) once per set into a
// cache directory kept between runs ($ENGRAM_NPM_CACHE, else the user's
// cache directory), and returns a fresh directory for a test's scripts
// whose node_modules are those packages, and this repository's packages
// in local (name → directory, relative to this package) as npm would
// install them. It skips the test, saying why, when node or npm is
// missing or the registry cannot be reached.
func nodeModules(t *testing.T, deps map[string]string, local map[string]string) (node, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed (apt-get install nodejs npm; .ci/run installs them when it can)")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed (apt-get install npm; .ci/run installs it when it can)")
	}
	pkg, _ := json.MarshalIndent(map[string]any{"name": "engram-test-deps", "private": true, "type": "module",
		"dependencies": deps}, "", "  ")
	sum := sha256.Sum256(pkg)
	root := os.Getenv("ENGRAM_NPM_CACHE")
	if root == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		root = filepath.Join(cache, "engram-tests", "npm")
	}
	cached := filepath.Join(root, hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(cached, "node_modules", ".engram-complete")); err != nil {
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Fatal(err)
		}
		// Installed beside, then renamed: a run cut short leaves no half
		// install for the next to trust.
		tmp, err := os.MkdirTemp(root, "install-")
		if err != nil {
			t.Fatal(err)
		}
		defer quiet.RemoveAll(tmp)
		if err := os.WriteFile(filepath.Join(tmp, "package.json"), pkg, 0o644); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		cmd := exec.CommandContext(t.Context(), npm, "install", "--no-audit", "--no-fund", "--loglevel=error",
			"--cache", filepath.Join(root, ".npm"))
		cmd.Dir = tmp
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("npm install %v failed (offline?), so this test cannot run: %v\n%.2000s", deps, err, out)
		}
		t.Logf("npm install %v: %v", deps, time.Since(start).Round(time.Millisecond))
		if err := os.WriteFile(filepath.Join(tmp, "node_modules", ".engram-complete"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, cached); err != nil && !isExist(err) {
			t.Fatal(err)
		}
	}
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"type":"module"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if len(local) == 0 {
		if err := os.Symlink(filepath.Join(cached, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
			t.Fatal(err)
		}
		return node, dir
	}
	// The cached packages by link, one by one, beside copies of the local
	// ones: a module's imports resolve from where its file really is, so a
	// local package must sit in this node_modules to find the others.
	linkEntries(t, filepath.Join(cached, "node_modules"), filepath.Join(dir, "node_modules"))
	for name, src := range local {
		installLocal(t, src, filepath.Join(dir, "node_modules", filepath.FromSlash(name)))
	}
	return node, dir
}

// linkEntries makes dst a directory of links to src's entries, and of a
// scope's (@scope/name) entries.
func linkEntries(t *testing.T, src, dst string) {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "@") && e.IsDir() {
			linkEntries(t, filepath.Join(src, e.Name()), filepath.Join(dst, e.Name()))
			continue
		}
		if err := os.Symlink(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
}

// installLocal copies a package of this repository as npm would pack it:
// package.json and the files it lists.
func installLocal(t *testing.T, src, dst string) {
	t.Helper()
	var pkg struct{ Files []string }
	b, err := os.ReadFile(filepath.Join(src, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatalf("%s/package.json: %v", src, err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range append([]string{"package.json"}, pkg.Files...) {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatalf("%s lists %s: %v", filepath.Join(src, "package.json"), f, err)
		}
		if err := os.WriteFile(filepath.Join(dst, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// isExist reports a rename that lost to another run's identical install.
func isExist(err error) bool {
	return os.IsExist(err) || strings.Contains(err.Error(), "directory not empty")
}

// copyInto copies files (paths relative to this package) into dir.
func copyInto(t *testing.T, dir string, files ...string) {
	t.Helper()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// nodeTest runs node --test on script in dir with env, and fails the test
// unless every test in it passed and at least want ran.
func nodeTest(t *testing.T, node, dir, script string, want int, env ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), node, "--test", "--test-reporter=tap", script)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + dir}, env...)
	out, err := cmd.CombinedOutput()
	var pass, fail, skipped int
	for _, line := range strings.Split(string(out), "\n") {
		for prefix, n := range map[string]*int{"# pass ": &pass, "# fail ": &fail, "# skipped ": &skipped} {
			if v, ok := strings.CutPrefix(line, prefix); ok {
				_ = json.Unmarshal([]byte(strings.TrimSpace(v)), n)
			}
		}
	}
	if err != nil || fail > 0 || skipped > 0 || pass < want {
		t.Fatalf("node --test %s: %v; %d passed (want %d), %d failed, %d skipped\n%s", script, err, pass, want, fail, skipped, out)
	}
	return string(out)
}
