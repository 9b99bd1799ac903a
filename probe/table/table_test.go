package table

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe/report"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/summary"
)

// runNames are the checked-in synthetic runs of probe/report.
var runNames = []string{"arith", "docqa", "many"}

// copyRuns copies the synthetic runs into a temporary folder and rewrites
// each one's summary.json from its results.csv with this version's code
// (report.Rewrite, as `fragility report` does), so that a stale checked-in
// summary does not decide the test. It returns the run directories.
func copyRuns(t *testing.T) []string {
	t.Helper()
	root := t.TempDir()
	var dirs []string
	for _, name := range runNames {
		src := filepath.Join("..", "report", "testdata", "runs", name)
		dst := filepath.Join(root, name)
		if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		if _, err := report.Rewrite(dst); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		dirs = append(dirs, dst)
	}
	return dirs
}

// writeJSONMap writes m as the JSON file at path (a jsonMap edited).
func writeJSONMap(t *testing.T, path string, m map[string]any) {
	t.Helper()
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// jsonMap decodes the JSON file at path generically: the test reads the
// summary by its field names, apart from the package's own types.
func jsonMap(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// field follows keys (a string for an object, an int for a list) into v;
// nil when one is missing.
func field(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// TestLoadThreeRuns: one row per model of each of the three runs, in
// order, every cell the summary's own number: accuracy per variant over
// the union of the runs' variants, the verdict variant's paired drop and
// interval, the stability note, the budget cut share of the verdict
// variant, the verdict; no protocol, so comparable.
func TestLoadThreeRuns(t *testing.T) {
	dirs := copyRuns(t)
	tb, err := Load(dirs)
	if err != nil {
		t.Fatal(err)
	}
	wantVariants := []string{"base", "numbers", "symbolic", "noop", "noop-seeming", "distractor-1", "paraphrase-1", "paraphrase-2", "shuffle"}
	if !slices.Equal(tb.Variants, wantVariants) {
		t.Errorf("variants %v, want %v", tb.Variants, wantVariants)
	}
	if !tb.Comparable || tb.Note != "" || !slices.Equal(tb.Protocols, []string{NoProtocol}) {
		t.Errorf("comparable %v, note %q, protocols %v: want one protocol, none", tb.Comparable, tb.Note, tb.Protocols)
	}
	wantRows := []struct{ dir, model, quant, cond string }{
		{"arith", "a-Q4_K_M", "Q4_K_M", "none"}, {"arith", "a-Q4_K_M + calculator", "Q4_K_M", "calculator"},
		{"arith", "a-Q8_0", "Q8_0", "none"}, {"arith", "a-Q8_0 + calculator", "Q8_0", "calculator"},
		{"docqa", "a-Q4_K_M", "Q4_K_M", "none"}, {"docqa", "a-Q8_0", "Q8_0", "none"},
		{"many", "b-Q4_K_M", "Q4_K_M", "none"},
	}
	if len(tb.Rows) != len(wantRows) {
		t.Fatalf("%d rows, want %d", len(tb.Rows), len(wantRows))
	}
	modelOf := map[string]int{} // the next model index of each run
	for i, w := range wantRows {
		r := tb.Rows[i]
		dir := filepath.Join(filepath.Dir(dirs[0]), w.dir)
		if r.Dir != dir || r.Model != w.model || r.Quantization != w.quant || r.Condition != w.cond || r.Protocol != NoProtocol {
			t.Errorf("row %d: %s %s %s %s %s, want %s %s %s %s none", i, r.Dir, r.Model, r.Quantization, r.Condition, r.Protocol, dir, w.model, w.quant, w.cond)
		}
		sum := jsonMap(t, filepath.Join(dir, rundir.FileSummary))
		m := field(sum, "models", modelOf[w.dir])
		modelOf[w.dir]++
		if field(m, "label") != w.model {
			t.Fatalf("row %d: the summary's model is %v", i, field(m, "label"))
		}
		// Accuracy: the summary's value where the run has the variant.
		byVariant := map[string]any{}
		for _, v := range field(m, "variants").([]any) {
			byVariant[field(v, "variant").(string)] = v
		}
		for j, a := range r.Accuracy {
			want, ok := field(byVariant[tb.Variants[j]], "accuracy_pct", "value").(float64)
			switch {
			case a.Variant != tb.Variants[j]:
				t.Errorf("row %d: accuracy %d is %s's, want %s's", i, j, a.Variant, tb.Variants[j])
			case !ok && a.Pct != nil:
				t.Errorf("row %d: accuracy on %s %v, which the run does not have", i, a.Variant, *a.Pct)
			case ok && (a.Pct == nil || *a.Pct != want):
				t.Errorf("row %d: accuracy on %s %v, want %v", i, a.Variant, a.Pct, want)
			}
		}
		vv := field(m, "verdict_variant").(string)
		v := byVariant[vv]
		if r.VerdictVariant != vv || vv == "" {
			t.Errorf("row %d: verdict variant %q, want %q", i, r.VerdictVariant, vv)
			continue
		}
		drop := field(v, "paired", "paired_drop_pp")
		if r.Drop == nil || r.Drop.Value != field(drop, "value") || r.Drop.CI == nil ||
			r.Drop.CI.Lo != field(drop, "ci", "lo") || r.Drop.CI.Hi != field(drop, "ci", "hi") {
			t.Errorf("row %d: paired drop %+v, want %v", i, r.Drop, drop)
		}
		cut, scored := field(v, "cut_by_budget").(float64), field(v, "scored").(float64)
		if r.Cut != int(cut) || r.Scored != int(scored) || r.CutPct == nil || *r.CutPct != 100*cut/scored {
			t.Errorf("row %d: cut %d of %d (%v%%), want %v of %v", i, r.Cut, r.Scored, r.CutPct, cut, scored)
		}
		if want := field(m, "headline"); r.Verdict != want || r.Verdict == "" {
			t.Errorf("row %d: verdict %q, want the headline %q", i, r.Verdict, want)
		}
		// No run of these has a placebo: the excess is not assessed, with
		// the stability verdict's reason where it has one.
		wantNote := "not assessed: no answer-keeping variant with recorded answers"
		if reason, ok := field(m, "stability", "reason").(string); ok {
			wantNote = "not assessed: " + reason
		}
		if r.Excess != nil || r.ExcessNote != wantNote {
			t.Errorf("row %d: excess %+v, note %q; want none, %q", i, r.Excess, r.ExcessNote, wantNote)
		}
		if r.AnswerFirst != nil {
			t.Errorf("row %d: answer-first shift %+v in a run without it", i, r.AnswerFirst)
		}
	}
	// A few cells by hand: the unit is a distinct prompt.
	if a := tb.Rows[6].Accuracy[0].Pct; a == nil || *a != 50 {
		t.Errorf("many b-Q4_K_M base accuracy %v, want 50", a)
	}
	if a := tb.Rows[5].Accuracy[8].Pct; a == nil || *a != 12.5 {
		t.Errorf("docqa a-Q8_0 shuffle accuracy %v, want 12.5", a)
	}

	// The text table: a header and a row per model.
	var out bytes.Buffer
	if err := tb.Write(&out, FormatText); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 1+len(wantRows) || !strings.HasPrefix(lines[0], "run ") || !strings.Contains(lines[7], "b-Q4_K_M") ||
		!strings.Contains(lines[5], "not assessed: no placebo in the run ") {
		t.Errorf("text:\n%s", out.String())
	}
	// CSV: as many records, the columns named.
	out.Reset()
	if err := tb.Write(&out, FormatCSV); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&out).ReadAll()
	if err != nil || len(recs) != 1+len(wantRows) || !slices.Equal(recs[0], tb.CSVHeader()) || recs[7][1] != "b-Q4_K_M" || recs[7][6] != "50" || recs[7][5] != "true" {
		t.Errorf("csv (%v): %q", err, recs)
	}
}

// TestLoadProtocolsAndMeasures: rows under different protocols are flagged
// as not comparable (the note, the comparable column and field); a
// stability excess and an answer-first shift, when the summary has them,
// are shown with their intervals (an open limit kept).
func TestLoadProtocolsAndMeasures(t *testing.T) {
	dirs := copyRuns(t)
	// The many run frozen under a protocol: manifest and summary say so.
	hash := strings.Repeat("ab", 32)
	for _, name := range []string{rundir.FileManifest, rundir.FileSummary} {
		path := filepath.Join(dirs[2], name)
		m := jsonMap(t, path)
		if name == rundir.FileManifest {
			m["config"].(map[string]any)["protocol_sha256"] = hash
		} else {
			m["protocol_sha256"] = hash
			model := field(m, "models", 0).(map[string]any)
			model["stability"] = map[string]any{"verdict": "answers unstable", "variant": "noop",
				"excess": map[string]any{"placebo": "placebo", "excess_pp": map[string]any{"value": 4.2, "ci": map[string]any{"lo": 0.0, "hi": 7.3, "lo_open": true, "method": "sign-flip inversion"}}}}
			for _, v := range model["variants"].([]any) {
				if v := v.(map[string]any); v["variant"] == model["verdict_variant"] {
					v["answer_first_logprob_shift"] = map[string]any{"pairs": 20, "shift_nats": map[string]any{"value": -0.314, "ci": map[string]any{"lo": -0.5, "hi": -0.1, "method": "cluster-t"}}}
				}
			}
		}
		writeJSONMap(t, path, m)
	}
	tb, err := Load(dirs)
	if err != nil {
		t.Fatal(err)
	}
	if tb.Comparable || !slices.Equal(tb.Protocols, []string{NoProtocol, hash}) ||
		tb.Note != "not comparable: the rows follow 2 different protocols (none, abababababab); a difference between rows of different protocols may be the protocol's, not the model's" {
		t.Errorf("comparable %v, protocols %v, note %q", tb.Comparable, tb.Protocols, tb.Note)
	}
	r := tb.Rows[6]
	if r.Protocol != hash || r.Excess == nil || r.Excess.Value != 4.2 || r.ExcessNote != "" || r.AnswerFirst == nil || r.AnswerFirst.Value != -0.314 {
		t.Fatalf("row: %+v", r)
	}
	var out bytes.Buffer
	if err := tb.Write(&out, FormatText); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if !strings.HasPrefix(text, tb.Note+"\nrun ") || !strings.Contains(text, "protocol (differs)") ||
		!strings.Contains(text, "abababababab") || !strings.Contains(text, "+4.2 (0.0, 7.3]") || !strings.Contains(text, "-0.31 [-0.50, -0.10]") {
		t.Errorf("text:\n%s", text)
	}
	out.Reset()
	if err := tb.Write(&out, FormatCSV); err != nil {
		t.Fatal(err)
	}
	if recs, err := csv.NewReader(&out).ReadAll(); err != nil || recs[1][5] != "false" || recs[7][4] != hash {
		t.Errorf("csv (%v): %q", err, recs)
	}
	out.Reset()
	if err := tb.Write(&out, FormatJSON); err != nil {
		t.Fatal(err)
	}
	var back Table
	if err := json.Unmarshal(out.Bytes(), &back); err != nil || back.Comparable || back.Rows[6].Excess == nil || !back.Rows[6].Excess.CI.LoOpen {
		t.Errorf("json (%v): %s", err, out.String())
	}
	out.Reset()
	if err := tb.Write(&out, FormatHTML); err != nil {
		t.Fatal(err)
	}
	page := out.String()
	if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.Contains(page, `<p class="warn">not comparable: `) ||
		!strings.Contains(page, "<td>&#43;4.2 (0.0, 7.3]</td>") || strings.Contains(page, "http") || strings.Contains(page, "<script") {
		t.Errorf("html:\n%s", page)
	}
}

// TestLoadNotARun: a folder that is not a run directory, and a run
// directory without summary.json, are one line naming them.
func TestLoadNotARun(t *testing.T) {
	dirs := copyRuns(t)
	empty := t.TempDir()
	if _, err := Load([]string{dirs[0], empty}); err == nil || err.Error() != empty+": no manifest: not a run directory" {
		t.Errorf("empty folder: %v", err)
	}
	os.Remove(filepath.Join(dirs[1], rundir.FileSummary))
	if _, err := Load(dirs); err == nil || !strings.HasPrefix(err.Error(), dirs[1]+": no summary.json (fragility report "+dirs[1]) || strings.Contains(err.Error(), "\n") {
		t.Errorf("no summary: %v", err)
	}
	// An interrupted run has none yet: finishing it is the way on.
	man, err := rundir.ReadManifest(dirs[1])
	if err != nil {
		t.Fatal(err)
	}
	man.Status = "interrupted"
	if err := rundir.WriteJSONAtomic(filepath.Join(dirs[1], rundir.FileManifest), man); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dirs); err == nil || err.Error() != dirs[1]+": no summary.json: the run is interrupted (finish it with fragility run --resume "+dirs[1]+")" {
		t.Errorf("interrupted, no summary: %v", err)
	}
	// A complete run whose results.csv was torn (round-4 retry: table
	// printed the old summary and said nothing).
	res := filepath.Join(dirs[2], rundir.FileResults)
	data, err := os.ReadFile(res)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(res, data[:len(data)-20], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dirs[2:]); err == nil || !strings.HasPrefix(err.Error(), res+": ") || !strings.Contains(err.Error(), "line") || strings.Contains(err.Error(), "\n") {
		t.Errorf("torn results.csv: %v", err)
	}
}

// TestExcessAtFloor: with no stability verdict, a model at the floor is
// said to be at the floor, not to lack an answer-keeping variant.
func TestExcessAtFloor(t *testing.T) {
	if _, note := excess(nil, true); note != "not assessed: "+summary.ReasonFloor {
		t.Errorf("floor: %q", note)
	}
	if _, note := excess(nil, false); !strings.Contains(note, "no answer-keeping variant") {
		t.Errorf("no verdict: %q", note)
	}
}

// TestLoadDesignsAndTwice (round-4 retry): runs without a protocol whose
// designs differ (here the output budget) are flagged as not comparable,
// naming the designs; a directory given twice is one line naming it.
func TestLoadDesignsAndTwice(t *testing.T) {
	dirs := copyRuns(t)
	if tb, err := Load(dirs); err != nil || !tb.Comparable {
		t.Fatalf("the same design: not comparable (%v)", err)
	}
	path := filepath.Join(dirs[1], rundir.FileManifest)
	m := jsonMap(t, path)
	m["config"].(map[string]any)["max_tokens"] = 7
	writeJSONMap(t, path, m)
	tb, err := Load(dirs)
	if err != nil {
		t.Fatal(err)
	}
	if tb.Comparable || !strings.HasPrefix(tb.Note, "not comparable: the runs without a protocol differ in design (") || !strings.Contains(tb.Note, ", 7 tokens,") {
		t.Errorf("two designs: comparable %v, note %q", tb.Comparable, tb.Note)
	}
	again := filepath.Join(dirs[0], ".")
	if _, err := Load([]string{dirs[0], again}); err == nil || err.Error() != again+": given twice (as "+dirs[0]+" and "+again+"): each run is one row" {
		t.Errorf("a directory twice: %v", err)
	}
}
