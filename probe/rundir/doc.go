// Package rundir is the run directory of fragility: the names of its files
// (manifest.json, results.csv, traces.jsonl, set.jsonl, summary.json,
// narrative.md, the lock file), their records (Manifest with the run's
// Config, Trace, the model Identity, Shard and ShardInfo), reading them
// (ReadManifest, ReadResults, ReadTraces), writing them atomically
// (WriteFileAtomic, WriteJSONAtomic) and the directory's lock (LockDir).
//
// It holds no experiment: planning, running, scoring and checking a run
// against its plan are package probe's, which imports this one. It must not
// import probe, load a model or compute a statistic.
package rundir
