package probe

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe/docqa"
	"github.com/fragility/fragility/templates"
)

// docTrial is a scored trial of a document item.
func docTrial(item, variant, extracted string, correct, notStated bool, rule string) Trial {
	return Trial{ItemID: "m0/" + item + "/" + variant + "/0", ModelPath: "m.gguf", ModelName: "m", TemplateID: item, Variant: variant,
		Question: item + "?", Passages: item + "/p1", Extracted: extracted, Correct: correct, NotStated: notStated, ScoreRule: rule, Rule: "answer_line"}
}

func TestDocumentsSummary(t *testing.T) {
	ex, num := docqa.ScoreExactMatch, docqa.ScoreNumber
	trials := []Trial{
		// a: text answers; the rewording keeps the answer up to case and
		// articles, the distractor changes it to "not stated".
		docTrial("a", "base", "The Carrow", true, false, ex),
		docTrial("a", "paraphrase-1", "carrow.", true, false, ex),
		docTrial("a", "paraphrase-2", "Reed", false, false, ex),
		docTrial("a", "distractor-1", "not stated", false, true, ex),
		// b: numbers compared as extracted values.
		docTrial("b", "base", "1250", true, false, num),
		docTrial("b", "paraphrase-1", "1250", true, false, num),
		docTrial("b", "paraphrase-2", "125", false, false, num),
		docTrial("b", "distractor-1", "1250", true, false, num),
		// c: wrong in base, right after the rewording.
		docTrial("c", "base", "", false, false, ex),
		docTrial("c", "paraphrase-1", "Ornhavn", true, false, ex),
		docTrial("c", "paraphrase-2", "", false, false, ex),
		docTrial("c", "distractor-1", "", false, false, ex),
	}
	trials[0].F1, trials[1].F1, trials[9].F1 = 1, 1, 1
	s, err := Summarize(trials, DefaultParams(1))
	if err != nil {
		t.Fatal(err)
	}
	ds := s.Documents
	if ds == nil || ds.Items != 3 || len(ds.Models) != 1 {
		t.Fatalf("documents: %+v", ds)
	}
	byGroup := map[string]AnswerChangeRate{}
	for _, c := range ds.Models[0].Changes {
		byGroup[c.Group] = c
	}
	// Reworded: 6 pairs; a/paraphrase-2, b/paraphrase-2, c/paraphrase-1 changed.
	rw := byGroup["reworded"]
	if rw.Pairs != 6 || rw.Changed != 3 || rw.RightToWrong != 2 || rw.WrongToRight != 1 || rw.ChangedPct == nil || rw.ChangedPct.Value != 50 {
		t.Errorf("reworded: %+v", rw)
	}
	if strings.Join(rw.Variants, ",") != "paraphrase-1,paraphrase-2" {
		t.Errorf("reworded variants %v", rw.Variants)
	}
	// Distractor: 3 pairs; only a changed (to not stated).
	d := byGroup["distractor"]
	if d.Pairs != 3 || d.Changed != 1 || d.RightToWrong != 1 || d.WrongToRight != 0 {
		t.Errorf("distractor: %+v", d)
	}
	if d.ChangedPct == nil || d.ChangedPct.CI == nil || d.ChangedPct.CI.Lo < 0 || d.ChangedPct.CI.Hi > 100 {
		t.Errorf("distractor interval: %+v", d.ChangedPct)
	}
	if _, ok := byGroup["shuffled"]; ok {
		t.Error("a shuffled rate without shuffle trials")
	}
	var dv DocumentVariant
	for _, v := range ds.Models[0].Variants {
		if v.Variant == "distractor-1" {
			dv = v
		}
	}
	if dv.Scored != 3 || dv.Correct != 1 || dv.NotStated != 1 || dv.ScoreRules[ex] != 2 || dv.ScoreRules[num] != 1 {
		t.Errorf("distractor-1 scores: %+v", dv)
	}
	n := Narrative(s)
	for _, want := range []string{"## Document questions", "Answers changed when the question was reworded in 50.0% of pairs (3/6;",
		"An irrelevant passage changed the answer in 33.3% of pairs (1/3;", "| distractor-1 | 1/3 |", "questions about passages of text"} {
		if !strings.Contains(n, want) {
			t.Errorf("narrative lacks %q", want)
		}
	}
	// An arithmetic run has no documents section and keeps its own wording.
	for i := range trials {
		trials[i].Passages = ""
	}
	if s, err := Summarize(trials, DefaultParams(1)); err != nil || s.Documents != nil || strings.Contains(Narrative(s), "Document questions") {
		t.Errorf("arithmetic run: %v, documents %v", err, s.Documents)
	}
}

// TestRunDocQA runs six items of examples/docqa.jsonl on Gemma 3 270M and
// checks that every file is written as for templates, that each prompt holds
// the passages its row names in that order, and the documents section.
func TestRunDocQA(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real model")
	}
	f, err := os.Open(filepath.Join("..", "examples", "docqa.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() && len(lines) < 6 {
		lines = append(lines, sc.Text())
	}
	f.Close()
	items := filepath.Join(t.TempDir(), "items.jsonl")
	if err := os.WriteFile(items, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vs, err := docqa.ParseVariants("base,paraphrase,distractor,shuffle")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := Config{Models: []string{gemmaModel(t)}, Items: items, Prompt: PromptDocQA, Variants: vs, Instances: 1, Seed: 2,
		MaxTokens: 16, Params: llm.Params{Threads: 1, NCtx: 1024, NSeq: 4}, OutDir: dir}
	sum, err := Run(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{FileManifest, FileResults, FileTraces, FileSummary, FileNarrative, FileSet} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", name, err)
		}
	}
	const want = 6 * 5 // base, paraphrase-1, paraphrase-2, distractor-1, shuffle
	rf, _ := os.Open(filepath.Join(dir, FileResults))
	trials, err := ReadResultsCSV(rf)
	rf.Close()
	if err != nil || len(trials) != want || sum.Trials != want {
		t.Fatalf("%d rows (%v), summary %d, want %d", len(trials), err, sum.Trials, want)
	}
	sf, _ := os.Open(filepath.Join(dir, FileSet))
	set, err := templates.ReadSet(sf)
	sf.Close()
	if err != nil {
		t.Fatal(err)
	}
	text := map[string]string{} // "item/id" -> passage text
	for _, in := range set.Instances {
		for _, p := range in.Passages {
			text[p.Item+"/"+p.ID] = p.Text
		}
	}
	traces, err := ReadTraces(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, tr := range trials {
		if tr.ScoreRule == "" || tr.Passages == "" || tr.F1 < 0 || tr.F1 > 1 || (tr.Correct && tr.F1 != 1) || (tr.NotStated && tr.Correct) {
			t.Errorf("%s: score_rule %q passages %q f1 %v correct %v not_stated %v", tr.ItemID, tr.ScoreRule, tr.Passages, tr.F1, tr.Correct, tr.NotStated)
		}
		prompt := traces[i].Prompt
		if traces[i].ItemID != tr.ItemID || !strings.Contains(prompt, docqa.Instruction) || !strings.Contains(prompt, "Question: "+tr.Question) {
			t.Errorf("%s: prompt lacks the instruction or question:\n%s", tr.ItemID, prompt)
		}
		at := 0
		for j, ref := range strings.Fields(tr.Passages) {
			label := "[" + string(rune('1'+j)) + "] " + text[strings.TrimPrefix(ref, "+")]
			k := strings.Index(prompt[at:], label)
			if k < 0 {
				t.Errorf("%s: passage %s is not number %d of the prompt, after the ones before it", tr.ItemID, ref, j+1)
				break
			}
			at += k + len(label)
		}
		if strings.HasPrefix(tr.Variant, "distractor-") != strings.Contains(tr.Passages, "+") {
			t.Errorf("%s: passages %q", tr.ItemID, tr.Passages)
		}
	}
	if sum.Documents == nil || sum.Documents.Items != 6 {
		t.Fatalf("documents section: %+v", sum.Documents)
	}
	pairs := map[string]int{}
	for _, c := range sum.Documents.Models[0].Changes {
		pairs[c.Group] = c.Pairs
	}
	if pairs["reworded"] != 12 || pairs["distractor"] != 6 || pairs["shuffled"] != 6 {
		t.Errorf("pairs per group: %v", pairs)
	}
	man, err := ReadManifest(dir)
	if err != nil || man.Prompt.Preset != PromptDocQA || man.Prompt.Version != docqa.PromptVersion || man.Config.Items != items {
		t.Errorf("manifest prompt %+v, items %q (%v)", man.Prompt, man.Config.Items, err)
	}
	narr, _ := os.ReadFile(filepath.Join(dir, FileNarrative))
	for _, w := range []string{"Answers changed when the question was reworded in", "An irrelevant passage changed the answer in"} {
		if !strings.Contains(string(narr), w) {
			t.Errorf("narrative lacks %q", w)
		}
	}
}
