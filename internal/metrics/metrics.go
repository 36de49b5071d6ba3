// Package metrics keeps engram's counters and writes them in the
// Prometheus text exposition format for GET /metrics. A handful of
// counters do not need a client library; the format is the contract.
//
// Counters are safe for concurrent use. Label values must not carry memory
// contents or secrets: they are scraped and stored elsewhere.
package metrics

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Registry holds counters by name and labels.
type Registry struct {
	mu       sync.Mutex
	help     map[string]string
	counters map[string]*atomic.Int64 // key: name{labels}
}

// Default is the process's registry.
var Default = &Registry{}

// Inc adds one to the counter name with labels ("key", "value", …).
func (r *Registry) Inc(name string, labels ...string) { r.Add(name, 1, labels...) }

// Add adds n to the counter.
func (r *Registry) Add(name string, n int64, labels ...string) {
	key := name + labelString(labels)
	r.mu.Lock()
	if r.counters == nil {
		r.counters = map[string]*atomic.Int64{}
	}
	c := r.counters[key]
	if c == nil {
		c = new(atomic.Int64)
		r.counters[key] = c
	}
	r.mu.Unlock()
	c.Add(n)
}

// Get returns a counter's value (0 if it was never incremented).
func (r *Registry) Get(name string, labels ...string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.counters[name+labelString(labels)]; c != nil {
		return c.Load()
	}
	return 0
}

// Help sets a counter's description.
func (r *Registry) Help(name, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.help == nil {
		r.help = map[string]string{}
	}
	r.help[name] = text
}

// WriteTo writes every counter in the Prometheus text format, sorted.
func (r *Registry) WriteTo(w io.Writer) (int64, error) {
	r.mu.Lock()
	keys := make([]string, 0, len(r.counters))
	for k := range r.counters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	seen := map[string]bool{}
	for _, k := range keys {
		name, _, _ := strings.Cut(k, "{")
		if !seen[name] {
			seen[name] = true
			if h := r.help[name]; h != "" {
				fmt.Fprintf(&b, "# HELP %s %s\n", name, h)
			}
			fmt.Fprintf(&b, "# TYPE %s counter\n", name)
		}
		fmt.Fprintf(&b, "%s %d\n", k, r.counters[k].Load())
	}
	r.mu.Unlock()
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

func labelString(labels []string) string {
	if len(labels) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(labels); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		// Go's quoting escapes \, " and newlines as the format asks.
		fmt.Fprintf(&b, "%s=%q", labels[i], labels[i+1])
	}
	b.WriteByte('}')
	return b.String()
}
