package plan

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/models"
	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/bench"
	"github.com/fragility/fragility/probe/internal/probetest"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/probe/summary"
	"github.com/fragility/fragility/templates"
)

// TestPlanRunCalibrates: with a model and no rate, the plan measures one
// by generating its first items (a calibration at its batch), and takes
// the tokens per item from the same answers, said to be an estimate,
// instead of the budget's upper bound; it has a time. The second plan of
// the same set counts it from the cache and still calibrates on the
// items' full texts.
func TestPlanRunCalibrates(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a model")
	}
	model := probetest.TinyModels(t, 1)[0]
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the plan's cache (after the tiny model, which reads the models' cache)
	cfg := rundir.Config{Models: []string{model}, Templates: probetest.ShardTemplates(t), Variants: []templates.Variant{"base", "symbolic"},
		Instances: 2, Seed: 3, MaxTokens: 24, Params: llm.Params{NSeq: 2, NCtx: 512}}
	var calls int
	o := RunPlanOptions{Sizing: ShardPlanOptions{Shards: 1},
		Power: PlanOptions{Alpha: 0.05, Power: 0.8, Between: summary.PlanningBetween, Within: summary.PlanningWithin},
		Calibrate: func(cfg rundir.Config, mi int, items []probe.PlannedItem) (*bench.Calibration, error) {
			calls++
			return bench.Calibrate(context.Background(), bench.CalibrateConfig{Run: cfg, Model: cfg.Models[mi], Params: llm.Params{Threads: 1, NSeq: cfg.Params.NSeq}, Items: items})
		},
		CalibrateItems: 3}
	for round := range 2 {
		p, err := PlanRun(cfg, o)
		if err != nil {
			t.Fatal(err)
		}
		s := p.Sizing
		if calls != round+1 || len(p.Calibration) != 1 || (round == 1) != (p.CountedFrom != "") {
			t.Fatalf("round %d: %d calibrations, %d calls, counted from %q", round, len(p.Calibration), calls, p.CountedFrom)
		}
		c := p.Calibration[0]
		if c.Items != 4 || c.Batch != 2 || c.Finished != 4 || c.Tokens < 4 || !(c.TokensPerSecond > 0) {
			t.Errorf("calibration %+v: want 4 items (two batches of 2) that finished", c)
		}
		if s.Rate == nil || s.Rate.TokensPerSecond != c.TokensPerSecond || !strings.Contains(s.Rate.Source, "measured here by a calibration") ||
			!strings.Contains(s.Rate.Source, "at --batch 2, 1 thread") {
			t.Errorf("rate %+v, want the calibration's %v", s.Rate, c.TokensPerSecond)
		}
		if s.TokensPerItem != c.TokensPerItem || s.TokensPerItem > 24 || !strings.Contains(s.TokensPerItemSource, "ESTIMATE from the calibration: the mean of 4 answers") ||
			s.PromptTokensSource != "the calibration's" || !(s.Seconds > 0) || s.Seconds != s.GenTokens/s.Rate.TokensPerSecond {
			t.Errorf("tokens per item %v (%s), %v s; want the calibration's %v", s.TokensPerItem, s.TokensPerItemSource, s.Seconds, c.TokensPerItem)
		}
	}
	// A rate given keeps its source; the calibration gives the tokens.
	o.Sizing.Rate = Throughput{TokensPerSecond: 7, Source: "--tokens-per-second"}
	if p, err := PlanRun(cfg, o); err != nil || p.Sizing.Rate.Source != "--tokens-per-second" || !strings.Contains(p.Sizing.TokensPerItemSource, "ESTIMATE") {
		t.Errorf("a given rate: %+v, %v", p.Sizing, err)
	}
	// A calibration that fails is a note, and the plan stands.
	o.Sizing.Rate = Throughput{}
	o.Calibrate = func(rundir.Config, int, []probe.PlannedItem) (*bench.Calibration, error) {
		return nil, context.DeadlineExceeded
	}
	if p, err := PlanRun(cfg, o); err != nil || p.Sizing.Rate != nil || len(p.RateNotes) != 1 || !strings.Contains(p.RateNotes[0], "the calibration failed") {
		t.Errorf("a failed calibration: %+v, notes %q, %v", p.Sizing.Rate, p.RateNotes, err)
	}
}

// TestLastBenchRate: the last fragility bench recorded on this machine
// gives the plan its rate when it ran the plan's model (by sha256) at the
// plan's batch and threads, saying so; at another batch the rate is (b)
// alone and the time an upper bound; another model, other threads or
// another machine give no rate, with the reason.
func TestLastBenchRate(t *testing.T) {
	model := probetest.TinyModels(t, 1)[0]
	sum, err := models.SHA256File(model)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), bench.LastFile)
	res := &bench.BenchResult{Model: model, Batch: 4, OursTG: bench.Rate{Mean: 10}, SingleIPS: 1, BatchedIPS: 2.5}
	load := llm.Params{Threads: 1, ThreadsBatch: 2}
	if err := bench.RecordLast(path, res, sum, load); err != nil {
		t.Fatal(err)
	}
	last, err := bench.ReadLast(path)
	if err != nil {
		t.Fatal(err)
	}
	r, same, why := LastBenchThroughput(path, last, model, 4, load)
	if why != "" || !same || r.TokensPerSecond != 25 || !strings.Contains(r.Source, "the last fragility bench on this machine") || !strings.Contains(r.Source, path) {
		t.Errorf("the same model, batch and threads: %+v, %v, %q", r, same, why)
	}
	if r, same, why := LastBenchThroughput(path, last, model, 8, load); why != "" || same || r.TokensPerSecond != 10 || !strings.Contains(r.Source, "upper bounds") {
		t.Errorf("another batch: %+v, %v, %q", r, same, why)
	}
	other := probetest.TinyModels(t, 2)[1]
	for what, c := range map[string]struct {
		model string
		load  llm.Params
		want  string
	}{
		"another model":     {other, load, "it ran another model"},
		"other threads":     {model, llm.Params{Threads: 3, ThreadsBatch: 2}, "it ran at --threads 1 --threads-batch 2, the plan at 3 and 2"},
		"a GPU on one side": {model, llm.Params{Threads: 1, ThreadsBatch: 2, GPULayers: -1}, "--gpu-layers"},
	} {
		if _, _, why := LastBenchThroughput(path, last, c.model, 4, c.load); !strings.Contains(why, c.want) {
			t.Errorf("%s: %q, want %q", what, why, c.want)
		}
	}
	moved := *last
	moved.Machine = "plan9/mips, a CPU of another time, 1 CPUs"
	if _, _, why := LastBenchThroughput(path, &moved, model, 4, load); !strings.Contains(why, "it ran on plan9/mips") {
		t.Errorf("another machine: %q", why)
	}
	// PlanRun takes it where no rate is given, before any calibration.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	cfg := rundir.Config{Models: []string{model}, Templates: probetest.TinyTemplates(t), Variants: []templates.Variant{"base", "symbolic"},
		Instances: 1, Seed: 3, MaxTokens: 24, Params: llm.Params{NSeq: 4, NCtx: 512}}
	o := RunPlanOptions{Sizing: ShardPlanOptions{Shards: 1}, Power: PlanOptions{Alpha: 0.05, Power: 0.8, Between: summary.PlanningBetween, Within: summary.PlanningWithin},
		LastBench: last, LastBenchPath: path, Load: load, FallbackRate: Throughput{TokensPerSecond: 1, Source: "recorded"}}
	p, err := PlanRun(cfg, o)
	if err != nil || p.Sizing.Rate == nil || p.Sizing.Rate.TokensPerSecond != 25 || p.Sizing.Seconds == 0 {
		t.Errorf("plan with the last bench: %+v, %v", p.Sizing.Rate, err)
	}
	o.Load.Threads = 3 // it does not apply: the fallback, with a note why
	if p, err := PlanRun(cfg, o); err != nil || p.Sizing.Rate.Source != "recorded" || len(p.RateNotes) != 0 {
		t.Errorf("a last bench at other threads, a fallback rate: %+v, %q, %v", p.Sizing.Rate, p.RateNotes, err)
	}
	o.FallbackRate = Throughput{}
	if p, err := PlanRun(cfg, o); err != nil || p.Sizing.Rate != nil || len(p.RateNotes) != 1 || !strings.Contains(p.RateNotes[0], "gives no rate for this plan: it ran at --threads 1") {
		t.Errorf("a last bench at other threads, no rate: %+v, %q, %v", p.Sizing.Rate, p.RateNotes, err)
	}
}
