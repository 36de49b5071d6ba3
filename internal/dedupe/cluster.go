package dedupe

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"slices"
	"strings"
	"time"
)

// MinPartition is the smallest partition the weekly job dedupes: fewer
// entries are not worth the pass (seed 001 §7.3).
const MinPartition = 10

// Item is a memory as dedupe sees it.
type Item struct {
	ID   string
	Text string
	// Key, when set, is what similarity is measured on instead of Text
	// (the weekly job sets Key(Text)); Text is what a model reads.
	Key        string
	Importance float64
	Updated    time.Time
	Partition  string // project/topic; items of different partitions never merge
}

// Cluster is a set of near-duplicates: each member is more similar than the
// threshold to at least one other member (a singleton has no other).
type Cluster struct {
	// ID is derived from the member IDs alone, so the same cluster found on
	// a replay or by another worker has the same ID.
	ID        string
	Partition string
	// Members are sorted by importance (highest first), then updated
	// (newest first), then ID.
	Members []string
	// Keep is the member the others merge into: Members[0].
	Keep string
}

// stats says how much work a clustering did.
type stats struct {
	Items      int // items in partitions that were clustered
	Partitions int // partitions clustered (at least minPartition items)
	Skipped    int // items left out because their partition was too small
	// Compared counts exact similarity computations: every pair for
	// Pairwise, only LSH candidates not already joined for Clusters.
	Compared int
}

// Clusters groups near-duplicates (memory.Similarity above threshold)
// within each partition of at least minPartition items, in about
// O(n log n) time.
//
// Every item is a MinHash signature over memory.Similarity's shingles; the
// signature is cut into bands, and items that agree on a whole band are
// candidates (one sort of the band keys finds them). Each candidate pair not
// already in one cluster is checked with the exact similarity, and a
// union-find joins those above the threshold, so clusters are transitive and
// hold no pair LSH invented. Bands are sized from the threshold so that a
// pair exactly at it is missed with probability below one in a million (for
// thresholds of 0.11 and above; lower ones lose recall). Hash seeds are
// fixed: the same items in any order give the same clusters.
//
// Every item of a clustered partition is in exactly one cluster, singletons
// included; items of smaller partitions are in none. IDs are expected to be
// unique; a repeated ID is kept once, the first time it appears. Clusters
// come sorted by partition, then size (largest first), then ID.
func Clusters(items []Item, threshold float64, minPartition int) []Cluster {
	cs, _ := clusterLSH(items, threshold, minPartition)
	return cs
}

// Pairwise is the O(n²) baseline: the exact similarity of every pair in
// each partition. It returns what Clusters returns when LSH misses nothing.
func Pairwise(items []Item, threshold float64, minPartition int) []Cluster {
	cs, _ := clusterPairwise(items, threshold, minPartition)
	return cs
}

func clusterLSH(items []Item, threshold float64, minPartition int) ([]Cluster, stats) {
	parts, st := prepare(items, minPartition)
	b, r := bands(threshold)
	var out []Cluster
	for _, p := range parts {
		uf := newUnionFind(len(p.entries))
		keys := bandKeys(p.entries, b, r)
		for start := 0; start < len(keys); {
			end := start + 1
			for end < len(keys) && keys[end].key == keys[start].key {
				end++
			}
			// A bucket holds every pair it could; those already joined need
			// no check, which keeps a bucket of true duplicates linear.
			for j := start + 1; j < end; j++ {
				for i := start; i < j; i++ {
					x, y := keys[i].idx, keys[j].idx
					if uf.find(x) == uf.find(y) {
						continue
					}
					st.Compared++
					if jaccard(p.entries[x].ids, p.entries[y].ids) > threshold {
						uf.union(x, y)
					}
				}
			}
			start = end
		}
		out = append(out, components(p, uf)...)
	}
	return out, st
}

func clusterPairwise(items []Item, threshold float64, minPartition int) ([]Cluster, stats) {
	parts, st := prepare(items, minPartition)
	var out []Cluster
	for _, p := range parts {
		uf := newUnionFind(len(p.entries))
		for j := range p.entries {
			for i := range j {
				st.Compared++
				if jaccard(p.entries[i].ids, p.entries[j].ids) > threshold {
					uf.union(int32(i), int32(j))
				}
			}
		}
		out = append(out, components(p, uf)...)
	}
	return out, st
}

type entry struct {
	item   Item
	ids    []uint32 // shingles as sorted, distinct ids, for the exact similarity
	hashes []uint64 // shingles hashed, for MinHash; independent of input order
}

type partition struct {
	name    string
	entries []entry // sorted by item ID, so the input order does not matter
}

// prepare splits items into partitions of at least minPartition items and
// shingles each item once.
func prepare(items []Item, minPartition int) ([]partition, stats) {
	var st stats
	byName := map[string][]Item{}
	seen := make(map[string]bool, len(items))
	for _, it := range items {
		if seen[it.ID] {
			continue
		}
		seen[it.ID] = true
		byName[it.Partition] = append(byName[it.Partition], it)
	}
	names := make([]string, 0, len(byName))
	for name, its := range byName {
		if len(its) < minPartition {
			st.Skipped += len(its)
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)
	dict := map[string]uint32{}
	var hashes []uint64 // by shingle id
	parts := make([]partition, 0, len(names))
	for _, name := range names {
		its := byName[name]
		slices.SortFunc(its, func(a, b Item) int { return strings.Compare(a.ID, b.ID) })
		p := partition{name: name, entries: make([]entry, len(its))}
		for i, it := range its {
			sh := shingles(cmp.Or(it.Key, it.Text))
			e := entry{item: it, ids: make([]uint32, len(sh)), hashes: make([]uint64, len(sh))}
			for k, s := range sh {
				id, ok := dict[s]
				if !ok {
					id = uint32(len(dict))
					dict[s] = id
					hashes = append(hashes, mix(fnv64a(s)))
				}
				e.ids[k] = id
				e.hashes[k] = hashes[id]
			}
			slices.Sort(e.ids)
			p.entries[i] = e
		}
		st.Items += len(its)
		parts = append(parts, p)
	}
	st.Partitions = len(parts)
	return parts, st
}

// fnv64a is FNV-1a, written out to hash a shingle without allocating.
func fnv64a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// Signature size and the per-pair miss probability bands aims for.
const (
	signatureRows  = 128
	maxRowsPerBand = 16
	targetMiss     = 1e-6
)

// bands returns how many bands of how many rows to use at threshold t: the
// most rows per band (fewest false candidates) for which a pair of
// similarity t shares no band with probability at most targetMiss.
func bands(t float64) (b, r int) {
	for r = maxRowsPerBand; r > 1; r-- {
		b = signatureRows / r
		if math.Pow(1-math.Pow(t, float64(r)), float64(b)) <= targetMiss {
			return b, r
		}
	}
	return signatureRows, 1
}

// minhashA and minhashB are the fixed coefficients of the MinHash
// functions h(x) = a·x + b (mod 2⁶⁴), a odd, over well-mixed shingle hashes:
// one multiply and one add per shingle and row, with collision rates that
// track the Jaccard index (TestMinHashEstimatesJaccard).
var minhashA, minhashB = func() (a, b [signatureRows]uint64) {
	x := uint64(0x656e6772616d) // "engram"
	for i := range a {
		x += 0x9e3779b97f4a7c15
		a[i] = mix(x) | 1
		x += 0x9e3779b97f4a7c15
		b[i] = mix(x)
	}
	return a, b
}()

// mix is MurmurHash3's 64-bit finalizer: a bijection that spreads every
// input bit over the output.
func mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

type bandKey struct {
	key uint64
	idx int32
}

// bandKeys returns one key per item and band, sorted, so that items sharing
// a band sit next to each other. The band number is part of the key: two
// items agreeing on different bands are not candidates.
func bandKeys(entries []entry, b, r int) []bandKey {
	rows := b * r
	keys := make([]bandKey, 0, len(entries)*b)
	sig := make([]uint64, rows)
	for idx, e := range entries {
		signature(e.hashes, sig)
		for band := range b {
			k := mix(uint64(band+1) * 0x9e3779b97f4a7c15)
			for _, v := range sig[band*r : (band+1)*r] {
				k = mix(k ^ v)
			}
			keys = append(keys, bandKey{k, int32(idx)})
		}
	}
	slices.SortFunc(keys, func(x, y bandKey) int {
		return cmp.Or(cmp.Compare(x.key, y.key), cmp.Compare(x.idx, y.idx))
	})
	return keys
}

// signature fills sig with the MinHash of a set of shingle hashes: row i
// holds the least value of the i-th hash function over the set.
func signature(hashes []uint64, sig []uint64) {
	for i := range sig {
		sig[i] = math.MaxUint64
	}
	for _, h := range hashes {
		for i := range sig {
			if v := minhashA[i]*h + minhashB[i]; v < sig[i] {
				sig[i] = v
			}
		}
	}
}

// components turns the union-find of a partition into clusters.
func components(p partition, uf *unionFind) []Cluster {
	groups := map[int32][]Item{}
	var roots []int32
	for i, e := range p.entries {
		root := uf.find(int32(i))
		if _, ok := groups[root]; !ok {
			roots = append(roots, root)
		}
		groups[root] = append(groups[root], e.item)
	}
	out := make([]Cluster, 0, len(roots))
	for _, root := range roots {
		out = append(out, newCluster(p.name, groups[root]))
	}
	slices.SortFunc(out, func(a, b Cluster) int {
		return cmp.Or(cmp.Compare(len(b.Members), len(a.Members)), strings.Compare(a.ID, b.ID))
	})
	return out
}

func newCluster(partition string, members []Item) Cluster {
	sortMembers(members)
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = m.ID
	}
	return Cluster{ID: clusterID(ids), Partition: partition, Members: ids, Keep: ids[0]}
}

// sortMembers puts the member to keep first: highest importance, then
// newest, then lowest ID.
func sortMembers(members []Item) {
	slices.SortFunc(members, func(a, b Item) int {
		return cmp.Or(cmp.Compare(b.Importance, a.Importance), b.Updated.Compare(a.Updated), strings.Compare(a.ID, b.ID))
	})
}

// clusterID hashes the sorted member IDs.
func clusterID(ids []string) string {
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	h := sha256.New()
	for _, id := range sorted {
		h.Write([]byte(id))
		h.Write([]byte{0})
	}
	return "dc_" + hex.EncodeToString(h.Sum(nil)[:10])
}

type unionFind struct{ parent, size []int32 }

func newUnionFind(n int) *unionFind {
	u := &unionFind{parent: make([]int32, n), size: make([]int32, n)}
	for i := range u.parent {
		u.parent[i] = int32(i)
		u.size[i] = 1
	}
	return u
}

func (u *unionFind) find(x int32) int32 {
	for u.parent[x] != x {
		u.parent[x] = u.parent[u.parent[x]]
		x = u.parent[x]
	}
	return x
}

func (u *unionFind) union(a, b int32) {
	a, b = u.find(a), u.find(b)
	if a == b {
		return
	}
	if u.size[a] < u.size[b] {
		a, b = b, a
	}
	u.parent[b] = a
	u.size[a] += u.size[b]
}

// PairRecall is the share of pairs that truth puts in one cluster which
// found also puts in one cluster: 1 when found loses no merge. Swapping the
// arguments gives precision. With no pairs in truth it is 1.
func PairRecall(found, truth []Cluster) float64 {
	where := map[string]int{}
	for i, c := range found {
		for _, m := range c.Members {
			where[m] = i
		}
	}
	var want, got int
	for _, c := range truth {
		n := len(c.Members)
		want += n * (n - 1) / 2
		counts := map[int]int{}
		for _, m := range c.Members {
			if i, ok := where[m]; ok {
				counts[i]++
			}
		}
		for _, k := range counts {
			got += k * (k - 1) / 2
		}
	}
	if want == 0 {
		return 1
	}
	return float64(got) / float64(want)
}
