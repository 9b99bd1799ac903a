package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/results"
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
// the hand-computed mean ± sd of each row (Symbolic 44.4 ± 19.2, P1
// 16.7 ± 28.9, NoOp 22.2 ± 19.2, GSM8K 66.7), the sd sentence and the
// percentile sentence (83rd: two datasets below, one tied); the page has
// the dataset histogram with its caption.
func TestPaperNarrativeAndFigure(t *testing.T) {
	dir := t.TempDir()
	trials := paperTrials()
	sum, err := summary.Summarize(trials, summary.DefaultParams(1))
	if err != nil {
		t.Fatal(err)
	}
	var rb bytes.Buffer
	must(t, results.WriteCSV(&rb, trials))
	must(t, os.WriteFile(filepath.Join(dir, probe.FileResults), rb.Bytes(), 0o644))
	data, _ := json.Marshal(sum)
	must(t, os.WriteFile(filepath.Join(dir, probe.FileSummary), data, 0o644))
	n := Narrative(sum)
	must(t, os.WriteFile(filepath.Join(dir, probe.FileNarrative), []byte(n), 0o644))
	for _, want := range []string{
		"| model | GSM8K (3) | Symbolic | P1 | NoOp |",
		"| m Q4_K_M | 66.7 | 44.4 ± 19.2 | 16.7 ± 28.9 | 22.2 ± 19.2 |",
		"| Symbolic | 3 | 3 | 44.4 ± 19.2 | 33.3–66.7 | 44.4 [0.0, 92.3] | +22.2 ",
		"| NoOp | 3 | 3 | 22.2 ± 19.2 | 0.0–33.3 |",
		"+22.2 [-25.6, 70.0] (9 pairs)",
		"It is not a confidence interval of the mean",
		"2 scored below that, so the original accuracy sits at the 83rd percentile, on the right (higher) side of",
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
}
