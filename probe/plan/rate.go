package plan

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/models"
	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/bench"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

// Calibrator generates items, the first of the planned run cfg's items
// for its model cfg.Models[mi] in run order, and measures them
// (bench.Calibrate). The command wires it: package plan runs no model.
type Calibrator func(cfg rundir.Config, mi int, items []probe.PlannedItem) (*bench.Calibration, error)

// planRate gives the sizing o.Sizing a generation rate and tokens per
// item where neither the options nor a pilot (RunPlanOptions.From, read
// before) gave one, in this order: the last bench on this machine when it
// ran the plan's one model at the plan's batch and threads (o.LastBench);
// a calibration of each model on the plan's first items of set (o.
// Calibrate; also the tokens per item); the last bench at another batch,
// a time that is then an upper bound; o.FallbackRate. counted says the
// set came from the plan's cache (countedSet: its items have no text). It
// returns the
// calibrations and notes for the reader (a calibration that failed, a
// last bench that does not apply when no rate is found). Only an
// interruption of the calibration (llm.ErrAborted) is an error.
func planRate(cfg rundir.Config, set *templates.Set, counted bool, o *RunPlanOptions) ([]*bench.Calibration, []string, error) {
	s := &o.Sizing
	var notes []string
	var later Throughput // the last bench at another batch
	lastWhy := ""
	if s.Rate.TokensPerSecond <= 0 && o.LastBench != nil && len(cfg.Models) == 1 {
		r, sameBatch, why := LastBenchThroughput(o.LastBenchPath, o.LastBench, cfg.Models[0], max(cfg.Params.NSeq, 1), o.Load)
		switch {
		case why != "":
			lastWhy = why
		case sameBatch:
			s.Rate = r
		default:
			later = r
		}
	}
	var cals []*bench.Calibration
	if o.Calibrate != nil && len(cfg.Models) > 0 && (s.Rate.TokensPerSecond <= 0 || s.TokensPerItem <= 0) {
		var err error
		cals, err = calibrateModels(cfg, set, counted, o)
		if errors.Is(err, llm.ErrAborted) {
			return nil, nil, err
		}
		if err != nil {
			cals = nil
			notes = append(notes, fmt.Sprintf("the calibration failed (%v): the rate and tokens per item are as without it", err))
		} else {
			applyCalibration(s, cals, cfg.MaxTokens)
		}
	}
	if s.Rate.TokensPerSecond <= 0 && later.TokensPerSecond > 0 {
		s.Rate = later
	}
	if s.Rate.TokensPerSecond <= 0 && o.FallbackRate.TokensPerSecond > 0 {
		s.Rate = o.FallbackRate
	}
	if s.Rate.TokensPerSecond <= 0 && lastWhy != "" {
		notes = append(notes, fmt.Sprintf("the last fragility bench on this machine (%s) gives no rate for this plan: %s", o.LastBenchPath, lastWhy))
	}
	return cals, notes, nil
}

// calibrateModels calls o.Calibrate for each model of cfg on its first
// items in run order: whole batches of the plan (probe.PlanBatches), as
// many as hold o.CalibrateItems items (bench.DefaultCalibrationItems when
// 0), drawn in full when the set was counted (fullItems).
func calibrateModels(cfg rundir.Config, set *templates.Set, counted bool, o *RunPlanOptions) ([]*bench.Calibration, error) {
	n := o.CalibrateItems
	if n <= 0 {
		n = bench.DefaultCalibrationItems
	}
	cfg.Params.NSeq = max(cfg.Params.NSeq, 1)
	batches := probe.PlanBatches(cfg, set)
	var cals []*bench.Calibration
	for mi := range cfg.Models {
		var items []probe.PlannedItem
		for _, b := range batches {
			if b.Model == mi && len(items) < n {
				items = append(items, b.Items...)
			}
		}
		if len(items) == 0 {
			return nil, errors.New("the plan has no item to calibrate on")
		}
		if counted {
			var err error
			if items, err = fullItems(cfg, items); err != nil {
				return nil, err
			}
		}
		cal, err := o.Calibrate(cfg, mi, items)
		if err != nil {
			return nil, err
		}
		cals = append(cals, cal)
	}
	return cals, nil
}

// applyCalibration gives the sizing s what the calibrations cals measured
// where it has nothing yet: the rate, the models' rates combined by the
// time each one's items take (Σ tokens per item ÷ Σ tokens per item ÷
// rate: every model runs the same items), and the mean tokens and prompt
// tokens per item over the models, each said to be an estimate from the
// calibration. budget is the plan's --max-tokens.
func applyCalibration(s *ShardPlanOptions, cals []*bench.Calibration, budget int) {
	var tok, low, prompt, secs float64
	var parts []string
	limited, cut, items := 0, 0, 0
	for _, c := range cals {
		tok += c.TokensPerItem
		low += c.TokensPerItemLow
		prompt += c.PromptTokensPerItem
		secs += c.TokensPerItem / c.TokensPerSecond
		limited += c.Items - c.Finished
		cut += c.Cut
		items += c.Items
		part := fmt.Sprintf("%s at --batch %d, %d thread%s: %d tokens of %s in %.1f s of generation, each problem's prompt included",
			filepath.Base(c.Model), c.Batch, c.Threads, plural(c.Threads), c.Tokens, countOf(c.Items, "item"), c.Seconds)
		if c.PrefixTokens > 0 {
			part += fmt.Sprintf(" (the %d tokens of instruction and examples all prompts share read once before, in %.1f s, as a run reads them once)", c.PrefixTokens, c.PrefixSeconds)
		}
		parts = append(parts, part)
	}
	n := float64(len(cals))
	if s.Rate.TokensPerSecond <= 0 {
		src := "measured here by a calibration on the plan's first items: " + strings.Join(parts, "; ")
		if len(cals) > 1 {
			src += " (the models' rates combined by the time each one's items take)"
		}
		if limited > 0 {
			src += "; the time limit stopped a batch before its answers ended, so this rate rests on part of one (give --calibrate-seconds more for whole batches)"
		}
		s.Rate = Throughput{TokensPerSecond: tok / secs, Source: src}
	}
	if s.TokensPerItem > 0 {
		return
	}
	s.TokensPerItem, s.PromptTokensPerItem, s.PromptTokensSource = tok/n, prompt/n, "the calibration's"
	src := fmt.Sprintf("an ESTIMATE from the calibration: the mean of %s of the plan's first %s generated (%d cut by --max-tokens %d); the run's mean differs as its other items do",
		countOf(items, "answer"), modelsWord(len(cals)), cut, budget)
	if limited > 0 {
		src += fmt.Sprintf("; %d still generating at the calibration's time limit count at --max-tokens %d, so this is at most the mean (at least %.1f): give --calibrate-seconds more time for a closer one", limited, budget, low/n)
	}
	s.TokensPerItemSource = src
}

// modelsWord names the models of a calibration: "items the model" or
// "items each of the N models".
func modelsWord(n int) string {
	if n == 1 {
		return "items the model"
	}
	return fmt.Sprintf("items each of the %d models", n)
}

// countOf writes n and a noun, plural when n is not 1.
func countOf(n int, noun string) string {
	return fmt.Sprintf("%d %s%s", n, noun, plural(n))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// benchRate is the rate a bench result b gives a run that decodes batch
// items together, where names the bench: (b), the harness's
// single-sequence generation rate, scaled by the measured batching
// speed-up (c) batched items/s ÷ one-at-a-time items/s when the bench
// batched as many items as the run will (sameBatch); else (b) alone, which
// understates a batched run's rate (the time is then an upper bound, and
// the source says so).
func benchRate(b *bench.BenchResult, batch int, where string) (t Throughput, sameBatch bool) {
	t = Throughput{TokensPerSecond: b.OursTG.Mean, Source: fmt.Sprintf("%s: (b) %.1f tokens/s, one sequence", where, b.OursTG.Mean)}
	if b.Batch == batch && b.SingleIPS > 0 && b.BatchedIPS > 0 {
		t.TokensPerSecond *= b.BatchedIPS / b.SingleIPS
		t.Source = fmt.Sprintf("%s: (b) %.1f tokens/s × the speed-up of %d items per batch (c) %.2f", where, b.OursTG.Mean, b.Batch, b.BatchedIPS/b.SingleIPS)
		return t, true
	}
	if batch > 1 {
		t.Source += fmt.Sprintf(" (the bench batched %d items, the plan %d: no batching speed-up applied, so times are upper bounds)", b.Batch, batch)
	}
	return t, batch <= 1
}

// LastBenchThroughput is the rate the last bench on this machine (last,
// read from path) gives a plan of the model file model at batch items per
// batch, loaded with p (threads, threads of a batch and GPU layers as the
// run will load it; defaults filled in): benchRate of its result, and
// whether it batched as many items (else the time is an upper bound). why
// says, when it does not apply, what differs: another machine
// (bench.Machine), another model (by sha256), other threads, or a GPU on
// one side only.
func LastBenchThroughput(path string, last *bench.Last, model string, batch int, p llm.Params) (t Throughput, sameBatch bool, why string) {
	p = p.Defaults()
	switch {
	case last.Machine != bench.Machine():
		return Throughput{}, false, fmt.Sprintf("it ran on %s, this is %s", last.Machine, bench.Machine())
	case last.Result.OursTG.Mean <= 0:
		return Throughput{}, false, "it has no generation rate"
	case last.Threads != p.Threads || last.ThreadsB != p.ThreadsBatch:
		return Throughput{}, false, fmt.Sprintf("it ran at --threads %d --threads-batch %d, the plan at %d and %d", last.Threads, last.ThreadsB, p.Threads, p.ThreadsBatch)
	case (last.GPULayers != 0) != (p.GPULayers != 0):
		return Throughput{}, false, fmt.Sprintf("it ran with --gpu-layers %d, the plan with %d", last.GPULayers, p.GPULayers)
	}
	sum, err := models.SHA256FileOnce(model)
	if err != nil {
		return Throughput{}, false, err.Error()
	}
	if sum != last.ModelSHA256 {
		return Throughput{}, false, fmt.Sprintf("it ran another model (sha256 %.12s…, %s is %.12s…)", last.ModelSHA256, filepath.Base(model), sum)
	}
	t, sameBatch = benchRate(last.Result, batch, fmt.Sprintf("the last fragility bench on this machine (%s, %s)", last.Time, path))
	return t, sameBatch, ""
}
