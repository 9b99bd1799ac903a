package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/summary"
)

// maxSentenceChars is the longest sentence, in characters, the narrative
// may hold outside its Methods section (issue 53): detail past that
// belongs in Methods, at the end.
const maxSentenceChars = 300

// longSentences returns the sentences of the narrative md longer than max
// characters outside its "## Methods" section, each with its line number.
// A sentence ends at ". ", "! ", "? " or a line end, so a list item or a
// table row with none of them is one sentence.
func longSentences(md string, max int) []string {
	var out []string
	methods := false
	for i, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "## ") {
			methods = strings.TrimSpace(line) == "## Methods"
		}
		if methods {
			continue
		}
		for len(line) > 0 {
			s := line
			if k := indexSentenceEnd(line); k >= 0 {
				s, line = line[:k+1], line[k+2:]
			} else {
				line = ""
			}
			if n := utf8.RuneCountInString(s); n > max {
				out = append(out, fmt.Sprintf("line %d (%d characters): %s", i+1, n, s))
			}
		}
	}
	return out
}

// indexSentenceEnd is the index of the first '.', '!' or '?' in line that
// a space follows, or -1.
func indexSentenceEnd(line string) int {
	for j := 0; j+1 < len(line); j++ {
		if strings.IndexByte(".!?", line[j]) >= 0 && line[j+1] == ' ' {
			return j
		}
	}
	return -1
}

// TestNarrativeSentenceLength: no sentence of the narrative outside its
// Methods section is longer than maxSentenceChars characters (issue 53: the
// simulation's evidence once made one of 2,249), for the checked-in runs of
// testdata/runs rendered afresh (arithmetic with two quantizations and the
// calculator; document questions; 26 templates) and for the synthetic runs
// of the other tests (richTrials: two models on 16 templates; paperTrials:
// GSM-Symbolic levels and the paper's view; defaultSynth).
func TestNarrativeSentenceLength(t *testing.T) {
	runs, err := filepath.Glob(filepath.Join("testdata", "runs", "*"))
	if err != nil || len(runs) == 0 {
		t.Fatalf("no runs in testdata/runs (%v)", err)
	}
	narratives := map[string]string{}
	for _, src := range runs {
		dir := t.TempDir()
		for _, f := range []string{rundir.FileManifest, rundir.FileResults} {
			b, err := os.ReadFile(filepath.Join(src, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		s, err := Rewrite(dir)
		if err != nil {
			t.Fatal(err)
		}
		narratives[filepath.Base(src)] = Narrative(s)
	}
	s, err := summary.Summarize(richTrials(), summary.Params{BootstrapResamples: 300, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	narratives["richTrials"] = Narrative(s)
	narratives["paperTrials"] = Narrative(mustSummary(t, paperTrials()))
	narratives["defaultSynth"] = Narrative(mustSummary(t, defaultSynth().write(t, t.TempDir())))
	for name, md := range narratives {
		if !strings.Contains(md, "\n## Methods\n") {
			t.Errorf("%s: no Methods section", name)
		}
		for _, x := range longSentences(md, maxSentenceChars) {
			t.Errorf("%s: a sentence over %d characters outside Methods: %s", name, maxSentenceChars, x)
		}
	}
}

// TestLongSentences: the sentence splitter of TestNarrativeSentenceLength
// ends a sentence at ". ", "! ", "? " and a line end, and skips Methods.
func TestLongSentences(t *testing.T) {
	long := strings.Repeat("a", 12)
	md := "# T\n\n" + long + ". short. " + long + "\n| " + long + " |\n## Methods\n\n" + long + long + "\n## After\n\nok? " + long + "!\n"
	got := longSentences(md, 10)
	want := []string{"line 3 (13 characters): " + long + ".", "line 3 (12 characters): " + long,
		"line 4 (16 characters): | " + long + " |", "line 10 (13 characters): " + long + "!"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("longSentences:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
