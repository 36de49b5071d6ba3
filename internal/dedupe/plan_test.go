package dedupe

import (
	"reflect"
	"testing"
	"time"
)

func TestPlan(t *testing.T) {
	t.Parallel()
	items := map[string]Item{
		"low":    {ID: "low", Text: "x", Importance: 0.3, Updated: t0.Add(3 * time.Hour)},
		"high":   {ID: "high", Text: "x", Importance: 0.9, Updated: t0},
		"mid":    {ID: "mid", Text: "x", Importance: 0.5, Updated: t0},
		"old":    {ID: "old", Text: "y", Importance: 0.7, Updated: t0},
		"new":    {ID: "new", Text: "y", Importance: 0.7, Updated: t0.Add(time.Hour)},
		"single": {ID: "single", Text: "z", Importance: 0.4, Updated: t0},
	}
	clusters := []Cluster{
		{ID: "c1", Members: []string{"mid", "low", "high"}},
		{ID: "c2", Members: []string{"old", "new"}},
		{ID: "c3", Members: []string{"single"}},
		{ID: "c4", Members: []string{"deleted", "gone"}},
		{ID: "c5", Members: []string{"deleted"}},
	}
	plans := Plan(clusters, items)
	want := []MergePlan{
		{Cluster: clusters[0], Into: "high", Merged: []string{"mid", "low"}, Importance: 0.9},
		{Cluster: clusters[1], Into: "new", Merged: []string{"old"}, Importance: 0.7},
		{Cluster: clusters[2], Into: "single", Importance: 0.4},
	}
	if !reflect.DeepEqual(plans, want) {
		t.Fatalf("Plan =\n%+v\nwant\n%+v", plans, want)
	}
}

// TestPlanFollowsItems: the plan is made from the memories as they are
// now, not as they were when the clusters were found.
func TestPlanFollowsItems(t *testing.T) {
	t.Parallel()
	items := map[string]Item{
		"a": {ID: "a", Importance: 0.9, Updated: t0},
		"b": {ID: "b", Importance: 0.2, Updated: t0},
		"c": {ID: "c", Importance: 0.6, Updated: t0},
	}
	c := newCluster("p", []Item{items["a"], items["b"], items["c"]})
	if got, want := c.Keep, "a"; got != want {
		t.Fatalf("Keep = %s, want %s", got, want)
	}
	b := items["b"]
	b.Importance = 0.95
	items["b"] = b
	delete(items, "a")
	plans := Plan([]Cluster{c}, items)
	if got, want := len(plans), 1; got != want {
		t.Fatalf("%d plans, want %d", got, want)
	}
	p := plans[0]
	if p.Into != "b" || p.Importance != 0.95 || !reflect.DeepEqual(p.Merged, []string{"c"}) {
		t.Fatalf("plan = %+v, want b kept at 0.95 with c merged", p)
	}
}

func TestPlanOfClustersKeepsMaxImportance(t *testing.T) {
	t.Parallel()
	items := Synthetic(300, 21)
	byID := map[string]Item{}
	for _, it := range items {
		byID[it.ID] = it
	}
	for _, p := range Plan(Clusters(items, 0.9, MinPartition), byID) {
		if got, want := p.Into, p.Cluster.Keep; got != want {
			t.Fatalf("Into = %s, want the cluster's Keep %s", got, want)
		}
		top := 0.0
		for _, m := range p.Cluster.Members {
			top = max(top, byID[m].Importance)
		}
		if p.Importance != top || byID[p.Into].Importance != top {
			t.Fatalf("plan %s: importance %v, kept %v, want the members' highest %v", p.Cluster.ID, p.Importance, byID[p.Into].Importance, top)
		}
		if got, want := len(p.Merged)+1, len(p.Cluster.Members); got != want {
			t.Fatalf("plan %s merges %d of %d", p.Cluster.ID, got, want)
		}
	}
}
