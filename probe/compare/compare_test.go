package compare

import (
	"context"
	"encoding/csv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/models"
	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

func TestKLDivergenceByHand(t *testing.T) {
	// P = (1/2, 1/2), Q = (1/4, 3/4): KL = ½ ln 2 + ½ ln(2/3).
	kl, err := KLDivergence([]float32{0, 0}, []float32{0, float32(math.Log(3))})
	if err != nil {
		t.Fatal(err)
	}
	want := 0.5*math.Log(2) + 0.5*math.Log(2.0/3)
	// log(3) rounded to float32 changes Q in the 8th digit.
	if math.Abs(kl-want) > 1e-7 {
		t.Errorf("KL = %v, want %v", kl, want)
	}
	// P = (1, 0) as a masked row: KL = −ln q_0.
	kl, _ = KLDivergence([]float32{5, float32(math.Inf(-1))}, []float32{1, 1})
	if math.Abs(kl-math.Log(2)) > 1e-15 {
		t.Errorf("masked reference: KL = %v, want ln 2", kl)
	}
	// Q = 0 where P > 0: +Inf.
	if kl, _ := KLDivergence([]float32{1, 1}, []float32{1, float32(math.Inf(-1))}); !math.IsInf(kl, 1) {
		t.Errorf("q = 0 < p: KL = %v, want +Inf", kl)
	}
	// Shifted logits are the same distribution: exactly 0 for identical rows.
	row := []float32{3, -1, 0.5, 7, -20}
	if kl, _ := KLDivergence(row, row); kl != 0 {
		t.Errorf("identical rows: KL = %v, want exactly 0", kl)
	}
	for _, bad := range [][2][]float32{{{1, 2}, {1}}, {nil, nil}, {{float32(math.NaN()), 1}, {1, 1}}} {
		if _, err := KLDivergence(bad[0], bad[1]); err == nil {
			t.Errorf("KLDivergence(%v, %v): no error", bad[0], bad[1])
		}
	}
}

// TestKLDivergenceMatchesDirectSum checks the Bregman-form evaluation against
// the textbook sum Σ p (ln p − ln q) with independently computed
// softmaxes, on random rows of a vocabulary's size; and KL ≥ 0.
func TestKLDivergenceMatchesDirectSum(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 5; trial++ {
		n := 50000
		a, b := make([]float32, n), make([]float32, n)
		for i := range a {
			a[i] = float32(r.NormFloat64() * 4)
			b[i] = a[i] + float32(r.NormFloat64()*0.1*float64(trial))
		}
		kl, err := KLDivergence(a, b)
		if err != nil {
			t.Fatal(err)
		}
		softmax := func(l []float32) []float64 {
			m := math.Inf(-1)
			for _, v := range l {
				m = math.Max(m, float64(v))
			}
			p := make([]float64, len(l))
			var z float64
			for i, v := range l {
				p[i] = math.Exp(float64(v) - m)
				z += p[i]
			}
			for i := range p {
				p[i] /= z
			}
			return p
		}
		p, q := softmax(a), softmax(b)
		var direct float64
		for i := range p {
			if p[i] > 0 {
				direct += p[i] * (math.Log(p[i]) - math.Log(q[i]))
			}
		}
		if kl < 0 || math.Abs(kl-direct) > 1e-12+1e-9*direct {
			t.Errorf("trial %d: KL = %v, direct sum %v", trial, kl, direct)
		}
		if trial == 0 && kl != 0 {
			t.Errorf("identical rows: %v", kl)
		}
	}
}

func TestDescribe(t *testing.T) {
	d := Describe([]float64{4, 1, 3, 2, 5})
	if d.N != 5 || d.Mean != 3 || d.Min != 1 || d.Max != 5 || d.Median != 3 {
		t.Errorf("%+v", d)
	}
	// Sample sd of 1..5 is √2.5; SE = √2.5/√5 = √0.5.
	if math.Abs(d.SE-math.Sqrt(0.5)) > 1e-15 || math.Abs(d.RMS-math.Sqrt(11)) > 1e-15 {
		t.Errorf("SE %v RMS %v", d.SE, d.RMS)
	}
	// Type 7: the 90th percentile of 1..5 is 1 + 0.9·4 = 4.6.
	if math.Abs(d.P90-4.6) > 1e-15 || math.Abs(d.P10-1.4) > 1e-15 {
		t.Errorf("P90 %v P10 %v", d.P90, d.P10)
	}
	if (Describe(nil) != Distribution{}) {
		t.Error("empty input")
	}
}

// TestCompareQuantizations runs a tiny probe on the Gemma model, the same
// file under another name, and Q8_0 and Q4_0 files made from it by the tool
// (requantized from Q4_K_M), then compares them with the Gemma model.
func TestCompareQuantizations(t *testing.T) {
	model := gemmaModel(t)
	dir := t.TempDir()
	self := filepath.Join(dir, "gemma-3-270m-copy.gguf")
	if err := os.Symlink(model, self); err != nil {
		t.Fatal(err)
	}
	paths := []string{model, self}
	for _, typ := range []string{"Q8_0", "Q4_0"} {
		out := filepath.Join(dir, "gemma-3-270m-"+typ+".gguf")
		if err := llm.Quantize(context.Background(), model, out, typ, llm.QuantizeOptions{AllowRequantize: true, Threads: 1}); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, out)
	}
	run := tinyRun(t, paths, []templates.Variant{templates.VariantBase}, 1)

	man, err := rundir.ReadManifest(run)
	if err != nil {
		t.Fatal(err)
	}
	// The Q8_0 and Q4_0 files were made from the Q4_K_M model: requantized,
	// so the reference is the original Q4_K_M file despite Q8_0's bits.
	if md := man.Models[2].Metadata; md == nil || !strings.HasPrefix(md.RequantizedFrom, "Q4_K_M sha256:"+man.Models[0].SHA256) {
		t.Errorf("Q8_0 made from Q4_K_M: requantized_from %+v", md)
	}
	if md := man.Models[0].Metadata; md == nil || md.RequantizedFrom != "" {
		t.Errorf("original file: requantized_from %+v", md)
	}
	if i, rule, _ := pickReference(man, ""); i != 0 || !strings.Contains(rule, "original weights") {
		t.Errorf("default reference = model %d (%s), want the original Q4_K_M file", i, rule)
	}
	if _, _, err := pickReference(man, "nope.gguf"); err == nil || !strings.Contains(err.Error(), "nope.gguf") {
		t.Errorf("unknown reference: %v", err)
	}

	c, err := Compare(context.Background(), run, CompareOptions{Reference: model})
	if err != nil {
		t.Fatal(err)
	}
	if c.Reference != 0 || c.Models[0].Agreement != nil || c.NVocab != 262144 {
		t.Fatalf("reference: %+v", c)
	}
	same := c.Models[1].Agreement
	if same == nil || same.Tokens == 0 || same.Items != 2 {
		t.Fatalf("self: %+v", same)
	}
	if same.KL.Max != 0 || same.KL.Min != 0 || same.SameTopPct != 100 || same.DeltaP.RMS != 0 || same.DeltaH.RMS != 0 {
		t.Errorf("model against itself: KL %+v, same top %v%%, Δp RMS %v, ΔH RMS %v", same.KL, same.SameTopPct, same.DeltaP.RMS, same.DeltaH.RMS)
	}
	q8, q4 := c.Models[2].Agreement, c.Models[3].Agreement
	for name, a := range map[string]*Agreement{"Q8_0": q8, "Q4_0": q4} {
		if a.Tokens != same.Tokens || a.KL.Min < 0 || !(a.KL.Mean > 0) || a.SameTopPct > 100 || a.SameTopPct <= 0 {
			t.Errorf("%s: tokens %d, KL %+v, same top %v", name, a.Tokens, a.KL, a.SameTopPct)
		}
		t.Logf("%s vs Q4_K_M: KL mean %.4g ± %.2g nats, median %.3g, max %.3g; same top %.1f%%; Δp mean %.3g RMS %.3g; ΔH %.3g bits (%d tokens)",
			name, a.KL.Mean, a.KL.SE, a.KL.Median, a.KL.Max, a.SameTopPct, a.DeltaP.Mean, a.DeltaP.RMS, a.DeltaH.Mean, a.Tokens)
	}
	if c.Models[2].Quantization != "Q8_0" || c.Models[3].Quantization != "Q4_0" {
		t.Errorf("types: %s, %s", c.Models[2].Quantization, c.Models[3].Quantization)
	}

	f, err := os.Open(filepath.Join(run, rundir.FileCompareCSV))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) != 5 || rows[0][8] != "kl_mean" || rows[2][8] != "0" || rows[1][8] != "" {
		t.Errorf("compare.csv: %v %v", err, rows)
	}
}

// TestPickReferenceRequantized: a requantized file is never the reference
// over a file with original weights, however many bits it has; when every
// file is requantized the rule says so.
func TestPickReferenceRequantized(t *testing.T) {
	md := func(bytes uint64, from string) *llm.Metadata {
		return &llm.Metadata{NParams: 1000, ModelSizeBytes: bytes, RequantizedFrom: from}
	}
	man := &rundir.Manifest{Models: []rundir.ModelEntry{
		{Path: "a-Q4_K_M.gguf", Metadata: md(600, "")},
		{Path: "a-Q8_0.gguf", Metadata: md(1062, "Q4_K_M sha256:ab")},
		{Path: "a-Q4_0.gguf", Metadata: md(562, "")},
	}}
	if i, rule, _ := pickReference(man, ""); i != 0 || !strings.Contains(rule, "original weights") {
		t.Errorf("reference %d (%s), want 0, the original file with the most bits", i, rule)
	}
	man.Models[0].Metadata.RequantizedFrom = "F16 sha256:cd"
	man.Models[2].Metadata.RequantizedFrom = "F16 sha256:cd"
	if i, rule, _ := pickReference(man, ""); i != 1 || !strings.Contains(rule, "every model is requantized") {
		t.Errorf("all requantized: reference %d (%s), want 1 with a warning", i, rule)
	}
}

// gemmaModel is the cached fast test model.
func gemmaModel(t *testing.T) string {
	t.Helper()
	p, err := models.PathOf("gemma-3-270m-q4_k_m")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// tinyRun runs two built-in templates on the given models: one instance,
// 16 tokens, nseq items per batch, no DDC.
func tinyRun(t *testing.T, modelPaths []string, variants []templates.Variant, nseq int) string {
	t.Helper()
	tdir := t.TempDir()
	for _, name := range []string{"baker.yaml", "stickers.yaml"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "templates", "builtin", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tdir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "run")
	cfg := rundir.Config{Models: modelPaths, Templates: tdir, Variants: variants, Instances: 1, Seed: 7, MaxTokens: 16, BootstrapB: 50,
		Params: llm.Params{Threads: 1, NCtx: 512, NSeq: nseq}, OutDir: out}
	if _, err := probe.Run(context.Background(), cfg, probe.Options{}); err != nil {
		t.Fatalf("run: %v", err)
	}
	return out
}
