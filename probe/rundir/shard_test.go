package rundir

import "testing"

// TestShardBatchesPartition: for every plan size and shard count, the
// shards' ranges are contiguous, in order, cover every batch exactly once
// and differ in size by at most one.
func TestShardBatchesPartition(t *testing.T) {
	for b := 1; b <= 40; b++ {
		for n := 1; n <= b; n++ {
			next, smallest, largest := 0, b, 0
			for k := 1; k <= n; k++ {
				lo, hi := ShardBatches(Shard{Index: k, Count: n}, b)
				if lo != next || hi <= lo {
					t.Fatalf("B=%d N=%d: shard %d is [%d,%d), want it to start at %d and be non-empty", b, n, k, lo, hi, next)
				}
				next = hi
				smallest, largest = min(smallest, hi-lo), max(largest, hi-lo)
			}
			if next != b || largest-smallest > 1 {
				t.Fatalf("B=%d N=%d: shards end at %d (want %d), sizes %d..%d", b, n, next, b, smallest, largest)
			}
		}
	}
	if lo, hi := ShardBatches(Shard{}, 7); lo != 0 || hi != 7 {
		t.Errorf("zero Shard: [%d,%d), want the whole plan", lo, hi)
	}
}
