package report

import (
	"fmt"

	"github.com/fragility/fragility/probe"
)

// This file is the only place that knows the shape of summary.json
// (probe.Summary). Every interval, drop and verdict the report shows is read
// here, as computed by the statistics package; the report computes none of
// them.

// modelRef is one model of the run as the summary names it.
type modelRef struct {
	Label string // display name, unique within the run
	Key   string // the trials' model key: the path, or the name without one
	Path  string
}

// summaryModels returns the models of the summary in its order.
func summaryModels(s *probe.Summary) []modelRef {
	out := make([]modelRef, len(s.Models))
	for i, m := range s.Models {
		key := m.Path
		if key == "" {
			key = m.Name
		}
		out[i] = modelRef{Label: m.Label, Key: key, Path: m.Path}
	}
	return out
}

// trialModelKey is the key a trial's model has in summaryModels: its path,
// or its name when it has none (probe.Summarize groups trials this way).
func trialModelKey(t *probe.Trial) string {
	if t.ModelPath != "" {
		return t.ModelPath
	}
	return t.ModelName
}

// interval is an estimate with its interval as the summary reports it.
type interval struct {
	Value  float64
	Lo, Hi float64
	HasCI  bool
}

// confidencePct returns the summary's confidence level in percent (95).
func confidencePct(s *probe.Summary) float64 { return 100 * s.Params.Confidence }

// accuracyCell is one model × variant accuracy: k correct of n scored.
type accuracyCell struct {
	Model, Variant string
	K, N           int
	Acc            *interval // nil when n = 0
}

// accuracyInterval returns the interval the summary reports for a model's
// accuracy on one variant: the cluster-bootstrap interval (it respects the
// clustering by template), or the Wilson interval where the bootstrap gave
// none.
func accuracyInterval(v *probe.VariantSummary) *interval {
	if v.AccuracyPct == nil {
		return nil
	}
	iv := &interval{Value: v.AccuracyPct.Value}
	switch {
	case v.AccuracyBootstrap != nil:
		iv.Lo, iv.Hi, iv.HasCI = v.AccuracyBootstrap.Lo, v.AccuracyBootstrap.Hi, true
	case v.AccuracyPct.CI != nil:
		iv.Lo, iv.Hi, iv.HasCI = v.AccuracyPct.CI.Lo, v.AccuracyPct.CI.Hi, true
	}
	return iv
}

// accuracyMethod names the interval of accuracyInterval for a caption.
func accuracyMethod(s *probe.Summary) string {
	return fmt.Sprintf("%s (B = %d resamples, seed %d; the %s where the bootstrap gives none)",
		s.Params.Bootstrap, s.Params.BootstrapResamples, s.Params.Seed, s.Params.AccuracyInterval)
}

// accuracyCells returns every model × variant accuracy of the summary.
func accuracyCells(s *probe.Summary) []accuracyCell {
	var out []accuracyCell
	for _, m := range s.Models {
		for i := range m.Variants {
			v := &m.Variants[i]
			out = append(out, accuracyCell{Model: m.Label, Variant: v.Variant, K: v.K, N: v.N, Acc: accuracyInterval(v)})
		}
	}
	return out
}

// dropCell is one model × variant drop against base, in percentage points.
type dropCell struct {
	Model, Variant string
	Drop           interval
	Verdict        string
}

// dropCells returns the drop of every non-base variant of every model that
// has one.
func dropCells(s *probe.Summary) []dropCell {
	var out []dropCell
	for _, m := range s.Models {
		for _, v := range m.Variants {
			if v.DropPP == nil {
				continue
			}
			d := dropCell{Model: m.Label, Variant: v.Variant, Verdict: v.Verdict, Drop: interval{Value: v.DropPP.Value}}
			if v.DropPP.CI != nil {
				d.Drop.Lo, d.Drop.Hi, d.Drop.HasCI = v.DropPP.CI.Lo, v.DropPP.CI.Hi, true
			}
			out = append(out, d)
		}
	}
	return out
}

// dropMethod names the interval of dropCells for a caption.
func dropMethod(s *probe.Summary) string {
	return fmt.Sprintf("%s (B = %d resamples, seed %d)", s.Params.Bootstrap, s.Params.BootstrapResamples, s.Params.Seed)
}

// dropThresholds returns the drops, in pp, the verdicts are worded against:
// below negligible a drop is not meaningful, from strong on it is strong.
func dropThresholds(s *probe.Summary) (negligible, strong float64) {
	return s.Params.NegligibleDropPP, s.Params.StrongDropPP
}

// verdictOf returns a model's overall verdict and the variant it rests on.
func verdictOf(s *probe.Summary, label string) (verdict, variant string) {
	for _, m := range s.Models {
		if m.Label == label {
			return m.Verdict, m.WorstVariant
		}
	}
	return "", ""
}

// flipCell is the paired 2×2 table of one model × variant against base:
// counts of matched pairs.
type flipCell struct {
	Model, Variant                            string
	BothRight, BaseOnly, VariantOnly, BothBad int
}

// flipCells returns the paired tables of the summary.
func flipCells(s *probe.Summary) []flipCell {
	var out []flipCell
	for _, m := range s.Models {
		for _, v := range m.Variants {
			if v.Paired == nil {
				continue
			}
			q := v.Paired
			out = append(out, flipCell{Model: m.Label, Variant: v.Variant,
				BothRight: q.BothCorrect.Count, BaseOnly: q.BaseOnly.Count, VariantOnly: q.VariantOnly.Count, BothBad: q.BothWrong.Count})
		}
	}
	return out
}

// groupCell is the accuracy of one model on one variant within one group of
// a difficulty axis (steps, level, relation).
type groupCell struct {
	Model, Axis, Group, Variant string
	K, N                        int
	Acc                         *interval
}

// difficultyCells returns the difficulty axes of the summary.
func difficultyCells(s *probe.Summary) []groupCell {
	var out []groupCell
	for _, m := range s.Models {
		for _, g := range m.Difficulty {
			c := groupCell{Model: m.Label, Axis: g.Axis, Group: g.Group, Variant: g.Variant, K: g.K, N: g.N}
			if g.AccuracyPct != nil {
				c.Acc = &interval{Value: g.AccuracyPct.Value}
				if g.AccuracyPct.CI != nil {
					c.Acc.Lo, c.Acc.Hi, c.Acc.HasCI = g.AccuracyPct.CI.Lo, g.AccuracyPct.CI.Hi, true
				}
			}
			out = append(out, c)
		}
	}
	return out
}

// difficultyMethod names the interval of difficultyCells for a caption.
func difficultyMethod(s *probe.Summary) string { return s.Params.AccuracyInterval }

// summaryDropByPath returns the drop of the model with the given file path on
// a variant, for the quantization comparison; nil when the summary has none.
func summaryDropByPath(s *probe.Summary, path, variant string) *interval {
	for _, d := range dropCells(s) {
		for _, m := range s.Models {
			if m.Path == path && m.Label == d.Model && d.Variant == variant {
				iv := d.Drop
				return &iv
			}
		}
	}
	return nil
}
