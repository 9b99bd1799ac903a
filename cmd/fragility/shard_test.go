package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fragility/fragility/probe/plan"
	"github.com/fragility/fragility/probe/rundir"
)

// TestShardUsage: wrong --shard/--shards combinations are usage errors (exit
// 2, one line) before anything loads.
func TestShardUsage(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x")
	for _, c := range []struct {
		args []string
		env  []string
		want string
	}{
		{[]string{"--shard", "0/3"}, nil, "numbered 1..3"},
		{[]string{"--shard", "3"}, nil, "want K/N"},
		{[]string{"--shard", "auto"}, []string{"SLURM_ARRAY_TASK_ID=", "JOB_COMPLETION_INDEX="}, "neither SLURM_ARRAY_TASK_ID"},
		{[]string{"--shard", "auto"}, []string{"SLURM_ARRAY_TASK_ID=", "JOB_COMPLETION_INDEX=2"}, "needs --shards"},
		{[]string{"--shards", "3"}, nil, "--shards is for --shard auto"},
	} {
		r := fragility(t, c.env, append([]string{"run", "--no-ddc", "--quiet", "--out", out}, c.args...)...)
		line := strings.TrimSuffix(r.stderr, "\n")
		if r.code != exitUsage || strings.Contains(line, "\n") || !strings.Contains(line, c.want) {
			t.Errorf("run %v: exit %d, stderr %q; want exit %d and one line containing %q", c.args, r.code, r.stderr, exitUsage, c.want)
		}
	}
	r := fragility(t, nil, "run", "--resume", out, "--shard", "1/2")
	if r.code != exitUsage || !strings.Contains(r.stderr, "keeps the shard") {
		t.Errorf("run --resume --shard: exit %d, %q", r.code, r.stderr)
	}
	r = fragility(t, nil, "merge", out)
	if r.code != exitUsage {
		t.Errorf("merge with one argument: exit %d, want %d", r.code, exitUsage)
	}
	r = fragility(t, nil, "merge", out, filepath.Join(out, "nope"))
	oneErrorLine(t, "merge of a missing directory", r, "not a run directory")
}

var (
	tinyBinOnce  sync.Once
	tinyBinPaths []string
	tinyBinErr   error
)

// tinyModelFiles writes two tiny models with `fragility tiny-model` (seeds 1
// and 2) once per test binary.
func tinyModelFiles(t *testing.T) []string {
	t.Helper()
	tinyBinOnce.Do(func() {
		dir, err := os.MkdirTemp(binDirOrTemp(t), "tiny-")
		if err != nil {
			tinyBinErr = err
			return
		}
		os.Chmod(dir, 0o755)
		for _, seed := range []string{"1", "2"} {
			p := filepath.Join(dir, "tiny-s"+seed+".gguf")
			if r := fragility(t, nil, "tiny-model", "--seed", seed, p); r.code != 0 {
				tinyBinErr = fmt.Errorf("tiny-model: exit %d: %s", r.code, r.stderr)
				return
			}
			tinyBinPaths = append(tinyBinPaths, p)
		}
	})
	if tinyBinErr != nil {
		t.Fatal(tinyBinErr)
	}
	return tinyBinPaths
}

// shardRunFlags is the plan of the CLI shard tests: two tiny models, the
// four templates of the run tests (templateDir) in base and noop, one instance, batches of 3, 4 tokens,
// a context some prompts do not fit, one thread.
func shardRunFlags(t *testing.T) []string {
	return append(shardPlanFlags(t), "--threads", "1", "--bootstrap", "200", "--no-ddc")
}

// shardPlanFlags are the flags of shardRunFlags that `fragility plan` takes too.
func shardPlanFlags(t *testing.T) []string {
	m := tinyModelFiles(t)
	return []string{"--model", m[0], "--model", m[1], "--templates", templateDir(t), "--variants", "base,noop", "--instances", "1", "--seed", "5",
		"--batch", "3", "--max-tokens", "4", "--n-ctx", "96", "--gpu-layers", "0"}
}

var (
	wholeOnce sync.Once
	wholeDir  string
)

// wholeShardRun runs the shard tests' plan unsharded, once.
func wholeShardRun(t *testing.T) string {
	t.Helper()
	wholeOnce.Do(func() {
		d := filepath.Join(binDirOrTemp(t), "whole-shard-plan")
		r := fragility(t, nil, append([]string{"run", "--quiet", "--out", d}, shardRunFlags(t)...)...)
		if r.code != 0 {
			t.Fatalf("whole run: exit %d\n%s", r.code, tail(r.stderr))
		}
		wholeDir = d
	})
	if wholeDir == "" {
		t.Fatal("the whole run failed in another test")
	}
	return wholeDir
}

// sameAsWhole fails unless merged holds the whole run's results (seconds
// aside), traces, set, summary and narrative byte for byte, and was merged
// from n shards.
func sameAsWhole(t *testing.T, merged string, n int) *rundir.Manifest {
	t.Helper()
	whole := wholeShardRun(t)
	if got, want := rowsWithoutSeconds(t, merged), rowsWithoutSeconds(t, whole); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("%s: results.csv differs from the whole run's (seconds aside)", merged)
	}
	for _, f := range []string{rundir.FileTraces, rundir.FileSet, rundir.FileSummary, rundir.FileNarrative} {
		a, _ := os.ReadFile(filepath.Join(merged, f))
		b, _ := os.ReadFile(filepath.Join(whole, f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s: %s is not byte-identical to the whole run's", merged, f)
		}
	}
	man, err := rundir.ReadManifest(merged)
	if err != nil {
		t.Fatal(err)
	}
	if man.Status != "complete" || len(man.MergedFrom) != n {
		t.Fatalf("%s: status %q, merged from %d shards, want complete from %d", merged, man.Status, len(man.MergedFrom), n)
	}
	return man
}

// TestLocalShardScripts runs the one-machine launch scripts (plain shell,
// and GNU parallel when installed) with 3 shards, compares the merge with
// the whole run, and verifies the merged directory with `fragility verify`.
func TestLocalShardScripts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tiny models")
	}
	wholeShardRun(t)
	scripts := []string{"run-shards.sh"}
	if _, err := exec.LookPath("parallel"); err == nil {
		scripts = append(scripts, "run-shards-parallel.sh")
	} else {
		t.Log("GNU parallel is not installed: run-shards-parallel.sh not tested")
	}
	narr, err := os.ReadFile(filepath.Join(wholeShardRun(t), rundir.FileNarrative))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scripts {
		t.Run(s, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			cmd := exec.Command(filepath.Join("..", "..", "deploy", "local", s), append([]string{"-n", "3", "-o", out, "--"}, shardRunFlags(t)...)...)
			cmd.Env = append(os.Environ(), "FRAGILITY_BIN="+fragilityBin(t), "GPUS=none")
			r := wait(t, cmd, start(t, cmd))
			if r.code != 0 {
				logs, _ := filepath.Glob(filepath.Join(out, "logs", "*"))
				for _, l := range logs {
					t.Logf("%s:\n%s", l, fileTail(l))
				}
				t.Fatalf("%s: exit %d\n%s", s, r.code, tail(r.stderr))
			}
			merged := filepath.Join(out, "merged")
			man := sameAsWhole(t, merged, 3)
			if src := man.MergedFrom[1].Source; src != "--shard 2/3" {
				t.Errorf("shard 2's source %q, want \"--shard 2/3\"", src)
			}
			if !strings.Contains(r.stdout, string(narr)) {
				t.Errorf("%s did not print the run's narrative:\n%s", s, tail(r.stdout))
			}
			if s != "run-shards.sh" {
				return
			}
			// The merged directory replays bit for bit.
			r = fragility(t, nil, "verify", "--quiet", merged)
			if r.code != 0 || !strings.Contains(r.stdout, "reproduces bit for bit") {
				t.Errorf("verify merged: exit %d\n%s%s", r.code, r.stdout, tail(r.stderr))
			}
			// Run again: the finished shards are kept, the merge is redone.
			before, _ := os.ReadFile(filepath.Join(out, "shards", "2", rundir.FileManifest))
			again := cmd2(cmd)
			if r := wait(t, again, start(t, again)); r.code != 0 {
				t.Errorf("%s again: exit %d\n%s", s, r.code, tail(r.stderr))
			}
			after, _ := os.ReadFile(filepath.Join(out, "shards", "2", rundir.FileManifest))
			if !bytes.Equal(before, after) {
				t.Errorf("running %s again touched a finished shard", s)
			}
		})
	}
}

// cmd2 is a fresh copy of a command, to run it again.
func cmd2(c *exec.Cmd) *exec.Cmd {
	n := exec.Command(c.Path, c.Args[1:]...)
	n.Env = c.Env
	return n
}

// slurmPackages are the Debian packages the Slurm test needs.
var slurmPackages = []string{"slurm-wlm", "munge"}

// slurmTools finds the Slurm and MUNGE programs the test runs, or says
// which is missing.
func slurmTools() (map[string]string, error) {
	tools := map[string]string{}
	for _, name := range []string{"sbatch", "sinfo", "scontrol", "slurmctld", "slurmd", "munged", "mungekey"} {
		p, err := exec.LookPath(name)
		if err != nil {
			for _, d := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
				if _, serr := os.Stat(filepath.Join(d, name)); serr == nil {
					p, err = filepath.Join(d, name), nil
					break
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s not found", name)
		}
		tools[name] = p
	}
	return tools, nil
}

// ensureSlurm returns the Slurm tools, installing Debian's slurm-wlm and
// munge with apt-get when they are missing and this process is root; it
// skips the test (with the reason) when they cannot be had.
func ensureSlurm(t *testing.T) map[string]string {
	t.Helper()
	tools, err := slurmTools()
	if err == nil {
		return tools
	}
	if os.Geteuid() != 0 {
		t.Skipf("Slurm test skipped: %v, and installing %v needs root (apt-get install -y %s)", err, slurmPackages, strings.Join(slurmPackages, " "))
	}
	if _, lerr := exec.LookPath("apt-get"); lerr != nil {
		t.Skipf("Slurm test skipped: %v, and there is no apt-get to install %v", err, slurmPackages)
	}
	t.Logf("Slurm test: %v; installing %v with apt-get (a few minutes)", err, slurmPackages)
	t0 := time.Now()
	install := fmt.Sprintf("apt-get -o DPkg::Lock::Timeout=300 update -qq && apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends %s", strings.Join(slurmPackages, " "))
	cmd := exec.Command("timeout", "900", "sh", "-c", install)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, ierr := cmd.CombinedOutput(); ierr != nil {
		t.Skipf("Slurm test skipped: %v and `%s` failed (%v):\n%s", err, install, ierr, tail(string(out)))
	}
	tools, err = slurmTools()
	if err != nil {
		t.Skipf("Slurm test skipped: after installing %v: %v", slurmPackages, err)
	}
	t.Logf("Slurm test: installed %v in %v", slurmPackages, time.Since(t0).Round(time.Second))
	return tools
}

// freePorts returns n TCP ports free on 127.0.0.1 now.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// daemon starts a program in its own process group, its output to log, and
// stops the group at the end of the test.
func daemon(t *testing.T, log string, env []string, name string, args ...string) {
	t.Helper()
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("%s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); f.Close(); close(done) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
}

func fileTail(path string) string {
	b, _ := os.ReadFile(path)
	return tail(string(b))
}

// TestSlurmArray runs the shard plan on a real Slurm: Debian's slurm-wlm and
// munge (installed with apt-get when missing and root; skipped with the
// reason otherwise), a one-node controller and daemon on 127.0.0.1 with this
// machine's cores, configured in a temporary directory (no cgroups:
// proctrack/linuxproc, task/none; MUNGE with a generated key on its own
// socket). It submits deploy/slurm/submit.sh -w: the array of 3 shards with
// sbatch --array --wait and the merge as a job depending on it
// (--dependency=afterok), then compares the merge with the whole run and
// tears everything down. Nothing leaves the machine.
//
// Run it alone with: go test -run TestSlurmArray ./cmd/fragility/ (make test-slurm).
func TestSlurmArray(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Slurm cluster")
	}
	t0 := time.Now()
	tools := ensureSlurm(t)
	wholeShardRun(t)

	dir, err := os.MkdirTemp("", "fragility-slurm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	mungeDir := filepath.Join(dir, "munge")
	for _, d := range []string{mungeDir, filepath.Join(dir, "state"), filepath.Join(dir, "spool"), filepath.Join(dir, "out")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(mungeDir, 0o711) // clients need to reach the socket
	key := filepath.Join(mungeDir, "munge.key")
	if out, err := exec.Command(tools["mungekey"], "--create", "--keyfile", key).CombinedOutput(); err != nil {
		t.Fatalf("mungekey: %v\n%s", err, out)
	}
	socket := filepath.Join(mungeDir, "munge.socket")
	env := append(os.Environ(), "SLURM_CONF="+filepath.Join(dir, "slurm.conf"))
	daemon(t, filepath.Join(dir, "munged.out"), env, tools["munged"], "--foreground", "--force",
		"--key-file="+key, "--socket="+socket, "--pid-file="+filepath.Join(mungeDir, "munged.pid"),
		"--seed-file="+filepath.Join(mungeDir, "munged.seed"), "--log-file="+filepath.Join(mungeDir, "munged.log"))
	for i := 0; ; i++ {
		if _, err := os.Stat(socket); err == nil {
			break
		}
		if i == 100 {
			t.Skipf("Slurm test skipped: munged did not start in 10 s:\n%s", fileTail(filepath.Join(dir, "munged.out")))
		}
		time.Sleep(100 * time.Millisecond)
	}

	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	host, _, _ = strings.Cut(host, ".")
	ports := freePorts(t, 2)
	me := "root"
	if u, err := user.Current(); err == nil {
		me = u.Username // the daemons run as whoever runs the test
	}
	conf := fmt.Sprintf(`# fragility TestSlurmArray: one node on 127.0.0.1, no cgroups
ClusterName=fragilitytest
SlurmctldHost=%[1]s(127.0.0.1)
SlurmctldPort=%[2]d
SlurmdPort=%[3]d
SlurmUser=%[7]s
SlurmdUser=%[7]s
AuthType=auth/munge
AuthInfo=socket=%[4]s
CredType=cred/munge
StateSaveLocation=%[5]s/state
SlurmdSpoolDir=%[5]s/spool
SlurmctldPidFile=%[5]s/slurmctld.pid
SlurmdPidFile=%[5]s/slurmd.pid
SlurmctldLogFile=%[5]s/slurmctld.log
SlurmdLogFile=%[5]s/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MinJobAge=600
NodeName=%[1]s NodeAddr=127.0.0.1 CPUs=%[6]d State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`, host, ports[0], ports[1], socket, dir, runtime.NumCPU(), me)
	if err := os.WriteFile(filepath.Join(dir, "slurm.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	daemon(t, filepath.Join(dir, "slurmctld.out"), env, tools["slurmctld"], "-D", "-i", "-f", filepath.Join(dir, "slurm.conf"))
	daemon(t, filepath.Join(dir, "slurmd.out"), env, tools["slurmd"], "-D", "-N", host, "-f", filepath.Join(dir, "slurm.conf"))
	for i := 0; ; i++ {
		out, _ := runWithEnv(env, tools["sinfo"], "--noheader", "--format=%T")
		if strings.TrimSpace(out) == "idle" {
			break
		}
		if i == 60 {
			t.Skipf("Slurm test skipped: the one-node cluster did not come up in 60 s (sinfo: %q)\nslurmctld:\n%s\nslurmd:\n%s",
				out, fileTail(filepath.Join(dir, "slurmctld.log")), fileTail(filepath.Join(dir, "slurmd.log")))
		}
		time.Sleep(time.Second)
	}
	t.Logf("Slurm test: cluster %s (%d CPUs) up after %v", host, runtime.NumCPU(), time.Since(t0).Round(time.Second))

	out := filepath.Join(dir, "out", "sweep")
	tSubmit := time.Now()
	cmd := exec.Command("timeout", append([]string{"900", filepath.Join("..", "..", "deploy", "slurm", "submit.sh"),
		"-w", "-n", "3", "-o", out, "-g", "0", "-c", "1", "-t", "15:00", "--"}, shardRunFlags(t)...)...)
	cmd.Env = append(env, "FRAGILITY_BIN="+fragilityBin(t))
	r := wait(t, cmd, start(t, cmd))
	if r.code != 0 {
		logs, _ := filepath.Glob(filepath.Join(out, "logs", "*"))
		for _, l := range logs {
			t.Logf("%s:\n%s", l, fileTail(l))
		}
		t.Fatalf("submit.sh -w: exit %d\nstdout:\n%s\nstderr:\n%s\nslurmctld:\n%s", r.code, r.stdout, tail(r.stderr), fileTail(filepath.Join(dir, "slurmctld.log")))
	}
	t.Logf("Slurm test: array of 3 shards and the dependent merge took %v\n%s", time.Since(tSubmit).Round(time.Second), r.stdout)

	man := sameAsWhole(t, filepath.Join(out, "merged"), 3)
	for i, ms := range man.MergedFrom {
		if !strings.Contains(ms.Source, "SLURM_ARRAY_TASK_ID="+fmt.Sprint(i)) || ms.Shard != fmt.Sprintf("%d/3", i+1) {
			t.Errorf("merged_from[%d]: shard %s, source %q; want %d/3 from SLURM_ARRAY_TASK_ID=%d", i, ms.Shard, ms.Source, i+1, i)
		}
	}
	// The merge ran as a Slurm job after the array: its log is there.
	mlogs, _ := filepath.Glob(filepath.Join(out, "logs", "merge-*.out"))
	if len(mlogs) != 1 {
		t.Fatalf("merge job logs: %v, want one", mlogs)
	}
	if b, _ := os.ReadFile(mlogs[0]); !strings.Contains(string(b), "merged 3 shards") {
		t.Errorf("merge job log %s does not report the merge:\n%s", mlogs[0], tail(string(b)))
	}
	t.Logf("Slurm test: %v in all (install, cluster, jobs, checks)", time.Since(t0).Round(time.Second))
}

func runWithEnv(env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestPlanShardsCLI: `fragility plan` sizes the shard tests' plan as `run
// --shard` splits it (the items of each shard are the rows of that shard's
// results.csv), with the rate of a previous run, and runs its power
// analysis on the same templates; bad flags exit 2.
func TestPlanShardsCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tiny models")
	}
	whole := wholeShardRun(t)
	flags := shardPlanFlags(t)
	r := fragility(t, nil, append([]string{"plan", "--json", "--shards", "3", "--from", whole}, flags...)...)
	if r.code != 0 {
		t.Fatalf("plan: exit %d\n%s", r.code, r.stderr)
	}
	var rp plan.RunPlan
	if err := json.Unmarshal([]byte(r.stdout), &rp); err != nil || rp.Sizing == nil {
		t.Fatalf("plan --json: %v\n%s", err, r.stdout)
	}
	p := rp.Sizing
	// base,noop with the drawn reference (the default) runs symbolic too:
	// noop is tested against it, symbolic against base.
	if rp.Power == nil || rp.Power.Templates != len(runTemplates) || rp.Power.Tests != 2 {
		t.Errorf("plan's power part: %+v, want %d templates, two variants tested", rp.Power, len(runTemplates))
	}
	if got, want := p.Items, len(rowsWithoutSeconds(t, whole))-1; got != want || len(p.Shards) != 3 || p.Rate == nil || p.Rate.TokensPerSecond <= 0 {
		t.Fatalf("plan: %d items (whole run %d), %d shards, rate %+v", got, want, len(p.Shards), p.Rate)
	}
	out := filepath.Join(t.TempDir(), "s2")
	if r := fragility(t, nil, append([]string{"run", "--quiet", "--shard", "2/3", "--out", out}, shardRunFlags(t)...)...); r.code != 0 {
		t.Fatalf("run --shard 2/3: exit %d\n%s", r.code, tail(r.stderr))
	}
	if rows := len(rowsWithoutSeconds(t, out)) - 1; rows != p.Shards[1].Items {
		t.Errorf("plan says shard 2/3 has %d items, the shard ran %d", p.Shards[1].Items, rows)
	}
	r = fragility(t, nil, append([]string{"plan", "--shards", "3", "--tokens-per-second", "50"}, flags...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "2/3") || !strings.Contains(r.stdout, "generation time") {
		t.Errorf("plan (text): exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, bad := range [][]string{{"--shards", "0"}, {"--batch", "0"}, {"--variants", "bogus"}, {"extra"}} {
		if r := fragility(t, nil, append([]string{"plan"}, bad...)...); r.code != exitUsage {
			t.Errorf("plan %v: exit %d, want %d\n%s", bad, r.code, exitUsage, r.stderr)
		}
	}
}
