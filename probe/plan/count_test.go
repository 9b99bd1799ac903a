package plan

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/internal/probetest"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/summary"
	"github.com/fragility/fragility/templates"
)

// countConfigs are smaller sets of the kinds a plan counts: the built-in
// templates with noop-seeming drawn on the symbolic instance (whose clause
// may not fit a draw: a variant instance left out), a folder with a
// template that does not load (left out), and, when the development copy
// is at hand, the GSM-Symbolic templates as the paper preset draws them.
func countConfigs(t *testing.T) map[string]rundir.Config {
	t.Helper()
	broken := probetest.ShardTemplates(t)
	if err := os.WriteFile(filepath.Join(broken, "zz-broken.yaml"), []byte("id: [unclosed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := map[string]rundir.Config{
		"builtin drawn": {Templates: "builtin", Variants: []templates.Variant{"base", "symbolic", "noop-seeming"}, Reference: templates.ReferenceDrawn, Instances: 3, Seed: 5, MaxTokens: 64},
		"folder with a broken file": {Templates: broken, Variants: []templates.Variant{"base", "names", "noop"}, Reference: templates.ReferenceOriginal, Instances: 2, Seed: 2,
			MaxTokens: 64, SkipInvalid: true},
	}
	if gsm := filepath.Join("..", "..", "..", "shared", "gsm_symbolic"); dirExists(gsm) {
		cs["GSM-Symbolic, paper preset"] = rundir.Config{Templates: gsm, Variants: []templates.Variant{"base", "symbolic", "noop-seeming"}, Reference: templates.ReferenceDrawn,
			Instances: 3, Seed: 1, MaxTokens: 256, Prompt: probe.PromptGSMSymbolic}
	}
	return cs
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// TestCountMatchesDraw: the plan's set, drawn in parallel (generateSet),
// is probe.GenerateSet's byte for byte; counted again from the plan's
// cache (countedSet: the same templates and options drawn before) it
// gives the same counts (instances and their identities, draws refused,
// variant instances left out, templates left out, notices) and the same
// batches, and so the same sizing; a template file changed since is drawn
// again.
func TestCountMatchesDraw(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	for name, cfg := range countConfigs(t) {
		t.Run(name, func(t *testing.T) {
			full, err := probe.GenerateSet(cfg)
			if err != nil {
				t.Fatal(err)
			}
			par, err := generateSet(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var a, b bytes.Buffer
			if err := full.WriteJSONL(&a); err != nil {
				t.Fatal(err)
			}
			if err := par.WriteJSONL(&b); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) || !reflect.DeepEqual(full.Skipped, par.Skipped) {
				t.Fatalf("the parallel draw differs from GenerateSet's (%d and %d bytes; skipped %v and %v)", a.Len(), b.Len(), full.Skipped, par.Skipped)
			}
			first, from, err := countedSet(cfg)
			if err != nil || from != "" || len(first.Instances[0].Question) == 0 {
				t.Fatalf("first count: from %q, err %v", from, err)
			}
			counted, from, err := countedSet(cfg)
			if err != nil || from == "" {
				t.Fatalf("second count: not read from the cache (from %q, err %v)", from, err)
			}
			r0, l0 := full.ExclusionCounts()
			r1, l1 := counted.ExclusionCounts()
			if len(counted.Instances) != len(full.Instances) || r1 != r0 || l1 != l0 || len(counted.Excluded) != len(full.Excluded) ||
				!reflect.DeepEqual(counted.Skipped, full.Skipped) || !reflect.DeepEqual(counted.Templates, full.Templates) ||
				!reflect.DeepEqual(counted.Notices(), full.Notices()) || !reflect.DeepEqual(counted.Options, full.Options) {
				t.Errorf("counted %d instances, %d refused, %d left out, %d skipped; drawn %d, %d, %d, %d", len(counted.Instances), r1, l1, len(counted.Skipped),
					len(full.Instances), r0, l0, len(full.Skipped))
			}
			if r0+l0 == 0 && name != "folder with a broken file" {
				t.Error("no draw refused: the counts of exclusions are not tested")
			}
			for i := range full.Instances {
				f, c := &full.Instances[i], &counted.Instances[i]
				if f.ID != c.ID || f.TemplateID != c.TemplateID || f.Variant != c.Variant || f.Index != c.Index {
					t.Fatalf("instance %d: counted %s, drawn %s", i, c.ID, f.ID)
				}
			}
			cfg.Models, cfg.Params.NSeq = []string{"a", "b"}, 4
			fb, cb := probe.PlanBatches(cfg, full), probe.PlanBatches(cfg, counted)
			if len(fb) != len(cb) {
				t.Fatalf("%d batches counted, %d drawn", len(cb), len(fb))
			}
			for i := range fb {
				for j := range fb[i].Items {
					if fb[i].Items[j].ID != cb[i].Items[j].ID {
						t.Fatalf("batch %d item %d: %s counted, %s drawn", i, j, cb[i].Items[j].ID, fb[i].Items[j].ID)
					}
				}
			}
		})
	}
}

// TestPlanRunCountsOnce: a second plan of the same set reads its counts
// from the plan's cache (RunPlan.CountedFrom) and sizes the run as the
// first did; a template changed since is drawn again.
func TestPlanRunCountsOnce(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	tdir := probetest.ShardTemplates(t)
	cfg := rundir.Config{Templates: tdir, Variants: []templates.Variant{"base", "symbolic", "noop-seeming"}, Reference: templates.ReferenceDrawn, Instances: 4, Seed: 3, MaxTokens: 50}
	cfg.Params.NSeq = 4
	o := RunPlanOptions{Sizing: ShardPlanOptions{Shards: 2, NoModel: "none at hand"},
		Power: PlanOptions{Alpha: 0.05, Power: 0.8, Between: summary.PlanningBetween, Within: summary.PlanningWithin}}
	p1, err := PlanRun(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := PlanRun(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	if p1.CountedFrom != "" || p2.CountedFrom == "" {
		t.Errorf("counted from %q, then %q: want the draw, then the cache", p1.CountedFrom, p2.CountedFrom)
	}
	if !reflect.DeepEqual(p1.Sizing, p2.Sizing) || !reflect.DeepEqual(p1.Power, p2.Power) {
		t.Errorf("sizing %+v\nfrom the cache %+v", p1.Sizing, p2.Sizing)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(filepath.Join(tdir, "baker.yaml"), later, later); err != nil {
		t.Fatal(err)
	}
	if p3, err := PlanRun(cfg, o); err != nil || p3.CountedFrom != "" {
		t.Errorf("a template changed since: counted from %q (%v), want a new draw", p3.CountedFrom, err)
	}
}
