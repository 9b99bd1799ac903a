package llm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestThreadPoolEntropySameBits computes entropy passes on a ggml thread
// pool of 1, 2 and 3 threads and compares each with entropyWith bit for bit,
// with both kernels, on rows of several lengths (one block, a block and
// one, a default model's vocabulary): random logits, the largest value
// repeated in several blocks (the lowest index must win), −Inf entries, a
// −0/+0 tie at the maximum, and the errors for NaN and +Inf.
func TestThreadPoolEntropySameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var rows [][]float32
	for _, n := range []int{1, 31, entropyChunk, entropyChunk + 1, 151936, 262144} {
		r := make([]float32, n)
		for i := range r {
			r[i] = float32(rng.NormFloat64() * 4)
		}
		rows = append(rows, r)
	}
	tie := make([]float32, 100000)
	for i := range tie {
		tie[i] = float32(rng.NormFloat64())
		if i%5 == 0 {
			tie[i] = float32(math.Inf(-1))
		}
	}
	for _, i := range []int{70001, 40000, 99999} {
		tie[i] = 9.5
	}
	zero := make([]float32, 3*entropyChunk)
	for i := range zero {
		zero[i] = -1 - float32(i%7)
	}
	zero[2*entropyChunk+5] = float32(math.Copysign(0, -1))
	zero[entropyChunk+3] = 0
	rows = append(rows, tie, zero)
	for _, n := range []int{1, 2, 3} {
		p, err := newThreadPool(n, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, kernel := range []string{EntropyKernelV1, EntropyKernelV2} {
			for k, r := range rows {
				want, err := entropyWith(kernel, r)
				if err != nil {
					t.Fatal(err)
				}
				got, err := p.entropy(kernel, r, n)
				if err != nil {
					t.Fatal(err)
				}
				if got.ArgMax != want.ArgMax || math.Float32bits(got.Max) != math.Float32bits(want.Max) ||
					!sameBits(got.EntropyBits, want.EntropyBits) || !sameBits(got.LogZ, want.LogZ) {
					t.Errorf("%d threads, kernel %s, row %d (%d logits): pool %+v, entropyWith %+v", n, kernel, k, len(r), got, want)
				}
			}
		}
		if got := rows[len(rows)-2]; true {
			d, _ := p.entropy(EntropyKernel, got, n)
			if d.ArgMax != 40000 {
				t.Errorf("%d threads: argmax %d, want the lowest index of the tie, 40000", n, d.ArgMax)
			}
		}
		bad := append([]float32(nil), rows[4]...)
		bad[100000] = float32(math.NaN())
		if _, err := p.entropy(EntropyKernel, bad, n); err == nil || err.Error() != "entropy: logits contain NaN" {
			t.Errorf("%d threads: a NaN gave %v", n, err)
		}
		bad[100000] = float32(math.Inf(1))
		if _, err := p.entropy(EntropyKernel, bad, n); err == nil || err.Error() != "entropy: largest logit is +Inf" {
			t.Errorf("%d threads: +Inf gave %v", n, err)
		}
		p.free()
	}
}
