// Package shard splits a run across machines and puts it back together:
// ParseShard reads `--shard K/N` or a scheduler's environment (a Slurm job
// array, a Kubernetes Indexed Job), and Merge checks a plan's shard run
// directories against the plan and against each other and writes the
// merged run directory, whose files are those the whole run would have
// written (`fragility merge`). A shard itself is run by probe.Run with
// Config.Shard set; which batches it runs is rundir.ShardBatches.
package shard
