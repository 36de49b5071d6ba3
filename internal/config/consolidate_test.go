package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestConsolidateKeys(t *testing.T) {
	d := Default()
	if d.Consolidate.RulesDir != "rules" || d.CardsPath() != filepath.Join("data", "cards") {
		t.Fatalf("defaults: rules %q, cards %q", d.Consolidate.RulesDir, d.CardsPath())
	}
	cfg, err := Load(Default(), "", env(map[string]string{"ENGRAM_RULES_DIR": "/etc/engram/rules",
		"ENGRAM_RULES_POLL": "500ms", "ENGRAM_CARDS_DIR": "/srv/cards"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Consolidate.RulesDir != "/etc/engram/rules" || cfg.Consolidate.RulesPoll != 500*time.Millisecond || cfg.CardsPath() != "/srv/cards" {
		t.Fatalf("cfg = %+v", cfg.Consolidate)
	}
	if _, err := Load(Default(), "", env(map[string]string{"ENGRAM_RULES_POLL": "0s"})); err == nil || !strings.Contains(err.Error(), "consolidate.rules_poll") {
		t.Fatalf("zero poll: %v", err)
	}
}
