package probe

import (
	"strings"
	"testing"

	"github.com/fragility/fragility/probe/stats"
)

// TestMakePlan: the templates needed are the smallest G whose minimum
// detectable drop (stats.MDE at the level of Holm's first step) is at most
// the drop, never below the sign-flip floor; a primary variant tests at the
// full α.
func TestMakePlan(t *testing.T) {
	o := PlanOptions{DropPP: 10, Instances: 5, Variants: []string{"base", "symbolic", "noop"}, Alpha: 0.05, Power: 0.8,
		Between: PlanningBetween, Within: PlanningWithin, Templates: 6}
	pl, err := MakePlan(o)
	if err != nil {
		t.Fatal(err)
	}
	c := stats.Components{Between: PlanningBetween, Within: PlanningWithin}
	g := pl.NeededTemplates
	if pl.Tests != 2 || pl.TestAlpha != 0.025 || g < 3 ||
		stats.MDE(g, 5, c, 0.025, 0.8) > 0.10 || stats.MDE(g-1, 5, c, 0.025, 0.8) <= 0.10 {
		t.Errorf("needed %d templates (tests %d, α %v)", g, pl.Tests, pl.TestAlpha)
	}
	if pl.MDEPP == nil || *pl.MDEPP < 40 || pl.PowerAtDropPct == nil || *pl.PowerAtDropPct != 0 || pl.SignFlipMinTemplates != 7 {
		t.Errorf("at 6 templates: MDE %v, power %v (sign-flip floor %d)", pl.MDEPP, pl.PowerAtDropPct, pl.SignFlipMinTemplates)
	}
	// More instances never need more templates; the row for 5 is the headline.
	for i, r := range pl.ByInstances {
		if i > 0 && r.Templates > pl.ByInstances[i-1].Templates {
			t.Errorf("rows %+v", pl.ByInstances)
		}
		if r.Instances == 5 && r.Templates != g {
			t.Errorf("row for 5 instances %+v, headline %d", r, g)
		}
	}
	o.Primary = "symbolic"
	pp, _ := MakePlan(o)
	if pp.Tests != 1 || pp.TestAlpha != 0.05 || pp.NeededTemplates >= g || pp.SignFlipMinTemplates != 6 {
		t.Errorf("primary: %+v", pp)
	}
	// A huge drop is limited by the sign-flip floor, not by the MDE.
	o.DropPP, o.Primary = 95, ""
	if pl, _ := MakePlan(o); pl.NeededTemplates != 7 {
		t.Errorf("95 pp needs %d templates, want the floor 7", pl.NeededTemplates)
	}
	for _, bad := range []PlanOptions{
		{DropPP: 0, Instances: 2, Variants: []string{"base", "noop"}, Alpha: 0.05, Power: 0.8, Between: 0.05, Within: 0.2},
		{DropPP: 5, Instances: 0, Variants: []string{"base", "noop"}, Alpha: 0.05, Power: 0.8, Between: 0.05, Within: 0.2},
		{DropPP: 5, Instances: 2, Variants: []string{"base"}, Alpha: 0.05, Power: 0.8, Between: 0.05, Within: 0.2},
		{DropPP: 5, Instances: 2, Variants: []string{"base", "noop"}, Primary: "names", Alpha: 0.05, Power: 0.8, Between: 0.05, Within: 0.2},
		{DropPP: 5, Instances: 2, Variants: []string{"base", "noop"}, Alpha: 0.05, Power: 0.8},
		{DropPP: 5, Instances: 2, Variants: []string{"base", "noop"}, Alpha: 0.05, Power: 1, Between: 0.05, Within: 0.2},
		{DropPP: 5, Instances: 2, Templates: 1, Variants: []string{"base", "noop"}, Alpha: 0.05, Power: 0.8, Between: 0.05, Within: 0.2},
	} {
		if _, err := MakePlan(bad); err == nil || !strings.HasPrefix(err.Error(), "--") {
			t.Errorf("%+v: %v, want an error naming the flag", bad, err)
		}
	}
}

// TestPooledComponents: the plan's components from a run are the means of
// the observed ones.
func TestPooledComponents(t *testing.T) {
	s, err := Summarize(richTrials(), Params{BootstrapResamples: 20})
	if err != nil {
		t.Fatal(err)
	}
	var b, w float64
	n := 0
	for _, m := range s.Models {
		for _, v := range m.Variants {
			if v.Paired != nil && v.Paired.Power.Source == "observed" {
				b += v.Paired.Power.Between
				w += v.Paired.Power.Within
				n++
			}
		}
	}
	pb, pw, pn, ok := PooledComponents(s)
	if !ok || pn != n || n == 0 || !near(pb, b/float64(n)) || !near(pw, w/float64(n)) {
		t.Errorf("pooled %v %v over %d, want over %d", pb, pw, pn, n)
	}
	if _, _, _, ok := PooledComponents(&Summary{}); ok {
		t.Error("an empty summary gave components")
	}
}
