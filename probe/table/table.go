// Package table puts runs side by side (`fragility table DIR...`): one row
// per model of each run directory, read from its summary.json and
// manifest.json: the model, its quantization, the protocol the run
// followed, accuracy per variant, the verdict variant's paired drop with
// its interval, the stability excess over the placebo, the answer-first
// shift, the verdict and the share of the verdict variant's answers the
// output budget cut. Runs frozen under different protocols (or none) are
// flagged as not comparable, never mixed silently.
//
// It computes nothing: every number is one summary.json holds (or, for
// the cut share, a ratio of two of its counts).
package table

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fragility/fragility/internal/jsonerr"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/summary"
	"github.com/fragility/fragility/templates"
)

// NoProtocol is the protocol of a run that followed no frozen protocol
// (run without --protocol).
const NoProtocol = "none"

// Table is the rows of several runs.
type Table struct {
	// Variants are the variants of every run, in the order they first
	// appear (each run's summary order); a row lacks the ones its run did
	// not have.
	Variants []string `json:"variants"`
	// Protocols are the distinct protocols of the rows (sha256, or
	// NoProtocol), in the order they first appear.
	Protocols []string `json:"protocols"`
	// Comparable is false when the rows follow more than one protocol;
	// Note then says so in one line.
	Comparable bool   `json:"comparable"`
	Note       string `json:"note,omitempty"`
	Rows       []Row  `json:"rows"`
}

// Row is one model of one run.
type Row struct {
	Dir          string `json:"dir"`   // the run directory as given
	Model        string `json:"model"` // ModelSummary.Label (the condition named when not none)
	Quantization string `json:"quantization"`
	Condition    string `json:"condition"`
	// Protocol is the frozen protocol's sha256 (the manifest's config,
	// else the summary's), NoProtocol for none.
	Protocol string `json:"protocol"`
	// Accuracy is the accuracy per variant, in Table.Variants order.
	Accuracy []Accuracy `json:"accuracy"`
	// VerdictVariant is the variant the verdict reads (ModelSummary.
	// VerdictVariant); "" without one, and then Drop, AnswerFirst and the
	// cut counts are empty.
	VerdictVariant string `json:"verdict_variant"`
	// Drop is the verdict variant's paired drop (percentage points) with
	// its reported interval.
	Drop *Value `json:"paired_drop_pp"`
	// Excess is the stability excess over the placebo (percentage points)
	// of the variant the stability verdict names, with its interval; nil
	// when not assessed, and ExcessNote then says why ("not assessed:
	// REASON").
	Excess     *Value `json:"stability_excess_pp"`
	ExcessNote string `json:"stability_excess_note,omitempty"`
	// AnswerFirst is the verdict variant's answer-first log-probability
	// shift (nats), with its interval; nil when the run did not score the
	// answer first.
	AnswerFirst *Value `json:"answer_first_shift_nats"`
	// Verdict is the model's verdict line (ModelSummary.Headline, else
	// ModelSummary.Verdict).
	Verdict string `json:"verdict"`
	// Cut and Scored are the verdict variant's trials the output budget
	// ended (VariantSummary.CutByBudget) and its scored trials; CutPct is
	// 100·Cut/Scored, nil without a verdict variant or scored trial.
	Cut    int      `json:"cut_by_budget"`
	Scored int      `json:"scored"`
	CutPct *float64 `json:"cut_pct"`

	acc map[string]float64 // accuracy by variant, until Load orders it
}

// Accuracy is a model's accuracy on one variant, in percent (AccuracyPct's
// value); nil where the run has no such variant or no scored prompt.
type Accuracy struct {
	Variant string   `json:"variant"`
	Pct     *float64 `json:"pct"`
}

// Value is an estimate with its reported interval (nil when the summary
// reports none; NoCI says why, as the summary words it).
type Value struct {
	Value float64           `json:"value"`
	CI    *summary.Interval `json:"ci"`
	NoCI  string            `json:"no_ci,omitempty"`
}

// Load reads each run directory of dirs (its manifest.json and
// summary.json) and returns their rows, in the order of dirs and, within
// a run, of its summary's models. The first directory that is not a run
// directory, or lacks summary.json, is the error, naming it in one line.
func Load(dirs []string) (*Table, error) {
	t := &Table{Comparable: true}
	seen := map[string]string{} // a directory's absolute path -> as given
	var designs []string        // the designs of the runs without a protocol
	for _, dir := range dirs {
		abs, _ := filepath.Abs(dir)
		if first, ok := seen[abs]; ok {
			return nil, fmt.Errorf("%s: given twice (as %s and %s): each run is one row", dir, first, dir)
		}
		seen[abs] = dir
		man, sum, err := readRun(dir)
		if err != nil {
			return nil, err
		}
		protocol := cmpOr(man.Config.ProtocolSHA256, sum.ProtocolSHA256, NoProtocol)
		if d := design(man.Config); protocol == NoProtocol && !slices.Contains(designs, d) {
			designs = append(designs, d)
		}
		for _, v := range sum.Variants {
			if !slices.Contains(t.Variants, v) {
				t.Variants = append(t.Variants, v)
			}
		}
		if !slices.Contains(t.Protocols, protocol) {
			t.Protocols = append(t.Protocols, protocol)
		}
		for i := range sum.Models {
			t.Rows = append(t.Rows, row(dir, protocol, &sum.Models[i]))
		}
	}
	// Accuracy in the order of every run's variants.
	for i := range t.Rows {
		r := &t.Rows[i]
		r.Accuracy = make([]Accuracy, len(t.Variants))
		for j, v := range t.Variants {
			r.Accuracy[j].Variant = v
			if x, ok := r.acc[v]; ok {
				r.Accuracy[j].Pct = &x
			}
		}
	}
	if len(t.Protocols) > 1 {
		t.Comparable = false
		short := make([]string, len(t.Protocols))
		for i, p := range t.Protocols {
			short[i] = ShortProtocol(p)
		}
		t.Note = fmt.Sprintf("not comparable: the rows follow %d different protocols (%s); a difference between rows of different protocols may be the protocol's, not the model's",
			len(t.Protocols), strings.Join(short, ", "))
	} else if len(designs) > 1 {
		t.Comparable = false
		t.Note = fmt.Sprintf("not comparable: the runs without a protocol differ in design (%s); a difference between their rows may be the design's, not the model's",
			strings.Join(designs, "; "))
	}
	return t, nil
}

// design is what two runs without a frozen protocol must share for their
// rows to be compared: what each variant is compared with, the output
// budget, the worked examples, the sampling temperature and the prompt.
// The templates and the seed may differ (other draws of the same design).
func design(c rundir.Config) string {
	ref := c.Reference
	if ref == "" {
		ref = templates.ReferenceDrawn
	}
	return fmt.Sprintf("reference %s, %d tokens, %d shots, temperature %g, prompt %s", ref, c.MaxTokens, c.Shots, c.Temperature, cmpOr(c.Prompt, "fragility"))
}

// readRun reads the manifest and summary of the run directory dir, and
// checks that a complete run's results.csv is whole (a torn or ragged row is one line
// saying what to do, rundir.ReadResults): a summary is only as good as the
// rows it was computed from.
func readRun(dir string) (*rundir.Manifest, *summary.Summary, error) {
	man, err := rundir.ReadManifest(dir)
	if err != nil {
		return nil, nil, err
	}
	if man.Status == "complete" {
		if _, err := rundir.ReadResults(filepath.Join(dir, rundir.FileResults)); err != nil {
			return nil, nil, err
		}
	}
	path := filepath.Join(dir, rundir.FileSummary)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if man.Status == "interrupted" || man.Status == "running" {
			return nil, nil, fmt.Errorf("%s: no %s: the run is %s (finish it with fragility run --resume %s)", dir, rundir.FileSummary, man.Status, dir)
		}
		return nil, nil, fmt.Errorf("%s: no %s (fragility report %s computes it from %s)", dir, rundir.FileSummary, dir, rundir.FileResults)
	}
	if err != nil {
		return nil, nil, err
	}
	sum := new(summary.Summary)
	if err := json.Unmarshal(data, sum); err != nil {
		return nil, nil, fmt.Errorf("%s: %s", path, jsonerr.Text(data, err))
	}
	return man, sum, nil
}

// row is the row of model m of the run in dir.
func row(dir, protocol string, m *summary.ModelSummary) Row {
	r := Row{Dir: dir, Model: m.Label, Quantization: m.Quantization, Condition: m.Condition, Protocol: protocol,
		VerdictVariant: m.VerdictVariant, Verdict: cmpOr(m.Headline, m.Verdict)}
	// Accuracy by variant name: Load orders it once every run's variants
	// are known.
	r.acc = map[string]float64{}
	for i := range m.Variants {
		if v := &m.Variants[i]; v.AccuracyPct != nil {
			r.acc[v.Variant] = v.AccuracyPct.Value
		}
	}
	if v := m.Variant(m.VerdictVariant); m.VerdictVariant != "" && v != nil {
		if v.Paired != nil {
			r.Drop = value(v.Paired.PairedDropPP)
		}
		if sh := v.AnswerFirstLogProbShift; sh != nil {
			r.AnswerFirst = value(sh.Shift)
		}
		r.Cut, r.Scored = v.CutByBudget, v.Scored
		if v.Scored > 0 {
			x := 100 * float64(v.CutByBudget) / float64(v.Scored)
			r.CutPct = &x
		}
	}
	r.Excess, r.ExcessNote = excess(m.Stability, m.Verdict == summary.VerdictFloor)
	return r
}

// excess is the stability excess of the variant the stability verdict
// names, or why there is none; floor says the model's drop verdict is at
// the floor, the reason when no stability verdict was made.
func excess(s *summary.StabilityVerdict, floor bool) (*Value, string) {
	switch {
	case s == nil && floor:
		return nil, "not assessed: " + summary.ReasonFloor
	case s == nil:
		return nil, "not assessed: no answer-keeping variant with recorded answers"
	case s.Excess != nil && s.Excess.ExcessPP != nil:
		return value(s.Excess.ExcessPP), ""
	case s.Reason != "":
		return nil, "not assessed: " + s.Reason
	}
	return nil, "not assessed: " + s.Verdict
}

// value is e with its reported interval; nil for nil.
func value(e *summary.Estimate) *Value {
	if e == nil {
		return nil
	}
	v := &Value{Value: e.Value, CI: e.CI}
	switch {
	case e.CI != nil:
	case e.NoCI != "":
		v.NoCI = e.NoCI
	case e.Degenerate:
		v.NoCI = "no variation between templates"
	}
	return v
}

// ShortProtocol is a protocol's first 12 hex digits (NoProtocol as it is).
func ShortProtocol(p string) string {
	if len(p) > 12 && p != NoProtocol {
		return p[:12]
	}
	return p
}

// cmpOr is the first of xs that is not "".
func cmpOr(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}
