package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/models"
	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/internal/probetest"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/stats"
	"github.com/fragility/fragility/probe/summary"
	"github.com/fragility/fragility/templates"
)

// TestMakePlan: the templates needed are the smallest G whose minimum
// detectable drop (stats.PairedDropMDE at the level of Holm's first step) is at most
// the drop, never below the sign-flip floor; the MDE at the run's size is
// stats.PairedDropMDE there (the central-t MDE plus the sign-flip lattice's continuity correction); a primary variant tests at the full α.
func TestMakePlan(t *testing.T) {
	o := PlanOptions{DropPP: 10, Instances: 5, Variants: []string{"base", "symbolic", "noop"}, Alpha: 0.05, Power: 0.8,
		Between: summary.PlanningBetween, Within: summary.PlanningWithin, Templates: 6}
	pl, err := MakePlan(o)
	if err != nil {
		t.Fatal(err)
	}
	c := stats.Components{Between: summary.PlanningBetween, Within: summary.PlanningWithin}
	if pl.NeededTemplates == nil {
		t.Fatal("no templates needed with a drop")
	}
	g := *pl.NeededTemplates
	if pl.Tests != 2 || pl.TestAlpha != 0.025 || g < 3 ||
		stats.PairedDropMDE(g, 5, c, 0.025, 0.8, summary.DefaultFewTemplates) > 0.10 || stats.PairedDropMDE(g-1, 5, c, 0.025, 0.8, summary.DefaultFewTemplates) <= 0.10 {
		t.Errorf("needed %d templates (tests %d, α %v)", g, pl.Tests, pl.TestAlpha)
	}
	if pl.MDEPP == nil || !near(*pl.MDEPP, 100*stats.PairedDropMDE(6, 5, c, 0.025, 0.8, summary.DefaultFewTemplates)) || pl.PowerAtDropPct == nil || *pl.PowerAtDropPct != 0 || pl.SignFlipMinTemplates != 7 {
		t.Errorf("at 6 templates: MDE %v, power %v (sign-flip floor %d)", pl.MDEPP, pl.PowerAtDropPct, pl.SignFlipMinTemplates)
	}
	// More instances never need more templates nor detect less; the row
	// for 5 is the headline.
	for i, r := range pl.ByInstances {
		if r.TemplatesNeeded == nil || r.MDEPP == nil {
			t.Fatalf("row %+v lacks a value", r)
		}
		if i > 0 && (*r.TemplatesNeeded > *pl.ByInstances[i-1].TemplatesNeeded || *r.MDEPP > *pl.ByInstances[i-1].MDEPP) {
			t.Errorf("rows %+v", pl.ByInstances)
		}
		if r.Instances == 5 && (*r.TemplatesNeeded != g || *r.MDEPP != *pl.MDEPP) {
			t.Errorf("row for 5 instances %+v, headline %d", r, g)
		}
	}
	// With the base prompt's variance in σ²_b, 20 instances need more than
	// (0.25 + 0.2/20)/(0.25 + 0.2/5) = 0.897 of the templates 5 need.
	last := pl.ByInstances[len(pl.ByInstances)-1]
	if last.Instances != 20 || float64(*last.TemplatesNeeded) < 0.85*float64(g) {
		t.Errorf("20 instances need %d templates, 5 need %d: the base's variance was divided by the instances", *last.TemplatesNeeded, g)
	}
	o.Primary = "symbolic"
	pp, _ := MakePlan(o)
	if pp.Tests != 1 || pp.TestAlpha != 0.05 || *pp.NeededTemplates >= g || pp.SignFlipMinTemplates != 6 {
		t.Errorf("primary: %+v", pp)
	}
	// A huge drop is limited by the sign-flip floor, not by the MDE.
	o.DropPP, o.Primary = 95, ""
	if pl, _ := MakePlan(o); *pl.NeededTemplates != 7 || pl.MinTemplates != 7 {
		t.Errorf("95 pp needs %d templates, want the floor 7 (MinTemplates %d)", *pl.NeededTemplates, pl.MinTemplates)
	}
	// With an informative share of 0.206 the floor is the fewest G whose
	// round(0.206·G) is 7: 0.206·31 = 6.39 rounds to 6, 0.206·32 = 6.59 to
	// 7. A huge drop needs exactly that many.
	o.InformativeShare = 0.206
	if pl, _ := MakePlan(o); pl.MinTemplates != 32 || *pl.NeededTemplates != 32 {
		t.Errorf("share 0.206: floor %d, 95 pp needs %d; want 32 and 32", pl.MinTemplates, *pl.NeededTemplates)
	}
	o.InformativeShare = 0
	// Without a drop: the minimum detectable drop only.
	o.DropPP, o.Templates = 0, 68
	nd, err := MakePlan(o)
	if err != nil || nd.NeededTemplates != nil || nd.PowerAtDropPct != nil || nd.MDEPP == nil || !near(*nd.MDEPP, 100*stats.PairedDropMDE(68, 5, c, 0.025, 0.8, summary.DefaultFewTemplates)) {
		t.Fatalf("no drop: %+v, %v", nd, err)
	}
	for _, r := range nd.ByInstances {
		if r.TemplatesNeeded != nil || r.MDEPP == nil {
			t.Errorf("no drop, row %+v", r)
		}
	}
	// One template: nothing is detectable.
	o.Templates = 1
	if one, err := MakePlan(o); err != nil || one.MDEPP != nil {
		t.Errorf("one template: %+v, %v", one, err)
	}
	for _, bad := range []PlanOptions{
		{DropPP: -1, Instances: 2, Templates: 5, Variants: []string{"base", "noop"}, Alpha: 0.05, Power: 0.8, Between: 0.05, Within: 0.2},
		{DropPP: 0, Instances: 2, Variants: []string{"base", "noop"}, Alpha: 0.05, Power: 0.8, Between: 0.05, Within: 0.2},
		{DropPP: 5, Instances: 0, Variants: []string{"base", "noop"}, Alpha: 0.05, Power: 0.8, Between: 0.05, Within: 0.2},
		{DropPP: 5, Instances: 2, Variants: []string{"base"}, Alpha: 0.05, Power: 0.8, Between: 0.05, Within: 0.2},
		{DropPP: 5, Instances: 2, Variants: []string{"base", "noop"}, Primary: "names", Alpha: 0.05, Power: 0.8, Between: 0.05, Within: 0.2},
		{DropPP: 5, Instances: 2, Variants: []string{"base", "noop"}, Alpha: 0.05, Power: 0.8},
		{DropPP: 5, Instances: 2, Variants: []string{"base", "noop"}, Alpha: 0.05, Power: 1, Between: 0.05, Within: 0.2},
		{DropPP: 5, Instances: 2, Variants: []string{"base", "noop"}, Alpha: 0.05, Power: 0.01, Between: 0.05, Within: 0.2},
		{DropPP: 5, Instances: 2, Variants: []string{"base", "noop"}, Alpha: 0.05, Power: 0.8, Between: 0.05, Within: 0.2, MaxTemplates: 1},
		{DropPP: 5, Instances: 2, Variants: []string{"base", "noop"}, Alpha: 0.05, Power: 0.8, Between: 0.05, Within: 0.2, MaxTemplates: -3},
		{DropPP: 5, Instances: 2, Variants: []string{"base", "noop"}, Alpha: 0.05, Power: 0.8, Between: 0.05, Within: 0.2, MaxTemplates: MaxTemplatesLimit + 1},
	} {
		var oe probe.OptionError
		if _, err := MakePlan(bad); !errors.As(err, &oe) || !strings.Contains(err.Error(), "--") {
			t.Errorf("%+v: %v, want an OptionError naming the flag", bad, err)
		}
	}
}

// pairedTrials are one model's trials on 8 templates × 3 instances in base
// (one fixed prompt per template), symbolic (a prompt per instance) and
// paraphrase (one fixed prompt per template: one pair per template).
func pairedTrials() []results.Trial {
	var ts []results.Trial
	for ti := range 8 {
		tpl := fmt.Sprintf("t%d", ti)
		for inst := range 3 {
			for _, v := range []string{"base", "symbolic", "paraphrase"} {
				q := v + " question of " + tpl
				right := ti%3 != 0
				switch v {
				case "symbolic":
					q = fmt.Sprintf("%s %d", q, inst)
					right = (ti+inst)%4 != 0
				case "paraphrase":
					right = ti%2 == 0
				}
				extracted := "7" // the answer scored right or wrong as recorded
				if !right {
					extracted = "8"
				}
				ts = append(ts, results.Trial{ItemID: fmt.Sprintf("m0/%s/%s/%d", tpl, v, inst), ModelPath: "m.gguf", ModelName: "M",
					TemplateID: tpl, Variant: v, Instance: inst, Question: q, Correct: right, Tokens: 10 + ti, PromptTokens: 30, Rule: "final_answer",
					Expected: "7", Extracted: extracted})
			}
		}
	}
	return ts
}

// TestPooledComponents: the plan's components from a run are the means of
// the observed ones whose σ²_w is identified (a variant with one pair per
// template is left out while another identifies it, used when none does).
func TestPooledComponents(t *testing.T) {
	s, err := summary.Summarize(pairedTrials(), summary.Params{BootstrapResamples: 20})
	if err != nil {
		t.Fatal(err)
	}
	pw := map[string]*summary.Power{}
	for _, v := range s.Models[0].Variants {
		if v.Paired != nil {
			pw[v.Variant] = v.Paired.Power
		}
	}
	sym, para := pw["symbolic"], pw["paraphrase"]
	if sym == nil || para == nil || sym.Source != "observed" || para.Source != "observed" || !sym.WithinIdentified || para.WithinIdentified {
		t.Fatalf("powers: symbolic %+v, paraphrase %+v", sym, para)
	}
	if pc, ok := PooledComponents(s); !ok || pc.Cells != 1 || pc.Between != sym.Between || pc.Within != sym.Within || pc.InformativeShare != 1 {
		t.Errorf("pooled %+v, want symbolic's %v %v, share 1", pc, sym.Between, sym.Within)
	}
	only := &summary.Summary{Models: []summary.ModelSummary{{Variants: []summary.VariantSummary{{Variant: "paraphrase", Paired: &summary.Paired{Power: para}}}}}}
	if pc, ok := PooledComponents(only); !ok || pc.Cells != 1 || pc.Between != para.Between || pc.Within != 0 {
		t.Errorf("paraphrase only: %+v", pc)
	}
	two := &summary.Summary{Models: []summary.ModelSummary{{Variants: []summary.VariantSummary{{Variant: "a", Paired: &summary.Paired{Power: sym}},
		{Variant: "b", Paired: &summary.Paired{Power: &summary.Power{Source: "observed", Between: sym.Between + 0.1, Within: sym.Within + 0.2, WithinIdentified: true,
			Templates: 8, InformativeTemplates: 2}}}}}}}
	// The share is the cells' mean G'/G: (1 + 2/8)/2.
	if pc, ok := PooledComponents(two); !ok || pc.Cells != 2 || !near(pc.Between, sym.Between+0.05) || !near(pc.Within, sym.Within+0.1) || !near(pc.InformativeShare, 0.625) {
		t.Errorf("two cells: %+v", pc)
	}
	if _, ok := PooledComponents(&summary.Summary{}); ok {
		t.Error("an empty summary gave components")
	}
}

// neverSolvedTrials are one model's trials on 20 templates × m instances in
// base (one fixed prompt per template) and symbolic (a prompt per
// instance), where templates 0–11 are wrong on both sides in every pair
// (never solved: not informative) and the others right or wrong by a
// fixed pattern.
func neverSolvedTrials(m int) []results.Trial {
	var ts []results.Trial
	for ti := range 20 {
		tpl := fmt.Sprintf("t%02d", ti)
		for inst := range m {
			for _, v := range []string{"base", "symbolic"} {
				q := v + " question of " + tpl
				right := ti >= 12 && ti%2 == 0
				if v == "symbolic" {
					q = fmt.Sprintf("%s %d", q, inst)
					right = ti >= 12 && (ti+inst)%2 == 1
				}
				extracted := "7"
				if !right {
					extracted = "8"
				}
				ts = append(ts, results.Trial{ItemID: fmt.Sprintf("m0/%s/%s/%d", tpl, v, inst), ModelPath: "m.gguf", ModelName: "M",
					TemplateID: tpl, Variant: v, Instance: inst, Question: q, Correct: right, Tokens: 10, PromptTokens: 30, Rule: "final_answer",
					Expected: "7", Extracted: extracted})
			}
		}
	}
	return ts
}

// TestPlanFromMatchesSummary: a plan made with a run's pooled components
// at the run's size prints the MDE its summary printed, also when most
// templates are never solved (the components are then those of the
// informative templates, and the plan must rest on their share as the
// summary does: without the share, the demo's plan said 33.4 pp where its
// summary said 16.5 and 14.2).
func TestPlanFromMatchesSummary(t *testing.T) {
	for _, m := range []int{1, 3} {
		s, err := summary.Summarize(neverSolvedTrials(m), summary.Params{BootstrapResamples: 20})
		if err != nil {
			t.Fatal(err)
		}
		var pw *summary.Power
		for _, v := range s.Models[0].Variants {
			if v.Variant == "symbolic" && v.Paired != nil {
				pw = v.Paired.Power
			}
		}
		if pw == nil || pw.MDEPP == nil || pw.Templates != 20 || pw.InformativeTemplates != 8 {
			t.Fatalf("m = %d: the summary's power %+v: want an MDE on 8 informative templates of 20", m, pw)
		}
		pc, ok := PooledComponents(s)
		if !ok || !near(pc.InformativeShare, 0.4) {
			t.Fatalf("m = %d: pooled %+v", m, pc)
		}
		o := PlanOptions{Templates: 20, Instances: m, Variants: []string{"base", "symbolic"}, Alpha: 0.05, Power: 0.8,
			Between: pc.Between, Within: pc.Within, InformativeShare: pc.InformativeShare}
		pl, err := MakePlan(o)
		if err != nil {
			t.Fatal(err)
		}
		if !near(*pl.MDEPP, *pw.MDEPP) {
			t.Errorf("m = %d: plan MDE %.4f pp, summary %.4f pp", m, *pl.MDEPP, *pw.MDEPP)
		}
		o.InformativeShare = 0
		if all, _ := MakePlan(o); near(*all.MDEPP, *pw.MDEPP) {
			t.Errorf("m = %d: the plan without the share also matches (%.4f): the check above proves nothing", m, *all.MDEPP)
		}
	}
}

// TestPlanRun: the one entry of `fragility plan`: the power analysis runs
// at the number of templates the source yields (a file that does not load
// is skipped, as run skips it), the sizing counts the same set (one model's
// items, no memory, when no model is at hand), and --from gives both
// halves: the rate and tokens per item, and the pooled variance
// components, unless components were given.
func TestPlanRun(t *testing.T) {
	tdir := probetest.ShardTemplates(t)
	if err := os.WriteFile(filepath.Join(tdir, "zz-broken.yaml"), []byte("id: [unclosed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := rundir.Config{Templates: tdir, Variants: []templates.Variant{templates.VariantBase, templates.VariantSymbolic, templates.VariantNoop},
		Instances: 3, Seed: 3, MaxTokens: 50}
	cfg.Params.NSeq = 4
	power := PlanOptions{DropPP: 10, Alpha: 0.05, Power: 0.8, Between: summary.PlanningBetween, Within: summary.PlanningWithin, ComponentsSource: "planning defaults"}
	o := RunPlanOptions{Sizing: ShardPlanOptions{Shards: 2, NoModel: "none at hand", Memory: true}, Power: power}
	// One broken file of seven is more than MaxLeftOutShare: refused
	// without SkipInvalid, naming the file.
	if _, err := PlanRun(cfg, o); err == nil || !strings.Contains(err.Error(), "zz-broken.yaml") || !strings.Contains(err.Error(), "--skip-invalid") {
		t.Fatalf("a folder with a broken file, without SkipInvalid: %v", err)
	}
	cfg.SkipInvalid = true
	p, err := PlanRun(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	set, err := probe.GenerateSet(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Skipped) == 0 {
		t.Fatal("the broken file was not skipped: the test proves nothing")
	}
	if p.Power.Templates != 6 || p.Power.Instances != 3 || p.Power.Tests != 2 || p.Sizing.Items != len(set.Instances) ||
		len(p.Sizing.Models) != 0 || p.Sizing.ModelNote != "none at hand" || len(p.Sizing.Shards) != 2 || p.Sizing.Shards[0].MemoryBytes != 0 {
		t.Errorf("plan: power %+v, sizing %+v", p.Power, p.Sizing)
	}
	want, _ := MakePlan(PlanOptions{DropPP: 10, Templates: 6, Instances: 3, Variants: []string{"base", "symbolic", "noop"}, Alpha: 0.05, Power: 0.8,
		Between: summary.PlanningBetween, Within: summary.PlanningWithin, ComponentsSource: "planning defaults"})
	if *p.Power.MDEPP != *want.MDEPP || *p.Power.NeededTemplates != *want.NeededTemplates {
		t.Errorf("power %+v, want MakePlan's %+v", p.Power, want)
	}

	// A pilot run directory: manifest and results.csv.
	dir := t.TempDir()
	man := rundir.Manifest{Config: rundir.Config{Models: []string{"m.gguf"}, Variants: []templates.Variant{"base", "symbolic", "paraphrase"}, Instances: 3, Seed: 3, BootstrapB: 50},
		GenerationSeconds: 12}
	data, _ := json.Marshal(man)
	os.WriteFile(filepath.Join(dir, rundir.FileManifest), data, 0o644)
	f, err := os.Create(filepath.Join(dir, rundir.FileResults))
	if err != nil {
		t.Fatal(err)
	}
	ts := pairedTrials()
	if err := results.WriteCSV(f, ts); err != nil {
		t.Fatal(err)
	}
	f.Close()
	o.From = dir
	p, err = PlanRun(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	rate, tok, _, _ := RunThroughput(dir, 0)
	sum, _ := probe.Recompute(dir)
	pc, _ := PooledComponents(sum)
	b, w := pc.Between, pc.Within
	if p.Sizing.Rate == nil || p.Sizing.Rate.TokensPerSecond != rate.TokensPerSecond || p.Sizing.TokensPerItem != tok ||
		p.Power.Between != b || p.Power.Within != w || !strings.Contains(p.Power.ComponentsSource, dir) {
		t.Errorf("--from: sizing %+v, power %+v; want rate %v, %v tokens per item, components %v %v", p.Sizing, p.Power, rate, tok, b, w)
	}
	if p.Power.WithinNotIdentified {
		t.Error("a pilot with 3 instances per template has σ²_w identified")
	}
	// A pilot with one instance per template: σ²_w is not identified, and
	// the plan says so instead of printing σ²_w = 0 as an estimate.
	one := t.TempDir()
	os.WriteFile(filepath.Join(one, rundir.FileManifest), data, 0o644)
	var ts1 []results.Trial
	for _, x := range ts {
		if x.Instance == 0 {
			ts1 = append(ts1, x)
		}
	}
	f1, err := os.Create(filepath.Join(one, rundir.FileResults))
	if err != nil {
		t.Fatal(err)
	}
	if err := results.WriteCSV(f1, ts1); err != nil {
		t.Fatal(err)
	}
	f1.Close()
	o1 := o
	o1.From = one
	p1, err := PlanRun(cfg, o1)
	if err != nil {
		t.Fatal(err)
	}
	sum1, _ := probe.Recompute(one)
	pc1, ok1 := PooledComponents(sum1)
	b1, w1 := pc1.Between, pc1.Within
	if !ok1 || w1 != 0 || !p1.Power.WithinNotIdentified || !near(p1.Power.Within, b1*summary.PlanningWithin/(summary.PlanningBetween+summary.PlanningWithin)) ||
		!near(p1.Power.Between+p1.Power.Within, b1) || !strings.Contains(p1.Power.ComponentsSource, "NOT identified") {
		t.Errorf("one instance per template: power %+v; pooled total %v", p1.Power, b1+w1)
	}
	o.ComponentsGiven, o.Power.Between, o.Power.Within, o.Power.ComponentsSource = true, 0.1, 0.1, "given"
	if p, err := PlanRun(cfg, o); err != nil || p.Power.Between != 0.1 || p.Power.ComponentsSource != "given" || p.Sizing.Rate == nil {
		t.Errorf("--from with given components: %+v, %v", p, err)
	}
	var oe probe.OptionError
	o.Sizing.Shards = 1000
	if _, err := PlanRun(cfg, o); !errors.As(err, &oe) || !strings.Contains(err.Error(), "at most") {
		t.Errorf("more shards than batches: %v", err)
	}
	cfg.Primary = "names"
	if _, err := PlanRun(cfg, o); !errors.As(err, &oe) {
		t.Errorf("a primary variant not in the run: %v", err)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestPilotDiffers: the notes on a pilot of another design speak only of
// what the plan took from it: with no variance components taken (a pilot
// of base alone) neither its variants nor its reference design are
// mentioned, and a model's note leaves the components out.
func TestPilotDiffers(t *testing.T) {
	pilot := rundir.Config{Models: []string{"/m/a.gguf"}, Variants: []templates.Variant{"base"}, Reference: templates.ReferenceDrawn}
	plan := rundir.Config{Models: []string{"/x/b.gguf"}, Variants: []templates.Variant{"base", "noop-seeming"}, Reference: templates.ReferenceDrawn}
	notes := pilotDiffers("p", &rundir.Manifest{Config: pilot}, plan, false)
	if len(notes) != 1 || !strings.Contains(notes[0], "ran a.gguf, the plan b.gguf: its rate and tokens per item are those of the pilot's models") {
		t.Errorf("no components taken: %q", notes)
	}
	pilot.Variants = []templates.Variant{"base", "names"}
	notes = pilotDiffers("p", &rundir.Manifest{Config: pilot}, plan, true)
	if len(notes) != 3 || !strings.Contains(notes[0], "variance components") || !strings.Contains(notes[1], "ran the variants base,names, the plan base,noop-seeming") ||
		!strings.Contains(notes[2], "compared its variants with the fixed base prompt only, the plan with drawn references") {
		t.Errorf("components taken: %q", notes)
	}
	if notes := pilotDiffers("p", &rundir.Manifest{Config: plan}, plan, true); len(notes) != 0 {
		t.Errorf("the same design: %q", notes)
	}
}

// TestPilotModelsBySHA256: the pilot's models are compared with the
// plan's by sha256, not by file name: a pilot run on an Ollama blob
// ("sha256-…") and a plan given the same file under its own name get no
// note (a new user was told "the pilot ran sha256-…, the plan gemma-…gguf"
// for one file); a file of the same size and other bytes is another model.
func TestPilotModelsBySHA256(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	blob := write("sha256-6e0b3d1c", "GGUF model bytes")
	same := write("gemma-3-270m-q4_k_m.gguf", "GGUF model bytes")
	other := write("other.gguf", "GGUF other bytes")
	sum, err := models.SHA256File(blob)
	if err != nil {
		t.Fatal(err)
	}
	cfg := rundir.Config{Models: []string{blob}, Variants: []templates.Variant{"base", "symbolic"}}
	man := &rundir.Manifest{Config: cfg, Models: []rundir.ModelEntry{{Path: blob, SHA256: sum, Size: 16}}}
	plan := cfg
	plan.Models = []string{same}
	if notes := pilotDiffers("p", man, plan, true); len(notes) != 0 {
		t.Errorf("the same file under another name: %q", notes)
	}
	plan.Models = []string{other}
	if notes := pilotDiffers("p", man, plan, true); len(notes) != 1 || !strings.Contains(notes[0], "ran sha256-6e0b3d1c, the plan other.gguf") {
		t.Errorf("another file of the same size: %q", notes)
	}
	plan.Models = []string{same, other}
	if notes := pilotDiffers("p", man, plan, false); len(notes) != 1 {
		t.Errorf("one model more: %q", notes)
	}
}

// TestPilotState: a pilot that did not finish, or ran at another budget,
// is noted (a new user planned from an interrupted demo at the default
// budget without a word about either).
func TestPilotState(t *testing.T) {
	man := &rundir.Manifest{Status: "interrupted", Config: rundir.Config{MaxTokens: 192}}
	notes := pilotState("runs/demo", man, rundir.Config{MaxTokens: 256}, 48)
	if len(notes) != 2 || !strings.Contains(notes[0], `the pilot runs/demo is not complete (status "interrupted", 48 trials in its results.csv)`) ||
		!strings.Contains(notes[1], "ran at --max-tokens 192, the plan is at 256 (give --max-tokens 192") {
		t.Errorf("notes: %q", notes)
	}
	man.Status = "complete"
	if notes := pilotState("runs/demo", man, rundir.Config{MaxTokens: 192}, 204); len(notes) != 0 {
		t.Errorf("a complete pilot at the plan's budget: %q", notes)
	}
}
