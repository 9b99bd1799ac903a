package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
)

// The small matrix of the run tests: four built-in templates, base variant,
// one instance each, on the fast Gemma model (named by its manifest name, as
// a user may). With --n-ctx 96 the packing prompt (97 tokens) does not fit
// and is skipped; the others (80 to 84 tokens) run until --max-tokens.
var (
	runTemplates = []string{"fruit-stand", "discount", "packing", "cycling"}
	runTotal     = len(runTemplates)
)

func runArgs(t *testing.T, out string, batch int) []string {
	return append([]string{"run", "--model", gemmaName, "--templates", templateDir(t), "--variants", "base", "--instances", "1",
		"--max-tokens", "8", "--n-ctx", "96", "--seed", "3", "--batch", fmt.Sprint(batch), "--no-ddc", "--quiet",
		"--out", out}, cpu...)
}

var (
	tmplOnce sync.Once
	tmplDir  string
)

// templateDir copies the matrix's built-in templates into a directory.
func templateDir(t *testing.T) string {
	t.Helper()
	tmplOnce.Do(func() {
		d, err := os.MkdirTemp(binDirOrTemp(t), "templates-")
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range runTemplates {
			b, err := os.ReadFile(filepath.Join("..", "..", "templates", "builtin", n+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(d, n+".yaml"), b, 0o644)
		}
		tmplDir = d
	})
	return tmplDir
}

// binDirOrTemp is the directory TestMain removes at the end.
func binDirOrTemp(t *testing.T) string {
	fragilityBin(t)
	return binDir
}

var (
	straightMu   sync.Mutex
	straightDirs = map[int]string{}
)

// straightRun runs the matrix uninterrupted once per batch size and returns
// its directory.
func straightRun(t *testing.T, batch int) string {
	t.Helper()
	straightMu.Lock()
	defer straightMu.Unlock()
	if d, ok := straightDirs[batch]; ok {
		return d
	}
	d := filepath.Join(binDirOrTemp(t), fmt.Sprintf("straight-b%d", batch))
	r := fragility(t, nil, runArgs(t, d, batch)...)
	if r.code != 0 {
		t.Fatalf("straight run (batch %d): exit %d\n%s", batch, r.code, tail(r.stderr))
	}
	t.Logf("straight run, batch %d: %v", batch, r.took.Round(time.Millisecond))
	straightDirs[batch] = d
	return d
}

// readTrials parses results.csv strictly.
func readTrials(t *testing.T, dir string) []results.Trial {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, rundir.FileResults))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	trials, err := results.ReadCSV(f)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	return trials
}

// readManifest returns the status and resume count of a run directory.
func readManifest(t *testing.T, dir string) (status string, resumes int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rundir.FileManifest))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Status  string `json:"status"`
		Resumes int    `json:"resumes"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: manifest: %v", dir, err)
	}
	return m.Status, m.Resumes
}

// noTempFiles fails if an atomic write left a temporary file in dir.
func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("%s: temporary file %s left behind", dir, e.Name())
		}
	}
}

// TestRunLimits: a prompt longer than the context is recorded as skipped
// with its reason; generation that reaches --max-tokens says so; a finished
// run leaves its files and no temporary ones.
func TestRunLimits(t *testing.T) {
	dir := straightRun(t, 1)
	trials := readTrials(t, dir)
	if len(trials) != runTotal {
		t.Fatalf("%d trials, want %d", len(trials), runTotal)
	}
	skipped, maxed := 0, 0
	for _, tr := range trials {
		switch {
		case tr.TemplateID == "packing":
			skipped++
			want := fmt.Sprintf("prompt of %d tokens does not fit in the context of 96 tokens (raise --n-ctx)", tr.PromptTokens)
			if tr.StopReason != "skipped" || tr.SkipReason != want || tr.Tokens != 0 || tr.Response != "" || tr.PromptTokens < 96 {
				t.Errorf("packing: stop %q, skip %q, %d tokens, prompt %d; want skipped with %q", tr.StopReason, tr.SkipReason, tr.Tokens, tr.PromptTokens, want)
			}
		case tr.StopReason == "max_tokens":
			maxed++
			if tr.Tokens != 8 {
				t.Errorf("%s: stop max_tokens after %d tokens, want 8", tr.ItemID, tr.Tokens)
			}
		case tr.StopReason == "eos" || tr.StopReason == "stop":
			if tr.Tokens > 8 {
				t.Errorf("%s: %d tokens, over --max-tokens 8", tr.ItemID, tr.Tokens)
			}
		default:
			t.Errorf("%s: stop reason %q", tr.ItemID, tr.StopReason)
		}
	}
	if skipped != 1 || maxed == 0 {
		t.Errorf("%d skipped (want 1), %d stopped at max tokens (want some)", skipped, maxed)
	}
	traces, err := rundir.ReadTraces(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range traces {
		if strings.Contains(tr.ItemID, "packing") && (tr.SkipReason == "" || len(tr.Tokens) != 0) {
			t.Errorf("trace of the skipped item: %+v", tr)
		}
	}
	if st, _ := readManifest(t, dir); st != "complete" {
		t.Errorf("manifest status %q", st)
	}
	for _, f := range []string{rundir.FileSummary, rundir.FileNarrative, rundir.FileSet} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	noTempFiles(t, dir)
}

// TestForceOverwrites: --force replaces an earlier run's files.
func TestForceOverwrites(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, rundir.FileResults), []byte("old\n"), 0o644)
	args := append([]string{"run", "--model", gemmaName, "--force", "--templates", filepath.Join(templateDir(t), "fruit-stand.yaml"),
		"--variants", "noop", "--instances", "1", "--max-tokens", "2", "--n-ctx", "128", "--no-ddc", "--quiet", "--out", dir}, cpu...)
	r := fragility(t, nil, args...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, tail(r.stderr))
	}
	trials := readTrials(t, dir) // fails on the old file's "header"
	if !slices.ContainsFunc(trials, func(tr results.Trial) bool { return tr.Variant == "noop" }) {
		t.Errorf("after --force: no noop trial in %d trials", len(trials))
	}
	noTempFiles(t, dir)
}

// TestInterruptResume interrupts a run after some trials are on disk, checks
// the directory it leaves, resumes it, and compares the result with an
// uninterrupted run: every results.csv column except seconds, and
// traces.jsonl, must be identical.
func TestInterruptResume(t *testing.T) {
	for _, c := range []struct {
		batch int
		sig   syscall.Signal
		after int // trials on disk before the signal
	}{
		{1, syscall.SIGINT, 2},
		{2, syscall.SIGTERM, 2},
	} {
		t.Run(fmt.Sprintf("batch%d-%v", c.batch, c.sig), func(t *testing.T) {
			want := straightRun(t, c.batch)
			dir := filepath.Join(t.TempDir(), "run")
			cmd := exec.Command(fragilityBin(t), runArgs(t, dir, c.batch)...)
			cmd.Env = os.Environ()
			out := start(t, cmd)
			exited := make(chan struct{})
			go func() {
				for {
					select {
					case <-exited:
						return
					case <-time.After(20 * time.Millisecond):
					}
					if completeRecords(filepath.Join(dir, rundir.FileResults)) >= c.after {
						cmd.Process.Signal(c.sig)
						return
					}
				}
			}()
			r := wait(t, cmd, out)
			close(exited)
			if r.code == 0 {
				t.Fatalf("the run finished before the %v (make the matrix longer)", c.sig)
			}
			if r.code != exitInterrupt {
				t.Fatalf("exit %d, want %d\n%s", r.code, exitInterrupt, tail(r.stderr))
			}
			hint := "fragility: interrupted; every finished trial is in " + dir + ". Finish with: fragility run --resume " + dir
			if !strings.Contains(r.stderr, hint) {
				t.Errorf("stderr lacks %q:\n%s", hint, tail(r.stderr))
			}
			// Said at once, before the run stops: what happens and how long.
			notice := "fragility: interrupt: stopping after the decode step under way (about "
			if i := strings.Index(r.stderr, notice); i < 0 || i > strings.Index(r.stderr, hint) || !strings.Contains(r.stderr, "run again with fragility run --resume "+dir) {
				t.Errorf("stderr lacks %q before the last line:\n%s", notice, tail(r.stderr))
			}

			// The interrupted directory: a manifest saying so, and the same
			// finished trials in both files, a prefix of the straight run.
			if st, _ := readManifest(t, dir); st != "interrupted" {
				t.Errorf("manifest status %q, want interrupted", st)
			}
			got := readTrials(t, dir)
			traces, err := rundir.ReadTraces(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) < c.after || len(got) >= runTotal || len(traces) != len(got) {
				t.Fatalf("interrupted run kept %d trials and %d traces, want %d..%d of each", len(got), len(traces), c.after, runTotal-1)
			}
			// Whole batches are a prefix of the straight run; the finished
			// items of the batch in flight follow, each equal to its row in
			// the straight run.
			wantRows := rowsWithoutSeconds(t, want)
			gotRows := rowsWithoutSeconds(t, dir)
			whole := 0 // header and rows equal to the straight run's, in order
			for whole < len(gotRows) && slices.Equal(gotRows[whole], wantRows[whole]) {
				whole++
			}
			if whole < 1+c.after {
				t.Errorf("interrupted results.csv does not start with the straight run's first %d rows", c.after)
			}
			id := slices.Index(wantRows[0], "item_id")
			for _, row := range gotRows[whole:] {
				if k := slices.IndexFunc(wantRows, func(w []string) bool { return w[id] == row[id] }); k < whole || k >= whole+c.batch || !slices.Equal(wantRows[k], row) {
					t.Errorf("interrupted results.csv: item %s is not a finished item of the batch in flight, as in the straight run", row[id])
				}
			}
			for i := range traces {
				if traces[i].ItemID != got[i].ItemID {
					t.Errorf("trace %d is %s, trial %d is %s", i, traces[i].ItemID, i, got[i].ItemID)
				}
			}
			noTempFiles(t, dir)
			t.Logf("interrupted by %v after %d of %d trials", c.sig, len(got), runTotal)

			r = fragility(t, nil, "run", "--resume", dir, "--quiet")
			if r.code != 0 {
				t.Fatalf("resume: exit %d\n%s", r.code, tail(r.stderr))
			}
			if st, n := readManifest(t, dir); st != "complete" || n != 1 {
				t.Errorf("after resume: status %q, resumes %d; want complete, 1", st, n)
			}
			if gotRows = rowsWithoutSeconds(t, dir); !slices.EqualFunc(gotRows, wantRows, slices.Equal) {
				t.Errorf("resumed results.csv differs from the straight run's (seconds aside):\n got %q\nwant %q", gotRows, wantRows)
			}
			a, _ := os.ReadFile(filepath.Join(dir, rundir.FileTraces))
			b, _ := os.ReadFile(filepath.Join(want, rundir.FileTraces))
			if !bytes.Equal(a, b) {
				t.Errorf("resumed traces.jsonl differs from the straight run's")
			}
			noTempFiles(t, dir)
		})
	}
}

// completeRecords counts the complete data records of a results.csv being
// written (a record is complete when a newline follows it).
func completeRecords(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
	}
	r := csv.NewReader(bytes.NewReader(b))
	n := -1 // the header
	for {
		if _, err := r.Read(); err != nil {
			break
		}
		n++
	}
	return max(n, 0)
}

// rowsWithoutSeconds returns results.csv's records without the seconds
// column, header included.
func rowsWithoutSeconds(t *testing.T, dir string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, rundir.FileResults))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	header, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	sec := slices.Index(header, "seconds")
	if sec < 0 {
		t.Fatal("results.csv has no seconds column")
	}
	drop := func(rec []string) []string { return slices.Delete(slices.Clone(rec), sec, sec+1) }
	rows := [][]string{drop(header)}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, drop(rec))
	}
	return rows
}
