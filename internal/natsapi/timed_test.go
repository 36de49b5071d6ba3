package natsapi

import (
	"testing"
	"time"

	"github.com/engramhq/engram/internal/metrics"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/stream"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// answered is how many requests of endpoint /metrics counts.
func answered(t *testing.T, endpoint string) uint64 {
	t.Helper()
	fams, err := metrics.Default.Gatherer(nil).Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "engram_nats_request_duration_seconds" {
			continue
		}
		var n uint64
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "endpoint" && l.GetValue() == endpoint {
					n += m.GetHistogram().GetSampleCount()
				}
			}
		}
		return n
	}
	return 0
}

// A request is counted by the time its answer arrives, even while the
// handler is still busy after answering (the test that scraped /metrics
// right after a reply found the count one short now and then).
func TestTimedCountsBeforeTheReply(t *testing.T) {
	emb, err := stream.StartEmbedded(stream.EmbeddedConfig{StoreDir: t.TempDir(), Sync: "always"})
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Shutdown()
	nc, err := nats.Connect("", emb.ConnectOption())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	svc, err := micro.AddService(nc, micro.Config{Name: "timed-test", Version: "0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Do(svc.Stop)
	release := make(chan struct{})
	defer close(release) // before Stop: the handler is waiting on it
	h := micro.HandlerFunc(func(req micro.Request) {
		_ = req.Respond([]byte("ok"))
		<-release // still in the handler after the answer went out
	})
	if err := svc.AddEndpoint("timed_test", Timed("timed_test", h), micro.WithEndpointSubject("timed.test")); err != nil {
		t.Fatal(err)
	}
	before := answered(t, "timed_test")
	if _, err := nc.Request("timed.test", nil, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := answered(t, "timed_test"); got != before+1 {
		t.Fatalf("requests counted after the reply: %d, want %d", got, before+1)
	}
}
