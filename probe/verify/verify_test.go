package verify

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/internal/probetest"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

func TestVerifyFreshRunThenOneBitFlip(t *testing.T) {
	model := probetest.GemmaModel(t)
	dir := tinyRun(t, []string{model}, []templates.Variant{templates.VariantBase, templates.VariantNoop}, 2)
	traces, err := rundir.ReadTraces(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) != 4 || traces[0].BatchSize != 2 {
		t.Fatalf("expected 4 traces in batches of 2, got %d (batch %d)", len(traces), traces[0].BatchSize)
	}

	res, err := Verify(context.Background(), dir, VerifyOptions{})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if !res.OK() || res.Items != 4 || res.Tokens == 0 {
		t.Fatalf("fresh run does not verify: %+v first %v", res, res.First)
	}

	// Flip the last bit of one entropy of the third item.
	const ti = 2
	tj := min(5, len(traces[ti].Tokens)-1)
	orig := traces[ti].Tokens[tj].EntropyBits
	flipped := math.Float64frombits(math.Float64bits(orig) ^ 1)
	traces[ti].Tokens[tj].EntropyBits = flipped
	probetest.WriteTraces(t, dir, traces)

	res, err = Verify(context.Background(), dir, VerifyOptions{})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if res.OK() || res.Divergences != 1 || res.DivergentItems != 1 {
		t.Fatalf("one flipped bit: %+v", res)
	}
	f := res.First
	if f.Item != traces[ti].ItemID || f.Position != tj || f.Field != DivEntropy {
		t.Errorf("first divergence %v, want item %s token %d entropy", f, traces[ti].ItemID, tj)
	}
	if !strings.Contains(f.Recorded, floatBits(flipped)) || !strings.Contains(f.Replayed, floatBits(orig)) {
		t.Errorf("values: recorded %s replayed %s, want %s and %s", f.Recorded, f.Replayed, floatBits(flipped), floatBits(orig))
	}

	// A different recorded build refuses without --force, replays with it.
	man, err := rundir.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	man.BuildFlags = "CGO_CFLAGS=-O0"
	if err := rundir.WriteJSONAtomic(filepath.Join(dir, rundir.FileManifest), man); err != nil {
		t.Fatal(err)
	}
	_, err = Verify(context.Background(), dir, VerifyOptions{})
	var em *EnvMismatchError
	if !errors.As(err, &em) || len(em.Differences) != 1 || em.Differences[0].What != "build flags" || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("build flags differ: %v", err)
	}
	res, err = Verify(context.Background(), dir, VerifyOptions{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Differences) != 1 || res.Divergences != 1 {
		t.Errorf("forced: %+v", res)
	}

	// A decode procedure this binary does not know is refused, even forced.
	man.Config.Decode = "bogus/9"
	if err := rundir.WriteJSONAtomic(filepath.Join(dir, rundir.FileManifest), man); err != nil {
		t.Fatal(err)
	}
	_, err = Verify(context.Background(), dir, VerifyOptions{Force: true})
	if err == nil || !strings.Contains(err.Error(), `decode procedure "bogus/9"`) || !strings.Contains(err.Error(), rundir.FileManifest) {
		t.Fatalf("unknown decode procedure: %v", err)
	}
}

func TestBatchGroups(t *testing.T) {
	q := map[string]string{"a/base/0": "", "b/base/0": "", "c/base/0": ""}
	tr := func(id string, batch int, skip string) rundir.Trace {
		return rundir.Trace{ItemID: id, BatchSize: batch, SkipReason: skip, PromptTokenIDs: []llm.Token{2, 5}}
	}
	gs, err := batchGroups([]rundir.Trace{tr("m0/c/base/0", 0, "too long"), tr("m0/a/base/0", 2, ""), tr("m0/b/base/0", 2, ""), tr("m1/a/base/0", 1, "")}, 2, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 3 || !gs[0].skipped || len(gs[1].traces) != 2 || gs[2].model != 1 {
		t.Errorf("groups: %+v", gs)
	}
	for name, c := range map[string][]rundir.Trace{
		"batch cut short":      {tr("m0/a/base/0", 2, "")},
		"batch across models":  {tr("m0/a/base/0", 2, ""), tr("m1/b/base/0", 2, "")},
		"unknown model index":  {tr("m3/a/base/0", 1, "")},
		"unknown instance":     {tr("m0/zzz/base/0", 1, "")},
		"malformed item id":    {tr("a/base/0", 1, "")},
		"batch size disagrees": {tr("m0/a/base/0", 2, ""), tr("m0/b/base/0", 1, "")},
	} {
		if _, err := batchGroups(c, 2, q); err == nil || !strings.Contains(err.Error(), "line ") {
			t.Errorf("%s: error %v should name the line", name, err)
		}
	}
}

// TestRecordedEntropyKernel checks which entropy kernel verify replays a run
// with: the one its manifest names, v1 for a manifest from before kernels
// were named, and an unknown one refused with the manifest's name.
func TestRecordedEntropyKernel(t *testing.T) {
	if k := rundir.RecordedEntropyKernel(&rundir.Manifest{}); k != llm.EntropyKernelV1 {
		t.Errorf("no kernel recorded: %q, want %q", k, llm.EntropyKernelV1)
	}
	info := rundir.WithEntropyKernel(map[string]string{"version": "x"})
	if info[rundir.ToolEntropyKernel] != llm.EntropyKernel || info["version"] != "x" {
		t.Errorf("withEntropyKernel: %v", info)
	}
	if k := rundir.RecordedEntropyKernel(&rundir.Manifest{Tool: info}); k != llm.EntropyKernel {
		t.Errorf("recorded %q, read back %q", llm.EntropyKernel, k)
	}
	dir := t.TempDir()
	man := &rundir.Manifest{Tool: map[string]string{rundir.ToolEntropyKernel: "v9"}, Status: "complete"}
	if err := rundir.WriteJSONAtomic(filepath.Join(dir, rundir.FileManifest), man); err != nil {
		t.Fatal(err)
	}
	_, err := Verify(context.Background(), dir, VerifyOptions{Force: true})
	if err == nil || !strings.Contains(err.Error(), `"v9"`) || !strings.Contains(err.Error(), rundir.FileManifest) {
		t.Fatalf("unknown entropy kernel: %v", err)
	}
}

// TestCompareResponse: verify's replay compares its text exactly, which
// catches what the check against the trace cannot tell apart: here a
// response cut short at "\nQ:", a stop string of some runs, where the
// replay (with this run's stop strings) went on to "\nUser:".
func TestCompareResponse(t *testing.T) {
	pieces := []string{"4", "\nQ:", " x", "\nUser:"}
	replayed := "4\nQ: x"
	ok, _, _ := rundir.MatchResponse("4", strings.Join(pieces, ""), true, append(slices.Clone(probe.RunOnStops), llm.PlainStops...))
	if !ok {
		t.Fatal("the trace check refuses a response cut at a stop string")
	}
	var res VerifyResult
	compareResponse("m0/a", replayed, replayed, "m.gguf", &res)
	compareResponse("m0/b", "a\nb", "a\r\nb", "m.gguf", &res) // results.csv reads "\r\n" as "\n"
	if !res.OK() {
		t.Fatalf("the same texts diverge: %+v", res.First)
	}
	compareResponse("m0/a", "4", replayed, "m.gguf", &res)
	if res.Divergences != 1 || res.First == nil || res.First.Field != DivResponse || res.First.Position != 1 ||
		res.First.Recorded != `"4"` || res.First.Replayed != `"4\nQ: x"` {
		t.Fatalf("a cut response: %+v first %+v", res, res.First)
	}
	if got, want := res.First.String(), `item m0/a (m.gguf), results.csv response byte 1: response recorded "4", replayed "4\nQ: x"`; got != want {
		t.Errorf("divergence line:\n got %s\nwant %s", got, want)
	}
}

// tinyRun runs the two tiny templates on the given models (no DDC) and
// returns the run directory (probetest.TinyConfig).
func tinyRun(t *testing.T, modelPaths []string, variants []templates.Variant, nseq int) string {
	t.Helper()
	cfg := probetest.TinyConfig(t, modelPaths, variants, nseq)
	if _, err := probe.Run(context.Background(), cfg, probe.Options{}); err != nil {
		t.Fatalf("run: %v", err)
	}
	return cfg.OutDir
}
