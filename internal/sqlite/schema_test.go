package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/engramhq/engram/internal/textseg"
	"path/filepath"
	"testing"

	"github.com/engramhq/engram/internal/memory"
)

// A read model written before full-text partitions (schema 3, a scope
// column in each index) opens with its rows found by the partitioned
// queries, and rows the old index had dropped stay out of the new one.
func TestMigrationToPartitionsReindexes(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "v3.db")
	db, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range migrations[:3] {
		if _, err := db.Exec(m.sql); err != nil {
			t.Fatalf("migration %d: %v", i+1, err)
		}
	}
	// What schema 3 wrote: the scope token in its own column.
	old := "s0123456789abcdef"
	for _, stmt := range []string{
		`PRAGMA user_version = 3`,
		`INSERT INTO turns (id, namespace, user_id, session_id, turn_index, role, speaker, content, tool_calls, time, tokens, event_source, event_id, seq)
			VALUES (7, 'ns', 'alice', 's1', 0, 'user', 'Alice', '我住在北京', '[{"name":"weather_lookup"}]', 1, 5, 'x', 'e1', 1)`,
		`INSERT INTO turns_fts (rowid, scope, body) VALUES (7, '` + old + `', 'Alice 我住 住在 在北 北京 京 weather_lookup')`,
		`INSERT INTO memories (id, namespace, user_id, kind, category, subject, predicate, content, importance, confidence, status, source, source_events, created, updated)
			VALUES ('m1', 'ns', 'alice', 'preference', 'preference', 'user', 'drink', 'prefers oolong tea', 0.5, 0.9, 'active', 'llm', '[]', 1, 1),
			       ('m2', 'ns', 'alice', 'preference', 'preference', 'user', 'drink', 'prefers green tea', 0.5, 0.9, 'superseded', 'llm', '[]', 1, 1)`,
		`INSERT INTO memories_fts (rowid, scope, body) SELECT rowid, '` + old + `', content FROM memories WHERE id = 'm1'`,
		`INSERT INTO episodes (namespace, user_id, id, session_id, summary, outcome, started, ended, actions, entities, tools, linked_memories, importance, source, turns, built, event_id)
			VALUES ('ns', 'alice', 'ep1', 's1', 'Planned the Kyoto trip', 'success', 1, 2, '[{"decision":"book the ryokan"}]', '["Kyoto"]', '[]', '[]', 0.5, 'llm', '[0]', 2, 'e9')`,
		`INSERT INTO episodes_fts (rowid, scope, body) SELECT rid, '` + old + `', summary FROM episodes`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}()
	alice, bob := memory.Scope{Namespace: "ns", User: "alice"}, memory.Scope{Namespace: "ns", User: "bob"}
	for _, tc := range []struct {
		name  string
		find  func(context.Context, memory.Scope, string) (int, error)
		query string
		want  int
	}{
		{"turn by text", s.countTurns, "北京", 1},
		{"turn by speaker", s.countTurns, "alice", 1},
		{"turn by tool", s.countTurns, "weather_lookup", 1},
		{"active memory", s.countMemories, "oolong", 1},
		{"superseded memory stays out", s.countMemories, "green", 0},
		{"memory by predicate", s.countMemories, "drink", 1},
		{"episode by summary", s.countEpisodes, "kyoto", 1},
		{"episode by action", s.countEpisodes, "ryokan", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.find(t.Context(), alice, tc.query)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("%q found %d rows, want %d", tc.query, got, tc.want)
			}
			if n, err := tc.find(t.Context(), bob, tc.query); err != nil || n != 0 {
				t.Fatalf("another user's %q found %d rows (%v)", tc.query, n, err)
			}
		})
	}
}

func (s *Store) countTurns(ctx context.Context, scope memory.Scope, q string) (int, error) {
	hits, err := s.RecallTurns(ctx, scope, textseg.Understand(q), 10)
	return len(hits), err
}

func (s *Store) countMemories(ctx context.Context, scope memory.Scope, q string) (int, error) {
	hits, err := s.RecallMemories(ctx, scope, textseg.Understand(q), 10)
	return len(hits), err
}

func (s *Store) countEpisodes(ctx context.Context, scope memory.Scope, q string) (int, error) {
	eps, err := s.SearchEpisodes(ctx, scope, q, 10)
	if err != nil {
		return 0, fmt.Errorf("search episodes: %w", err)
	}
	return len(eps), nil
}
