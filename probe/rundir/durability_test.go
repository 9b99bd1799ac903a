package rundir

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/results"
)

// tempLeft fails if dir holds a temporary file of writeAtomic or checkWritable.
func tempLeft(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file %s left in %s", e.Name(), dir)
		}
	}
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "summary.json")
	if err := WriteFileAtomic(p, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(p, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "two" {
		t.Errorf("content %q, want two", b)
	}
	// A directory in the way: the rename fails, the error names the file,
	// and the temporary file is removed.
	blocked := filepath.Join(dir, "manifest.json")
	os.Mkdir(blocked, 0o755)
	os.WriteFile(filepath.Join(blocked, "x"), nil, 0o644)
	err := WriteFileAtomic(blocked, []byte("{}"))
	if err == nil || err.Error() != blocked+": is a directory, not a file" {
		t.Errorf("rename onto a directory: error %v, want it to say the path is a directory (not rename's \"file exists\")", err)
	}
	// No directory to write in at all.
	if err := WriteFileAtomic(filepath.Join(dir, "nowhere", "a.json"), nil); err == nil {
		t.Error("missing directory: no error")
	}
	tempLeft(t, dir)
}

// TestReadResultsErrors: a missing results.csv, a directory in its place
// and a bad row are each named with the path once; so is a missing
// traces.jsonl (ReadTraces).
func TestReadResultsErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadTraces(dir); err == nil || err.Error() != filepath.Join(dir, FileTraces)+": no such file or directory" {
		t.Errorf("missing traces: %v", err)
	}
	p := filepath.Join(dir, FileResults)
	if _, err := ReadResults(p); err == nil || err.Error() != p+": no such file or directory" {
		t.Errorf("missing: %v", err)
	}
	os.Mkdir(p, 0o755)
	if _, err := ReadResults(p); err == nil || err.Error() != p+": is a directory, not a file" {
		t.Errorf("directory: %v", err)
	}
	os.Remove(p)
	var b bytes.Buffer
	results.WriteCSV(&b, []results.Trial{{ItemID: "m0/a/base/0"}})
	os.WriteFile(p, []byte(strings.Replace(b.String(), "m0/a/base/0,", "m0/a/base/0,,,,,,,", 1)), 0o644)
	if _, err := ReadResults(p); err == nil || !strings.HasPrefix(err.Error(), p+": ") || strings.Count(err.Error(), FileResults) != 1 {
		t.Errorf("bad row: %v", err)
	}
}

func TestPrepareDir(t *testing.T) {
	dir := t.TempDir()
	if err := PrepareDir(filepath.Join(dir, "new"), false, false); err != nil {
		t.Fatalf("new directory: %v", err)
	}
	tempLeft(t, filepath.Join(dir, "new"))
	run := filepath.Join(dir, "run")
	os.Mkdir(run, 0o755)
	os.WriteFile(filepath.Join(run, FileResults), []byte("old"), 0o644)
	os.WriteFile(filepath.Join(run, "notes.txt"), []byte("mine"), 0o644)
	// Files but no manifest: not a run, so --resume is not suggested.
	if err := PrepareDir(run, false, false); err == nil || !strings.Contains(err.Error(), "holds files but no manifest.json, so it is no run to resume: use another --out, or --force") {
		t.Fatalf("a folder of files without --force: %v", err)
	}
	os.WriteFile(filepath.Join(run, FileManifest), []byte("{}"), 0o644)
	err := PrepareDir(run, false, false)
	if err == nil || !strings.Contains(err.Error(), "already exists and is not empty: use --force") {
		t.Fatalf("existing run without --force: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(run, FileResults)); string(b) != "old" {
		t.Error("refused run directory was changed")
	}
	for _, name := range []string{FileCompareCSV, FileCompareMD, FileCompareJSON, "report.html", FileSummary} {
		os.WriteFile(filepath.Join(run, name), []byte("old"), 0o644)
	}
	if err := PrepareDir(run, true, false); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{FileResults, FileCompareCSV, FileCompareMD, FileCompareJSON, "report.html", FileSummary} {
		if _, err := os.Stat(filepath.Join(run, name)); err == nil {
			t.Errorf("--force kept the old %s", name)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(run, "notes.txt")); string(b) != "mine" {
		t.Error("--force removed a file that is not the run's")
	}
	if err := PrepareDir("", false, false); err == nil {
		t.Error("empty --out: no error")
	}
	f := filepath.Join(dir, "file")
	os.WriteFile(f, nil, 0o644)
	if err := PrepareDir(filepath.Join(f, "run"), false, false); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("directory under a file: %v", err)
	}
}

func trialFor(id string) results.Trial {
	return results.Trial{ItemID: id, ModelPath: "m.gguf", Variant: "base", Expected: "1", Rule: answer.RuleNone, StopReason: "max_tokens", Response: "a, \"quoted\"\nanswer"}
}

// TestResumeKeepsWholeBatches writes what an interrupted run can leave (a
// record cut short, a trace line cut short, a batch with one trace missing)
// and checks that resuming keeps the whole batches as done and the finished
// items of a batch cut short as held, both in both files; completing the
// held batch cuts them off and writes the batch in order.
func TestResumeKeepsWholeBatches(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenStreams(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	// Batch 1: a and b; batch 2: c alone (a skipped item); batch 3: d and e.
	for _, batch := range [][]string{{"a", "b"}, {"c"}, {"d", "e"}} {
		var trials []results.Trial
		var traces []Trace
		for _, id := range batch {
			trials = append(trials, trialFor(id))
			traces = append(traces, Trace{ItemID: id, BatchSize: len(batch), Tokens: []TraceToken{{ID: 1, Piece: "x", EntropyBits: 0.1 + 0.2, LogProb: -1.0 / 3}}})
		}
		if err := s.Append(trials, traces); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	resPath, trPath := filepath.Join(dir, FileResults), filepath.Join(dir, FileTraces)
	res, _ := os.ReadFile(resPath)
	tr, _ := os.ReadFile(trPath)

	check := func(name string, res, tr []byte, want, held []string) *Streams {
		t.Helper()
		os.WriteFile(resPath, res, 0o644)
		os.WriteFile(trPath, tr, 0o644)
		s, err := OpenStreams(dir, true)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got, gotHeld []string
		for _, x := range s.Trials {
			got = append(got, x.ItemID)
		}
		for _, id := range []string{"a", "b", "c", "d", "e"} {
			if _, ok := s.Held(id); ok {
				gotHeld = append(gotHeld, id)
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") || strings.Join(gotHeld, ",") != strings.Join(held, ",") {
			t.Errorf("%s: kept %v and held %v, want %v and %v", name, got, gotHeld, want, held)
		}
		// Both files were rewritten with exactly those items.
		checkFiles(t, name, dir, append(slices.Clone(want), held...))
		tempLeft(t, dir)
		return s
	}
	all := []string{"a", "b", "c", "d", "e"}
	check("complete", res, tr, all, nil).Close()
	check("record cut short", res[:len(res)-5], tr, []string{"a", "b", "c"}, nil).Close()
	check("trace line cut short", res, tr[:len(tr)-10], []string{"a", "b", "c"}, []string{"d"}).Close()
	lines := strings.SplitAfter(string(tr), "\n")
	check("batch missing a trace", res, []byte(strings.Join(lines[:4], "")), []string{"a", "b", "c"}, []string{"d"}).Close()
	check("first batch incomplete", res, []byte(lines[0]), nil, []string{"a"}).Close()
	check("nothing finished", []byte(strings.SplitAfter(string(res), "\n")[0]), nil, nil, nil).Close()

	// Completing the held batch (d held, e decoded now) writes d, e in order
	// after c.
	s = check("held then completed", res, []byte(strings.Join(lines[:4], "")), []string{"a", "b", "c"}, []string{"d"})
	h, _ := s.Held("d")
	e := Trace{ItemID: "e", BatchSize: 2, Tokens: []TraceToken{{ID: 1, Piece: "x", EntropyBits: 0.1 + 0.2, LogProb: -1.0 / 3}}}
	if err := s.CompleteHeld([]results.Trial{h.Trial, trialFor("e")}, []Trace{h.Trace, e}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, ok := s.Held("d"); ok {
		t.Error("d still held after its batch was written")
	}
	checkFiles(t, "held then completed", dir, all)
	a, _ := os.ReadFile(resPath)
	b, _ := os.ReadFile(trPath)
	if !bytes.Equal(a, res) || !bytes.Equal(b, tr) {
		t.Errorf("after completing the held batch the files differ from an uninterrupted run's")
	}
}

// checkFiles checks that results.csv and traces.jsonl of dir hold exactly
// the items want, in order.
func checkFiles(t *testing.T, name, dir string, want []string) {
	t.Helper()
	f, _ := os.Open(filepath.Join(dir, FileResults))
	trials, err := results.ReadCSV(f)
	f.Close()
	traces, terr := ReadTraces(dir)
	if err != nil || terr != nil || len(trials) != len(want) || len(traces) != len(want) {
		t.Errorf("%s: rewritten files: %d trials (%v), %d traces (%v), want %d", name, len(trials), err, len(traces), terr, len(want))
		return
	}
	for i := range traces {
		if traces[i].ItemID != want[i] || trials[i].ItemID != want[i] || trials[i].Response != trialFor(want[i]).Response {
			t.Errorf("%s: rewritten item %d: %+v", name, i, traces[i])
		}
	}
}
