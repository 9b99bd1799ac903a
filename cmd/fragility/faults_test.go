package main

import (
	"bytes"
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

	"github.com/fragility/fragility/probe"
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

// sameAsStraight resumes nothing: it checks that the run directory dir,
// finished, holds what the uninterrupted run wrote: results.csv equal
// except the seconds column, traces.jsonl, set.jsonl, summary.json and
// narrative.md byte-identical (manifest.json differs in its times, its
// resume count and its pid-free status history, and is not compared).
func sameAsStraight(t *testing.T, dir, want string) {
	t.Helper()
	if st, _ := readManifest(t, dir); st != "complete" {
		t.Errorf("status %q after resume, want complete", st)
	}
	if got, w := rowsWithoutSeconds(t, dir), rowsWithoutSeconds(t, want); !slices.EqualFunc(got, w, slices.Equal) {
		t.Errorf("results.csv differs from the uninterrupted run's (seconds aside): %d rows, want %d", len(got)-1, len(w)-1)
	}
	for _, name := range []string{probe.FileTraces, probe.FileSet, probe.FileSummary, probe.FileNarrative} {
		a, err := os.ReadFile(filepath.Join(dir, name))
		b, _ := os.ReadFile(filepath.Join(want, name))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs from the uninterrupted run's (%v)", name, err)
		}
	}
	noTempFiles(t, dir)
}

// TestKillResume kills a real run on the fast model with SIGKILL, as a power
// loss would, at named points (the crash hook probe.EnvCrashAt: before the
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
		{"traces.jsonl torn", "traces:2", probe.FileTraces},
		{"results.csv torn", "results:3", probe.FileResults},
		{"before summary.json", "summary", ""},
		{fmt.Sprintf("after %v (seed %d)", delay.Round(time.Millisecond), seed), "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			cmd := exec.Command(fragilityBin(t), faultArgs(t, dir)...)
			cmd.Env = append(os.Environ(), probe.EnvCrashAt+"="+c.at)
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
			kept := completeRecords(filepath.Join(dir, probe.FileResults))
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
