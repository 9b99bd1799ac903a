package bench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/internal/probetest"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

// calibrationItems are the first items of a small plan on model, in run
// order.
func calibrationItems(t *testing.T, model string, nseq int) (rundir.Config, []probe.PlannedItem) {
	t.Helper()
	cfg := rundir.Config{Models: []string{model}, Templates: probetest.TinyTemplates(t), Variants: []templates.Variant{"base", "symbolic", "placebo"},
		Reference: templates.ReferenceDrawn, Instances: 2, Seed: 4, MaxTokens: 20, Params: llm.Params{NSeq: nseq, NCtx: 512}}
	set, err := probe.GenerateSet(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var items []probe.PlannedItem
	for _, b := range probe.PlanBatches(cfg, set)[:2] {
		items = append(items, b.Items...)
	}
	return cfg, items
}

// TestCalibrateTinyModel: a calibration generates the items it is given
// in batches of the plan's --batch, at the plan's budget, and reports the
// rate (tokens over generation seconds) and the mean tokens per item; a
// time limit that passes before any prompt is read is an error that says
// so.
func TestCalibrateTinyModel(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a model")
	}
	model := probetest.TinyModels(t, 1)[0]
	cfg, items := calibrationItems(t, model, 3)
	c, err := Calibrate(context.Background(), CalibrateConfig{Run: cfg, Model: model, Params: llm.Params{Threads: 1, NSeq: 3}, Items: items})
	if err != nil {
		t.Fatal(err)
	}
	if c.Items != len(items) || c.Items != 6 || c.Finished != c.Items || c.Batch != 3 || c.Threads != 1 || c.Limited || c.Skipped != 0 {
		t.Errorf("calibration %+v: want the 6 items, all finished, at --batch 3 and 1 thread", c)
	}
	if !(c.Tokens >= c.Items && c.Tokens <= 20*c.Items) || c.TokensPerItem != float64(c.Tokens)/6 || c.TokensPerItemLow != c.TokensPerItem ||
		c.TokensPerSecond != float64(c.Tokens)/c.Seconds || !(c.PromptTokensPerItem > 0) || c.Cut > c.Items || c.PrefixTokens == 0 || !(c.PrefixSeconds > 0) {
		t.Errorf("calibration %+v: the tokens and rate do not add up", c)
	}
	_, err = Calibrate(context.Background(), CalibrateConfig{Run: cfg, Model: model, Params: llm.Params{Threads: 1, NSeq: 3}, Items: items, Limit: time.Nanosecond})
	if err == nil || !strings.Contains(err.Error(), "the time limit (1ns) passed before the first batch's prompts were read") {
		t.Errorf("a limit of 1 ns: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Calibrate(ctx, CalibrateConfig{Run: cfg, Model: model, Params: llm.Params{Threads: 1, NSeq: 3}, Items: items}); !errors.Is(err, llm.ErrAborted) {
		t.Errorf("an interrupted calibration: %v, want llm.ErrAborted", err)
	}
}

// TestRecordLast: the record of the last bench is read back as written,
// with this machine's name and the parameters' defaults filled in; a file
// of another kind is refused, naming it.
func TestRecordLast(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", LastFile)
	r := &BenchResult{Model: "m.gguf", Batch: 8, OursTG: Rate{Mean: 12.5}}
	if err := RecordLast(path, r, "abc", llm.Params{Threads: 1}); err != nil {
		t.Fatal(err)
	}
	l, err := ReadLast(path)
	if err != nil {
		t.Fatal(err)
	}
	if l.Format != LastFormat || l.Machine != Machine() || l.ModelSHA256 != "abc" || l.Threads != 1 || l.ThreadsB != llm.DefaultThreadsBatch() ||
		l.Result.Batch != 8 || l.Result.OursTG.Mean != 12.5 || l.Time == "" {
		t.Errorf("read back %+v", l)
	}
	if !strings.Contains(Machine(), " CPUs") {
		t.Errorf("machine %q", Machine())
	}
	os.WriteFile(path, []byte(`{"format": "other"}`), 0o644)
	if _, err := ReadLast(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("another format: %v", err)
	}
	t.Setenv("XDG_CACHE_HOME", "/x")
	if p, _ := LastPath(); p != "/x/fragility/"+LastFile {
		t.Errorf("LastPath %q", p)
	}
}
