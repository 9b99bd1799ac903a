// Package rundir is the run directory of fragility: the names of its files
// (manifest.json, results.csv, traces.jsonl, set.jsonl, summary.json,
// narrative.md, the lock file), their records (Manifest with the run's
// Config, Trace, the model Identity, Shard and ShardInfo), reading them
// (ReadManifest, ReadResults, ReadTraces), writing them atomically
// (WriteFileAtomic, WriteJSONAtomic), results.csv and traces.jsonl
// appended durably and read back on a resume (Streams) with the crash hook
// of the reliability tests (EnvCrashAt), the directory's lock and
// preparation (LockDir, PrepareDir), and the checks of a file's form that
// need no plan: a row's response against its trace's pieces
// (MatchResponse), measures no run can write (CheckMeasures), items missing
// or repeated (SameItems).
//
// It holds no experiment: planning, running, scoring and checking a run
// against its plan are package probe's, which imports this one. It must not
// import probe, load a model or compute a statistic.
package rundir
