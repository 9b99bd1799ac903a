package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/summary"
)

// TestAnswerProbSection renders a run whose trials carry answer_logprob:
// the narrative states the shift under the verdict as belief in the right
// answer (not accuracy) with its interval, p and MDE, has the section's
// table, and the page has the per-template figure. The same run without
// the column (TestWriteHTMLFullRun, the goldens) has none of them.
func TestAnswerProbSection(t *testing.T) {
	dir := t.TempDir()
	trials := defaultSynth().write(t, dir)
	for i := range trials {
		tr := &trials[i]
		tr.AnswerScored, tr.AnswerLogProbTokens = true, 2
		tr.AnswerLogProb = -0.5 - 0.3*float64(i%5)
		if tr.Variant == "noop" {
			tr.AnswerLogProb -= 1 + 0.1*float64(i%3)
		}
	}
	var rb bytes.Buffer
	must(t, results.WriteCSV(&rb, trials))
	must(t, os.WriteFile(filepath.Join(dir, probe.FileResults), rb.Bytes(), 0o644))
	sum, err := summary.Summarize(trials, summary.DefaultParams(1))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(sum)
	must(t, os.WriteFile(filepath.Join(dir, probe.FileSummary), data, 0o644))
	nar := Narrative(sum)
	must(t, os.WriteFile(filepath.Join(dir, probe.FileNarrative), []byte(nar), 0o644))
	for _, want := range []string{"### Belief in the right answer", "| noop | ", "MDE, nats", "not accuracy", "teacher-forced"} {
		if !strings.Contains(nar, want) {
			t.Errorf("narrative lacks %q", want)
		}
	}
	if !regexp.MustCompile(`\*\*Verdict: [^\n]*Belief in the right answer \(its log-probability[^\n]*nats per pair`).MatchString(nar) {
		t.Errorf("no belief line under the verdict:\n%s", nar)
	}
	// Below 20 templates the shift has no interval, and the narrative says
	// so rather than print "[n/a]" or claim an interval that includes 0.
	sh := sum.Models[0].Variant(sum.Models[0].VerdictVariant).AnswerLogProbShift
	if sh.Shift.Clusters >= 20 {
		t.Fatalf("the synthetic run has %d templates: the test needs fewer than 20", sh.Shift.Clusters)
	}
	for _, want := range []string{"[no interval: fewer than 20 templates]", "no interval is given from fewer than 20 templates"} {
		if !strings.Contains(nar, want) {
			t.Errorf("narrative lacks %q", want)
		}
	}
	if strings.Contains(nar, "the interval includes 0: no shift in belief") {
		t.Error("the narrative reads an interval it does not have")
	}
	path, err := WriteHTML(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?s)<figure class="plot( wide)?" id="fig-answer-logprob">.*?<svg .*?</svg>.*?<figcaption>(.+?)</figcaption>`)
	if re.FindSubmatch(page) == nil {
		t.Error("no answer log-probability figure with an SVG and a caption")
	}
	plain := Narrative(mustSummary(t, defaultSynth().write(t, t.TempDir())))
	if strings.Contains(plain, "Belief in the right answer") {
		t.Error("a run without answer_logprob has the section")
	}
}

func mustSummary(t *testing.T, trials []results.Trial) *summary.Summary {
	t.Helper()
	s, err := summary.Summarize(trials, summary.DefaultParams(1))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAnswerProbReading: the sentence under the verdict reads the interval
// and the adjusted test as they are: an interval that excludes 0 with an
// adjusted p above α is not said to include 0.
func TestAnswerProbReading(t *testing.T) {
	mk := func(lo, hi, padj float64, shown bool) *summary.ModelSummary {
		sh := &summary.AnswerLogProbShift{Pairs: 68, Shown: shown,
			Shift: &summary.Estimate{Value: (lo + hi) / 2, CI: &summary.Interval{Lo: lo, Hi: hi, Method: summary.MethodClusterT}, Clusters: 68},
			Test:  &summary.Test{P: padj / 2, PAdjusted: padj, Adjustment: "holm", Family: 2}}
		return &summary.ModelSummary{VerdictVariant: "noop", Variants: []summary.VariantSummary{{Variant: "noop", AnswerLogProbShift: sh}}}
	}
	for _, c := range []struct {
		m    *summary.ModelSummary
		want string
	}{
		{mk(-4.02, -0.04, 0.099, false), "the interval excludes 0, but the adjusted test does not reach α"},
		{mk(-4.02, 0.5, 0.3, false), "the interval includes 0"},
		{mk(-4.02, -1, 0.01, true), "the variant lowered the probability"},
	} {
		if got := answerProbSentence(c.m, "95%"); !strings.Contains(got, c.want) {
			t.Errorf("%q lacks %q", got, c.want)
		}
	}
}
