package llm

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"testing"
)

// refPrec is the precision, in bits, of the math/big reference.
const refPrec = 160

// bigLn2 returns ln 2 to refPrec bits: Σ_{k≥1} 1/(k·2^k).
func bigLn2() *big.Float {
	sum := new(big.Float).SetPrec(refPrec)
	for k := 1; k < refPrec+8; k++ {
		t := new(big.Float).SetPrec(refPrec).SetMantExp(big.NewFloat(1), -k)
		t.Quo(t, new(big.Float).SetPrec(refPrec).SetInt64(int64(k)))
		sum.Add(sum, t)
	}
	return sum
}

// bigExp returns e^d to about refPrec bits: d = k·ln2 + r with |r| ≤ 0.35,
// e^r by its Taylor series, then scaled by 2^k.
func bigExp(d float64, ln2 *big.Float) *big.Float {
	k := math.Round(d / math.Ln2)
	r := new(big.Float).SetPrec(refPrec).SetFloat64(d)
	kl := new(big.Float).SetPrec(refPrec).SetFloat64(k)
	r.Sub(r, kl.Mul(kl, ln2))
	sum := new(big.Float).SetPrec(refPrec).SetInt64(1)
	term := new(big.Float).SetPrec(refPrec).SetInt64(1)
	eps := new(big.Float).SetMantExp(big.NewFloat(1), -refPrec-4)
	for j := int64(1); j < 80; j++ {
		term.Mul(term, r)
		term.Quo(term, new(big.Float).SetPrec(refPrec).SetInt64(j))
		sum.Add(sum, term)
		if new(big.Float).Abs(term).Cmp(eps) < 0 {
			break
		}
	}
	return sum.SetMantExp(sum, int(k))
}

// bigLn returns ln x to about refPrec bits for x > 0: x = y·2^e with y in
// [0.5, 1), ln y = 2·atanh((y−1)/(y+1)) by its series.
func bigLn(x *big.Float, ln2 *big.Float) *big.Float {
	y := new(big.Float).SetPrec(refPrec)
	e := x.MantExp(y)
	one := new(big.Float).SetPrec(refPrec).SetInt64(1)
	z := new(big.Float).SetPrec(refPrec).Sub(y, one)
	z.Quo(z, new(big.Float).SetPrec(refPrec).Add(y, one))
	z2 := new(big.Float).SetPrec(refPrec).Mul(z, z)
	sum := new(big.Float).SetPrec(refPrec)
	pow := new(big.Float).SetPrec(refPrec).Set(z)
	for j := int64(1); j < 400; j += 2 {
		sum.Add(sum, new(big.Float).SetPrec(refPrec).Quo(pow, new(big.Float).SetPrec(refPrec).SetInt64(j)))
		pow.Mul(pow, z2)
	}
	sum.Mul(sum, new(big.Float).SetPrec(refPrec).SetInt64(2))
	el := new(big.Float).SetPrec(refPrec).SetInt64(int64(e))
	return sum.Add(sum, el.Mul(el, ln2))
}

// bigEntropy is the entropy in bits of softmax(logits) computed with
// refPrec-bit arithmetic (math/big), with the kernels' convention that
// logits more than 700 below the max have probability 0.
func bigEntropy(logits []float32) float64 {
	ln2 := bigLn2()
	m := math.Inf(-1)
	for _, l := range logits {
		m = math.Max(m, float64(l))
	}
	z := new(big.Float).SetPrec(refPrec)
	s := new(big.Float).SetPrec(refPrec)
	cache := map[float32]*big.Float{}
	for _, l := range logits {
		d := float64(l) - m // exact: both are float32 values
		if !(d >= -700) {
			continue
		}
		e, ok := cache[l]
		if !ok {
			e = bigExp(d, ln2)
			cache[l] = e
		}
		z.Add(z, e)
		ed := new(big.Float).SetPrec(refPrec).SetFloat64(d)
		s.Add(s, ed.Mul(ed, e))
	}
	h := bigLn(z, ln2)
	h.Sub(h, new(big.Float).SetPrec(refPrec).Quo(s, z))
	h.Quo(h, ln2)
	f, _ := h.Float64()
	return f
}

// entropyTestRows returns the test distributions: Gaussian logits of
// several spreads (a flat, a model-like and a peaked one), lengths that are
// not multiples of the kernels' lanes, −Inf (masked) entries and logits more
// than 700 below the max. Logits are rounded to multiples of 1/256 so that
// the reference computes few distinct exponentials.
func entropyTestRows() map[string][]float32 {
	r := rand.New(rand.NewPCG(5, 6))
	gauss := func(n int, sd float64) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(math.Round(r.NormFloat64()*sd*256) / 256)
		}
		return x
	}
	masked := gauss(40013, 4)
	for i := 0; i < len(masked); i += 7 {
		masked[i] = float32(math.Inf(-1))
	}
	masked[100] = -800
	masked[101] = 30
	return map[string][]float32{
		"sd0.3_n262144": gauss(262144, 0.3),
		"sd3_n262144":   gauss(262144, 3),
		"sd3_n151936":   gauss(151936, 3),
		"sd12_n32007":   gauss(32007, 12),
		"masked_n40013": masked,
		"short_n13":     gauss(13, 2),
	}
}

// TestEntropyKernelsAccuracy checks both kernels against the math/big
// reference: within 1e-13 bits (the bound stated in Entropy's comment for
// kernel v2; v1 is Kahan-compensated throughout and as close), and the
// same result with one and with several block workers.
func TestEntropyKernelsAccuracy(t *testing.T) {
	if testing.Short() {
		t.Skip("math/big reference: a few seconds")
	}
	const bound = 1e-13
	for name, x := range entropyTestRows() {
		ref := bigEntropy(x)
		for _, k := range []string{EntropyKernelV1, EntropyKernelV2} {
			d, err := entropyWith(k, x)
			if err != nil {
				t.Fatal(err)
			}
			diff := math.Abs(d.EntropyBits - ref)
			t.Logf("%s kernel %s: H %.17g, reference %.17g, |diff| %.2e bits (%.1f ulp)", name, k, d.EntropyBits, ref, diff, diff/ulp(ref))
			if diff > bound {
				t.Errorf("%s kernel %s: |H − reference| = %.3g bits > %g", name, k, diff, bound)
			}
			old := EntropyWorkers
			EntropyWorkers = 3
			d3, _ := entropyWith(k, x)
			EntropyWorkers = old
			if math.Float64bits(d3.EntropyBits) != math.Float64bits(d.EntropyBits) || d3.LogZ != d.LogZ {
				t.Errorf("%s kernel %s: 3 workers give %v, 1 gives %v", name, k, d3.EntropyBits, d.EntropyBits)
			}
		}
	}
}

func ulp(x float64) float64 { return math.Nextafter(x, math.Inf(1)) - x }

// TestEntropyKernelV2Values checks kernel v2 where the exact entropy is known
// in closed form.
func TestEntropyKernelV2Values(t *testing.T) {
	for _, n := range []int{1, 7, 16, 17, 1000, 262144} {
		d, err := entropyWith(EntropyKernelV2, make([]float32, n))
		if err != nil {
			t.Fatal(err)
		}
		if diff := math.Abs(d.EntropyBits - math.Log2(float64(n))); diff > 1e-13 {
			t.Errorf("flat over %d: %v bits, want log2(n) (diff %g)", n, d.EntropyBits, diff)
		}
	}
	// Two tokens with logits 0 and −ln 3: p = 3/4, 1/4.
	x := []float32{0, float32(-math.Log(3))}
	d, _ := entropyWith(EntropyKernelV2, x)
	p := 1 / (1 + math.Exp(float64(x[1])))
	want := -(p*math.Log2(p) + (1-p)*math.Log2(1-p))
	if math.Abs(d.EntropyBits-want) > 1e-15 {
		t.Errorf("two tokens: %v bits, want %v", d.EntropyBits, want)
	}
	if err := CheckEntropyKernel("v9"); err == nil {
		t.Error("unknown kernel v9 accepted")
	}
}

// TestEntropyKernelV2PathsSameBits checks that the AVX-512, AVX2 and scalar
// paths of kernel v2 that this CPU can run give the same bits (the scalar
// one only when the build fuses multiply-adds, as the vector paths do).
func TestEntropyKernelV2PathsSameBits(t *testing.T) {
	defer setEntropyISA(os.Getenv("FRAGILITY_ENTROPY_ISA"))
	rows := entropyTestRows()
	r := rand.New(rand.NewPCG(7, 8))
	for n := 1; n < 40; n++ { // every tail length and short arrays
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * 5)
		}
		rows[fmt.Sprintf("n%d", n)] = x
	}
	ref := map[string]Dist{}
	first := ""
	for _, want := range []string{"", "avx2", "scalar"} {
		isa := setEntropyISA(want)
		if want != "" && isa != want {
			t.Logf("this CPU has no %s path (%s chosen)", want, isa)
			continue
		}
		if isa == "scalar" && !scalarFMA && first != "" {
			t.Logf("scalar path without FMA: not compared")
			continue
		}
		for name, x := range rows {
			d, err := entropyWith(EntropyKernelV2, x)
			if err != nil {
				t.Fatal(err)
			}
			if first == "" {
				ref[name] = d
				continue
			}
			if !sameBits(d.EntropyBits, ref[name].EntropyBits) || !sameBits(d.LogZ, ref[name].LogZ) {
				t.Errorf("%s: path %s gives H %v ln Z %v, path %s %v %v", name, isa, d.EntropyBits, d.LogZ, first, ref[name].EntropyBits, ref[name].LogZ)
			}
		}
		if first == "" {
			first = isa
		} else {
			t.Logf("path %s: same bits as %s on %d distributions", isa, first, len(rows))
		}
	}
}
