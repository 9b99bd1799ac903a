package probe

import (
	"context"
	"fmt"
	"math/big"
	"regexp"
	"strings"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
)

// AnswerScoreVersion names the answer-scoring procedure below (where the
// model's text is cut, the final-answer form forced, how a number is
// rendered, which tokens are summed); it is recorded in the manifest and
// changes whenever any of them changes.
//
// The procedure, for a trial of a numeric item (not a document item) that
// generation finished:
//  1. The cut: the last occurrence (any case) of the preset's final-answer
//     marker (AnswerLead without its trailing space: "Final answer:" for the
//     fragility preset, "The final answer is" for gsm-symbolic) before the
//     model's extracted answer, or anywhere when it gave none; without one
//     (the budget ended the text, or the model answered in other words), the
//     end of its text, or the start of a run-on into a made-up problem. A
//     cut before the end of the last calculator result moves to the end of
//     the text: a calculator trial is scored after its last tool result.
//  2. The forced text: the model's text from the last token boundary at or
//     before the cut up to the cut, then (when no marker was found and the
//     text does not already end with it) the preset's separator ("\n" or
//     " "), then AnswerLead and the rendered answer (RenderAnswer). When the
//     model wrote the whole AnswerLead at its marker (any case), the cut
//     moves after it: its own tokens of the form stay in context and only
//     the number (from the token boundary before it) is forced; the
//     numbers are those of forcing the form, with fewer decodes. It is
//     tokenized alone (no special tokens), so the tokens forced are those
//     the model emits for that text after that boundary (tested), and only
//     when its pieces give the forced text back byte for byte.
//  3. Scored: the forced tokens that overlap the rendered answer's bytes,
//     their natural log-probabilities summed (llm.Model.ForceAfter, in the
//     KV state of the generation: no prompt is decoded again). When the
//     model itself wrote exactly the forced tokens after the kept ones (it
//     gave that answer in that form), nothing is decoded: the
//     log-probabilities generation recorded for them are used (the same
//     tokens in the same context, decoded one per call as generation
//     decodes them; forcing them, which decodes them together, would read
//     other logits: hundredths to tenths of a nat a token apart, see
//     below).
//
// The expected answer is always scored; the model's own extracted answer
// also, when it gave one that RenderAnswer renders and that differs from the
// expected one (when they are equal its log-probability is the expected
// one's and the margin is 0). This is the right answer after the model's
// own reasoning: soft accuracy, as its text decides it.
//
// The answer first (since answer-score/2; answer-score/1 runs have none), for
// every numeric item whose generation finished or was cut by the budget:
//  4. The forced text: AnswerLead and the rendered expected answer, right
//     after the prompt (no generated token kept, no separator), tokenized
//     alone as in 2 and only when its pieces give it back; scored as in 3,
//     the tokens that overlap the rendered answer's bytes (the lead's
//     tokens are forced, not scored). It runs in the same llm.Model.ForceAfter
//     call, after the sequence's forcings of 3 (it drops every generated
//     cell: llm.Forcing Keep 0, its first term from the prefill's logits),
//     so it adds a measure, never a token. When the model itself began its
//     text with exactly those tokens, the log-probabilities generation
//     recorded are used, as in 3. A pair's two sides differ only in their
//     prompts.
//
// How the forcings are decoded (answer-score/3): ForceAfter runs a batch's
// forcings in rounds (each sequence's forcings in the order above, one a
// round), and decodes all the tokens of a round in one llama_batch, in as
// few llama_decode calls as n_batch allows, logits computed only where a
// scored token's are read. answer-score/1 and /2 decoded the forced tokens
// one per call, one token of each sequence per call, as generation decodes
// its tokens: about 8 calls a round. The logits a token's log-probability
// is read from depend on how the tokens are split into calls (llama.cpp
// decodes a call's tokens together, with other kernels and roundings), by
// hundredths to tenths of a nat a token (in the probe's test runs, up to
// 0.11 on Gemma 3 270M and 0.40 on Qwen2.5-Coder 0.5B, against Score over
// the same tokens), so the change is a new version:
// a run recorded under an earlier one is read as recorded, and verify
// refuses it (a replay would differ). What it saves (fragility bench --model
// gemma-3-270m-q4_k_m --no-ddc, 2 vCPUs, 16 items in batches of 8): the
// pass took 2.69–2.77 s, 8.4–8.8% of the batched generation time, under
// answer-score/2, and 1.33–1.45 s, 4.2–4.3% (95% interval over batches
// [3.8%, 4.8%] in the second sitting), under answer-score/3; what is left
// is mostly the output layer of each scored token (about 12 ms a row at 2
// threads, 25 rows a call), which a full-vocabulary log-probability needs.
const AnswerScoreVersion = "answer-score/3"

// AnswerScoreV1 is the first answer-scoring procedure (steps 1–3 only): a
// run recorded under it has no answer-first records or columns, and is
// read as recorded.
const AnswerScoreV1 = "answer-score/1"

// AnswerLead returns the final-answer form of a prompt preset: the text
// before the number (with its trailing space) and the separator put before
// it when the model's text did not write it; ok is false for a preset whose
// answers are not numbers (docqa).
func AnswerLead(preset string) (lead, sep string, ok bool) {
	switch preset {
	case "", PromptFragility:
		return "Final answer: ", "\n", true
	case PromptGSMSymbolic:
		return "The final answer is ", " ", true
	}
	return "", "", false
}

// RenderAnswer renders an exact decimal answer ("39", "12.5", "-3", "45.0",
// "1/4") as the number the prompts' worked examples write: an integer in
// decimal digits with a leading "-" when negative, a finite decimal with a
// "." and no trailing zeros ("12.5", "0.25"), never a thousands separator,
// currency sign or unit. ok is false for a value that does not parse or has
// no finite decimal form ("1/3").
func RenderAnswer(exact string) (string, bool) {
	r, ok := new(big.Rat).SetString(strings.TrimSpace(exact))
	if !ok {
		return "", false
	}
	if r.IsInt() {
		return r.Num().String(), true
	}
	d := new(big.Int).Set(r.Denom())
	places := 0
	for _, p := range []int64{2, 5} {
		for new(big.Int).Mod(d, big.NewInt(p)).Sign() == 0 {
			d.Quo(d, big.NewInt(p))
		}
	}
	if d.Cmp(big.NewInt(1)) != 0 {
		return "", false
	}
	for x := new(big.Rat).Set(r); !x.IsInt(); x.Mul(x, big.NewRat(10, 1)) {
		places++
	}
	return r.FloatString(places), true
}

// answerPlan is where the answers of one generation are forced: Keep tokens
// kept, then Prefix (the model's text after the kept tokens up to the cut,
// a separator, the lead) and the rendered answer.
type answerPlan struct {
	Keep   int
	Prefix string
}

// planAnswer finds the cut of g's text (see AnswerScoreVersion) for preset.
func planAnswer(g *llm.Generation, ex answer.Extraction, preset string) (answerPlan, bool) {
	lead, sep, ok := AnswerLead(preset)
	if !ok {
		return answerPlan{}, false
	}
	text := g.Text
	hi := len(text)
	if ex.Cut > 0 && ex.Cut <= hi {
		hi = ex.Cut
	}
	if ex.Rule != answer.RuleNone && ex.Start >= 0 && ex.Start <= hi {
		hi = ex.Start
	}
	cut, found := -1, false
	if locs := regexp.MustCompile(`(?i)`+regexp.QuoteMeta(strings.TrimSpace(lead))).FindAllStringIndex(text[:hi], -1); len(locs) > 0 {
		cut, found = locs[len(locs)-1][0], true
	}
	if !found {
		cut = len(text)
		if ex.Cut > 0 && ex.Cut <= len(text) {
			cut = ex.Cut
		}
	}
	off, inj := 0, 0
	for _, t := range g.Tokens {
		off += len(t.Piece)
		if t.Injected {
			inj = off
		}
	}
	if cut < inj {
		found, cut = false, len(text)
	}
	if found && len(text) >= cut+len(lead) && strings.EqualFold(text[cut:cut+len(lead)], lead) {
		// The model wrote the whole form before its number: its own
		// tokens of it stay, and only the number is forced.
		return planAnswerAt(g, text, cut+len(lead), "", sep, true)
	}
	return planAnswerAt(g, text, cut, lead, sep, found)
}

// planAnswerAt builds the plan for a cut at byte cut of text (found: the
// cut is at a marker the model wrote): the kept tokens are those whose
// pieces end at or before the cut, less trailing empty ones (an
// end-of-generation token).
func planAnswerAt(g *llm.Generation, text string, cut int, lead, sep string, found bool) (answerPlan, bool) {
	off, k, b := 0, 0, 0
	for i, t := range g.Tokens {
		if off+len(t.Piece) > cut {
			break
		}
		off += len(t.Piece)
		if t.Piece != "" {
			k, b = i+1, off
		}
	}
	if b > cut || cut > len(text) {
		return answerPlan{}, false
	}
	prefix := text[b:cut]
	if !found && cut > 0 && !strings.HasSuffix(text[:cut], sep) {
		prefix += sep
	}
	return answerPlan{Keep: k, Prefix: prefix + lead}, true
}

// AnswerJob is the answer scoring of one sequence of a batch: its expected
// answer (exact decimal), the sequence's extraction, and the passes to run:
// after the model's text (steps 1–3 of AnswerScoreVersion) and first
// (step 4).
type AnswerJob struct {
	Seq      int               // the sequence's index in the batch
	Expected string            // the expected answer, an exact decimal
	Ex       answer.Extraction // the sequence's extraction (Extract)
	// After and First say which passes run: the answer after the model's
	// text and the answer first.
	After, First bool
}

// AnswerScores is what the answer-scoring pass gave for one job: the trace
// records of the answer after the model's text and of the answer first
// (nil when not scored), and the seconds of llama_decode and pass time
// the answer-first forcing took (ForceAfter's share; 0 when nothing was
// decoded for it), which no file records.
type AnswerScores struct {
	After     *rundir.AnswerScoreTrace // the answer after the model's text; nil when not scored
	First     *rundir.AnswerForced     // the answer first; nil when not scored
	FirstSecs float64                  // seconds the answer-first forcing took
}

// ScoreAnswers runs the answer-scoring pass over the sequences of the
// latest batch named by jobs and returns each job's records (nil when not
// scored: no final-answer form, an answer with no finite decimal form, a
// forced text whose tokens do not give it back, a forcing that would fill
// the context). Every forcing runs in one ForceAfter call; a sequence's
// answer-first forcing comes after its other ones.
func ScoreAnswers(ctx context.Context, m *llm.Model, gens []*llm.Generation, jobs []AnswerJob, preset, kernel string) ([]AnswerScores, error) {
	out := make([]AnswerScores, len(jobs))
	if testHookNoAnswerFirst {
		for j := range jobs {
			jobs[j].First = false
		}
	}
	var fs []llm.Forcing
	var slots [][2]int // (job, answer) of each forcing; answer −1: the answer first
	for j, job := range jobs {
		g := gens[job.Seq]
		want, ok := RenderAnswer(job.Expected)
		if !ok {
			continue
		}
		if job.After {
			f, sl, err := planAfter(m, g, job, j, want, preset, &out[j])
			if err != nil {
				return nil, err
			}
			fs, slots = append(fs, f...), append(slots, sl...)
		}
		if job.First {
			f, ok, err := planFirst(m, g, job.Seq, want, preset, &out[j])
			if err != nil {
				return nil, err
			}
			if ok {
				fs, slots = append(fs, f), append(slots, [2]int{j, -1})
			}
		}
	}
	if len(fs) == 0 {
		return out, nil
	}
	res, err := m.ForceAfter(ctx, gens, fs, kernel)
	if err != nil {
		return nil, err
	}
	for i, sl := range slots {
		var a *rundir.AnswerForced
		if sl[1] < 0 {
			a = out[sl[0]].First
			out[sl[0]].FirstSecs = res[i].Seconds
		} else {
			a = &out[sl[0]].After.Answers[sl[1]]
		}
		a.LogProb, a.TokenLogProbs = res[i].LogProb, res[i].TokenLogProbs
	}
	return out, nil
}

// testHookNoAnswerFirst, set by tests only, leaves the answer first out of
// every answer-scoring pass (a run as answer-score/1 scored it), so that
// they can check that it changes no generated token.
var testHookNoAnswerFirst bool

// planFirst plans the answer-first forcing of want (rendered) for sequence
// seq (step 4 of AnswerScoreVersion) and sets its record in out; ok is
// false when it is not scored, or when the model wrote its tokens itself
// (the record is complete, nothing to force).
func planFirst(m *llm.Model, g *llm.Generation, seq int, want, preset string, out *AnswerScores) (llm.Forcing, bool, error) {
	lead, _, ok := AnswerLead(preset)
	if !ok {
		return llm.Forcing{}, false, nil
	}
	f, ok, err := forcingFor(m, seq, answerPlan{Keep: 0, Prefix: lead}, want)
	if err != nil || !ok || g.PromptTokens+len(f.Tokens) >= m.Params().NCtx {
		return llm.Forcing{}, false, err
	}
	rec := &rundir.AnswerForced{Answer: want, Tokens: f.Tokens, From: f.From}
	out.First = rec
	if lps, ok := generatedLogProbs(g, f); ok {
		rec.FromGeneration, rec.TokenLogProbs = true, lps
		for _, lp := range lps {
			rec.LogProb += lp
		}
		return llm.Forcing{}, false, nil
	}
	return f, true, nil
}

// planAfter plans the forcings of the answers after the model's text
// (steps 1–3 of AnswerScoreVersion) for job j, whose expected answer
// renders as want, and sets out.after; it returns the forcings left to
// decode and their slots.
func planAfter(m *llm.Model, g *llm.Generation, job AnswerJob, j int, want, preset string, out *AnswerScores) ([]llm.Forcing, [][2]int, error) {
	plan, ok := planAnswer(g, job.Ex, preset)
	if !ok {
		return nil, nil, nil
	}
	var fs []llm.Forcing
	var slots [][2]int
	answers := []string{want}
	if own, ok := RenderAnswer(job.Ex.Value); ok && job.Ex.Rule != answer.RuleNone && own != want {
		answers = append(answers, own)
	}
	tr := &rundir.AnswerScoreTrace{Keep: plan.Keep, Prefix: plan.Prefix}
	for _, a := range answers {
		f, ok, err := forcingFor(m, job.Seq, plan, a)
		if err != nil {
			return nil, nil, err
		}
		if !ok || g.PromptTokens+plan.Keep+len(f.Tokens) >= m.Params().NCtx {
			break
		}
		rec := rundir.AnswerForced{Answer: a, Tokens: f.Tokens, From: f.From}
		if lps, ok := generatedLogProbs(g, f); ok {
			rec.FromGeneration, rec.TokenLogProbs = true, lps
			for _, lp := range lps {
				rec.LogProb += lp
			}
		} else {
			fs = append(fs, f)
			slots = append(slots, [2]int{j, len(tr.Answers)})
		}
		tr.Answers = append(tr.Answers, rec)
	}
	if len(tr.Answers) > 0 {
		out.After = tr
	}
	return fs, slots, nil
}

// generatedLogProbs returns the log-probabilities generation recorded for
// the scored tokens of f when the model itself wrote f's tokens right after
// the kept ones (none of them injected): forcing them would decode the same
// tokens in the same context. ok is false otherwise.
func generatedLogProbs(g *llm.Generation, f llm.Forcing) ([]float64, bool) {
	if f.Keep+len(f.Tokens) > len(g.Tokens) {
		return nil, false
	}
	for i, id := range f.Tokens {
		if r := g.Tokens[f.Keep+i]; r.ID != id || r.Injected {
			return nil, false
		}
	}
	lps := make([]float64, 0, f.To-f.From)
	for _, r := range g.Tokens[f.Keep+f.From : f.Keep+f.To] {
		lps = append(lps, r.LogProb)
	}
	return lps, true
}

// forcingFor tokenizes plan's prefix and the rendered answer a and returns
// the forcing that scores a's tokens; ok is false when the tokens' pieces do
// not give the text back.
func forcingFor(m *llm.Model, seq int, plan answerPlan, a string) (llm.Forcing, bool, error) {
	text := plan.Prefix + a
	toks, err := m.Tokenize(text, false, false)
	if err != nil {
		return llm.Forcing{}, false, fmt.Errorf("answer scoring: %q: %w", text, err)
	}
	var b strings.Builder
	from := -1
	for i, t := range toks {
		b.WriteString(m.Piece(t))
		if from < 0 && b.Len() > len(plan.Prefix) {
			from = i
		}
	}
	if b.String() != text || from < 0 {
		return llm.Forcing{}, false, nil
	}
	return llm.Forcing{Seq: seq, Keep: plan.Keep, Tokens: toks, From: from, To: len(toks)}, true, nil
}

// fillAnswerScore sets the answer-score columns of t from its trace record
// (nothing when tr is nil: the trial was not scored).
func fillAnswerScore(t *results.Trial, tr *rundir.AnswerScoreTrace) {
	if tr == nil || len(tr.Answers) == 0 {
		return
	}
	a := tr.Answers[0]
	t.AnswerScored = true
	t.AnswerLogProb, t.AnswerLogProbTokens = a.LogProb, len(a.TokenLogProbs)
	switch {
	case len(tr.Answers) > 1:
		o := tr.Answers[1]
		t.OwnAnswerLogProb, t.OwnAnswerLogProbTokens = o.LogProb, len(o.TokenLogProbs)
		t.AnswerLogProbMargin = a.LogProb - o.LogProb
	case t.Rule != answer.RuleNone && ownIsExpected(t.Extracted, a.Answer):
		t.OwnAnswerLogProb, t.OwnAnswerLogProbTokens = a.LogProb, len(a.TokenLogProbs)
	}
}

// fillAnswerFirst sets the answer-first columns of t from its trace record
// (nothing when a is nil: not scored).
func fillAnswerFirst(t *results.Trial, a *rundir.AnswerForced) {
	if a == nil {
		return
	}
	t.AnswerFirstLogProb, t.AnswerFirstLogProbTokens = a.LogProb, len(a.TokenLogProbs)
}

// ownIsExpected reports whether the extracted value renders as the expected
// rendered answer.
func ownIsExpected(extracted, want string) bool {
	own, ok := RenderAnswer(extracted)
	return ok && own == want
}
