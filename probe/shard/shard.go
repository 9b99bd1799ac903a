package shard

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fragility/fragility/probe/rundir"
)

// Environment variables read by ParseShard for "auto".
const (
	EnvSlurmTaskID    = "SLURM_ARRAY_TASK_ID"
	EnvSlurmTaskCount = "SLURM_ARRAY_TASK_COUNT"
	EnvSlurmTaskMin   = "SLURM_ARRAY_TASK_MIN"
	EnvSlurmTaskMax   = "SLURM_ARRAY_TASK_MAX"
	EnvSlurmTaskStep  = "SLURM_ARRAY_TASK_STEP"
	EnvSlurmJobID     = "SLURM_ARRAY_JOB_ID"
	EnvK8sIndex       = "JOB_COMPLETION_INDEX"
)

// ParseShard reads the value of `--shard`: "K/N" (1-based, 1 ≤ K ≤ N), or
// "auto", which takes the shard from the scheduler's environment (getenv,
// e.g. os.Getenv):
//
//   - a Kubernetes Indexed Job sets JOB_COMPLETION_INDEX = 0..completions−1;
//     shard = index+1 of shards (the `--shards N` flag, required: the pod is
//     not told the number of completions);
//   - a Slurm job array sets SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN,
//     SLURM_ARRAY_TASK_MAX, SLURM_ARRAY_TASK_STEP and SLURM_ARRAY_TASK_COUNT;
//     the array may start at any index and have a step (--array=4-12:4), so
//     shard = (ID − MIN)/STEP + 1 of COUNT. An array with gaps (--array=1,5,6)
//     is refused: its task IDs do not number the shards. shards, when not 0,
//     must equal COUNT.
//
// shards is the `--shards` flag (0 = not given); with "K/N" it must be 0 or N.
// It returns the shard and a description of where it came from, for the
// manifest. Errors say what is wrong in one line.
func ParseShard(spec string, shards int, getenv func(string) string) (rundir.Shard, string, error) {
	if shards < 0 {
		return rundir.Shard{}, "", fmt.Errorf("--shards must be at least 1, got %d", shards)
	}
	if spec != "auto" {
		return parseShardSpec(spec, shards)
	}
	k8s, slurm := getenv(EnvK8sIndex), getenv(EnvSlurmTaskID)
	switch {
	case k8s != "" && slurm != "":
		return rundir.Shard{}, "", fmt.Errorf("--shard auto: both %s and %s are set: give --shard K/N", EnvK8sIndex, EnvSlurmTaskID)
	case k8s != "":
		return k8sShard(k8s, shards)
	case slurm != "":
		return slurmShard(shards, getenv)
	}
	return rundir.Shard{}, "", fmt.Errorf("--shard auto: neither %s (Slurm job array) nor %s (Kubernetes Indexed Job) is set: give --shard K/N", EnvSlurmTaskID, EnvK8sIndex)
}

// parseShardSpec reads --shard K/N; shards (--shards, 0 when not given)
// must agree with N.
func parseShardSpec(spec string, shards int) (rundir.Shard, string, error) {
	k, n, ok := strings.Cut(spec, "/")
	ki, err1 := strconv.Atoi(strings.TrimSpace(k))
	ni, err2 := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err1 != nil || err2 != nil {
		return rundir.Shard{}, "", fmt.Errorf("--shard %q: want K/N (e.g. 2/8, numbered from 1) or auto", spec)
	}
	s := rundir.Shard{Index: ki, Count: ni}
	if err := s.Valid(); err != nil {
		return rundir.Shard{}, "", fmt.Errorf("--shard %s", err)
	}
	if shards != 0 && shards != ni {
		return rundir.Shard{}, "", fmt.Errorf("--shard %s and --shards %d disagree", spec, shards)
	}
	return s, "--shard " + s.String(), nil
}

// k8sShard is the shard of a Kubernetes Indexed Job's pod: its completion
// index k8s (from 0) of shards (--shards, required).
func k8sShard(k8s string, shards int) (rundir.Shard, string, error) {
	i, err := strconv.Atoi(k8s)
	if err != nil || i < 0 {
		return rundir.Shard{}, "", fmt.Errorf("--shard auto: %s=%q is not an index ≥ 0", EnvK8sIndex, k8s)
	}
	if shards == 0 {
		return rundir.Shard{}, "", fmt.Errorf("--shard auto with %s needs --shards N (the Job's completions)", EnvK8sIndex)
	}
	s := rundir.Shard{Index: i + 1, Count: shards}
	if err := s.Valid(); err != nil {
		return rundir.Shard{}, "", fmt.Errorf("--shard auto: %s=%d with --shards %d: the index must be below the number of shards", EnvK8sIndex, i, shards)
	}
	return s, fmt.Sprintf("%s=%d (Kubernetes Indexed Job, --shards %d)", EnvK8sIndex, i, shards), nil
}

// slurmShard is the shard of a Slurm job array task, numbered by its task
// ID within the array's evenly spaced range; shards (--shards, 0 when not
// given) must agree with the array's task count.
func slurmShard(shards int, getenv func(string) string) (rundir.Shard, string, error) {
	num := func(name, def string) (int, error) {
		v := getenv(name)
		if v == "" {
			v = def
		}
		if v == "" {
			return 0, fmt.Errorf("--shard auto: %s is set but %s is not (not a Slurm job array task?)", EnvSlurmTaskID, name)
		}
		x, err := strconv.Atoi(v)
		if err != nil || x < 0 {
			return 0, fmt.Errorf("--shard auto: %s=%q is not a number ≥ 0", name, v)
		}
		return x, nil
	}
	id, err := num(EnvSlurmTaskID, "")
	if err != nil {
		return rundir.Shard{}, "", err
	}
	lo, err := num(EnvSlurmTaskMin, "")
	if err != nil {
		return rundir.Shard{}, "", err
	}
	count, err := num(EnvSlurmTaskCount, "")
	if err != nil {
		return rundir.Shard{}, "", err
	}
	step, err := num(EnvSlurmTaskStep, "1")
	if err != nil {
		return rundir.Shard{}, "", err
	}
	hi, err := num(EnvSlurmTaskMax, strconv.Itoa(lo+(count-1)*max(step, 1)))
	if err != nil {
		return rundir.Shard{}, "", err
	}
	if step < 1 {
		step = 1
	}
	if count < 1 || hi < lo || (hi-lo)%step != 0 || (hi-lo)/step+1 != count || id < lo || id > hi || (id-lo)%step != 0 {
		return rundir.Shard{}, "", fmt.Errorf("--shard auto: the array (tasks %d..%d step %d, %d tasks, this one %d) is not one evenly spaced range, so its task IDs do not number the shards: submit --array=0-%d, or give --shard K/N", lo, hi, step, count, id, max(count-1, 0))
	}
	if shards != 0 && shards != count {
		return rundir.Shard{}, "", fmt.Errorf("--shard auto: --shards %d but the Slurm array has %d tasks (%s)", shards, count, EnvSlurmTaskCount)
	}
	s := rundir.Shard{Index: (id-lo)/step + 1, Count: count}
	src := fmt.Sprintf("%s=%d (Slurm job array %s, tasks %d..%d step %d)", EnvSlurmTaskID, id, getenv(EnvSlurmJobID), lo, hi, step)
	return s, src, nil
}
