package probe

import (
	"math"
	"strings"
	"testing"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe/anatomy"
	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/results"
)

// TestCheckScoresEditedMeasures: a hand-edited error_kind is refused when
// the run recorded this binary's error rules (and read as recorded under
// older rules), and so are measures no run can write: a positive or
// non-finite answer log-probability, a non-finite or negative entropy, a
// negative token count, a non-finite value in any number column (a NaN DDC
// margin, an infinite time), a negative time, an F1 outside [0, 1]. Each
// message names the file, the row, the item, the column and the value.
func TestCheckScoresEditedMeasures(t *testing.T) {
	row := func() results.Trial {
		tr := results.Trial{ItemID: "m/baker/base/0", Response: "6 × 8 = 46. Final answer: 46", Extracted: "46", Rule: answer.RuleFinalAnswer,
			Expected: "48", StopReason: "eos", Tokens: 12, EntropyMean: 0.4, AnswerScored: true, AnswerLogProb: -2.5, OwnAnswerLogProb: -0.1}
		tr.ErrorKind = errorKind(&tr)
		return tr
	}
	if tr := row(); tr.ErrorKind == "" {
		t.Fatal("a wrong answer has no error kind")
	} else if err := CheckScores("r.csv", answer.ExtractionRulesVersion, anatomy.Version, []results.Trial{tr}); err != nil {
		t.Fatalf("an untouched row: %v", err)
	}
	edited := row()
	edited.ErrorKind = anatomy.ClauseUsed
	if err := CheckScores("r.csv", answer.ExtractionRulesVersion, anatomy.Version, []results.Trial{edited}); err == nil || !strings.Contains(err.Error(), "r.csv: row 1 (item m/baker/base/0): error_kind") {
		t.Errorf("edited error_kind: %v", err)
	}
	if err := CheckScores("r.csv", answer.ExtractionRulesVersion, "errors/1", []results.Trial{edited}); err != nil {
		t.Errorf("a run recorded under other error rules is read as recorded: %v", err)
	}
	// The extraction is re-derived from the response and stop reason: an
	// extracted answer and label edited together, or a budget-cut answer
	// relabelled as finished (read by its last number), are refused; a
	// run recorded under older extraction rules is read as recorded.
	cut := results.Trial{ItemID: "m/baker/noop/0", Response: "6 × 8 = 48, and then 2 more make", Expected: "48", StopReason: "max_tokens", Tokens: 12}
	ex := Extract(&llm.Generation{Text: cut.Response, StopReason: cut.StopReason})
	cut.Extracted, cut.Rule, cut.ExpectedAnywhere = ex.Value, ex.Rule, answer.ExpectedAnywhere(cut.Response, cut.Expected)
	cut.ErrorKind = errorKind(&cut)
	if err := CheckScores("r.csv", answer.ExtractionRulesVersion, anatomy.Version, []results.Trial{row(), cut}); err != nil {
		t.Fatalf("untouched rows: %v", err)
	}
	// A document item accepting 0.25 or 25, answered 25: right, though
	// expected holds only the first accepted answer.
	doc := results.Trial{ItemID: "m/share/base/0", Passages: "p1", ScoreRule: "number", Response: "Answer: 25%", Expected: "0.25", Extracted: "25", Rule: "answer_line", Correct: true, F1: 1, StopReason: "eos"}
	if err := CheckScores("r.csv", answer.ExtractionRulesVersion, anatomy.Version, []results.Trial{doc}); err != nil {
		t.Errorf("a document item right on its second accepted answer: %v", err)
	}
	finished := cut
	finished.StopReason = "eos"
	anywhere := row()
	anywhere.ExpectedAnywhere = true // "48" is nowhere in its response
	relabelled := row()
	relabelled.Extracted, relabelled.Correct, relabelled.ErrorKind = "48", true, ""
	for _, c := range []struct {
		name string
		tr   results.Trial
		want string
	}{
		{"a cut answer relabelled as finished", finished, "row 2 (item m/baker/noop/0): extracted is"},
		{"expected_anywhere set by hand", anywhere, `row 2 (item m/baker/base/0): expected_anywhere is true, but its response does not hold the expected answer "48"`},
		{"extracted and correct edited together", relabelled, `row 2 (item m/baker/base/0): extracted is "48" (rule "final_answer"), but the extraction rules ` + answer.ExtractionRulesVersion + ` read "46"`},
	} {
		if err := CheckScores("r.csv", answer.ExtractionRulesVersion, anatomy.Version, []results.Trial{row(), c.tr}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if err := CheckScores("r.csv", "extract/2", "errors/1", []results.Trial{row(), c.tr}); err != nil {
			t.Errorf("%s, recorded under older rules: %v", c.name, err)
		}
	}
	for _, c := range []struct {
		edit func(*results.Trial)
		want string
	}{
		{func(tr *results.Trial) { tr.AnswerLogProb = 5 }, "answer_logprob is 5"},
		{func(tr *results.Trial) { tr.AnswerLogProb = math.NaN() }, "answer_logprob is NaN"},
		{func(tr *results.Trial) { tr.OwnAnswerLogProb = math.Inf(-1) }, "own_answer_logprob is -Inf"},
		{func(tr *results.Trial) { tr.EntropyMean = math.NaN() }, "entropy_mean_bits is NaN"},
		{func(tr *results.Trial) { tr.EntropyMean = -3 }, "entropy_mean_bits is -3"},
		{func(tr *results.Trial) { tr.Tokens = -5 }, "tokens is -5"},
		{func(tr *results.Trial) { tr.DDCMargin = math.NaN() }, "ddc_margin is NaN, not a finite number"},
		{func(tr *results.Trial) { tr.Seconds = -1 }, "seconds is -1, not a duration (at least 0)"},
		{func(tr *results.Trial) { tr.Seconds = math.Inf(1) }, "seconds is +Inf, not a finite number"},
		{func(tr *results.Trial) { tr.AnswerBranching = -2 }, "answer_branching_median is -2, not a branching factor"},
		{func(tr *results.Trial) { tr.ReplyTokens = -1 }, "reply_tokens is -1, not a count"},
		{func(tr *results.Trial) { tr.F1 = 1.5 }, "f1 is 1.5, not in [0, 1]"},
		{func(tr *results.Trial) { tr.AnswerLogProbMargin = math.NaN() }, "answer_logprob_margin is NaN"},
		{func(tr *results.Trial) { tr.AnswerFirstLogProb = 0.5 }, "answer_first_logprob is 0.5, not a log-probability"},
		{func(tr *results.Trial) { tr.AnswerFirstLogProbTokens = -1 }, "answer_first_logprob_tokens is -1, not a count"},
	} {
		tr := row()
		c.edit(&tr)
		if err := CheckScores("r.csv", answer.ExtractionRulesVersion, anatomy.Version, []results.Trial{row(), tr}); err == nil || !strings.Contains(err.Error(), "row 2 (item m/baker/base/0): "+c.want) {
			t.Errorf("%s: %v", c.want, err)
		}
	}
}
