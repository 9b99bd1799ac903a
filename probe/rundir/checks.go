package rundir

import (
	"fmt"
	"math"
	"strings"

	"github.com/fragility/fragility/probe/results"
)

// SameItems compares the item IDs a file holds with the planned ones.
func SameItems(path, what string, planned, got []string) error {
	want := make(map[string]bool, len(planned))
	for _, id := range planned {
		want[id] = true
	}
	seen := map[string]bool{}
	var missing, extra, twice []string
	for _, id := range got {
		switch {
		case seen[id]:
			twice = append(twice, id)
		case !want[id]:
			extra = append(extra, id)
		}
		seen[id] = true
	}
	for _, id := range planned {
		if !seen[id] {
			missing = append(missing, id)
		}
	}
	var parts []string
	for _, x := range []struct {
		what string
		ids  []string
	}{{"with no " + what, missing}, {"with two " + what + "s or more", twice}, {"not in the plan", extra}} {
		if len(x.ids) > 0 {
			parts = append(parts, fmt.Sprintf("%d item(s) %s (%s)", len(x.ids), x.what, firstIDs(x.ids)))
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return fmt.Errorf("%s: %s; the plan has %d items and the file %d %ss: the run directory is not the run its manifest says (re-run, or --resume an interrupted run)",
		path, strings.Join(parts, "; "), len(planned), len(got), what)
}

// firstIDs lists the first three IDs, and how many more.
func firstIDs(ids []string) string {
	if len(ids) <= 3 {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:3], ", "), len(ids)-3)
}

// maxEntropyBits bounds an entropy over a vocabulary: log2 of its size is
// at most 31, as llama.cpp's token ids (llama_token) are int32.
const maxEntropyBits = 31

// CheckMeasures refuses a trial's recorded measure that no run can write:
// a number column that is not finite (results.Trial.NonFinite: NaN or ±Inf
// in any of them, as ddc_margin=NaN or seconds=Inf), a negative entropy,
// branching factor or generation time, a negative count of tokens or
// calculator calls, an entropy above maxEntropyBits (or a branching factor
// above 2 to that power), a DDC margin outside [0, 2] (the difference
// between the best and the runner-up cosine similarity), an F1 outside
// [0, 1], or a scored answer's
// log-probability that is positive (a log-probability is at most 0). The
// error names the column and its value.
func CheckMeasures(t *results.Trial) error {
	if col, x := t.NonFinite(); col != "" {
		return fmt.Errorf("%s is %v, not a finite number", col, x)
	}
	for _, c := range []struct {
		col string
		n   int
	}{{"tokens", t.Tokens}, {"prompt_tokens", t.PromptTokens}, {"calc_calls", t.CalcCalls}, {"effort_tokens", t.EffortTokens},
		{"think_tokens", t.ThinkTokens}, {"reply_tokens", t.ReplyTokens}, {"answer_logprob_tokens", t.AnswerLogProbTokens},
		{"own_answer_logprob_tokens", t.OwnAnswerLogProbTokens}, {"answer_first_logprob_tokens", t.AnswerFirstLogProbTokens}} {
		if c.n < 0 {
			return fmt.Errorf("%s is %d, not a count (at least 0)", c.col, c.n)
		}
	}
	for _, c := range []struct {
		col, what string
		x         float64
	}{{"seconds", "a duration", t.Seconds},
		{"entropy_mean_bits", "an entropy", t.EntropyMean}, {"entropy_p95_bits", "an entropy", t.EntropyP95},
		{"branching_median", "a branching factor", t.BranchingMedian}, {"answer_entropy_mean_bits", "an entropy", t.AnswerEntropyMean},
		{"answer_entropy_p95_bits", "an entropy", t.AnswerEntropyP95}, {"answer_branching_median", "a branching factor", t.AnswerBranching},
		{"think_entropy_mean_bits", "an entropy", t.ThinkEntropyMean}, {"reply_entropy_mean_bits", "an entropy", t.ReplyEntropyMean}} {
		if c.x < 0 {
			return fmt.Errorf("%s is %v, not %s (at least 0)", c.col, c.x, c.what)
		}
	}
	for _, c := range []struct {
		col string
		x   float64
	}{{"entropy_mean_bits", t.EntropyMean}, {"entropy_p95_bits", t.EntropyP95}, {"answer_entropy_mean_bits", t.AnswerEntropyMean},
		{"answer_entropy_p95_bits", t.AnswerEntropyP95}, {"think_entropy_mean_bits", t.ThinkEntropyMean}, {"reply_entropy_mean_bits", t.ReplyEntropyMean}} {
		if c.x > maxEntropyBits {
			return fmt.Errorf("%s is %v, above the %d bits of any vocabulary llama.cpp can hold (its token ids are 32-bit signed)", c.col, c.x, maxEntropyBits)
		}
	}
	switch {
	case t.DDCMargin < 0 || t.DDCMargin > 2:
		return fmt.Errorf("ddc_margin is %v, not a margin between two cosine similarities (in [0, 2])", t.DDCMargin)
	case t.BranchingMedian > math.Exp2(maxEntropyBits) || t.AnswerBranching > math.Exp2(maxEntropyBits):
		return fmt.Errorf("branching_median %v or answer_branching_median %v is above 2^%d, the tokens of any vocabulary llama.cpp can hold", t.BranchingMedian, t.AnswerBranching, maxEntropyBits)
	case t.F1 < 0 || t.F1 > 1:
		return fmt.Errorf("f1 is %v, not in [0, 1]", t.F1)
	case t.AnswerScored && t.AnswerLogProb > 0:
		return fmt.Errorf("answer_logprob is %v, not a log-probability (finite, at most 0)", t.AnswerLogProb)
	case t.AnswerScored && t.OwnAnswerLogProb > 0:
		return fmt.Errorf("own_answer_logprob is %v, not a log-probability (finite, at most 0)", t.OwnAnswerLogProb)
	case t.AnswerFirstLogProb > 0:
		return fmt.Errorf("answer_first_logprob is %v, not a log-probability (finite, at most 0)", t.AnswerFirstLogProb)
	}
	return nil
}
