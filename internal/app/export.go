package app

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/stream"
)

// ExportFilter selects what Export writes: a namespace, a user of it, or
// (both empty) everything.
type ExportFilter struct {
	Namespace, User string
}

func (f ExportFilter) match(ns, user string) bool {
	return (f.Namespace == "" || f.Namespace == ns) && (f.User == "" || f.User == user)
}

// ExportReport counts what Export read and wrote.
type ExportReport struct {
	Events  int `json:"events"`  // written
	Skipped int `json:"skipped"` // undecodable messages, which every worker dead-letters
}

// Export writes the events of MEMORY that filter selects to w as
// CloudEvents JSON Lines (structured mode, one event a line), in stream
// order: the agents' events and every conclusion engram drew from them
// (extractions, memories, episodes, vectors), so an import rebuilds the
// same read model without calling the LLM or the embedding model.
func Export(ctx context.Context, js stream.JetStream, w io.Writer, filter ExportFilter, maxEventBytes int) (ExportReport, error) {
	var rep ExportReport
	head, err := stream.Head(ctx, js)
	if err != nil {
		return rep, fmt.Errorf("export: %w", err)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	err = stream.Replay(ctx, js, head, 1024, maxEventBytes, func(b stream.ReplayBatch) error {
		rep.Skipped += len(b.Undecodable)
		for _, m := range b.Messages {
			if !filter.match(events.Namespace(m.Event), events.User(m.Event)) {
				continue
			}
			ev := m.Event
			if ev.Type() == events.TypeTurnsExpired {
				if ev, err = portableReceipt(ev); err != nil {
					return fmt.Errorf("export seq %d: %w", m.Seq, err)
				}
			}
			line, err := json.Marshal(ev)
			if err != nil {
				return fmt.Errorf("export seq %d: %w", m.Seq, err)
			}
			_, _ = bw.Write(line) // a bufio.Writer's error sticks: WriteByte reports it
			if err := bw.WriteByte('\n'); err != nil {
				return fmt.Errorf("export: %w", err)
			}
			rep.Events++
		}
		return nil
	})
	if err != nil {
		return rep, err
	}
	return rep, bw.Flush()
}

// ImportReport counts what Import published.
type ImportReport struct {
	Events     int `json:"events"`     // stored
	Duplicates int `json:"duplicates"` // already in the stream (an import run twice)
}

// Import publishes the CloudEvents JSON Lines Export wrote (or any agent
// wrote) to MEMORY, in order. Every line is validated first: a bad line
// stops the import before anything is published, naming the line. Events
// keep their ids, so an import run twice stores each event once, and the
// conclusions workers draw again from imported events carry the ids of
// the imported ones.
func Import(ctx context.Context, js stream.JetStream, r io.Reader, maxEventBytes int) (ImportReport, error) {
	var rep ImportReport
	var evs []event.Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), maxEventBytes+1)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		e, _, err := events.DecodeStructured(line, maxEventBytes)
		if err != nil {
			return rep, fmt.Errorf("import line %d: %w", n, err)
		}
		evs = append(evs, e)
	}
	if err := sc.Err(); err != nil {
		return rep, fmt.Errorf("import: %w", err)
	}
	pub := stream.NewPublisher(js)
	for len(evs) > 0 {
		chunk := evs[:min(len(evs), 512)]
		evs = evs[len(chunk):]
		for i, res := range pub.PublishBatch(ctx, chunk) {
			switch {
			case res.Err != nil:
				return rep, fmt.Errorf("import event %s: %w (%d stored so far; run the import again: duplicates are dropped)",
					chunk[i].ID(), res.Err, rep.Events)
			case res.Ack.Duplicate:
				rep.Duplicates++
			default:
				rep.Events++
			}
		}
	}
	return rep, nil
}

// portableReceipt is a turns.expired receipt as it reads in another
// stream: its bound is a sequence of this one, below which the user's raw
// turns are gone, so they are not in the export either; elsewhere it
// expires nothing (before_seq 1), and keeps its place in the record.
func portableReceipt(e event.Event) (event.Event, error) {
	var d events.TurnsExpired
	if err := json.Unmarshal(e.Data(), &d); err != nil {
		return e, fmt.Errorf("turns.expired %s: %w", e.ID(), err)
	}
	d.BeforeSeq = 1
	out := e.Clone()
	if err := out.SetData(event.ApplicationJSON, &d); err != nil {
		return e, fmt.Errorf("turns.expired %s: %w", e.ID(), err)
	}
	return out, nil
}
