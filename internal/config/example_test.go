package config

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// deploy/engram.example.yaml loads, gives the defaults, and names every key.
func TestExampleFile(t *testing.T) {
	const path = "../../deploy/engram.example.yaml"
	cfg, err := Load(Default(), path, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	if want := Default(); !reflect.DeepEqual(cfg, want) {
		t.Errorf("%s gives\n%+v\nwant the defaults\n%+v", path, cfg, want)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range yamlKeys(reflect.TypeOf(Config{}), "") {
		leaf := key[strings.LastIndex(key, ".")+1:]
		if !strings.Contains(string(b), leaf+":") {
			t.Errorf("%s does not mention %s", path, key)
		}
	}
}

// yamlKeys lists every key of a config struct, dotted.
func yamlKeys(t reflect.Type, prefix string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		out = append(out, prefix+name)
		if f.Type.Kind() == reflect.Struct && f.Type.PkgPath() == t.PkgPath() {
			out = append(out, yamlKeys(f.Type, prefix+name+".")...)
		}
	}
	return out
}

// Every variable docs/configuration.md's table names is read.
func TestContextModelEnv(t *testing.T) {
	cfg, err := Load(Default(), "", env(map[string]string{"ENGRAM_CONTEXT_MODEL": "qwen3"}))
	if err != nil || cfg.ContextModel != "qwen3" {
		t.Fatalf("ENGRAM_CONTEXT_MODEL: context_model %q, %v", cfg.ContextModel, err)
	}
}
