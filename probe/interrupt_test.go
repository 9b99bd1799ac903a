package probe

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe/internal/probetest"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

// TestInterruptKeepsFinishedItems interrupts a run on Gemma 3 270M in its
// second batch, right after the batch's shortest generation finished, and
// checks that the finished items of that batch are on disk (equal to an
// uninterrupted run's), that the others are not, and that --resume gives
// files equal to the uninterrupted run's (seconds aside), in the same order.
func TestInterruptKeepsFinishedItems(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real model")
	}
	old := progressTick
	progressTick = 0 // a progress report after every decoding step
	defer func() { progressTick = old }()
	cfg := rundir.Config{
		Models:    []string{probetest.GemmaModel(t)},
		Templates: probetest.TinyTemplates(t),
		Variants:  []templates.Variant{templates.VariantBase, templates.VariantNumbers, templates.VariantNoop},
		Instances: 1,
		Seed:      5,
		MaxTokens: 1,
		Shots:     1,
		Params:    llm.Params{Threads: 1, NCtx: 1024, NSeq: 3},
	}
	// Generations of different lengths: Gemma's run to any budget, so the
	// context ends them, 12 tokens after the longest prompt (a first run of
	// one token per item measures the prompts).
	probeRun := cfg
	probeRun.OutDir = t.TempDir()
	if _, err := Run(context.Background(), probeRun, Options{}); err != nil {
		t.Fatal(err)
	}
	pre, err := rundir.ReadTraces(probeRun.OutDir)
	if err != nil {
		t.Fatal(err)
	}
	longest := 0
	for _, tr := range pre {
		longest = max(longest, len(tr.PromptTokenIDs))
	}
	cfg.Params.NCtx, cfg.MaxTokens = longest+12, 200
	straight := cfg
	straight.OutDir = t.TempDir()
	if _, err := Run(context.Background(), straight, Options{}); err != nil {
		t.Fatal(err)
	}
	want, err := rundir.ReadTraces(straight.OutDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 6 || want[0].BatchSize != 3 || want[3].BatchSize != 3 {
		t.Fatalf("straight run: %d traces, batch sizes %d and %d; want 2 batches of 3", len(want), want[0].BatchSize, want[3].BatchSize)
	}
	first, kmin, kmax := 0, len(want[3].Tokens), 0
	for i, tr := range want {
		if i < 3 {
			first += len(tr.Tokens)
			continue
		}
		kmin, kmax = min(kmin, len(tr.Tokens)), max(kmax, len(tr.Tokens))
	}
	if kmax <= kmin+1 {
		t.Fatalf("the second batch's generations have %d..%d tokens: the test needs one that ends at least 2 tokens before another (prompts of different lengths)", kmin, kmax)
	}
	var finished []string
	for _, tr := range want[3:] {
		if len(tr.Tokens) == kmin {
			finished = append(finished, tr.ItemID)
		}
	}

	// Cancel when the second batch has generated kmin tokens per sequence:
	// its shortest generations have just finished, the others have not.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cut := cfg
	cut.OutDir = t.TempDir()
	var events int
	_, err = Run(ctx, cut, Options{Progress: func(ev Event) {
		events++
		if ev.Done >= 3 && ev.Tokens >= first+3*kmin {
			cancel()
		}
	}})
	if !errors.Is(err, llm.ErrAborted) {
		t.Fatalf("interrupted run: %v, want an error wrapping llm.ErrAborted", err)
	}
	if events < kmin {
		t.Errorf("%d progress events: want one per decoding step, from the first token", events)
	}
	got, err := rundir.ReadTraces(cut.OutDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3+len(finished) {
		t.Fatalf("interrupted run kept %d items, want the first batch and the %d finished of the second (%v)", len(got), len(finished), finished)
	}
	for i, tr := range got {
		j := i
		if i >= 3 {
			j = indexOfItem(want, tr.ItemID)
			if j < 3 || len(tr.Tokens) != kmin {
				t.Errorf("kept item %s (%d tokens) is not one of the finished %v", tr.ItemID, len(tr.Tokens), finished)
				continue
			}
		}
		w := want[j]
		if tr.AnswerScore == nil && tr.AnswerFirst == nil {
			// The interruption came before this batch's answer-scoring
			// pass: the item is kept without it, and the resume below
			// scores it (its traces must then equal the straight run's).
			w.AnswerScore, w.AnswerFirst = nil, nil
		}
		if !reflect.DeepEqual(tr, w) {
			t.Errorf("kept item %s differs from the uninterrupted run's", tr.ItemID)
		}
	}

	if _, err := Run(context.Background(), rundir.Config{OutDir: cut.OutDir}, Options{Resume: true}); err != nil {
		t.Fatalf("resume: %v", err)
	}
	a, _ := os.ReadFile(filepath.Join(straight.OutDir, rundir.FileTraces))
	b, _ := os.ReadFile(filepath.Join(cut.OutDir, rundir.FileTraces))
	if string(a) != string(b) {
		t.Errorf("resumed traces.jsonl differs from the uninterrupted run's")
	}
	ra, rb := trialsNoSeconds(t, straight.OutDir), trialsNoSeconds(t, cut.OutDir)
	if !reflect.DeepEqual(ra, rb) {
		t.Errorf("resumed results.csv differs from the uninterrupted run's (seconds aside)")
	}
}

func indexOfItem(ts []rundir.Trace, id string) int {
	for i, t := range ts {
		if t.ItemID == id {
			return i
		}
	}
	return -1
}

// trialsNoSeconds reads results.csv of dir with the seconds column zeroed.
func trialsNoSeconds(t *testing.T, dir string) []results.Trial {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, rundir.FileResults))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ts, err := results.ReadCSV(f)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ts {
		ts[i].Seconds = 0
	}
	return ts
}
