package summary

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fragility/fragility/probe/results"
)

func finite(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// modelKey identifies a trial's model: its path, or its name without one,
// with "#" and the condition appended under a condition other than none:
// each model × condition is summarised as a model of its own, so the
// paired differences between models (ModelPairs) include the calculator's
// effect on the same prompts.
func modelKey(t *results.Trial) string {
	k := t.ModelPath
	if k == "" {
		k = t.ModelName
	}
	return results.ConditionItemID(k, t.Condition)
}

// setLabels gives every model a display label: its name and quantization,
// or its file name where that would not be unique.
func setLabels(models []*ModelSummary) {
	count := map[string]int{}
	for _, m := range models {
		m.Label = strings.TrimSpace(m.Name)
		if m.Quantization != "" && !strings.Contains(strings.ToUpper(m.Label), strings.ToUpper(m.Quantization)) {
			m.Label = strings.TrimSpace(m.Label + " " + m.Quantization)
		}
		if m.Label == "" {
			m.Label = filepath.Base(m.Path)
		}
		m.Label += condLabel(m.Condition)
		count[m.Label]++
	}
	for _, m := range models {
		if count[m.Label] > 1 && m.Path != "" {
			m.Label = filepath.Base(m.Path) + condLabel(m.Condition)
		}
	}
	count = map[string]int{}
	for _, m := range models {
		count[m.Label]++
	}
	for i, m := range models {
		if count[m.Label] > 1 {
			m.Label = fmt.Sprintf("%s #%d", m.Label, i+1)
		}
	}
}

// OverrideCounts is what the summary says about a run's label overrides.
type OverrideCounts struct {
	File       string `json:"file"`
	SHA256     string `json:"sha256"`
	Overridden int    `json:"overridden_trials"` // trials scored against a corrected answer
	Excluded   int    `json:"excluded_trials"`   // trials left out of every statistic
}

// condLabel is what a model's display label gets for its condition:
// nothing for none, " + calculator" for the calculator.
func condLabel(cond string) string {
	if cond == "" || cond == results.ConditionNone {
		return ""
	}
	return " + " + cond
}

// fnum formats x with prec decimals.
func fnum(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }

// Variant returns the summary of the named variant, or nil.
func (m *ModelSummary) Variant(name string) *VariantSummary {
	for i := range m.Variants {
		if m.Variants[i].Variant == name {
			return &m.Variants[i]
		}
	}
	return nil
}
