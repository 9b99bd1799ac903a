package rundir

import "fmt"

// Shard names one part of a run split for a cluster: shard Index of Count,
// numbered from 1 ("2/3" is the second of three). A shard runs a contiguous
// range of the plan's batches (see ShardBatches), so that every item is
// decoded together with exactly the items it would have been decoded with in
// the whole run: llama.cpp is not batch-invariant.
type Shard struct {
	Index int `json:"index"` // 1..Count
	Count int `json:"count"` // number of shards the plan is split into
}

// String renders the shard as "K/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Valid reports an error unless 1 ≤ Index ≤ Count; the message starts
// with "K/N: ".
func (s Shard) Valid() error {
	if s.Count < 1 {
		return fmt.Errorf("%s: the number of shards must be at least 1", s)
	}
	if s.Index < 1 || s.Index > s.Count {
		return fmt.Errorf("%s: shards are numbered 1..%d (a 0-based scheduler index i is shard i+1; --shard auto does this)", s, s.Count)
	}
	return nil
}

// ShardBatches returns the half-open range [lo, hi) of the plan's batches
// (numbered 0..batches−1, model by model) that shard s runs: shard k of n
// gets batches ⌊(k−1)·B/n⌋ up to ⌊k·B/n⌋, so the shards are contiguous,
// cover every batch once and differ in size by at most one batch.
// Contiguous ranges keep the models a shard loads to one or two when a plan
// holds several models. The zero Shard means the whole plan.
func ShardBatches(s Shard, batches int) (lo, hi int) {
	if s.Count == 0 {
		return 0, batches
	}
	return (s.Index - 1) * batches / s.Count, s.Index * batches / s.Count
}

// ShardInfo is the manifest's record of a shard run.
type ShardInfo struct {
	Shard
	Source      string `json:"source"`       // "--shard 2/8", or the scheduler variable it came from
	Host        string `json:"host"`         // the machine that ran it
	FirstBatch  int    `json:"first_batch"`  // 0-based index of its first batch in the plan
	Batches     int    `json:"batches"`      // batches it runs (contiguous from FirstBatch)
	Items       int    `json:"items"`        // items it runs
	PlanBatches int    `json:"plan_batches"` // batches of the whole plan
	PlanItems   int    `json:"plan_items"`   // items of the whole plan (all models)
}
