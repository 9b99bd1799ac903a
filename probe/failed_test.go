package probe

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe/internal/probetest"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

// llamaRefusedGGUF writes a GGUF file that passes llm.CheckGGUF (sound
// header, known architecture, one layer, tensors in place) but that
// llama.cpp refuses to load: it lacks every hyperparameter and tensor a
// llama model needs.
func llamaRefusedGGUF(t *testing.T) string {
	t.Helper()
	var b bytes.Buffer
	u32 := func(v uint32) { binary.Write(&b, binary.LittleEndian, v) }
	u64 := func(v uint64) { binary.Write(&b, binary.LittleEndian, v) }
	str := func(s string) { u64(uint64(len(s))); b.WriteString(s) }
	b.WriteString("GGUF")
	u32(3)
	u64(1) // tensors
	u64(2) // keys
	str("general.architecture")
	u32(8)
	str("llama")
	str("llama.block_count")
	u32(4)
	u32(1)
	str("a.weight")
	u32(1)
	u64(32)
	u32(0) // F32
	u64(0)
	for b.Len()%32 != 0 {
		b.WriteByte(0)
	}
	b.Write(make([]byte, 128))
	p := filepath.Join(t.TempDir(), "refused.gguf")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := llm.CheckGGUF(p); err != nil {
		t.Fatalf("the pre-check refuses the file meant for llama.cpp: %v", err)
	}
	return p
}

// TestRunModelFailsRecorded: a model that llama.cpp refuses after the run
// directory exists leaves the manifest with status "failed" and the reason,
// not "running", and report on it gives that reason.
func TestRunModelFailsRecorded(t *testing.T) {
	bad := llamaRefusedGGUF(t)
	out := filepath.Join(t.TempDir(), "run")
	cfg := rundir.Config{Models: []string{bad}, Templates: probetest.TinyTemplates(t), Variants: []templates.Variant{templates.VariantBase},
		Instances: 1, Seed: 7, MaxTokens: 8, BootstrapB: 50,
		Params: llm.Params{Threads: 1, NCtx: 512, NSeq: 1}, OutDir: out}
	_, err := Run(context.Background(), cfg, Options{})
	if err == nil {
		t.Fatal("a model llama.cpp refuses ran")
	}
	man, rerr := rundir.ReadManifest(out)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if man.Status != "failed" || man.FailReason != err.Error() || man.Finished == "" {
		t.Errorf("manifest status %q, fail_reason %q, finished %q; want failed, %q", man.Status, man.FailReason, man.Finished, err)
	}
	// report on it says why it has no trials.
	if _, rerr := Recompute(out); rerr == nil || !strings.Contains(rerr.Error(), "no trials: the run failed before its first") || !strings.Contains(rerr.Error(), man.FailReason) {
		t.Errorf("report on the failed run: %v; want its fail_reason", rerr)
	}
	t.Logf("refused: %v", err)
}
