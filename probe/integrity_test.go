package probe_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/internal/probetest"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/verify"
	"github.com/fragility/fragility/templates"
)

// TestQuietlyWrongRunsRefused: a complete run whose traces.jsonl lost its
// last line, whose results.csv lost a row or a column, whose correct column,
// level, question, extracted answer (with its label to match), stop
// reason, token count, entropy, answer log-probability (after the
// reasoning or first) or a response was
// set by hand, or whose manifest lost its plan sha256 is
// refused by report (probe.Recompute), verify and merge's summary, naming the
// file and the item; the untouched run passes.
func TestQuietlyWrongRunsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the fast model")
	}
	dir := tinyRun(t, []string{probetest.GemmaModel(t)}, []templates.Variant{templates.VariantBase, templates.VariantNoop}, 2)
	if _, err := probe.Recompute(dir); err != nil {
		t.Fatalf("untouched run: %v", err)
	}
	restore := func(name string) func() {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return func() { os.WriteFile(filepath.Join(dir, name), b, 0o644) }
	}
	// traces.jsonl without its last line.
	undo := restore(rundir.FileTraces)
	data, _ := os.ReadFile(filepath.Join(dir, rundir.FileTraces))
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	os.WriteFile(filepath.Join(dir, rundir.FileTraces), []byte(strings.Join(lines[:len(lines)-1], "")), 0o644)
	for name, err := range map[string]error{"report": recomputeErr(dir), "verify": verifyErr(dir)} {
		if err == nil || !strings.Contains(err.Error(), rundir.FileTraces) || !strings.Contains(err.Error(), "1 item(s) with no trace") {
			t.Errorf("%s with a lost trace: %v", name, err)
		}
	}
	undo()
	// results.csv without its last row.
	undo = restore(rundir.FileResults)
	data, _ = os.ReadFile(filepath.Join(dir, rundir.FileResults))
	rows := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	os.WriteFile(filepath.Join(dir, rundir.FileResults), []byte(strings.Join(rows[:len(rows)-1], "")), 0o644)
	if err := recomputeErr(dir); err == nil || !strings.Contains(err.Error(), rundir.FileResults) || !strings.Contains(err.Error(), "with no row") {
		t.Errorf("a lost row: %v", err)
	}
	undo()
	// A wrong answer marked correct by hand (the tiny budget gets every
	// answer wrong).
	undo = restore(rundir.FileResults)
	data, _ = os.ReadFile(filepath.Join(dir, rundir.FileResults))
	edited := strings.Replace(string(data), ",false,none,", ",true,none,", 1)
	if edited == string(data) {
		t.Fatal("no wrong row to edit")
	}
	os.WriteFile(filepath.Join(dir, rundir.FileResults), []byte(edited), 0o644)
	if err := recomputeErr(dir); err == nil || !strings.Contains(err.Error(), "correct is true") || !strings.Contains(err.Error(), "(item m0/") {
		t.Errorf("an edited label: %v", err)
	}
	undo()
	// A row's template changed by hand.
	undo = restore(rundir.FileResults)
	f, err := os.Open(filepath.Join(dir, rundir.FileResults))
	if err != nil {
		t.Fatal(err)
	}
	trials, err := results.ReadCSV(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	trials[1].TemplateID = "not-" + trials[1].TemplateID
	probetest.WriteTrials(t, filepath.Join(dir, rundir.FileResults), trials)
	for name, err := range map[string]error{"report": recomputeErr(dir), "verify": verifyErr(dir)} {
		if err == nil || !strings.Contains(err.Error(), rundir.FileResults+": line 3 (item "+trials[1].ItemID+"): template is") {
			t.Errorf("%s with an edited template column: %v", name, err)
		}
	}
	undo()
	// A row's difficulty level, its extracted answer (with correct and
	// error_kind edited to match) or its stop reason changed by hand.
	fresh := func() []results.Trial {
		ts, err := rundir.ReadResults(filepath.Join(dir, rundir.FileResults))
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	undo()
	for _, c := range []struct {
		name string
		edit func(ts []results.Trial) int // the row edited
		want string
	}{
		{"level", func(ts []results.Trial) int { ts[1].Level = "p2"; return 1 }, "level is \"p2\""},
		{"question", func(ts []results.Trial) int { ts[1].Question = "How many apples does Tom have?"; return 1 }, `question is "How many apples does Tom have?", but the instance`},
		{"tokens", func(ts []results.Trial) int { ts[1].Tokens = 1; return 1 }, "tokens is 1, but its trace in traces.jsonl gives"},
		{"entropy", func(ts []results.Trial) int { ts[1].EntropyMean += 0.5; return 1 }, "entropy_mean_bits is"},
		{"answer entropy", func(ts []results.Trial) int { ts[1].AnswerEntropyMean += 0.5; return 1 }, "answer_entropy_mean_bits is"},
		{"answer_logprob", func(ts []results.Trial) int { ts[1].AnswerLogProb = -0.01; return 1 }, "answer_logprob is -0.01, but its trace in traces.jsonl gives"},
		{"answer_first_logprob", func(ts []results.Trial) int { ts[1].AnswerFirstLogProb = -0.01; return 1 }, "answer_first_logprob is -0.01, but its trace in traces.jsonl gives"},
		{"extracted", func(ts []results.Trial) int {
			ts[1].Extracted, ts[1].Rule, ts[1].Correct, ts[1].ErrorKind, ts[1].F1 = ts[1].Expected, answer.RuleFinalAnswer, true, "", 1
			return 1
		}, "extracted is"},
		{"stop_reason", func(ts []results.Trial) int {
			k := slices.IndexFunc(ts, func(tr results.Trial) bool { return tr.StopReason == "max_tokens" })
			if k < 0 {
				t.Fatal("no row cut by the budget")
			}
			ts[k].StopReason = "eos"
			ts[k].ErrorKind = probe.ErrorKind(&ts[k]) // the edit made consistent but for the trace
			return k
		}, `stop_reason is "eos", but its trace in traces.jsonl has "max_tokens"`},
	} {
		undo = restore(rundir.FileResults)
		ts := fresh()
		k := c.edit(ts)
		probetest.WriteTrials(t, filepath.Join(dir, rundir.FileResults), ts)
		for name, err := range map[string]error{"report": recomputeErr(dir), "verify": verifyErr(dir)} {
			if err == nil || !strings.Contains(err.Error(), "(item "+ts[k].ItemID+")") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s with an edited %s: %v, want %q", name, c.name, err, c.want)
			}
		}
		undo()
	}
	undo = restore(rundir.FileResults)
	// A response edited by hand ("the" to "teh" in the user's report): its
	// trace's tokens give another text.
	undo = restore(rundir.FileResults)
	trials[1].TemplateID = strings.TrimPrefix(trials[1].TemplateID, "not-")
	k, at := -1, -1
	for i := range trials {
		if at = strings.IndexAny(trials[i].Response, "abcdefghijklmnopqrstuvwxyz"); at >= 0 {
			k = i
			break
		}
	}
	if k < 0 {
		t.Fatal("no response with a letter to edit")
	}
	r := []byte(trials[k].Response)
	r[at] -= 'a' - 'A' // one letter's case
	trials[k].Response = string(r)
	probetest.WriteTrials(t, filepath.Join(dir, rundir.FileResults), trials)
	for name, err := range map[string]error{"report": recomputeErr(dir), "verify": verifyErr(dir)} {
		path := filepath.Join(dir, rundir.FileResults)
		want := fmt.Sprintf("%s: %s (item %s): its response differs from its trace in %s at byte %d", path, rundir.RowRef(path, k), trials[k].ItemID, rundir.FileTraces, at)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s with an edited response: %v, want %q", name, err, want)
		}
	}
	undo()
	// An answer changed in set.jsonl: the rows' expected answers disagree,
	// named with the set's line.
	undo = restore(rundir.FileSet)
	data, _ = os.ReadFile(filepath.Join(dir, rundir.FileSet))
	setLines := strings.SplitAfter(string(data), "\n")
	setLines[2] = regexp.MustCompile(`"answer":"[^"]*"`).ReplaceAllString(setLines[2], `"answer":"99999"`)
	os.WriteFile(filepath.Join(dir, rundir.FileSet), []byte(strings.Join(setLines, "")), 0o644)
	if err := recomputeErr(dir); err == nil || !strings.Contains(err.Error(), "expected is") || !strings.Contains(err.Error(), rundir.FileSet+" (line 3) has \"99999\"") {
		t.Errorf("an edited answer in set.jsonl: %v", err)
	}
	undo()
	// A column deleted from results.csv (it would read as zeros).
	undo = restore(rundir.FileResults)
	dropColumn(t, filepath.Join(dir, rundir.FileResults), "ddc_margin")
	if err := recomputeErr(dir); err == nil || !strings.Contains(err.Error(), rundir.FileResults+": lacks the column(s) ddc_margin") {
		t.Errorf("a deleted column: %v", err)
	}
	undo()
	// The answer-first columns deleted: refused in a run recorded under
	// answer-score/2 (its traces give them), read as recorded in one under
	// answer-score/1 (which wrote none).
	undo = restore(rundir.FileResults)
	dropColumn(t, filepath.Join(dir, rundir.FileResults), "answer_first_logprob")
	dropColumn(t, filepath.Join(dir, rundir.FileResults), "answer_first_logprob_tokens")
	if err := recomputeErr(dir); err == nil || !strings.Contains(err.Error(), "answer_first_logprob") {
		t.Errorf("deleted answer-first columns: %v", err)
	}
	undoMan := restore(rundir.FileManifest)
	data, _ = os.ReadFile(filepath.Join(dir, rundir.FileManifest))
	v1 := strings.Replace(string(data), `"answer_score": "`+probe.AnswerScoreVersion+`"`, `"answer_score": "`+probe.AnswerScoreV1+`"`, 1)
	if v1 == string(data) {
		t.Fatal("no answer_score in the manifest to edit")
	}
	os.WriteFile(filepath.Join(dir, rundir.FileManifest), []byte(v1), 0o644)
	undoTr := restore(rundir.FileTraces)
	traces, err := rundir.ReadTraces(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range traces {
		traces[i].AnswerFirst = nil
	}
	probetest.WriteTraces(t, dir, traces)
	if err := recomputeErr(dir); err != nil {
		t.Errorf("an %s run without the answer first: %v", probe.AnswerScoreV1, err)
	}
	undoTr()
	undoMan()
	undo()
	// The manifest's plan sha256 deleted by hand (which would let any edit
	// of set.jsonl or the config pass).
	undo = restore(rundir.FileManifest)
	data, _ = os.ReadFile(filepath.Join(dir, rundir.FileManifest))
	noSHA := regexp.MustCompile(`\n\s*"plan_sha256": "[0-9a-f]+",`).ReplaceAllString(string(data), "")
	if noSHA == string(data) {
		t.Fatal("no plan_sha256 in the manifest to delete")
	}
	os.WriteFile(filepath.Join(dir, rundir.FileManifest), []byte(noSHA), 0o644)
	for name, err := range map[string]error{"report": recomputeErr(dir), "verify": verifyErr(dir)} {
		if err == nil || !strings.Contains(err.Error(), rundir.FileManifest+": records no plan sha256") {
			t.Errorf("%s with the plan sha256 deleted: %v", name, err)
		}
	}
	undo()
	if _, err := probe.Recompute(dir); err != nil {
		t.Fatalf("restored run: %v", err)
	}
}

// dropColumn rewrites the CSV file at path without the named column.
func dropColumn(t *testing.T, path, name string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	at := slices.Index(recs[0], name)
	if at < 0 {
		t.Fatalf("%s has no column %s", path, name)
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	for _, r := range recs {
		w.Write(slices.Delete(r, at, at+1))
	}
	w.Flush()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func recomputeErr(dir string) error { _, err := probe.Recompute(dir); return err }

func verifyErr(dir string) error {
	_, err := verify.Verify(context.Background(), dir, verify.VerifyOptions{})
	return err
}

// TestReportAndVerifyOnIncompleteRuns: the recomputed summary says when
// the run is not complete (the narrative's sentence: package report); verify refuses a traces.jsonl with no trace
// instead of reporting "0 items reproduce".
func TestReportAndVerifyOnIncompleteRuns(t *testing.T) {
	dir := tinyRun(t, []string{probetest.GemmaModel(t)}, []templates.Variant{templates.VariantBase}, 2)
	man, err := rundir.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := probe.Recompute(dir)
	if err != nil || sum.RunStatus != "" {
		t.Fatalf("complete run: status %q, %v", sum.RunStatus, err)
	}
	man.Status = "interrupted"
	if err := rundir.WriteJSONAtomic(filepath.Join(dir, rundir.FileManifest), man); err != nil {
		t.Fatal(err)
	}
	if sum, err = probe.Recompute(dir); err != nil {
		t.Fatal(err)
	}
	if sum.RunStatus != "interrupted" {
		t.Errorf("interrupted run: status %q", sum.RunStatus)
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.FileTraces), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := verify.Verify(context.Background(), dir, verify.VerifyOptions{}); err == nil || !strings.Contains(err.Error(), "no trace: nothing to verify") {
		t.Errorf("empty traces.jsonl: %v", err)
	}
}

// tinyRun runs the two tiny templates on the given models (no DDC) and
// returns the run directory (probetest.TinyConfig).
func tinyRun(t *testing.T, modelPaths []string, variants []templates.Variant, nseq int) string {
	t.Helper()
	cfg := probetest.TinyConfig(t, modelPaths, variants, nseq)
	if _, err := probe.Run(context.Background(), cfg, probe.Options{}); err != nil {
		t.Fatalf("run: %v", err)
	}
	return cfg.OutDir
}
