package dedupe

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/memory"
)

var t0 = time.Date(2025, 3, 3, 4, 0, 0, 0, time.UTC)

// unrelated returns n distinct facts in partition part, ids prefix-0…
func unrelated(part, prefix string, n int, seed uint64) []Item {
	g := &generator{rng: rand.New(rand.NewPCG(seed, 1))}
	items := make([]Item, n)
	for i := range items {
		items[i] = Item{ID: fmt.Sprintf("%s-%d", prefix, i), Text: g.fact("engram/storage", i%2 == 0), Importance: 0.5, Updated: t0, Partition: part}
	}
	return items
}

// clusterOf maps each member to its cluster.
func clusterOf(cs []Cluster) map[string]Cluster {
	out := map[string]Cluster{}
	for _, c := range cs {
		for _, m := range c.Members {
			out[m] = c
		}
	}
	return out
}

// reference clusters with memory.Similarity itself on every pair and a
// plain graph search: the definition, written the slowest obvious way.
func reference(items []Item, threshold float64, minPartition int) [][]string {
	byPart := map[string][]Item{}
	for _, it := range items {
		byPart[it.Partition] = append(byPart[it.Partition], it)
	}
	var out [][]string
	for _, its := range byPart {
		if len(its) < minPartition {
			continue
		}
		seen := make([]bool, len(its))
		for s := range its {
			if seen[s] {
				continue
			}
			seen[s] = true
			queue, group := []int{s}, []string{}
			for len(queue) > 0 {
				i := queue[0]
				queue = queue[1:]
				group = append(group, its[i].ID)
				for j := range its {
					if !seen[j] && memory.Similarity(its[i].Text, its[j].Text) > threshold {
						seen[j] = true
						queue = append(queue, j)
					}
				}
			}
			slices.Sort(group)
			out = append(out, group)
		}
	}
	slices.SortFunc(out, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	return out
}

func memberSets(cs []Cluster) [][]string {
	out := make([][]string, len(cs))
	for i, c := range cs {
		out[i] = slices.Sorted(slices.Values(c.Members))
	}
	slices.SortFunc(out, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	return out
}

func TestPairwiseIsTheDefinition(t *testing.T) {
	t.Parallel()
	items := Synthetic(100, 11)
	for _, threshold := range []float64{memory.MergeSimilarity, 0.6} {
		got, want := memberSets(Pairwise(items, threshold, MinPartition)), reference(items, threshold, MinPartition)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("threshold %v: Pairwise = %v\nreference = %v", threshold, got, want)
		}
	}
}

func TestClustersEqualPairwise(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n         int
		seed      uint64
		threshold float64
	}{
		{300, 1, memory.MergeSimilarity},
		{200, 2, memory.MergeSimilarity},
		{200, 4, 0.8},
		{200, 5, 0.7},
		{200, 6, 0.5},
		{100, 7, 0.3},
		{100, 8, 1},
	} {
		t.Run(fmt.Sprintf("n=%d/seed=%d/t=%v", tc.n, tc.seed, tc.threshold), func(t *testing.T) {
			items := Synthetic(tc.n, tc.seed)
			got, want := Clusters(items, tc.threshold, MinPartition), Pairwise(items, tc.threshold, MinPartition)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Clusters differs from Pairwise: pair recall %.4f, precision %.4f", PairRecall(got, want), PairRecall(want, got))
			}
			multi := 0
			for _, c := range got {
				if len(c.Members) > 1 {
					multi++
				}
			}
			if tc.threshold < 1 && multi == 0 {
				t.Fatalf("no cluster of two or more: the set tests nothing")
			}
		})
	}
}

func TestTransitive(t *testing.T) {
	t.Parallel()
	words := make([]string, 30)
	for i := range words {
		words[i] = fmt.Sprintf("word%02d", i)
	}
	a := strings.Join(words, " ")
	words[5] = "changed05"
	b := strings.Join(words, " ")
	words[20] = "changed20"
	c := strings.Join(words, " ")
	if memory.Similarity(a, b) <= 0.9 || memory.Similarity(b, c) <= 0.9 || memory.Similarity(a, c) > 0.9 {
		t.Fatalf("setup: similarities a-b %.3f, b-c %.3f, a-c %.3f; want a-c alone at or below 0.9",
			memory.Similarity(a, b), memory.Similarity(b, c), memory.Similarity(a, c))
	}
	items := append(unrelated("p", "u", 10, 1),
		Item{ID: "a", Text: a, Partition: "p"}, Item{ID: "b", Text: b, Partition: "p"}, Item{ID: "c", Text: c, Partition: "p"})
	for name, fn := range map[string]func([]Item, float64, int) []Cluster{"Clusters": Clusters, "Pairwise": Pairwise} {
		t.Run(name, func(t *testing.T) {
			of := clusterOf(fn(items, 0.9, MinPartition))
			if got, want := len(of["a"].Members), 3; got != want {
				t.Fatalf("a's cluster has %d members %v, want %d", got, of["a"].Members, want)
			}
			if of["a"].ID != of["c"].ID {
				t.Fatalf("a and c in different clusters, though b joins them")
			}
		})
	}
}

func TestPartitionsNeverMixed(t *testing.T) {
	t.Parallel()
	text := "The staging cluster runs on three nodes in Frankfurt and is rebuilt from the helm chart every Monday at four"
	var items []Item
	for _, part := range []string{"engram/storage", "engram/retrieval", "myclaw/deploy"} {
		items = append(items, unrelated(part, part, 10, 2)...)
		for i := range 3 {
			items = append(items, Item{ID: fmt.Sprintf("%s-dup%d", part, i), Text: text, Partition: part})
		}
	}
	parts := map[string]string{}
	for _, it := range items {
		parts[it.ID] = it.Partition
	}
	cs := Clusters(items, memory.MergeSimilarity, MinPartition)
	dups := 0
	for _, c := range cs {
		for _, m := range c.Members {
			if got, want := parts[m], c.Partition; got != want {
				t.Fatalf("cluster %s of partition %s holds %s of partition %s", c.ID, want, m, got)
			}
		}
		if strings.Contains(c.Members[0], "-dup") {
			dups++
			if got, want := len(c.Members), 3; got != want {
				t.Errorf("cluster of %s has %d members, want %d", c.Partition, got, want)
			}
		}
	}
	if got, want := dups, 3; got != want {
		t.Fatalf("%d clusters of the duplicated text, want one per partition (%d)", got, want)
	}
}

func TestMinPartition(t *testing.T) {
	t.Parallel()
	text := "用户每天早上喝一杯绿茶，从不喝咖啡，周末会去公园跑步五公里。"
	small := make([]Item, 9)
	for i := range small {
		small[i] = Item{ID: fmt.Sprintf("s%d", i), Text: text, Partition: "small"}
	}
	items := append(unrelated("big", "b", 12, 3), small...)
	for _, tc := range []struct {
		min       int
		wantSmall int // clusters holding the small partition
		wantItems int
	}{{10, 0, 12}, {9, 1, 21}, {0, 1, 21}, {13, 0, 0}} {
		t.Run(fmt.Sprint("min=", tc.min), func(t *testing.T) {
			for name, fn := range map[string]func([]Item, float64, int) []Cluster{"Clusters": Clusters, "Pairwise": Pairwise} {
				cs := fn(items, memory.MergeSimilarity, tc.min)
				smallClusters, n := 0, 0
				for _, c := range cs {
					n += len(c.Members)
					if c.Partition == "small" {
						smallClusters++
					}
				}
				if smallClusters != tc.wantSmall || n != tc.wantItems {
					t.Errorf("%s: %d clusters of the small partition and %d items, want %d and %d", name, smallClusters, n, tc.wantSmall, tc.wantItems)
				}
			}
		})
	}
}

func TestChineseVariants(t *testing.T) {
	t.Parallel()
	base := "用户的项目使用PostgreSQL十六作为主数据库，每天凌晨三点做全量备份，备份文件保存在上海机房的对象存储里，保留三十天以后自动删除。"
	variants := []string{
		strings.ReplaceAll(base, "，", "、"),                   // punctuation
		strings.Replace(base, "每天凌晨", "每天的凌晨", 1),            // an inserted character
		strings.Replace(base, "保留三十天", "保存三十天", 1),           // a changed character
		strings.TrimSuffix(base, "。"),                        // no full stop
		strings.Replace(base, "PostgreSQL", "postgresql", 1), // case
	}
	other := "用户的项目使用MySQL八作为主数据库，每周日凌晨两点做增量备份，备份文件保存在北京机房的本地磁盘里，保留七天以后自动删除。"
	for _, v := range variants {
		if s := memory.Similarity(base, v); s <= 0.9 {
			t.Fatalf("setup: variant %q has similarity %.3f", v, s)
		}
	}
	items := unrelated("p", "u", 10, 4)
	items = append(items, Item{ID: "base", Text: base, Partition: "p"}, Item{ID: "other", Text: other, Partition: "p"})
	for i, v := range variants {
		items = append(items, Item{ID: fmt.Sprint("v", i), Text: v, Partition: "p"})
	}
	of := clusterOf(Clusters(items, memory.MergeSimilarity, MinPartition))
	if got, want := len(of["base"].Members), 1+len(variants); got != want {
		t.Fatalf("base's cluster has %d members %v, want %d", got, of["base"].Members, want)
	}
	if got, want := len(of["other"].Members), 1; got != want {
		t.Fatalf("a different fact joined: cluster %v", of["other"].Members)
	}
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	items := Synthetic(200, 9)
	first := Clusters(items, memory.MergeSimilarity, MinPartition)
	if !reflect.DeepEqual(Synthetic(200, 9), items) {
		t.Fatal("Synthetic gave a different set for the same seed")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 2 {
		shuffled := slices.Clone(items)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if got := Clusters(shuffled, memory.MergeSimilarity, MinPartition); !reflect.DeepEqual(got, first) {
			t.Fatalf("shuffle %d: clusters differ", i)
		}
	}
	// The ID names the members: the same members give the same ID, one
	// member fewer gives another.
	for _, c := range first {
		reversed := slices.Clone(c.Members)
		slices.Reverse(reversed)
		if got := clusterID(reversed); got != c.ID {
			t.Fatalf("clusterID of the members in another order = %s, want %s", got, c.ID)
		}
		if len(c.Members) > 1 && clusterID(c.Members[1:]) == c.ID {
			t.Fatalf("cluster %s: the same ID without a member", c.ID)
		}
	}
}

func TestEveryItemOnceAndOrdered(t *testing.T) {
	t.Parallel()
	items := Synthetic(500, 10)
	items = append(items, items[0]) // a repeated ID counts once
	byID := map[string]Item{}
	for _, it := range items {
		byID[it.ID] = it
	}
	cs := Clusters(items, memory.MergeSimilarity, MinPartition)
	seen := map[string]bool{}
	for _, c := range cs {
		if got, want := c.Keep, c.Members[0]; got != want {
			t.Fatalf("Keep = %s, want the first member %s", got, want)
		}
		for i, m := range c.Members {
			if seen[m] {
				t.Fatalf("%s in two clusters", m)
			}
			seen[m] = true
			if i == 0 {
				continue
			}
			a, b := byID[c.Members[i-1]], byID[m]
			if a.Importance < b.Importance || a.Importance == b.Importance && (a.Updated.Before(b.Updated) || a.Updated.Equal(b.Updated) && a.ID > b.ID) {
				t.Fatalf("cluster %s: %s (%v, %s) before %s (%v, %s)", c.ID, a.ID, a.Importance, a.Updated, b.ID, b.Importance, b.Updated)
			}
		}
	}
	// Synthetic puts six items in a partition too small to dedupe.
	if got, want := len(seen), len(byID)-6; got != want {
		t.Fatalf("%d items in clusters, want %d", got, want)
	}
}

func TestBands(t *testing.T) {
	t.Parallel()
	if b, r := bands(memory.MergeSimilarity); b != 21 || r != 6 {
		t.Errorf("bands(0.9) = %d bands of %d rows, want 21 of 6", b, r)
	}
	for _, th := range []float64{0.11, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99} {
		b, r := bands(th)
		if b*r > signatureRows {
			t.Errorf("bands(%v) = %d×%d, more than %d rows", th, b, r, signatureRows)
		}
		if miss := math.Pow(1-math.Pow(th, float64(r)), float64(b)); miss > targetMiss {
			t.Errorf("bands(%v) = %d×%d misses a pair at the threshold with probability %g", th, b, r, miss)
		}
	}
}

// TestMinHashEstimatesJaccard checks the hash family: the share of equal
// signature rows of two sets estimates their Jaccard index.
func TestMinHashEstimatesJaccard(t *testing.T) {
	t.Parallel()
	items := Synthetic(300, 12)
	parts, _ := prepare(items, 0)
	var sum, n float64
	var sa, sb [signatureRows]uint64
	for _, p := range parts {
		for i := 0; i+1 < len(p.entries); i++ {
			a, b := p.entries[i], p.entries[i+1]
			j := jaccard(a.ids, b.ids)
			signature(a.hashes, sa[:])
			signature(b.hashes, sb[:])
			equal := 0
			for k := range sa {
				if sa[k] == sb[k] {
					equal++
				}
			}
			sum += math.Abs(float64(equal)/signatureRows - j)
			n++
		}
	}
	// Pairs of near-duplicates (Synthetic lists them together only by
	// chance after its shuffle) and of unrelated facts are both measured;
	// the standard error of 128 rows is at most 0.044.
	if mean := sum / n; mean > 0.04 {
		t.Fatalf("mean |estimate - jaccard| = %.4f over %v pairs, want ≤ 0.04", mean, n)
	}
	// Near-duplicates: estimate within 0.1 for each.
	cs := Clusters(items, memory.MergeSimilarity, MinPartition)
	byID := map[string]entry{}
	for _, p := range parts {
		for _, e := range p.entries {
			byID[e.item.ID] = e
		}
	}
	checked := 0
	for _, c := range cs {
		for k := 1; k < len(c.Members); k++ {
			a, b := byID[c.Members[0]], byID[c.Members[k]]
			j := jaccard(a.ids, b.ids)
			signature(a.hashes, sa[:])
			signature(b.hashes, sb[:])
			equal := 0
			for r := range sa {
				if sa[r] == sb[r] {
					equal++
				}
			}
			if d := math.Abs(float64(equal)/signatureRows - j); d > 0.15 {
				t.Errorf("%s, %s: %d of %d rows equal for jaccard %.3f", a.item.ID, b.item.ID, equal, signatureRows, j)
			}
			checked++
		}
	}
	if checked < 50 {
		t.Fatalf("only %d near-duplicate pairs checked", checked)
	}
}

func TestPairRecall(t *testing.T) {
	t.Parallel()
	truth := []Cluster{{Members: []string{"a", "b", "c"}}, {Members: []string{"d", "e"}}, {Members: []string{"f"}}}
	for _, tc := range []struct {
		name  string
		found []Cluster
		want  float64
	}{
		{"same", truth, 1},
		{"split", []Cluster{{Members: []string{"a", "b"}}, {Members: []string{"c"}}, {Members: []string{"d", "e"}}, {Members: []string{"f"}}}, 0.5},
		{"all singletons", []Cluster{{Members: []string{"a"}}, {Members: []string{"b"}}}, 0},
		{"one big", []Cluster{{Members: []string{"a", "b", "c", "d", "e", "f"}}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PairRecall(tc.found, truth); got != tc.want {
				t.Fatalf("PairRecall = %v, want %v", got, tc.want)
			}
		})
	}
	if got, want := PairRecall(nil, []Cluster{{Members: []string{"a"}}}), 1.0; got != want {
		t.Fatalf("PairRecall with no pairs = %v, want %v", got, want)
	}
}
