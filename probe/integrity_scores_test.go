package probe

import (
	"math"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe/anatomy"
	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/results"
)

// TestCheckScoresEditedMeasures: a hand-edited error_kind is refused when
// the run recorded this binary's error rules (and read as recorded under
// older rules), and so are measures no run can write: a positive or
// non-finite answer log-probability, a non-finite or negative entropy, a
// negative token count. Each message names the file, the row and the item.
func TestCheckScoresEditedMeasures(t *testing.T) {
	row := func() results.Trial {
		tr := results.Trial{ItemID: "m/baker/base/0", Response: "6 × 8 = 46. Final answer: 46", Extracted: "46", Rule: answer.RuleFinalAnswer,
			Expected: "48", StopReason: "eos", Tokens: 12, EntropyMean: 0.4, AnswerScored: true, AnswerLogProb: -2.5, OwnAnswerLogProb: -0.1}
		tr.ErrorKind = errorKind(&tr)
		return tr
	}
	if tr := row(); tr.ErrorKind == "" {
		t.Fatal("a wrong answer has no error kind")
	} else if err := CheckScores("r.csv", anatomy.Version, []results.Trial{tr}); err != nil {
		t.Fatalf("an untouched row: %v", err)
	}
	edited := row()
	edited.ErrorKind = anatomy.ClauseUsed
	if err := CheckScores("r.csv", anatomy.Version, []results.Trial{edited}); err == nil || !strings.Contains(err.Error(), "r.csv: row 1 (item m/baker/base/0): error_kind") {
		t.Errorf("edited error_kind: %v", err)
	}
	if err := CheckScores("r.csv", "errors/1", []results.Trial{edited}); err != nil {
		t.Errorf("a run recorded under other error rules is read as recorded: %v", err)
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
	} {
		tr := row()
		c.edit(&tr)
		if err := CheckScores("r.csv", anatomy.Version, []results.Trial{row(), tr}); err == nil || !strings.Contains(err.Error(), "row 2 (item m/baker/base/0): "+c.want) {
			t.Errorf("%s: %v", c.want, err)
		}
	}
}
