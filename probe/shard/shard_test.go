package shard

import (
	"strings"
	"testing"

	"github.com/fragility/fragility/probe/rundir"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestParseShard(t *testing.T) {
	for _, c := range []struct {
		spec   string
		shards int
		env    func(string) string
		want   rundir.Shard
		err    string // substring of the error; "" = no error
	}{
		{"2/3", 0, env(), rundir.Shard{Index: 2, Count: 3}, ""},
		{" 1 / 1 ", 0, env(), rundir.Shard{Index: 1, Count: 1}, ""},
		{"3/3", 3, env(), rundir.Shard{Index: 3, Count: 3}, ""},
		{"0/3", 0, env(), rundir.Shard{}, "numbered 1..3"},
		{"4/3", 0, env(), rundir.Shard{}, "numbered 1..3"},
		{"1/0", 0, env(), rundir.Shard{}, "at least 1"},
		{"2", 0, env(), rundir.Shard{}, "want K/N"},
		{"a/b", 0, env(), rundir.Shard{}, "want K/N"},
		{"2/3", 4, env(), rundir.Shard{}, "disagree"},
		// Kubernetes: 0-based completion index, --shards required.
		{"auto", 4, env("JOB_COMPLETION_INDEX", "0"), rundir.Shard{Index: 1, Count: 4}, ""},
		{"auto", 4, env("JOB_COMPLETION_INDEX", "3"), rundir.Shard{Index: 4, Count: 4}, ""},
		{"auto", 4, env("JOB_COMPLETION_INDEX", "4"), rundir.Shard{}, "below the number of shards"},
		{"auto", 0, env("JOB_COMPLETION_INDEX", "1"), rundir.Shard{}, "needs --shards"},
		{"auto", 2, env("JOB_COMPLETION_INDEX", "x"), rundir.Shard{}, "not an index"},
		// Slurm: any start index and step.
		{"auto", 0, env("SLURM_ARRAY_TASK_ID", "0", "SLURM_ARRAY_TASK_MIN", "0", "SLURM_ARRAY_TASK_MAX", "2", "SLURM_ARRAY_TASK_COUNT", "3", "SLURM_ARRAY_TASK_STEP", "1"), rundir.Shard{Index: 1, Count: 3}, ""},
		{"auto", 0, env("SLURM_ARRAY_TASK_ID", "7", "SLURM_ARRAY_TASK_MIN", "5", "SLURM_ARRAY_TASK_MAX", "7", "SLURM_ARRAY_TASK_COUNT", "3", "SLURM_ARRAY_TASK_STEP", "1"), rundir.Shard{Index: 3, Count: 3}, ""},
		{"auto", 3, env("SLURM_ARRAY_TASK_ID", "8", "SLURM_ARRAY_TASK_MIN", "4", "SLURM_ARRAY_TASK_MAX", "12", "SLURM_ARRAY_TASK_COUNT", "3", "SLURM_ARRAY_TASK_STEP", "4"), rundir.Shard{Index: 2, Count: 3}, ""},
		{"auto", 0, env("SLURM_ARRAY_TASK_ID", "2", "SLURM_ARRAY_TASK_MIN", "1", "SLURM_ARRAY_TASK_COUNT", "2"), rundir.Shard{Index: 2, Count: 2}, ""},                                                                     // no MAX/STEP (older Slurm)
		{"auto", 0, env("SLURM_ARRAY_TASK_ID", "5", "SLURM_ARRAY_TASK_MIN", "1", "SLURM_ARRAY_TASK_MAX", "6", "SLURM_ARRAY_TASK_COUNT", "3", "SLURM_ARRAY_TASK_STEP", "1"), rundir.Shard{}, "not one evenly spaced range"}, // --array=1,5,6
		{"auto", 4, env("SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_MIN", "1", "SLURM_ARRAY_TASK_MAX", "3", "SLURM_ARRAY_TASK_COUNT", "3"), rundir.Shard{}, "array has 3 tasks"},
		{"auto", 0, env("SLURM_ARRAY_TASK_ID", "1"), rundir.Shard{}, "SLURM_ARRAY_TASK_MIN is not"},
		{"auto", 0, env("SLURM_ARRAY_TASK_ID", "1", "JOB_COMPLETION_INDEX", "1"), rundir.Shard{}, "both"},
		{"auto", 0, env(), rundir.Shard{}, "neither"},
	} {
		got, src, err := ParseShard(c.spec, c.shards, c.env)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("ParseShard(%q, %d): %v", c.spec, c.shards, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseShard(%q, %d) = %v, %v; want an error containing %q", c.spec, c.shards, got, err, c.err)
		case c.err == "" && (got != c.want || src == ""):
			t.Errorf("ParseShard(%q, %d) = %v (%q), want %v", c.spec, c.shards, got, src, c.want)
		case err != nil && strings.Contains(err.Error(), "\n"):
			t.Errorf("ParseShard(%q): error is not one line: %q", c.spec, err)
		}
	}
}
