package probe

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/fragility/fragility/probe/stats"
)

// DefaultMaxTemplates is the largest number of templates a plan searches.
const DefaultMaxTemplates = 100000

// PlanOptions are the inputs of MakePlan: the drop to detect, the design of
// the run, the test's level and power, and the variance components of the
// per-pair difference (base right − variant right, 0/1).
type PlanOptions struct {
	// DropPP is the paired drop to detect, in percentage points (> 0).
	DropPP float64
	// Templates, when > 0, is a number of templates to evaluate (MDE and
	// power at that size); 0 leaves it out.
	Templates int
	// Instances is the number of instances per template and variant, m: the
	// distinct pairs per template of a variant that re-draws its values.
	Instances int
	// Variants are the run's variants (base included or not) and Primary a
	// pre-specified primary variant: the test's family is 1 with a primary,
	// else the number of variants other than base (Holm's first step tests
	// at α divided by it).
	Variants []string
	Primary  string
	// Alpha is the family-wise level (e.g. 0.05), Power the power (e.g. 0.8).
	Alpha, Power float64
	// Between and Within are σ²_b and σ²_w of the per-pair difference, in
	// squared fractions; ComponentsSource says where they come from.
	Between, Within  float64
	ComponentsSource string
	// MaxTemplates bounds the search (DefaultMaxTemplates when 0).
	MaxTemplates int
}

// PlanRow is the number of templates needed at one number of instances.
type PlanRow struct {
	Instances int `json:"instances"`
	// Templates is the smallest number of templates that detects the drop
	// (0 when even MaxTemplates does not); MDEPP the minimum detectable drop
	// there, in percentage points.
	Templates int     `json:"templates"`
	MDEPP     float64 `json:"mde_pp"`
}

// Plan is what a run needs to detect a drop: it is the output of `fragility
// plan` (also as JSON). Sizes are for one variant's paired drop; other
// commands may add fields (items, tokens, time) computed from the same
// design.
type Plan struct {
	DropPP    float64  `json:"drop_pp"`   // the drop to detect, pp
	Instances int      `json:"instances"` // m, instances per template and variant
	Variants  []string `json:"variants"`
	Primary   string   `json:"primary_variant,omitempty"`
	// Tests is the size of the Holm family the drop is tested in (1 with a
	// primary variant); TestAlpha = Alpha/Tests is the level of Holm's first
	// step, used for the sizes below (conservative for the other steps).
	Tests     int     `json:"tests"`
	Alpha     float64 `json:"alpha"`
	TestAlpha float64 `json:"test_alpha"`
	Power     float64 `json:"power"`
	// Between and Within are σ²_b and σ²_w of the per-pair difference
	// (squared fractions), ICC = σ²_b/(σ²_b + σ²_w).
	Between          float64 `json:"between_variance"`
	Within           float64 `json:"within_variance"`
	ICC              float64 `json:"icc"`
	ComponentsSource string  `json:"components_source"`
	// SignFlipMinTemplates is the smallest number of templates at which the
	// exact sign-flip test can reach TestAlpha at all
	// (stats.SignFlipMinClusters).
	SignFlipMinTemplates int `json:"sign_flip_min_templates"`
	// NeededTemplates is the smallest number of templates detecting DropPP
	// with Instances instances (0: more than MaxTemplates), MDEAtNeededPP the
	// minimum detectable drop there.
	NeededTemplates int     `json:"needed_templates"`
	MDEAtNeededPP   float64 `json:"mde_at_needed_pp"`
	MaxTemplates    int     `json:"max_templates"`
	// Templates, when given, with the minimum detectable drop (pp) and the
	// power to detect DropPP at that size (nil when not given).
	Templates      int      `json:"templates,omitempty"`
	MDEPP          *float64 `json:"mde_pp,omitempty"`
	PowerAtDropPct *float64 `json:"power_at_drop_pct,omitempty"`
	// ByInstances is NeededTemplates for other numbers of instances
	// (1, 2, 5, 10, 20 and Instances).
	ByInstances []PlanRow `json:"by_instances"`
}

// MakePlan computes a Plan: for a paired drop of o.DropPP, the number of
// templates needed at o.Instances instances and at other instance counts, and,
// when o.Templates is given, the minimum detectable drop and the power at
// that size. The sizes follow stats.MDE, (t_{1−α/2,G−1} + t_{power,G−1}) ·
// √((σ²_b + σ²_w/m)/G) (Bloom 1995; the design effect of Donner & Klar
// 2000), at the level of Holm's first step, and never fall below the number
// of templates at which the sign-flip test can reach that level. Errors name
// the option that is out of range.
func MakePlan(o PlanOptions) (*Plan, error) {
	switch {
	case !(o.DropPP > 0 && o.DropPP <= 100):
		return nil, fmt.Errorf("--drop must be in (0, 100] percentage points, got %v", o.DropPP)
	case o.Instances < 1:
		return nil, fmt.Errorf("--instances must be at least 1, got %d", o.Instances)
	case o.Templates < 0 || o.Templates == 1:
		return nil, fmt.Errorf("--templates must be at least 2, got %d", o.Templates)
	case !(o.Alpha > 0 && o.Alpha < 1):
		return nil, fmt.Errorf("--alpha must be in (0, 1), got %v", o.Alpha)
	case !(o.Power > 0 && o.Power < 1):
		return nil, fmt.Errorf("--power must be in (0, 1), got %v", o.Power)
	case !(o.Between >= 0 && o.Within >= 0) || math.IsInf(o.Between, 0) || math.IsInf(o.Within, 0) || o.Between+o.Within == 0:
		return nil, errors.New("--between and --within must be ≥ 0 and not both 0")
	}
	tests := 0
	for _, v := range o.Variants {
		if v != BaseVariant {
			tests++
		}
	}
	if o.Primary != "" {
		if o.Primary == BaseVariant || !slices.Contains(o.Variants, o.Primary) {
			return nil, fmt.Errorf("--primary %s must be one of the other variants in --variants", o.Primary)
		}
		tests = 1
	}
	if tests == 0 {
		return nil, errors.New("--variants needs a variant other than base: a drop is measured against base")
	}
	maxG := o.MaxTemplates
	if maxG == 0 {
		maxG = DefaultMaxTemplates
	}
	c := stats.Components{Between: o.Between, Within: o.Within}
	pl := &Plan{DropPP: o.DropPP, Instances: o.Instances, Variants: o.Variants, Primary: o.Primary, Tests: tests,
		Alpha: o.Alpha, TestAlpha: o.Alpha / float64(tests), Power: o.Power,
		Between: o.Between, Within: o.Within, ICC: c.ICC(), ComponentsSource: o.ComponentsSource, MaxTemplates: maxG}
	pl.SignFlipMinTemplates = stats.SignFlipMinClusters(pl.TestAlpha)
	need := func(m int) (int, float64) {
		g, ok := stats.RequiredClusters(o.DropPP/100, float64(m), c, pl.TestAlpha, o.Power, pl.SignFlipMinTemplates, maxG)
		if !ok {
			return 0, 0
		}
		return g, 100 * stats.MDE(g, float64(m), c, pl.TestAlpha, o.Power)
	}
	pl.NeededTemplates, pl.MDEAtNeededPP = need(o.Instances)
	ms := []int{1, 2, 5, 10, 20}
	if !slices.Contains(ms, o.Instances) {
		ms = append(ms, o.Instances)
		slices.Sort(ms)
	}
	for _, m := range ms {
		g, mde := need(m)
		pl.ByInstances = append(pl.ByInstances, PlanRow{Instances: m, Templates: g, MDEPP: mde})
	}
	if o.Templates >= 2 {
		pl.Templates = o.Templates
		mde := 100 * stats.MDE(o.Templates, float64(o.Instances), c, pl.TestAlpha, o.Power)
		pw := 100 * stats.Power(o.Templates, float64(o.Instances), c, o.DropPP/100, pl.TestAlpha)
		if o.Templates < pl.SignFlipMinTemplates {
			pw = 0 // the test cannot reject at all
		}
		pl.MDEPP, pl.PowerAtDropPct = &mde, &pw
	}
	return pl, nil
}

// PooledComponents returns the variance components of a run's per-pair
// differences for planning: the means of Between and Within over every
// model × variant whose Power was estimated from the run ("observed"), and
// how many there were. ok is false when none was.
func PooledComponents(s *Summary) (between, within float64, n int, ok bool) {
	for i := range s.Models {
		for j := range s.Models[i].Variants {
			pr := s.Models[i].Variants[j].Paired
			if pr == nil || pr.Power == nil || pr.Power.Source != "observed" {
				continue
			}
			between += pr.Power.Between
			within += pr.Power.Within
			n++
		}
	}
	if n == 0 {
		return 0, 0, 0, false
	}
	return between / float64(n), within / float64(n), n, true
}
