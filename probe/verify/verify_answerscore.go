package verify

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/rundir"
)

// DivAnswerScore is the Divergence field of an answer-scoring pass whose
// replay differs from the record: another cut, other forced tokens, or a
// log-probability that is not bit-identical (Position is the index of the
// forced answer: 0 the expected one, 1 the model's own).
const DivAnswerScore = "answer_score"

// DivAnswerFirst is the Divergence field of an answer-first forcing
// (AnswerScoreVersion step 4) whose replay differs from the record: other
// forced tokens, or a log-probability that is not bit-identical.
const DivAnswerFirst = "answer_first"

// checkAnswerScore refuses a run whose answer scoring (its manifest's
// answer_score) is not this binary's probe.AnswerScoreVersion: each version
// decodes the forced tokens its own way, and their log-probabilities differ
// (by up to tenths of a nat a token), so a replay of its scores would differ. A run
// recorded before answer scoring ("") has none to replay.
func checkAnswerScore(dir string, man *rundir.Manifest) error {
	if v := man.AnswerScore; v != "" && v != probe.AnswerScoreVersion {
		return fmt.Errorf("%s: the answer scoring was recorded under %s and this binary has %s, which decodes the forced tokens otherwise, so their replay would differ: verify the run with the binary that recorded it", filepath.Join(dir, rundir.FileManifest), v, probe.AnswerScoreVersion)
	}
	return nil
}

// replayAnswerScores replays the answer-scoring pass of a replayed batch
// (gens, in the KV state GenerateBatch left) for the traces that recorded
// one, with the same procedure as the run (the expected answer as the
// trace rendered it, the model's own read from the replayed text; the
// answer first for the traces that recorded it, so that the forcings are
// the run's), and adds a divergence for every trace whose record differs.
func replayAnswerScores(ctx context.Context, m *llm.Model, gens []*llm.Generation, traces []rundir.Trace, preset, kernel string, res *VerifyResult) error {
	var jobs []probe.AnswerJob
	var idx []int
	for i, t := range traces {
		after := t.AnswerScore != nil && len(t.AnswerScore.Answers) > 0
		first := t.AnswerFirst != nil
		if !after && !first {
			continue
		}
		var expected string
		if after {
			expected = t.AnswerScore.Answers[0].Answer
		} else {
			expected = t.AnswerFirst.Answer
		}
		jobs = append(jobs, probe.AnswerJob{Seq: i, Expected: expected, Ex: probe.Extract(gens[i]), After: after, First: first})
		idx = append(idx, i)
	}
	if len(jobs) == 0 {
		return nil
	}
	got, err := probe.ScoreAnswers(ctx, m, gens, jobs, preset, kernel)
	if err != nil {
		return fmt.Errorf("%s: replaying the answer scores of the batch of %s: %w", m.Metadata().Path, traces[0].ItemID, err)
	}
	for j, i := range idx {
		d, ok := Divergence{}, false
		if jobs[j].After {
			d, ok = answerScoreDiff(*traces[i].AnswerScore, got[j].After)
		}
		if !ok && jobs[j].First {
			d, ok = answerFirstDiff(traces[i].AnswerFirst, got[j].First)
		}
		if ok {
			d.Item, d.Model = traces[i].ItemID, m.Metadata().Path
			res.diverge(d)
		}
	}
	return nil
}

// answerFirstDiff compares a recorded answer-first forcing with its replay
// and describes the first difference.
func answerFirstDiff(rec, rep *rundir.AnswerForced) (Divergence, bool) {
	d := Divergence{Field: DivAnswerFirst}
	if rep == nil {
		d.Recorded, d.Replayed = fmt.Sprintf("answer %q scored", rec.Answer), "not scored"
		return d, true
	}
	return forcedDiff(d, *rec, *rep)
}

// forcedDiff fills d with the first difference between a recorded forced
// answer and its replay.
func forcedDiff(d Divergence, a, b rundir.AnswerForced) (Divergence, bool) {
	switch {
	case a.Answer != b.Answer || a.From != b.From || !slices.Equal(a.Tokens, b.Tokens):
		d.Recorded = fmt.Sprintf("answer %q tokens %v from %d", a.Answer, a.Tokens, a.From)
		d.Replayed = fmt.Sprintf("answer %q tokens %v from %d", b.Answer, b.Tokens, b.From)
		return d, true
	case math.Float64bits(a.LogProb) != math.Float64bits(b.LogProb) || !sameBits(a.TokenLogProbs, b.TokenLogProbs):
		d.Recorded, d.Replayed = floatBits(a.LogProb), floatBits(b.LogProb)
		return d, true
	}
	return d, false
}

// answerScoreDiff compares a recorded answer-scoring record with its replay
// and describes the first difference.
func answerScoreDiff(rec rundir.AnswerScoreTrace, rep *rundir.AnswerScoreTrace) (Divergence, bool) {
	d := Divergence{Field: DivAnswerScore}
	if rep == nil {
		d.Recorded, d.Replayed = fmt.Sprintf("%d answers scored", len(rec.Answers)), "not scored"
		return d, true
	}
	if rec.Keep != rep.Keep || rec.Prefix != rep.Prefix || len(rec.Answers) != len(rep.Answers) {
		d.Recorded = fmt.Sprintf("keep %d, prefix %s, %d answers", rec.Keep, strconv.Quote(rec.Prefix), len(rec.Answers))
		d.Replayed = fmt.Sprintf("keep %d, prefix %s, %d answers", rep.Keep, strconv.Quote(rep.Prefix), len(rep.Answers))
		return d, true
	}
	for k, a := range rec.Answers {
		d.Position = k
		if d, ok := forcedDiff(d, a, rep.Answers[k]); ok {
			return d, true
		}
	}
	return d, false
}

// sameBits reports whether two float64 slices are equal bit for bit.
func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}
