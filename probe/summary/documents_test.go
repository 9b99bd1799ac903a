package summary_test

import (
	"strings"
	"testing"

	"github.com/fragility/fragility/probe/docqa"
	"github.com/fragility/fragility/probe/report"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/summary"
)

// docTrial is a scored trial of a document item.
func docTrial(item, variant, extracted string, correct, notStated bool, rule string) results.Trial {
	return results.Trial{ItemID: "m0/" + item + "/" + variant + "/0", ModelPath: "m.gguf", ModelName: "m", TemplateID: item, Variant: variant,
		Question: item + "?", Passages: item + "/p1", Extracted: extracted, Correct: correct, NotStated: notStated, ScoreRule: rule, Rule: "answer_line"}
}

func TestDocumentsSummary(t *testing.T) {
	ex, num := docqa.ScoreExactMatch, docqa.ScoreNumber
	trials := []results.Trial{
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
	s, err := summary.Summarize(trials, summary.DefaultParams(1))
	if err != nil {
		t.Fatal(err)
	}
	ds := s.Documents
	if ds == nil || ds.Items != 3 || len(ds.Models) != 1 {
		t.Fatalf("documents: %+v", ds)
	}
	byGroup := map[string]summary.AnswerChangeRate{}
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
	var dv summary.DocumentVariant
	for _, v := range ds.Models[0].Variants {
		if v.Variant == "distractor-1" {
			dv = v
		}
	}
	if dv.Scored != 3 || dv.Correct != 1 || dv.NotStated != 1 || dv.ScoreRules[ex] != 2 || dv.ScoreRules[num] != 1 {
		t.Errorf("distractor-1 scores: %+v", dv)
	}
	n := report.Narrative(s)
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
	if s, err := summary.Summarize(trials, summary.DefaultParams(1)); err != nil || s.Documents != nil || strings.Contains(report.Narrative(s), "Document questions") {
		t.Errorf("arithmetic run: %v, documents %v", err, s.Documents)
	}
}
