package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/summary"
)

// The rendering does not depend on a model, so these tests write small run
// directories in the format probe writes them (results.csv through
// results.WriteCSV, summary.json from summary.Summarize, narrative.md
// from Narrative, traces.jsonl lines of rundir.Trace). The browser test
// on a real run is TestReportInChromium in cmd/fragility.

type synth struct {
	models, templates, variants []string
	instances                   int
	traces, ddc, narrative      bool
	// response returns the response of a trial and whether it is right.
	response func(m, t, v, i int) (string, bool)
}

// write writes the run directory and returns its trials.
func (s synth) write(t *testing.T, dir string) []results.Trial {
	t.Helper()
	var trials []results.Trial
	var tb bytes.Buffer
	for mi, m := range s.models {
		for ti, tmpl := range s.templates {
			for vi, v := range s.variants {
				for i := range s.instances {
					resp, right := s.response(mi, ti, vi, i)
					q := fmt.Sprintf("Question %s %s #%d: how many?", tmpl, v, i)
					tr := results.Trial{
						ItemID: fmt.Sprintf("m%d/%s/%s/%d", mi, tmpl, v, i), ModelPath: "/models/" + m + ".gguf", ModelName: m,
						ModelFamily: "fam", Quantization: m, TemplateID: tmpl, Relation: "add", Steps: 2 + ti%2, Variant: v,
						Instance: i, Question: q, Expected: "42", Response: resp, Correct: right, Rule: "final_answer",
						StopReason: "eos",
					}
					if right {
						tr.Extracted = "42"
					} else {
						tr.Extracted = "41"
						tr.ErrorKind = []string{"arithmetic", "other"}[i%2]
						if i%2 == 1 {
							tr.StopReason, tr.ErrorKind = "max_tokens", "unfinished"
						}
					}
					pieces := splitPieces(resp)
					tr.Tokens = len(pieces)
					trace := rundir.Trace{ItemID: tr.ItemID, Prompt: "You are a careful solver.\nExample: 1+1=2\n" + q}
					var sum float64
					for j, p := range pieces {
						h := 0.25*float64(j%7) + 0.1*float64(vi)
						trace.Tokens = append(trace.Tokens, rundir.TraceToken{ID: 1, Piece: p, EntropyBits: h, LogProb: -0.5})
						sum += h
					}
					tr.EntropyMean = sum / float64(len(pieces))
					tr.AnswerEntropyMean = tr.EntropyMean
					if s.ddc {
						tr.DDCTop, tr.DDCRunnerUp, tr.DDCMargin = "500", "300", 0.02+0.01*float64(ti)+0.005*float64(vi)
					}
					trials = append(trials, tr)
					line, _ := json.Marshal(trace)
					tb.Write(append(line, '\n'))
				}
			}
		}
	}
	var rb bytes.Buffer
	if err := results.WriteCSV(&rb, trials); err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(filepath.Join(dir, rundir.FileResults), rb.Bytes(), 0o644))
	sum, err := summary.Summarize(trials, summary.DefaultParams(1))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(sum)
	must(t, os.WriteFile(filepath.Join(dir, rundir.FileSummary), data, 0o644))
	if s.narrative {
		must(t, os.WriteFile(filepath.Join(dir, rundir.FileNarrative), []byte(Narrative(sum)), 0o644))
	}
	if s.traces {
		must(t, os.WriteFile(filepath.Join(dir, rundir.FileTraces), tb.Bytes(), 0o644))
	}
	return trials
}

// splitPieces cuts a response into token-like pieces of up to 4 bytes,
// keeping UTF-8 sequences whole.
func splitPieces(s string) []string {
	var out []string
	for len(s) > 0 {
		n := 0
		for _, r := range s {
			l := len(string(r))
			if n > 0 && n+l > 4 {
				break
			}
			n += l
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func defaultSynth() synth {
	return synth{
		models: []string{"Q4_K_M", "Q8_0"}, templates: []string{"apples", "bikes", "cakes", "dogs"},
		variants: []string{"base", "symbolic", "noop"}, instances: 2, traces: true, ddc: true, narrative: true,
		response: func(m, t, v, i int) (string, bool) {
			right := (t+i+m)%3 != 0 && !(v == 2 && t%2 == 0)
			ans := "41"
			if right {
				ans = "42"
			}
			return fmt.Sprintf("Step one: 20 + 22.\nFinal answer: %s", ans), right
		},
	}
}

// tableOf extracts and decodes the trial table's inline JSON from a page.
func tableOf(t *testing.T, page string) tableData {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script type="application/json" id="trial-data">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no trial-data script in the page")
	}
	var d tableData
	if err := json.Unmarshal([]byte(m[1]), &d); err != nil {
		t.Fatalf("trial data is not JSON: %v\n%.300s", err, m[1])
	}
	return d
}

func TestWriteHTMLFullRun(t *testing.T) {
	dir := t.TempDir()
	trials := defaultSynth().write(t, dir)
	path, err := WriteHTML(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(dir, FileHTML) {
		t.Errorf("path = %s", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	for _, id := range []string{"fig-accuracy", "fig-flips", "fig-drop", "fig-errors", "fig-templates", "fig-answer-entropy", "fig-position-entropy", "fig-ddc", "fig-difficulty"} {
		re := regexp.MustCompile(`(?s)<figure class="plot( wide)?" id="` + id + `">.*?<svg .*?</svg>.*?<figcaption>(.+?)</figcaption>`)
		if m := re.FindStringSubmatch(page); m == nil {
			t.Errorf("%s: no figure with an SVG and a caption", id)
		}
	}
	if strings.Contains(page, "fig-compare") {
		t.Error("a compare figure without compare.json")
	}
	// Nothing is loaded from elsewhere: no src or link to a URL, no @import.
	if m := regexp.MustCompile(`(?i)(src|href)\s*=\s*"(https?:|//)[^"]*"|@import|url\(`).FindString(page); m != "" {
		t.Errorf("the page refers to an outside resource: %s", m)
	}
	if !strings.Contains(page, "<h2>Fragility report</h2>") {
		t.Error("the narrative's title is not one level under the page's")
	}
	d := tableOf(t, page)
	if len(d.Rows) != len(trials) {
		t.Fatalf("table: %d rows, want %d", len(d.Rows), len(trials))
	}
	if d.Prefix != "You are a careful solver.\nExample: 1+1=2\n" {
		t.Errorf("prompt prefix = %q", d.Prefix)
	}
	byID := map[string]results.Trial{}
	for _, tr := range trials {
		byID[tr.ItemID] = tr
	}
	for _, r := range d.Rows {
		tr := byID[r.ID]
		if r.Response != nil {
			t.Errorf("%s: response stored besides tokens that join to it", r.ID)
		}
		if got := strings.Join(r.Pieces, ""); got != tr.Response {
			t.Errorf("%s: tokens join to %q", r.ID, got)
		}
		if got := tr.Response[r.AnswerAt[0]:r.AnswerAt[1]]; got != tr.Extracted { // ASCII: UTF-16 offsets are byte offsets
			t.Errorf("%s: marked answer %q, extracted %q", r.ID, got, tr.Extracted)
		}
		if d.Prefix+d.Prompts[r.Prompt] != "You are a careful solver.\nExample: 1+1=2\n"+tr.Question {
			t.Errorf("%s: prompt %q", r.ID, d.Prompts[r.Prompt])
		}
		// The marked answer tokens are the ones that hold "42"/"41".
		if a := strings.Join(r.Pieces[r.Answer[0]:r.Answer[1]], ""); !strings.Contains(a, tr.Extracted) {
			t.Errorf("%s: answer tokens %q do not hold %q", r.ID, a, tr.Extracted)
		}
		if want := map[bool]int{true: 1, false: 0}[tr.Correct]; r.Correct != want {
			t.Errorf("%s: correct = %d", r.ID, r.Correct)
		}
	}
	// Rows are sorted by model, template, variant, instance.
	for i := 1; i < len(d.Rows); i++ {
		a, b := d.Rows[i-1], d.Rows[i]
		if [4]int{a.Model, a.Template, a.Variant, a.Instance} == [4]int{b.Model, b.Template, b.Variant, b.Instance} ||
			!lessRow(a, b) {
			t.Fatalf("rows %d and %d out of order: %+v, %+v", i-1, i, a, b)
		}
	}
}

func lessRow(a, b tableRow) bool {
	x, y := [4]int{a.Model, a.Template, a.Variant, a.Instance}, [4]int{b.Model, b.Template, b.Variant, b.Instance}
	for i := range x {
		if x[i] != y[i] {
			return x[i] < y[i]
		}
	}
	return false
}

// TestEscaping: text from the run (responses, template IDs, model names)
// cannot end the inline script or inject markup.
func TestEscaping(t *testing.T) {
	dir := t.TempDir()
	s := defaultSynth()
	s.templates = []string{"<b>bold</b>", "x&y"}
	s.response = func(m, t, v, i int) (string, bool) {
		return "</script><script>alert(1)</script> <!-- \u2028 é 🙂\nFinal answer: 42", true
	}
	s.write(t, dir)
	path, err := WriteHTML(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	page := string(data)
	if strings.Contains(page, "<script>alert(1)") || strings.Contains(page, "<b>bold</b>") {
		t.Error("run text reached the page unescaped")
	}
	if n := strings.Count(page, "</script>"); n != 4 {
		t.Errorf("%d </script> tags, want 4 (the trials, narrative.md, results.csv and the code)", n)
	}
	d := tableOf(t, page)
	r := d.Rows[0]
	want := "</script><script>alert(1)</script> <!-- \u2028 é 🙂\nFinal answer: "
	if got := strings.Join(r.Pieces, ""); got != want+"42" || d.Templates[0] != "<b>bold</b>" {
		t.Errorf("text did not survive the round trip: %q, %q", got, d.Templates[0])
	}
	// The answer's offsets count UTF-16 code units: é is one, 🙂 two.
	if u := len(utf16.Encode([]rune(want))); r.AnswerAt != [2]int{u, u + 2} {
		t.Errorf("answer at %v, want [%d %d]", r.AnswerAt, u, u+2)
	}
}

// TestOptionalFiles: without traces, DDC, narrative and manifest the page
// still renders, and the figures that need them say why they are missing.
func TestOptionalFiles(t *testing.T) {
	dir := t.TempDir()
	s := defaultSynth()
	s.traces, s.ddc, s.narrative = false, false, false
	s.write(t, dir)
	path, err := WriteHTML(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	page := string(data)
	for id, note := range map[string]string{
		"fig-answer-entropy":   "No traces.jsonl",
		"fig-position-entropy": "No traces.jsonl",
		"fig-ddc":              "no DDC classification",
	} {
		re := regexp.MustCompile(`<figure class="plot-note" id="` + id + `"><h3>[^<]*</h3><p class="note">([^<]*)</p>`)
		if m := re.FindStringSubmatch(page); m == nil || !strings.Contains(m[1], note) {
			t.Errorf("%s: want a note saying %q", id, note)
		}
	}
	if !strings.Contains(page, "No <code>narrative.md</code>") {
		t.Error("no note on the missing narrative")
	}
	d := tableOf(t, page)
	if r := d.Rows[0]; r.Prompt != -1 || r.Question == "" || len(r.Pieces) != 0 || r.Response == nil || r.Response[1] != "42" && r.Response[1] != "41" {
		t.Errorf("row without a trace: %+v", r)
	}
}

// TestBaseOnly: a run with base only has no pairs or drops; the page says so.
func TestBaseOnly(t *testing.T) {
	dir := t.TempDir()
	s := defaultSynth()
	s.variants = []string{"base"}
	s.write(t, dir)
	path, err := WriteHTML(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	for _, id := range []string{"fig-flips", "fig-drop"} {
		if !strings.Contains(string(data), `<figure class="plot-note" id="`+id+`">`) {
			t.Errorf("%s: want a note, not a plot", id)
		}
	}
}

func TestTokenCap(t *testing.T) {
	dir := t.TempDir()
	defaultSynth().write(t, dir)
	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	perTrial := len(splitPieces(r.Trials[0].Response))
	d := newView(r).buildTable(5 * perTrial)
	kept := 0
	for _, row := range d.Rows {
		if len(row.Pieces) > 0 {
			kept++
		}
	}
	if kept != 5 || d.Capped != len(d.Rows)-5 {
		t.Errorf("cap of 5 trials' tokens: %d rows kept, %d capped of %d", kept, d.Capped, len(d.Rows))
	}
}

// TestFromSummary: the intervals the plots draw are the summary's, not
// recomputed.
func TestFromSummary(t *testing.T) {
	dir := t.TempDir()
	defaultSynth().write(t, dir)
	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range accuracyCells(r.Summary) {
		for _, m := range r.Summary.Models {
			for _, v := range m.Variants {
				if m.Label == c.Model && v.Variant == c.Variant {
					n++
					if ci := v.AccuracyPct.CI; c.Acc.Value != v.AccuracyPct.Value || c.Acc.Lo != ci.Lo || c.Acc.Hi != ci.Hi || c.Acc.Method != ci.Method || c.K != v.K || c.N != v.N {
						t.Errorf("%s/%s: %+v, summary %+v", c.Model, c.Variant, c.Acc, v.AccuracyPct)
					}
				}
			}
		}
	}
	for _, c := range dropCells(r.Summary) {
		for _, m := range r.Summary.Models {
			for _, v := range m.Variants {
				if m.Label == c.Model && v.Variant == c.Variant {
					n++
					if d := v.Paired.PairedDropPP; c.Drop.Value != d.Value || c.Drop.Lo != d.CI.Lo || c.Drop.Hi != d.CI.Hi || c.Drop.Method != d.CI.Method {
						t.Errorf("%s/%s drop: %+v, summary %+v", c.Model, c.Variant, c.Drop, d)
					}
				}
			}
		}
	}
	if n != 2*3+2*2 {
		t.Errorf("%d cells matched, want 10", n)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "results.csv") {
		t.Errorf("empty directory: %v", err)
	}
	defaultSynth().write(t, dir)
	os.Remove(filepath.Join(dir, rundir.FileSummary))
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "fragility report") {
		t.Errorf("no summary: %v", err)
	}
	defaultSynth().write(t, dir)
	must(t, os.WriteFile(filepath.Join(dir, rundir.FileTraces), []byte("{\"item_id\":\"a\"}\n{not json\n"), 0o644))
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "traces.jsonl: record 2") {
		t.Errorf("bad traces: %v", err)
	}
	must(t, os.WriteFile(filepath.Join(dir, rundir.FileSummary), []byte("{"), 0o644))
	if _, err := WriteHTML(dir, Options{}); err == nil || !strings.Contains(err.Error(), "summary.json") {
		t.Errorf("bad summary: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, FileHTML)); err == nil {
		t.Error("report.html written despite an error")
	}
}

func TestCommonPrefix(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"a\nb"}, ""},
		{[]string{"sys\nex\nq1", "sys\nex\nq2"}, "sys\nex\n"},
		{[]string{"sys\nexa", "sys\nexb"}, "sys\n"},
		{[]string{"abc", "abd"}, ""},
	} {
		if got := commonPrefix(c.in); got != c.want {
			t.Errorf("commonPrefix(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestAnswerSpan: the answer tokens are those overlapping the extracted
// number, all tokens without a rule (a response the budget cut included),
// unknown when the recorded extraction is not today's.
func TestAnswerSpan(t *testing.T) {
	toks := []Token{{Piece: "So "}, {Piece: "Final"}, {Piece: " answer: 1"}, {Piece: "2"}, {Piece: "."}}
	tr := &results.Trial{Response: "So Final answer: 12.", Extracted: "12", Rule: "final_answer"}
	if f, to, ok := answerSpan(tr, toks); !ok || f != 2 || to != 4 {
		t.Errorf("span = %d..%d %v, want 2..4", f, to, ok)
	}
	tr = &results.Trial{Response: "no number", Rule: "none"}
	if f, to, ok := answerSpan(tr, []Token{{Piece: "no"}, {Piece: " number"}}); !ok || f != 0 || to != 2 {
		t.Errorf("no rule: %d..%d %v", f, to, ok)
	}
	tr = &results.Trial{Response: "So Final answer: 12.", Extracted: "13", Rule: "final_answer"}
	if _, _, ok := answerSpan(tr, toks); ok {
		t.Error("a recorded answer that today's rules do not give was accepted")
	}
	// Cut by the budget before a final answer: the run read it as no answer
	// (answer.Truncated), so every token is the answer's, as the run took
	// them; the demo's plot left out all 66 such trials as "differing from
	// this version's rules".
	cut := []Token{{Piece: "3 + 4"}, {Piece: " = 7, then"}}
	tr = &results.Trial{Response: "3 + 4 = 7, then", Rule: "none", StopReason: "max_tokens"}
	if f, to, ok := answerSpan(tr, cut); !ok || f != 0 || to != 2 {
		t.Errorf("cut by the budget: %d..%d %v, want 0..2", f, to, ok)
	}
	tr.StopReason = "eos"
	if _, _, ok := answerSpan(tr, cut); ok {
		t.Error("an uncut response recorded as no answer where today's rules read 7 was accepted")
	}
}

// TestLargeRunSize: the page of a large run stays a size a browser opens
// quickly: 4,500 trials of 200 tokens (3 models × 50 templates × 6 variants
// × 5 instances) with token colouring capped at the default.
func TestLargeRunSize(t *testing.T) {
	if testing.Short() {
		t.Skip("large synthetic run")
	}
	dir := t.TempDir()
	s := defaultSynth()
	s.models = []string{"Q4_K_M", "Q8_0", "F16"}
	s.templates = nil
	for i := range 50 {
		s.templates = append(s.templates, fmt.Sprintf("template-%02d", i))
	}
	s.variants = []string{"base", "names", "numbers", "symbolic", "paraphrase", "noop"}
	s.instances = 5
	s.response = func(m, tt, v, i int) (string, bool) {
		return strings.Repeat("We add the numbers step by step ", 25) + "\nFinal answer: 42", (tt+i+v)%3 != 0
	}
	s.write(t, dir)
	path, err := WriteHTML(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("report.html of 4,500 trials: %d bytes", st.Size())
	if st.Size() > 8<<20 {
		t.Errorf("report.html of 4,500 trials is %d bytes, want at most 8 MiB", st.Size())
	}
	data, _ := os.ReadFile(path)
	d := tableOf(t, string(data))
	if len(d.Rows) != 4500 || d.Capped == 0 {
		t.Errorf("%d rows, %d beyond the token cap", len(d.Rows), d.Capped)
	}
}

func TestJoinsTo(t *testing.T) {
	for _, c := range []struct {
		pieces []string
		s      string
		want   bool
	}{
		{[]string{"ab", "c"}, "abc", true},
		{[]string{"ab"}, "abc", false},
		{[]string{"ab", "cd"}, "abc", false},
		{[]string{"\xc3", "\xa9"}, "é", false}, // a character split across tokens: JSON would change each half
		{nil, "", true},
	} {
		if got := joinsTo(c.pieces, c.s); got != c.want {
			t.Errorf("joinsTo(%q, %q) = %v", c.pieces, c.s, got)
		}
	}
}

// TestDeterministic: the same run directory gives the same page, byte for
// byte, so a re-rendered report can be compared with the original.
func TestDeterministic(t *testing.T) {
	dir := t.TempDir()
	defaultSynth().write(t, dir)
	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := Render(&a, r, Options{}); err != nil {
		t.Fatal(err)
	}
	r, _ = Load(dir)
	if err := Render(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two renderings of one run differ")
	}
}
