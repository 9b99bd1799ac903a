package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/summary"
)

// paperTrials is a small GSM-Symbolic run (1 = right): three templates at
// level symbolic with their originals (base, two copies each), three
// datasets of symbolic and noop-seeming (drawn on the symbolic instance),
// and two p1 templates.
//
//	S1 (O1): base 1 1, symbolic 1 1 0, noop-seeming 1 0 0
//	S2 (O2): base 1 1, symbolic 1 0 0, noop-seeming 0 0 0
//	S3 (O3): base 0 0, symbolic 0 0 1, noop-seeming 0 0 1
//	Q1 (O1, p1): symbolic 0 0 1;  Q2 (O2, p1): symbolic 0 0 0
func paperTrials() []results.Trial {
	var ts []results.Trial
	add := func(tmpl, orig, level, variant string, rs ...int) {
		for i, r := range rs {
			t := results.Trial{ItemID: fmt.Sprintf("m0/%s/%s/%d", tmpl, variant, i), ModelPath: "/models/m.gguf", ModelName: "m",
				Quantization: "Q4_K_M", TemplateID: tmpl, Variant: variant, Instance: i, Correct: r == 1, Level: level, IDOrig: orig,
				Question: fmt.Sprintf("%s %s %d?", tmpl, variant, i), Expected: "1", Extracted: fmt.Sprint(r), Rule: "final_answer", StopReason: "eos", Tokens: 3}
			if variant == "noop-seeming" {
				t.Reference = "symbolic"
			}
			ts = append(ts, t)
		}
	}
	add("S1", "O1", "symbolic", "base", 1, 1)
	add("S2", "O2", "symbolic", "base", 1, 1)
	add("S3", "O3", "symbolic", "base", 0, 0)
	add("S1", "O1", "symbolic", "symbolic", 1, 1, 0)
	add("S2", "O2", "symbolic", "symbolic", 1, 0, 0)
	add("S3", "O3", "symbolic", "symbolic", 0, 0, 1)
	add("S1", "O1", "symbolic", "noop-seeming", 1, 0, 0)
	add("S2", "O2", "symbolic", "noop-seeming", 0, 0, 0)
	add("S3", "O3", "symbolic", "noop-seeming", 0, 0, 1)
	add("Q1", "O1", "p1", "symbolic", 0, 0, 1)
	add("Q2", "O2", "p1", "symbolic", 0, 0, 0)
	return ts
}

// TestPaperNarrativeAndFigure: the narrative's paper-shaped table holds
// the hand-computed mean ± sd of each row with N, its templates per
// dataset (Symbolic 44.4 ± 19.2 with N = 3, P1 16.7 ± 28.9 with N = 2, NoOp
// 22.2 ± 19.2 with N = 3, GSM8K 66.7), the per-model table the sd of
// independent templates beside the observed one (Symbolic 100·√(3·⅓)/3 =
// 33.3, P1 100·√(⅓)/2 = 28.9, NoOp 100·√(⅔)/3 = 27.2: the hand values of
// summary's TestPaperViewHandCase), the sd sentence and the percentile
// sentence (83rd: two datasets below, one tied), labelled descriptive with
// the paired drop named for inference; the page has the dataset histogram
// with its caption, which says the same.
func TestPaperNarrativeAndFigure(t *testing.T) {
	dir := t.TempDir()
	trials := paperTrials()
	sum, err := summary.Summarize(trials, summary.DefaultParams(1))
	if err != nil {
		t.Fatal(err)
	}
	var rb bytes.Buffer
	must(t, results.WriteCSV(&rb, trials))
	must(t, os.WriteFile(filepath.Join(dir, rundir.FileResults), rb.Bytes(), 0o644))
	data, _ := json.Marshal(sum)
	must(t, os.WriteFile(filepath.Join(dir, rundir.FileSummary), data, 0o644))
	n := Narrative(sum)
	must(t, os.WriteFile(filepath.Join(dir, rundir.FileNarrative), []byte(n), 0o644))
	for _, want := range []string{
		"| model | GSM8K (3) | Symbolic | P1 | NoOp |",
		"| m Q4_K_M | 66.7 | 44.4 ± 19.2 (N = 3) | 16.7 ± 28.9 (N = 2) | 22.2 ± 19.2 (N = 3) |",
		"| templates per dataset (N) | mean ± sd over datasets | sd if templates were independent |",
		"GSM8K's percentile among the datasets (descriptive) |",
		"| Symbolic | 3 | 3 | 44.4 ± 19.2 | 33.3 | 33.3–66.7 | 44.4 [0.0, 92.3] | +22.2 ",
		"| P1 | 3 | 2 | 16.7 ± 28.9 | 28.9 | 0.0–50.0 |",
		"| NoOp | 3 | 3 | 22.2 ± 19.2 | 27.2 | 0.0–33.3 |",
		"+22.2 [-25.6, 70.0] (9 pairs)",
		"It is not a confidence interval of the mean",
		"the sd would be 100·√(Σ p_g(1 − p_g))/N",
		"the paper's datasets held 100 templates",
		"2 scored below that, so the original accuracy sits at the 83rd percentile, on the right (higher) side of",
		"The percentile is descriptive: it places one number among these datasets, whose spread depends on N (3 templates per dataset here), and tests nothing.",
		"paired drop vs GSM8K (Symbolic: +22.2 pp [-100.0, 100.0], each trial paired with its own original, clustered by original problem), the number to read for inference.",
	} {
		if !strings.Contains(n, want) {
			t.Errorf("narrative lacks %q", want)
		}
	}
	path, err := WriteHTML(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(path)
	if !bytes.Contains(page, []byte(`id="fig-paper-datasets"`)) || !bytes.Contains(page, []byte("m Q4_K_M Symbolic: 83rd")) {
		t.Errorf("no dataset histogram with the originals' percentile in the page")
	}
	if !bytes.Contains(page, []byte("percentile among the datasets, descriptive")) || !bytes.Contains(page, []byte("it depends on N, the templates in a dataset")) {
		t.Errorf("the histogram's caption does not label the percentile descriptive or name N")
	}
}
