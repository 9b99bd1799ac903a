package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fragility/fragility/probe/rundir"
)

// The matrix of the fault tests: the run tests' templates (runArgs) with two
// instances each, in batches of 2: 8 items, 2 of them skipped (the packing
// prompt does not fit --n-ctx 96), 4 batches, so that a kill can land
// before, inside and after a batch with whole batches on disk.
func faultArgs(t *testing.T, out string) []string {
	args := runArgs(t, out, 2)
	i := slices.Index(args, "--instances")
	args[i+1] = "2"
	return args
}

const faultTotal = 8

var (
	faultOnce  sync.Once
	faultDir   string
	faultTook  time.Duration
	faultError string
)

// faultStraight runs the fault matrix uninterrupted once and returns its
// directory and how long it took.
func faultStraight(t *testing.T) (string, time.Duration) {
	t.Helper()
	faultOnce.Do(func() {
		d := filepath.Join(binDirOrTemp(t), "fault-straight")
		r := fragility(t, nil, faultArgs(t, d)...)
		if r.code != 0 {
			faultError = fmt.Sprintf("straight run: exit %d\n%s", r.code, tail(r.stderr))
			return
		}
		faultDir, faultTook = d, r.took
	})
	if faultError != "" {
		t.Fatal(faultError)
	}
	return faultDir, faultTook
}

// waitExit waits for a started cmd and returns its exit code, or -1 when
// SIGKILL ended it; another signal or a crash fails the test.
func waitExit(t *testing.T, cmd *exec.Cmd, out *[2]bytes.Buffer) (int, string) {
	t.Helper()
	err := cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out[1].String()
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			if ws.Signal() != syscall.SIGKILL {
				t.Fatalf("%v: killed by %v\n%s", cmd.Args, ws.Signal(), tail(out[1].String()))
			}
			return -1, out[1].String()
		}
		if strings.Contains(out[1].String(), "panic:") {
			t.Fatalf("%v: crashed\n%s", cmd.Args, tail(out[1].String()))
		}
		return ee.ExitCode(), out[1].String()
	}
	t.Fatal(err)
	return 0, ""
}

// sameAsStraight checks that the finished run directory dir holds what the
// uninterrupted run want wrote: results.csv equal except the seconds
// column, traces.jsonl, set.jsonl, summary.json and narrative.md
// byte-identical (manifest.json differs in its times and its resume count
// and is not compared), and no temporary file.
func sameAsStraight(t *testing.T, dir, want string) {
	t.Helper()
	if st, _ := readManifest(t, dir); st != "complete" {
		t.Errorf("status %q after resume, want complete", st)
	}
	if got, w := rowsWithoutSeconds(t, dir), rowsWithoutSeconds(t, want); !slices.EqualFunc(got, w, slices.Equal) {
		t.Errorf("results.csv differs from the uninterrupted run's (seconds aside): %d rows, want %d", len(got)-1, len(w)-1)
	}
	for _, name := range []string{rundir.FileTraces, rundir.FileSet, rundir.FileSummary, rundir.FileNarrative} {
		a, err := os.ReadFile(filepath.Join(dir, name))
		b, _ := os.ReadFile(filepath.Join(want, name))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs from the uninterrupted run's (%v)", name, err)
		}
	}
	noTempFiles(t, dir)
}

// TestKillResume kills a real run on the fast model with SIGKILL, as a power
// loss would, at named points (the crash hook rundir.EnvCrashAt: before the
// first batch, during a batch, halfway through appending a batch's
// traces.jsonl lines or its results.csv records, between the complete
// manifest and summary.json) and at a random moment, then resumes it: the
// finished directory must hold what an uninterrupted run writes, and a torn
// last line must be on disk before the resume (so that it was redone, not
// read as data).
func TestKillResume(t *testing.T) {
	want, took := faultStraight(t)
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	delay := time.Duration(rng.Int64N(int64(took)))
	for _, c := range []struct {
		name, at string
		torn     string // the file whose last line must be torn
	}{
		{"before the first batch", "start", ""},
		{"during the first batch", "decode:4", ""},
		{"during the third batch", "decode:20", ""},
		{"traces.jsonl torn", "traces:2", rundir.FileTraces},
		{"results.csv torn", "results:3", rundir.FileResults},
		{"before summary.json", "summary", ""},
		{fmt.Sprintf("after %v (seed %d)", delay.Round(time.Millisecond), seed), "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			cmd := exec.Command(fragilityBin(t), faultArgs(t, dir)...)
			cmd.Env = append(os.Environ(), rundir.EnvCrashAt+"="+c.at)
			out := start(t, cmd)
			if c.at == "" {
				time.AfterFunc(delay, func() { cmd.Process.Signal(syscall.SIGKILL) })
			}
			code, stderr := waitExit(t, cmd, out)
			if code != -1 {
				if c.at == "" {
					t.Skipf("the run ended (exit %d) before the timed SIGKILL", code)
				}
				t.Fatalf("exit %d, want killed by SIGKILL at %s\n%s", code, c.at, tail(stderr))
			}
			if _, err := os.Stat(filepath.Join(dir, rundir.FileManifest)); err != nil && c.at == "" {
				// Loading the model comes first: a kill then leaves no run
				// to resume ("start" covers the earliest point that does).
				t.Skipf("killed before the run wrote its manifest (%v): nothing to resume", err)
			}
			kept := completeRecords(filepath.Join(dir, rundir.FileResults))
			if c.torn != "" {
				b, _ := os.ReadFile(filepath.Join(dir, c.torn))
				if len(b) == 0 || b[len(b)-1] == '\n' {
					t.Fatalf("%s does not end in a torn line after the kill", c.torn)
				}
			}
			st, _ := readManifest(t, dir)
			t.Logf("killed at %q: status %q, %d complete results.csv records on disk", c.at, st, kept)
			r := fragility(t, nil, "run", "--resume", dir, "--quiet")
			if r.code != 0 {
				t.Fatalf("resume: exit %d\n%s", r.code, tail(r.stderr))
			}
			sameAsStraight(t, dir, want)
		})
	}
}

// waitFor polls cond every 20 ms until it holds or d passes.
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// TestTwoRunsOneDir stops a run (SIGSTOP) once its first records are on
// checks that a second run, resume, merge, report, verify or compare --from on its
// directory is refused with one line naming the directory, leaving the
// files as they were; after a SIGKILL the lock is gone with the process and
// --resume finishes the run as the uninterrupted run.
func TestTwoRunsOneDir(t *testing.T) {
	want, _ := faultStraight(t)
	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(fragilityBin(t), faultArgs(t, dir)...)
	out := start(t, cmd)
	defer cmd.Process.Kill()
	if !waitFor(time.Minute, func() bool { return completeRecords(filepath.Join(dir, rundir.FileResults)) >= 1 }) {
		t.Fatal("no record on disk after a minute")
	}
	cmd.Process.Signal(syscall.SIGSTOP)
	before, _ := os.ReadFile(filepath.Join(dir, rundir.FileResults))
	for _, c := range []struct {
		name string
		args []string
	}{
		{"resume", []string{"run", "--resume", dir, "--quiet"}},
		{"run --force", append(faultArgs(t, dir), "--force")},
		{"merge into it", []string{"merge", "--force", dir, want}},
		{"report", []string{"report", dir}},
		{"verify", []string{"verify", "--quiet", dir}},
		{"compare --from", []string{"compare", "--from", dir, "--quiet"}},
	} {
		r := fragility(t, nil, c.args...)
		oneErrorLine(t, c.name, r, dir+": in use by another fragility process (pid "+fmt.Sprint(cmd.Process.Pid)+")")
	}
	if after, _ := os.ReadFile(filepath.Join(dir, rundir.FileResults)); !bytes.Equal(before, after) {
		t.Error("a refused command changed results.csv")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	if code, _ := waitExit(t, cmd, out); code != -1 {
		t.Fatalf("the stopped run ended with exit %d, not by the SIGKILL", code)
	}
	r := fragility(t, nil, "run", "--resume", dir, "--quiet")
	if r.code != 0 {
		t.Fatalf("resume after the holder died: exit %d\n%s", r.code, tail(r.stderr))
	}
	sameAsStraight(t, dir, want)
}

// tmpfs mounts a tmpfs of size bytes (with more mount options, if any) on
// a new directory and unmounts it at the end of the test. Mounting needs
// root: without it the test is skipped with the reason, except under CI.
func tmpfs(t *testing.T, size int, opts string) string {
	t.Helper()
	dir := t.TempDir()
	data := fmt.Sprintf("size=%d", size)
	if opts != "" {
		data += "," + opts
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, data); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("mount tmpfs (%s) on %s: %v: CI must run this test as root", data, dir, err)
		}
		t.Skipf("mount tmpfs (%s): %v: this test needs root (a small filesystem made by the test)", data, err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fill writes a file in dir until the filesystem is full and returns its
// path (it runs beside the test's goroutine, so it returns errors).
func fill(dir string) (string, error) {
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		return p, err
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				return p, err
			}
			return p, nil
		}
	}
}

// TestFullDisk runs on a 4 MiB tmpfs, fills it once the first records are
// on disk and checks that the run stops with one line naming a file of the
// run directory and "no space left", keeps the records it wrote, and that
// --resume, once space is back, finishes it as the uninterrupted run.
func TestFullDisk(t *testing.T) {
	want, _ := faultStraight(t)
	mnt := tmpfs(t, 4<<20, "")
	dir := filepath.Join(mnt, "run")
	cmd := exec.Command(fragilityBin(t), faultArgs(t, dir)...)
	out := start(t, cmd)
	type filled struct {
		path string
		err  error
	}
	done := make(chan filled, 1)
	go func() {
		waitFor(time.Minute, func() bool { return completeRecords(filepath.Join(dir, rundir.FileResults)) >= 1 })
		p, err := fill(mnt)
		done <- filled{p, err}
	}()
	r := wait(t, cmd, out)
	f := <-done
	if f.err != nil {
		t.Fatal(f.err)
	}
	if r.code == 0 {
		t.Fatal("the run finished before the disk was full")
	}
	oneErrorLine(t, "full disk", r, "no space left on device")
	// The line names the run file it could not write, once, as
	// "DIR/FILE: no space left on device", never a temporary file.
	named := false
	for _, name := range rundir.RunFiles {
		named = named || strings.HasPrefix(r.stderr, "fragility: "+filepath.Join(dir, name)+": no space left on device")
	}
	if !named || strings.Contains(r.stderr, ".tmp-") {
		t.Errorf("full disk: %q does not start with a run file of %s and \"no space left on device\"", strings.TrimSpace(r.stderr), dir)
	}
	kept := completeRecords(filepath.Join(dir, rundir.FileResults))
	if kept < 1 {
		t.Errorf("results.csv kept %d records, want the ones written before the disk was full", kept)
	}
	st, _ := readManifest(t, dir)
	t.Logf("disk full: status %q, %d of %d records kept", st, kept, faultTotal)
	if err := os.Remove(f.path); err != nil {
		t.Fatal(err)
	}
	r = fragility(t, nil, "run", "--resume", dir, "--quiet")
	if r.code != 0 {
		t.Fatalf("resume with space back: exit %d\n%s", r.code, tail(r.stderr))
	}
	sameAsStraight(t, dir, want)
}

// TestOddOutDirs: a read-only output directory, an output path that is a
// file and a symbolic link to nowhere each get one line naming the path;
// a symbolic link to a directory is followed (the run's files go where it
// points).
func TestOddOutDirs(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	dangling := filepath.Join(base, "dangling")
	os.Symlink(filepath.Join(base, "nowhere"), dangling)
	small := append([]string{}, "run", "--model", gemmaName, "--templates", filepath.Join(templateDir(t), "fruit-stand.yaml"),
		"--variants", "base", "--instances", "1", "--max-tokens", "2", "--n-ctx", "128", "--no-ddc", "--quiet", "--no-html")
	small = append(small, cpu...)
	for _, c := range []struct {
		name, out string
		want      []string
	}{
		{"a file", file, []string{"output directory " + file + " is a file, not a directory"}},
		{"under a file", filepath.Join(file, "run"), []string{"output directory " + filepath.Join(file, "run") + ": mkdir " + file + ": not a directory"}},
		{"a dangling symlink", dangling, []string{"output directory " + dangling + " is a symbolic link to " + filepath.Join(base, "nowhere") + ", which does not exist"}},
	} {
		oneErrorLine(t, "run --out "+c.name, fragility(t, nil, append(small, "--out", c.out)...), c.want...)
	}
	oneErrorLine(t, "merge into a file", fragility(t, nil, "merge", file, base), "output directory "+file+" is a file")

	ro := tmpfs(t, 1<<20, "ro")
	oneErrorLine(t, "run --out a read-only directory", fragility(t, nil, append(small, "--out", ro)...),
		"output directory "+ro+": read-only file system")
	oneErrorLine(t, "run --out under a read-only directory", fragility(t, nil, append(small, "--out", filepath.Join(ro, "run"))...),
		"output directory "+filepath.Join(ro, "run")+": mkdir "+filepath.Join(ro, "run")+": read-only file system")

	target := filepath.Join(base, "target")
	os.Mkdir(target, 0o755)
	link := filepath.Join(base, "link")
	os.Symlink(target, link)
	r := fragility(t, nil, append(small, "--out", link)...)
	if r.code != 0 {
		t.Fatalf("run --out a symlink to a directory: exit %d\n%s", r.code, tail(r.stderr))
	}
	if st, _ := readManifest(t, target); st != "complete" {
		t.Errorf("the run through the symlink left status %q in its target", st)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced: %v", err)
	}
}

// TestGenerateSetCap: generate-set refuses a set over --max-items before
// drawing, saying how to raise the cap, and makes it when raised.
func TestGenerateSetCap(t *testing.T) {
	tpl := filepath.Join(templateDir(t), "fruit-stand.yaml")
	r := fragility(t, nil, "generate-set", "--templates", tpl, "--variants", "base,noop", "--instances", "1000000000", "--out", "-")
	if r.code != exitUsage || !strings.Contains(r.stderr, "makes more than 100000 instances, the cap: --max-items N raises it") {
		t.Errorf("a set of 2e9 items: exit %d, stderr %q", r.code, r.stderr)
	}
	// noop is paired with the symbolic instance it is drawn on (--reference
	// drawn, the default), and read against the placebo drawn on it: base,
	// noop, symbolic and placebo, 12 instances.
	r = fragility(t, nil, "generate-set", "--templates", tpl, "--variants", "base,noop", "--instances", "3", "--max-items", "11", "--out", "-")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--instances 3 with 1 template(s) and 4 variant(s) (base, the drawn reference and the placebo included) makes more than 11 instances") {
		t.Errorf("12 items over --max-items 11: exit %d, stderr %q", r.code, r.stderr)
	}
	r = fragility(t, nil, "generate-set", "--templates", tpl, "--variants", "base,noop", "--instances", "3", "--max-items", "12", "--out", "-")
	if r.code != 0 || strings.Count(r.stdout, "\n") != 13 {
		t.Errorf("12 items under --max-items 12: exit %d, %d lines, stderr %q", r.code, strings.Count(r.stdout, "\n"), r.stderr)
	}
	r = fragility(t, nil, "generate-set", "--templates", tpl, "--variants", "base,noop", "--reference", "original", "--instances", "3", "--max-items", "6", "--out", "-")
	if r.code != 0 || strings.Count(r.stdout, "\n") != 7 {
		t.Errorf("6 items (reference original) under --max-items 6: exit %d, %d lines, stderr %q", r.code, strings.Count(r.stdout, "\n"), r.stderr)
	}
	// run and plan have the same cap, checked before any instance is drawn
	// or any model loaded (a mistyped --instances once took 1.6 GB in plan).
	for _, cmd := range []string{"plan", "run"} {
		r = fragility(t, nil, cmd, "--templates", tpl, "--variants", "base,noop", "--instances", "1000000000", "--out", filepath.Join(t.TempDir(), "run"))
		if cmd == "plan" {
			r = fragility(t, nil, cmd, "--templates", tpl, "--variants", "base,noop", "--instances", "1000000000")
		}
		if r.code != exitUsage || !strings.Contains(r.stderr, "makes more than 100000 instances, the cap: --max-items N raises it") {
			t.Errorf("%s with 2e9 items: exit %d, stderr %q", cmd, r.code, r.stderr)
		}
	}
}

// TestReportEditedRow: report refuses a hand-edited results.csv row whose
// variant or model name is not its item's, naming the file and the line.
func TestReportEditedRow(t *testing.T) {
	want, _ := faultStraight(t)
	for _, c := range []struct{ col, value, what string }{
		{"variant", "bogus", `variant "bogus" is not a variant of this run`},
		{"model_name", "other-model", `model "other-model" is not a model of this run`},
	} {
		dir := filepath.Join(t.TempDir(), "run")
		os.Mkdir(dir, 0o755)
		for _, name := range []string{rundir.FileManifest, rundir.FileSet, rundir.FileTraces} {
			b, _ := os.ReadFile(filepath.Join(want, name))
			os.WriteFile(filepath.Join(dir, name), b, 0o644)
		}
		f, _ := os.Open(filepath.Join(want, rundir.FileResults))
		recs, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		col, id := slices.Index(recs[0], c.col), slices.Index(recs[0], "item_id")
		row := len(recs) - 2 // the last data row
		recs[row+1][col] = c.value
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		w.WriteAll(recs)
		path := filepath.Join(dir, rundir.FileResults)
		os.WriteFile(path, buf.Bytes(), 0o644)
		// The line the edited row starts on (responses may span lines).
		r := csv.NewReader(bytes.NewReader(buf.Bytes()))
		line := 0
		for k := 0; k <= row+1; k++ {
			r.Read()
			line, _ = r.FieldPos(0)
		}
		res := fragility(t, nil, "report", dir)
		oneErrorLine(t, "report with an edited "+c.col, res, fmt.Sprintf("%s: line %d (item %s): %s", path, line, recs[row+1][id], c.what))
	}
}
