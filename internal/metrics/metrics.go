// Package metrics is engram's Prometheus instrumentation, through
// client_golang: the process's counters and histograms (Default), and
// gauges read from the running system at each scrape (State). Only this
// package imports client_golang; the rest of engram calls its typed
// methods, so every metric is declared, with its help text, in one place.
//
// Label values must never carry memory contents, user ids or secrets: they
// are scraped and stored elsewhere. Every label here takes values from a
// small, fixed set (route patterns, endpoint and consumer names, event
// types, error kinds).
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// Paths events arrive by, the values of the path label.
const (
	PathHTTP = "http" // POST /v1/events and the memory edits of the HTTP API
	PathNATS = "nats" // published straight to JetStream by an agent
)

// The ways a front sends a request on to a partition's copy, the values of
// the via label.
const (
	ForwardHTTP         = "http"
	ForwardNATS         = "nats"
	ForwardNoConnection = "nats_no_connection"
)

// LLM operations, the values of the op label.
const (
	OpChat  = "chat"
	OpEmbed = "embed"
)

// latencyBuckets span a cached search (under a millisecond) to a slow LLM
// call (a minute).
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// Registry holds a process's metrics.
type Registry struct {
	reg *prometheus.Registry

	httpDuration    *prometheus.HistogramVec
	httpRequests    *prometheus.CounterVec
	natsDuration    *prometheus.HistogramVec
	natsRequests    *prometheus.CounterVec
	forwarded       *prometheus.CounterVec
	eventsAccepted  *prometheus.CounterVec
	contextRequests prometheus.Counter
	contextServed   *prometheus.CounterVec
	contextTokens   *prometheus.CounterVec

	ctxMu        sync.Mutex
	ctxNS        map[string]ContextFigures
	degraded     *prometheus.CounterVec
	deadLettered *prometheus.CounterVec
	llmCalls     *prometheus.CounterVec
	llmErrors    *prometheus.CounterVec
	llmTokens    *prometheus.CounterVec
	llmDuration  *prometheus.HistogramVec
}

// counterVec, counter and histogram declare a metric and register it.
func (r *Registry) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	r.reg.MustRegister(c)
	return c
}

func (r *Registry) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	r.reg.MustRegister(c)
	return c
}

func (r *Registry) histogram(name, help string, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: latencyBuckets}, labels)
	r.reg.MustRegister(h)
	return h
}

// Default is the process's registry.
var Default = New()

// New returns a registry with every metric declared and the Go and process
// collectors registered.
func New() *Registry {
	r := &Registry{reg: prometheus.NewRegistry(), ctxNS: map[string]ContextFigures{}}
	r.httpDuration = r.histogram("engram_http_request_duration_seconds",
		"Time to answer an HTTP API request, by route pattern.", "route")
	r.httpRequests = r.counterVec("engram_http_requests_total",
		"HTTP API requests answered, by route pattern and status code.", "route", "code")
	r.natsDuration = r.histogram("engram_nats_request_duration_seconds",
		"Time to answer a NATS request-reply request, by service endpoint.", "endpoint")
	r.natsRequests = r.counterVec("engram_nats_requests_total",
		"NATS request-reply requests answered, by service endpoint and error code (ok for success).", "endpoint", "code")
	r.forwarded = r.counterVec("engram_partition_forwarded_total",
		"Requests a front sent on to the copy of their user's partition in another process, by the way they went: "+
			"http (to its instance's advertised address), nats (no address known, or the request was forwarded already), "+
			"nats_no_connection (the address took no connection).", "via")
	r.eventsAccepted = r.counterVec("engram_events_accepted_total",
		"Events accepted, by the path they came in on and event type. "+
			"http counts at the HTTP edge; nats counts events agents published straight to JetStream, "+
			"when this process's projector first applies them.", "path", "type")
	r.contextRequests = r.counter("engram_context_requests_total",
		"Context blocks asked for over HTTP.")
	r.contextServed = r.counterVec("engram_context_served_total",
		"Context blocks served, by whether they held at least one memory or turn (result hit) or neither (miss); "+
			"the retrieval hit rate is hit / (hit + miss).", "result")
	r.contextTokens = r.counterVec("engram_context_tokens_total",
		"Tokens of the context blocks served: all of them (block all), and those of long-term memories, "+
			"the profile and memories blocks (block memory); the memory-token share is memory / all.", "block")
	r.degraded = r.counterVec("engram_retrieval_degraded_total",
		"Falls down the retrieval degradation chain, by where from and where to.", "from", "to")
	r.deadLettered = r.counterVec("engram_dead_lettered_total",
		"Messages this process moved to the DEADLETTER stream, by durable consumer.", "consumer")
	r.llmCalls = r.counterVec("engram_llm_requests_total",
		"Calls to the LLM (chat) and embedding (embed) endpoints, failed or not.", "op")
	r.llmErrors = r.counterVec("engram_llm_errors_total",
		"Failed calls to the LLM and embedding endpoints, by kind of failure.", "op", "kind")
	r.llmTokens = r.counterVec("engram_llm_tokens_total",
		"Tokens the LLM and embedding endpoints reported using, prompt or completion.", "op", "direction")
	r.llmDuration = r.histogram("engram_llm_request_duration_seconds",
		"Time of a call to the LLM or embedding endpoint, retries included.", "op")
	r.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, v := range []string{"hit", "miss"} {
		r.contextServed.WithLabelValues(v)
	}
	for _, v := range []string{ForwardHTTP, ForwardNATS, ForwardNoConnection} {
		r.forwarded.WithLabelValues(v)
	}
	for _, v := range []string{"all", "memory"} {
		r.contextTokens.WithLabelValues(v)
	}
	for _, op := range []string{OpChat, OpEmbed} {
		r.llmCalls.WithLabelValues(op)
		r.llmDuration.WithLabelValues(op)
		r.llmTokens.WithLabelValues(op, "prompt")
		r.llmTokens.WithLabelValues(op, "completion")
	}
	return r
}

// Forwarded counts a request sent on to a partition's copy, by via.
func (r *Registry) Forwarded(via string) { r.forwarded.WithLabelValues(via).Inc() }

// EventTypes makes the accepted-events series of these types exist, at
// zero, before the first event arrives.
func (r *Registry) EventTypes(types []string) {
	for _, t := range types {
		r.eventsAccepted.WithLabelValues(PathHTTP, t)
		r.eventsAccepted.WithLabelValues(PathNATS, t)
	}
}

// Route makes a route's series exist before its first request.
func (r *Registry) Route(route string) { r.httpDuration.WithLabelValues(route) }

// HTTPRequest records one answered HTTP request.
func (r *Registry) HTTPRequest(route string, code int, d time.Duration) {
	r.httpDuration.WithLabelValues(route).Observe(d.Seconds())
	r.httpRequests.WithLabelValues(route, strconv.Itoa(code)).Inc()
}

// Endpoint makes a NATS endpoint's series exist before its first request.
func (r *Registry) Endpoint(endpoint string) {
	r.natsDuration.WithLabelValues(endpoint)
	r.natsRequests.WithLabelValues(endpoint, "ok")
}

// NATSRequest records one answered NATS request; code is "" on success.
func (r *Registry) NATSRequest(endpoint, code string, d time.Duration) {
	if code == "" {
		code = "ok"
	}
	r.natsDuration.WithLabelValues(endpoint).Observe(d.Seconds())
	r.natsRequests.WithLabelValues(endpoint, code).Inc()
}

// EventAccepted counts an event that came in by path.
func (r *Registry) EventAccepted(path, eventType string) {
	r.eventsAccepted.WithLabelValues(path, eventType).Inc()
}

// EventsAccepted returns the count of accepted events by path and type.
func (r *Registry) EventsAccepted(path, eventType string) float64 {
	return counterValue(r.eventsAccepted.WithLabelValues(path, eventType))
}

// ContextRequest counts a context block asked for.
func (r *Registry) ContextRequest() { r.contextRequests.Inc() }

// ContextFigures are what the context blocks served in a namespace held,
// since this process started.
type ContextFigures struct {
	// Served blocks; Hits of them held at least one memory or turn.
	Served, Hits uint64
	// MemoryTokens of TotalTokens were long-term memories' (the profile
	// and memories blocks).
	MemoryTokens, TotalTokens uint64
}

// HitRate is Hits / Served, 0 before the first block.
func (f ContextFigures) HitRate() float64 { return ratio(f.Hits, f.Served) }

// MemoryTokenShare is MemoryTokens / TotalTokens, 0 before the first token.
func (f ContextFigures) MemoryTokenShare() float64 { return ratio(f.MemoryTokens, f.TotalTokens) }

func ratio(n, d uint64) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

// ContextServed records a context block served in namespace: whether it
// held a memory or turn (hit), its long-term memories' tokens and its
// total tokens. The namespace is kept for Context, not as a label.
func (r *Registry) ContextServed(namespace string, hit bool, memoryTokens, totalTokens int) {
	result := "miss"
	if hit {
		result = "hit"
	}
	memoryTokens, totalTokens = max(memoryTokens, 0), max(totalTokens, 0)
	r.contextServed.WithLabelValues(result).Inc()
	r.contextTokens.WithLabelValues("memory").Add(float64(memoryTokens))
	r.contextTokens.WithLabelValues("all").Add(float64(totalTokens))
	r.ctxMu.Lock()
	defer r.ctxMu.Unlock()
	f := r.ctxNS[namespace]
	f.Served++
	if hit {
		f.Hits++
	}
	f.MemoryTokens += uint64(memoryTokens)
	f.TotalTokens += uint64(totalTokens)
	r.ctxNS[namespace] = f
}

// Context returns what the blocks served in namespace held since this
// process started.
func (r *Registry) Context(namespace string) ContextFigures {
	r.ctxMu.Lock()
	defer r.ctxMu.Unlock()
	return r.ctxNS[namespace]
}

// Degraded counts a fall down the retrieval degradation chain.
func (r *Registry) Degraded(from, to string) { r.degraded.WithLabelValues(from, to).Inc() }

// DegradedStep makes a fall's series exist before it first happens.
func (r *Registry) DegradedStep(from, to string) { r.degraded.WithLabelValues(from, to) }

// DeadLettered counts a message a consumer moved to DEADLETTER.
func (r *Registry) DeadLettered(consumer string) { r.deadLettered.WithLabelValues(consumer).Inc() }

// Consumer makes a durable consumer's series exist before its first
// dead letter.
func (r *Registry) Consumer(name string) { r.deadLettered.WithLabelValues(name) }

// LLMErrorKind makes a kind of LLM failure's series exist before it first
// happens.
func (r *Registry) LLMErrorKind(op, kind string) { r.llmErrors.WithLabelValues(op, kind) }

// LLMCall records one call to the LLM or embedding endpoint; errKind is
// "" on success.
func (r *Registry) LLMCall(op string, d time.Duration, promptTokens, completionTokens int, errKind string) {
	r.llmCalls.WithLabelValues(op).Inc()
	r.llmDuration.WithLabelValues(op).Observe(d.Seconds())
	if errKind != "" {
		r.llmErrors.WithLabelValues(op, errKind).Inc()
	}
	r.llmTokens.WithLabelValues(op, "prompt").Add(float64(max(promptTokens, 0)))
	r.llmTokens.WithLabelValues(op, "completion").Add(float64(max(completionTokens, 0)))
}

func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil || m.Counter == nil {
		return 0
	}
	return m.Counter.GetValue()
}

// Gatherer is the registry with, when state is not nil, the gauges it
// reads at each scrape.
func (r *Registry) Gatherer(state State) prometheus.Gatherer {
	if state == nil {
		return r.reg
	}
	local := prometheus.NewRegistry()
	local.MustRegister(&stateCollector{read: state})
	return prometheus.Gatherers{r.reg, local}
}

// Handler serves the registry, with state's gauges, in the Prometheus
// exposition format.
func (r *Registry) Handler(state State) http.Handler {
	return promhttp.HandlerFor(r.Gatherer(state), promhttp.HandlerOpts{})
}

// Snapshot is what a scrape reads from the running system. A field left
// nil is a part this process does not run, and is left out.
type Snapshot struct {
	// ProjectorLag is how many events in MEMORY the read model has not
	// applied yet.
	ProjectorLag *uint64
	// Consumers are the durable consumers on MEMORY.
	Consumers []Consumer
	// DeadLetters is how many messages DEADLETTER holds.
	DeadLetters *uint64
	// ExtractionBacklog is how many extraction requests wait or run.
	ExtractionBacklog *uint64
	// Quality is seed 004 §9's memory-quality figures over every
	// namespace, read from the read model.
	Quality *Quality
	// StreamDrift says, per kind of drift (config, missing, recreated,
	// truncated), whether the process reports the stream changed under
	// it that way now.
	StreamDrift map[string]bool
	// Partitions are a partitioned retriever's copies of partitions of
	// the users (docs/scale.md).
	Partitions []PartitionCopy
}

// PartitionCopy is one copy of a partition a retriever keeps.
type PartitionCopy struct {
	Partition int
	// Serving is false while the copy is being built; Held says the
	// retriever holds the partition's lease (false while it hands it
	// over).
	Serving, Held bool
	// Lag is the events of MEMORY the copy has yet to read; Progress,
	// while building, the share of the stream read of what it must.
	Lag      uint64
	Progress float64
	Users    int
	Rows     map[string]int64
	Bytes    int64
}

// Quality is what the memory-quality gauges show.
type Quality struct {
	// ConfirmationRate is confirmed / decided pending candidates.
	ConfirmationRate float64
	// WrongWriteRate is seed 004 §9's rejected / confirmed pending
	// candidates.
	WrongWriteRate float64
}

// Consumer is one durable consumer's position.
type Consumer struct {
	Name string
	// Pending have not been delivered yet; AckPending were delivered
	// and are not yet acknowledged.
	Pending, AckPending uint64
}

// State reads a Snapshot; it is called at each scrape with a deadline.
type State func(ctx context.Context) (Snapshot, error)

var (
	descLag = prometheus.NewDesc("engram_projector_lag_events",
		"Events in the MEMORY stream this process's read model has not applied yet.", nil, nil)
	descPending = prometheus.NewDesc("engram_consumer_pending_messages",
		"Messages on MEMORY not yet delivered to a durable consumer.", []string{"consumer"}, nil)
	descAckPending = prometheus.NewDesc("engram_consumer_ack_pending_messages",
		"Messages delivered to a durable consumer and not yet acknowledged.", []string{"consumer"}, nil)
	descDLQ = prometheus.NewDesc("engram_dead_letters_messages",
		"Messages held in the DEADLETTER stream (engram dlq ls lists them).", nil, nil)
	descBacklog = prometheus.NewDesc("engram_extraction_backlog_requests",
		"Extraction requests waiting for or in the extractor.", nil, nil)
	descConfirm = prometheus.NewDesc("engram_memory_confirmation_ratio",
		"Pending memory candidates confirmed, of those users confirmed or ignored (all namespaces, from the read model).", nil, nil)
	descWrong = prometheus.NewDesc("engram_memory_wrong_write_ratio",
		"Pending memory candidates users rejected (ignored) per candidate confirmed, seed 004 §9's rejected / confirmed "+
			"(all namespaces, from the read model; 0 when none was confirmed).", nil, nil)
	partLabels      = []string{"partition"}
	descPartServing = prometheus.NewDesc("engram_read_partition_serving",
		"1 for each copy of a partition of the users this retriever keeps that has caught up and serves, 0 while it is being built.", partLabels, nil)
	descPartHeld = prometheus.NewDesc("engram_read_partition_held",
		"1 when this retriever holds the partition's lease, 0 while it hands its copy over to the retriever that took it.", partLabels, nil)
	descPartLag = prometheus.NewDesc("engram_read_partition_lag_events",
		"Events in MEMORY this retriever's copy of the partition has yet to read.", partLabels, nil)
	descPartProgress = prometheus.NewDesc("engram_read_partition_build_progress_ratio",
		"How much of the stream a copy being built has read of what it must before it serves (1 once it serves).", partLabels, nil)
	descPartUsers = prometheus.NewDesc("engram_read_partition_users",
		"Users in this retriever's copy of the partition (counted every 30 s).", partLabels, nil)
	descPartRows = prometheus.NewDesc("engram_read_partition_rows",
		"Rows of a table in this retriever's copy of the partition (counted every 30 s).", []string{"partition", "table"}, nil)
	descPartBytes = prometheus.NewDesc("engram_read_partition_size_bytes",
		"Size on disk of this retriever's copy of the partition, its write-ahead log included.", partLabels, nil)
	descDrift = prometheus.NewDesc("engram_stream_drift",
		"1 while this process reports that the MEMORY stream changed under engram this way (kind: config, a "+
			"configuration that drops or refuses events; missing; recreated, not the stream the read model was built "+
			"from; truncated, events the read model applied gone from the stream), 0 otherwise.", []string{"kind"}, nil)
	descUp = prometheus.NewDesc("engram_state_up",
		"1 when the last scrape could read the stream's state, 0 when it could not.", nil, nil)
)

type stateCollector struct{ read State }

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descLag, descPending, descAckPending, descDLQ, descBacklog, descConfirm, descWrong, descDrift, descUp,
		descPartServing, descPartHeld, descPartLag, descPartProgress, descPartUsers, descPartRows, descPartBytes} {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := c.read(ctx)
	up := 1.0
	if err != nil {
		up = 0
	}
	ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, up)
	gauge := func(d *prometheus.Desc, v *uint64) {
		if v != nil {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(*v))
		}
	}
	gauge(descLag, s.ProjectorLag)
	gauge(descDLQ, s.DeadLetters)
	gauge(descBacklog, s.ExtractionBacklog)
	if q := s.Quality; q != nil {
		ch <- prometheus.MustNewConstMetric(descConfirm, prometheus.GaugeValue, q.ConfirmationRate)
		ch <- prometheus.MustNewConstMetric(descWrong, prometheus.GaugeValue, q.WrongWriteRate)
	}
	for kind, on := range s.StreamDrift {
		v := 0.0
		if on {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(descDrift, prometheus.GaugeValue, v, kind)
	}
	for _, cs := range s.Consumers {
		ch <- prometheus.MustNewConstMetric(descPending, prometheus.GaugeValue, float64(cs.Pending), cs.Name)
		ch <- prometheus.MustNewConstMetric(descAckPending, prometheus.GaugeValue, float64(cs.AckPending), cs.Name)
	}
	bit := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	for _, pc := range s.Partitions {
		p := strconv.Itoa(pc.Partition)
		ch <- prometheus.MustNewConstMetric(descPartServing, prometheus.GaugeValue, bit(pc.Serving), p)
		ch <- prometheus.MustNewConstMetric(descPartHeld, prometheus.GaugeValue, bit(pc.Held), p)
		ch <- prometheus.MustNewConstMetric(descPartLag, prometheus.GaugeValue, float64(pc.Lag), p)
		ch <- prometheus.MustNewConstMetric(descPartProgress, prometheus.GaugeValue, pc.Progress, p)
		ch <- prometheus.MustNewConstMetric(descPartUsers, prometheus.GaugeValue, float64(pc.Users), p)
		ch <- prometheus.MustNewConstMetric(descPartBytes, prometheus.GaugeValue, float64(pc.Bytes), p)
		for table, n := range pc.Rows {
			ch <- prometheus.MustNewConstMetric(descPartRows, prometheus.GaugeValue, float64(n), p, table)
		}
	}
}
