package probe

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
)

// responseStops returns the stop strings that may have cut a response of
// the run of man: the prompt preset's recorded ones (PromptInfo.Stop),
// the run-on stops of the gsm-symbolic preset (RunOnStops) and those of the
// plain chat rendering of a model without a chat template
// (llm.PlainStops), which a merged manifest no longer says was used.
func responseStops(man *rundir.Manifest) []string {
	var out []string
	for _, s := range slices.Concat(man.Prompt.Stop, RunOnStops, llm.PlainStops) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// responseCut reports whether a row's response was cut at a stop string:
// its trace's stop reason is llm.StopString (a trace without one, from no
// version of the runner, goes by the row's: llm.StopString or StopRunOn).
func responseCut(tr *rundir.Trace, t *results.Trial) bool {
	if tr.StopReason != "" {
		return tr.StopReason == llm.StopString
	}
	return t.StopReason == llm.StopString || t.StopReason == StopRunOn
}

// traceMeasures re-derives from a trace the measures its row records
// (as fillFromGeneration and fillAnswerScore derive them from the
// generation): the generated tokens (those not injected by the
// calculator), the entropy mean, 95th percentile and median branching
// factor over them and, for an arithmetic item whose response is its
// trace's text unchanged (no "\r" that results.csv would drop), over its
// answer's tokens; and the answer-scoring columns from the trace's
// answer_score and answer_first. It returns the first column that differs, with the row's
// value and the trace's, or "" when none does. Floats are compared bit for
// bit: both files write them in shortest round-trip form.
func traceMeasures(tr *rundir.Trace, t *results.Trial) (col, got, want string) {
	if t.Skipped() {
		return "", "", ""
	}
	var all []float64
	for _, tok := range tr.Tokens {
		if !tok.Injected {
			all = append(all, tok.EntropyBits)
		}
	}
	if len(all) != t.Tokens {
		return "tokens", fmt.Sprint(t.Tokens), fmt.Sprint(len(all))
	}
	if col, got, want := entropyDiff("", all, t.EntropyMean, t.EntropyP95, t.BranchingMedian); col != "" {
		return col, got, want
	}
	if text := rundir.TraceText(tr); t.Passages == "" && !strings.Contains(text, "\r") && strings.HasPrefix(text, t.Response) {
		ex := Extract(&llm.Generation{Text: t.Response, StopReason: tr.StopReason})
		var ans []float64
		off := 0
		for _, tok := range tr.Tokens {
			start, end := off, off+len(tok.Piece)
			off = end
			if !tok.Injected && ex.Rule != answer.RuleNone && start < ex.End && end > ex.Start {
				ans = append(ans, tok.EntropyBits)
			}
		}
		if len(ans) == 0 {
			ans = all
		}
		if col, got, want := entropyDiff("answer_", ans, t.AnswerEntropyMean, t.AnswerEntropyP95, t.AnswerBranching); col != "" {
			return col, got, want
		}
	}
	var w results.Trial
	w.Rule, w.Extracted = t.Rule, t.Extracted
	fillAnswerScore(&w, tr.AnswerScore)
	fillAnswerFirst(&w, tr.AnswerFirst)
	for _, c := range []struct {
		col       string
		got, want any
	}{{"answer_scored", t.AnswerScored, w.AnswerScored}, {"answer_logprob", t.AnswerLogProb, w.AnswerLogProb},
		{"answer_logprob_tokens", t.AnswerLogProbTokens, w.AnswerLogProbTokens}, {"own_answer_logprob", t.OwnAnswerLogProb, w.OwnAnswerLogProb},
		{"own_answer_logprob_tokens", t.OwnAnswerLogProbTokens, w.OwnAnswerLogProbTokens}, {"answer_logprob_margin", t.AnswerLogProbMargin, w.AnswerLogProbMargin},
		{"answer_first_logprob", t.AnswerFirstLogProb, w.AnswerFirstLogProb}, {"answer_first_logprob_tokens", t.AnswerFirstLogProbTokens, w.AnswerFirstLogProbTokens}} {
		if c.got != c.want {
			return c.col, fmt.Sprint(c.got), fmt.Sprint(c.want)
		}
	}
	return "", "", ""
}

// entropyDiff compares a row's entropy mean, 95th percentile and median
// branching factor (the columns named with prefix: "" or "answer_") with
// entropyStats of the entropies h, bit for bit, and returns the first
// column that differs with the row's value and h's, or "".
func entropyDiff(prefix string, h []float64, mean, p95, branching float64) (col, got, want string) {
	m, p, b := entropyStats(h)
	for _, c := range []struct {
		col       string
		got, want float64
	}{{prefix + "entropy_mean_bits", mean, m}, {prefix + "entropy_p95_bits", p95, p}, {prefix + "branching_median", branching, b}} {
		if c.got != c.want {
			return c.col, fmt.Sprint(c.got), fmt.Sprint(c.want)
		}
	}
	return "", "", ""
}

// sameStop reports whether a row's stop reason is its trace's: the same,
// or StopRunOn for a trace stopped at a stop string (finishTrial names a
// run-on stop in the row only). A trace without one (from no version of
// the runner) passes.
func sameStop(tr *rundir.Trace, t *results.Trial) bool {
	return tr.StopReason == "" || t.StopReason == tr.StopReason || (t.StopReason == StopRunOn && tr.StopReason == llm.StopString)
}

// CheckResponses refuses the first row of results.csv (trials, read from
// path) whose response is not the text its trace in traces.jsonl records:
// the pieces of the trace's tokens (see rundir.MatchResponse; a skipped item has
// neither), or whose stop reason is not the trace's (sameStop). A row
// without a trace is left to CheckRecords, and a row whose item has
// several traces passes when one of them gives its response. The
// error names results.csv, the row, the item and the first place that
// differs.
func CheckResponses(path string, man *rundir.Manifest, trials []results.Trial, traces []rundir.Trace) error {
	byID := make(map[string][]int, len(traces))
	for k := range traces {
		byID[traces[k].ItemID] = append(byID[traces[k].ItemID], k)
	}
	stops := responseStops(man)
	current := man.AnswerScore != "" // a run that wrote every column of this version
	for i := range trials {
		t := &trials[i]
		var first error
		for _, k := range byID[t.ItemID] {
			tr := &traces[k]
			pieces := rundir.TraceText(tr)
			ok, at, pat := rundir.MatchResponse(t.Response, pieces, responseCut(tr, t), stops)
			col, got, want := "", "", ""
			if ok && current {
				col, got, want = traceMeasures(tr, t)
			}
			if ok && sameStop(tr, t) && col == "" {
				first = nil
				break
			}
			if ok && first == nil && !sameStop(tr, t) {
				first = fmt.Errorf("%s: %s (item %s): stop_reason is %s, but its trace in %s has %s: the file was edited after the run",
					path, rundir.RowRef(path, i), t.ItemID, results.Quote(t.StopReason), rundir.FileTraces, results.Quote(tr.StopReason))
			}
			if ok && first == nil {
				first = fmt.Errorf("%s: %s (item %s): %s is %s, but its trace in %s gives %s: the file was edited after the run",
					path, rundir.RowRef(path, i), t.ItemID, col, got, rundir.FileTraces, want)
			}
			if !ok && first == nil {
				first = fmt.Errorf("%s: %s (item %s): its response differs from its trace in %s at byte %d: %s has %s where the trace's tokens give %s: the file was edited after the run",
					path, rundir.RowRef(path, i), t.ItemID, rundir.FileTraces, at, rundir.FileResults, rundir.Excerpt(t.Response, at), rundir.Excerpt(pieces, pat))
			}
		}
		if first != nil {
			return first
		}
	}
	return nil
}
