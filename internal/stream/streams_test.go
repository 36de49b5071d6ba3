package stream

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// memoryConfig is MEMORY's configuration now.
func memoryConfig(t *testing.T, js jetstream.JetStream) jetstream.StreamConfig {
	t.Helper()
	info, err := MemoryInfo(t.Context(), js)
	if err != nil {
		t.Fatal(err)
	}
	return info.Config
}

func fields(ds []Difference) string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Field)
	}
	return strings.Join(out, ",")
}

// What an operator changed is left alone by an operator command, a
// setting of the config is applied at engram serve's start while a limit
// that drops events is left for the operator, and `engram streams apply`
// puts everything back, keeping what `engram streams accept` recorded.
func TestSetupStreamsModes(t *testing.T) {
	t.Parallel()
	js := startJS(t)
	publishTurns(t, js, "ana", 3)
	sc := memoryConfig(t, js)
	sc.MaxMsgs, sc.Duplicates = 1, 2*time.Hour
	if _, err := js.UpdateStream(t.Context(), sc); err != nil {
		t.Fatal(err)
	}
	want, _ := StreamConfigOf(MemoryStream, StreamsConfig{})
	if got := fields(Differences(memoryConfig(t, js), want)); got != "max_msgs,duplicate_window" {
		t.Fatalf("differences %s, want max_msgs,duplicate_window", got)
	}

	reps, err := SetupStreams(t.Context(), js, StreamsConfig{}, CreateMissing)
	if err != nil {
		t.Fatal(err)
	}
	if got := fields(reps[0].Left); got != "max_msgs,duplicate_window" || len(reps[0].Changed) > 0 {
		t.Fatalf("an operator command: changed %v, left %v; want nothing changed", reps[0].Changed, reps[0].Left)
	}

	reps, err = SetupStreams(t.Context(), js, StreamsConfig{}, ApplySettings)
	if err != nil {
		t.Fatal(err)
	}
	if got, left := fields(reps[0].Changed), fields(reps[0].Left); got != "duplicate_window" || left != "max_msgs" {
		t.Fatalf("engram serve's start changed %s and left %s; want duplicate_window changed, max_msgs left", got, left)
	}
	if d := Differences(memoryConfig(t, js), want); len(d) != 1 || d[0].Field != "max_msgs" || !d[0].Loses ||
		d[0].String() != "MEMORY max_msgs 1 (engram's: unlimited)" {
		t.Fatalf("after engram serve's start: %v, want the limit still there", d)
	}

	acc, err := AcceptMemory(t.Context(), js)
	if err != nil {
		t.Fatal(err)
	}
	if acc.FirstSeq != 3 || acc.Origin == "" {
		t.Fatalf("accepted %+v, want the stream's origin and its first sequence 3", acc)
	}
	if _, err := SetupStreams(t.Context(), js, StreamsConfig{}, Restore); err != nil {
		t.Fatal(err)
	}
	after := memoryConfig(t, js)
	if d := Differences(after, want); len(d) > 0 {
		t.Fatalf("after engram streams apply: %v", d)
	}
	if got := AcceptedOf(after); got != acc {
		t.Fatalf("after engram streams apply, accepted %+v, want %+v kept", got, acc)
	}
}

// A worker may not create the streams: one that finds them missing says
// what to run.
func TestRequireStreamsNamesTheCommand(t *testing.T) {
	t.Parallel()
	js, err := jetstream.New(startNATS(t))
	if err != nil {
		t.Fatal(err)
	}
	err = RequireStreams(t.Context(), js, PartitionBucket)
	if !errors.Is(err, ErrNotSetUp) || !strings.Contains(err.Error(), "engram streams apply") {
		t.Fatalf("err %v, want ErrNotSetUp naming engram streams apply", err)
	}
	if err := EnsureStreams(t.Context(), js, StreamsConfig{}); err != nil {
		t.Fatal(err)
	}
	if err := RequireStreams(t.Context(), js, PartitionBucket, ConfirmBucket, ScheduleBucket); err != nil {
		t.Fatal(err)
	}
}
