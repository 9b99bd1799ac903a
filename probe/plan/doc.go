// Package plan sizes a run before anything runs (`fragility plan`): how
// many templates a drop needs to be detected with the wanted power
// (MakePlan, PooledComponents, from the variance components of a pilot
// run), how many items, batches, tokens, how much memory and time the run
// and each of its shards take (PlanShards, with a rate from a bench file,
// a previous run, the last bench on this machine or a calibration:
// BenchThroughput, RunThroughput, LastBenchThroughput, Calibrator), what
// share of a pilot's answers its budget cut (PilotCut), and both together
// for a run's configuration (PlanRun). It runs no model itself: the
// command gives it a Calibrator (bench.Calibrate).
package plan
