package llm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gemmaPath returns the Gemma test model's path (loading it once).
func gemmaPath(t *testing.T) string {
	t.Helper()
	return gemmaModel(t).Metadata().Path
}

// TestQuantize makes Q8_0 and Q4_0 files from the default Q4_K_M model
// (requantization, allowed explicitly) and checks that each loads with the
// requested type and still generates.
func TestQuantize(t *testing.T) {
	in := gemmaPath(t)
	dir := t.TempDir()
	for _, typ := range []string{"Q8_0", "Q4_0"} {
		out := filepath.Join(dir, "gemma-3-270m-"+typ+".gguf")
		var calls int
		err := Quantize(context.Background(), in, out, typ, QuantizeOptions{AllowRequantize: true, Threads: 1,
			Progress: func(n int64, _ time.Duration) { calls++ }})
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		if calls == 0 {
			t.Errorf("%s: progress never called", typ)
		}
		if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o644 {
			t.Errorf("%s: file mode %v (%v), want -rw-r--r-- as a run's files", typ, st.Mode(), err)
		}
		m, err := Load(out, Params{Threads: 1, NCtx: 256})
		if err != nil {
			t.Fatalf("%s: load: %v", typ, err)
		}
		md := m.Metadata()
		if md.Quantization != typ {
			t.Errorf("quantization = %q, want %q", md.Quantization, typ)
		}
		if md.NVocab != 262144 {
			t.Errorf("%s: n_vocab = %d", typ, md.NVocab)
		}
		m.Close()
		left, _ := filepath.Glob(filepath.Join(dir, ".*tmp-*"))
		if len(left) != 0 {
			t.Errorf("temporary files left: %v", left)
		}
	}
}

func TestQuantizeRefusals(t *testing.T) {
	in := gemmaPath(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "q8.gguf")
	err := Quantize(context.Background(), in, out, "Q8_0", QuantizeOptions{Threads: 1})
	if err == nil {
		t.Fatal("requantizing a Q4_K_M file without AllowRequantize succeeded")
	}
	if !strings.Contains(err.Error(), in) || !strings.Contains(err.Error(), "requantizing from type") ||
		!strings.Contains(err.Error(), "is disabled") || !strings.Contains(err.Error(), "--allow-requantize") {
		t.Errorf("unclear error: %v", err)
	}
	if _, serr := os.Stat(out); serr == nil {
		t.Errorf("a refused quantization left %s", out)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}

	if err := Quantize(context.Background(), in, in, "Q8_0", QuantizeOptions{AllowRequantize: true}); err == nil || !strings.Contains(err.Error(), "is the input") {
		t.Errorf("out == in: %v", err)
	}
	exist := filepath.Join(dir, "exists.gguf")
	os.WriteFile(exist, []byte("x"), 0o644)
	if err := Quantize(context.Background(), in, exist, "Q8_0", QuantizeOptions{AllowRequantize: true}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("existing out: %v", err)
	}
	if b, _ := os.ReadFile(exist); string(b) != "x" {
		t.Error("existing output was modified")
	}
	if err := Quantize(context.Background(), in, out, "Q9_9", QuantizeOptions{}); err == nil || !strings.Contains(err.Error(), `unknown quantization type "Q9_9"`) {
		t.Errorf("unknown type: %v", err)
	}
	if err := Quantize(context.Background(), exist, out, "Q8_0", QuantizeOptions{}); err == nil || !strings.Contains(err.Error(), exist) {
		t.Errorf("bad input: %v", err)
	}
}
