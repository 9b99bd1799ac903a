package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/summary"
)

// TestAnswerProbSection renders a run whose trials carry answer_logprob
// and, in a second run, answer_first_logprob too. With the first only (an
// answer-score/1 run) the narrative states the shift under the verdict as
// the right answer after the model's own reasoning, a soft accuracy (not
// belief), with its interval, p and MDE, has the section's table with the
// finished-pairs and per-token shifts, and the page has the per-template
// figure. With the answer first, the line under the verdict is the answer
// first's, its section and figure are there too. The same run without the
// columns (TestWriteHTMLFullRun, the goldens) has none of them.
func TestAnswerProbSection(t *testing.T) {
	for _, withFirst := range []bool{false, true} {
		dir := t.TempDir()
		trials := defaultSynth().write(t, dir)
		for i := range trials {
			tr := &trials[i]
			tr.AnswerScored, tr.AnswerLogProbTokens = true, 2
			tr.AnswerLogProb = -0.5 - 0.3*float64(i%5)
			if tr.Variant == "noop" {
				tr.AnswerLogProb -= 1 + 0.1*float64(i%3)
			}
			if withFirst {
				tr.AnswerFirstLogProb, tr.AnswerFirstLogProbTokens = -2-0.2*float64(i%4), 1+i%2
				if tr.Variant == "noop" {
					tr.AnswerFirstLogProb -= 0.5 + 0.1*float64(i%7)
				}
			}
		}
		var rb bytes.Buffer
		must(t, results.WriteCSV(&rb, trials))
		must(t, os.WriteFile(filepath.Join(dir, rundir.FileResults), rb.Bytes(), 0o644))
		sum, err := summary.Summarize(trials, summary.DefaultParams(1))
		if err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(sum)
		must(t, os.WriteFile(filepath.Join(dir, rundir.FileSummary), data, 0o644))
		nar := Narrative(sum)
		must(t, os.WriteFile(filepath.Join(dir, rundir.FileNarrative), []byte(nar), 0o644))
		for _, want := range []string{"### The right answer after the model's own reasoning (soft accuracy)", "| noop | ", "MDE, nats", "not belief", "teacher-forced", "finished pairs", "per token, nats"} {
			if !strings.Contains(nar, want) {
				t.Errorf("first %v: narrative lacks %q", withFirst, want)
			}
		}
		if strings.Contains(nar, "Belief in the right answer") {
			t.Errorf("first %v: the soft accuracy is still called belief", withFirst)
		}
		line := `\*\*Verdict: [^\n]*The right answer after the model's own reasoning \(soft accuracy[^\n]*nats per pair`
		if withFirst {
			line = `\*\*Verdict: [^\n]*The answer first \(the right answer's log-probability forced right after the prompt[^\n]*nats per pair`
		}
		if !regexp.MustCompile(line).MatchString(nar) {
			t.Errorf("first %v: no line under the verdict:\n%s", withFirst, nar)
		}
		for _, x := range longSentences(nar, maxSentenceChars) {
			t.Errorf("first %v: a sentence over %d characters outside Methods: %s", withFirst, maxSentenceChars, x)
		}
		if got := strings.Contains(nar, "### The answer first"); got != withFirst {
			t.Errorf("first %v: answer-first section %v", withFirst, got)
		}
		// Below 20 templates the shift has no interval, and the narrative says
		// so rather than print "[n/a]" or claim an interval that includes 0.
		sh := sum.Models[0].Variant(sum.Models[0].VerdictVariant).AnswerLogProbShift
		if sh.Shift.Clusters >= 20 {
			t.Fatalf("the synthetic run has %d templates: the test needs fewer than 20", sh.Shift.Clusters)
		}
		for _, want := range []string{"[no interval: fewer than 20 templates]", "No interval is given from fewer than 20 templates"} {
			if !strings.Contains(nar, want) {
				t.Errorf("first %v: narrative lacks %q", withFirst, want)
			}
		}
		if strings.Contains(nar, "The interval includes 0: no shift") {
			t.Errorf("first %v: the narrative reads an interval it does not have", withFirst)
		}
		path, err := WriteHTML(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		page, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]bool{"fig-answer-logprob": true, "fig-answer-first-logprob": withFirst} {
			re := regexp.MustCompile(`(?s)<figure class="plot( wide)?" id="` + id + `">.*?<svg .*?</svg>.*?<figcaption>(.+?)</figcaption>`)
			if got := re.FindSubmatch(page) != nil; got != want {
				t.Errorf("first %v: figure %s with an SVG and a caption: %v", withFirst, id, got)
			}
		}
	}
	plain := Narrative(mustSummary(t, defaultSynth().write(t, t.TempDir())))
	if strings.Contains(plain, "The right answer after") || strings.Contains(plain, "The answer first") {
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
		{mk(-4.02, -0.04, 0.099, false), "The interval excludes 0, but the adjusted test does not reach α"},
		{mk(-4.02, 0.5, 0.3, false), "The interval includes 0"},
		{mk(-4.02, -1, 0.01, true), "The variant lowered the right answer's log-probability after the model's reasoning"},
	} {
		if got := answerProbSentence(c.m, "95%"); !strings.Contains(got, c.want) {
			t.Errorf("%q lacks %q", got, c.want)
		}
	}
}
