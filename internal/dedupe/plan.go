package dedupe

// MergePlan is what merging one cluster comes to. It changes nothing by
// itself: the consolidator publishes it as a merge event, and the projector
// applies that.
type MergePlan struct {
	Cluster Cluster
	// Into is the memory that stays: the highest importance, then the newest.
	Into string
	// Merged are the other members, folded into Into; empty for a singleton.
	Merged []string
	// Importance is the highest importance among the members (seed 002
	// §6.1: keep the higher importance).
	Importance float64
	// Content is Into's new content when a model rewrote it; "" keeps Into
	// as it is.
	Content string
}

// Plan plans the merge of each cluster, in the order given. items is the
// current state of the memories: the kept member and the importance are
// taken from it, not from when the clusters were made, and members missing
// from it (deleted since) are left out. A cluster none of whose members is
// left has no plan.
func Plan(clusters []Cluster, items map[string]Item) []MergePlan {
	plans := make([]MergePlan, 0, len(clusters))
	for _, c := range clusters {
		members := make([]Item, 0, len(c.Members))
		for _, id := range c.Members {
			if it, ok := items[id]; ok {
				members = append(members, it)
			}
		}
		if len(members) == 0 {
			continue
		}
		sortMembers(members)
		p := MergePlan{Cluster: c, Into: members[0].ID, Importance: members[0].Importance}
		for _, m := range members[1:] {
			p.Merged = append(p.Merged, m.ID)
			p.Importance = max(p.Importance, m.Importance)
		}
		plans = append(plans, p)
	}
	return plans
}
