package llm

import (
	"fmt"
	"math"
)

// Dist summarises one next-token distribution, the softmax of a row of raw
// logits over the full vocabulary. Log-probabilities are natural logs;
// entropy is in bits.
type Dist struct {
	EntropyBits float64 // H = -Σ p log2 p over all n_vocab entries, in bits
	LogZ        float64 // ln Σ exp(l_i − max), so log p_i = (l_i − max) − LogZ
	Max         float32 // largest logit
	ArgMax      Token   // its index (the lowest index among ties)
}

// Branching returns the branching factor 2^H, the effective number of
// equally likely next tokens (perplexity of one step).
func (d Dist) Branching() float64 { return math.Exp2(d.EntropyBits) }

// LogProb returns the natural log-probability of a token whose raw logit is l.
func (d Dist) LogProb(l float32) float64 { return float64(l) - float64(d.Max) - d.LogZ }

// TopProb returns the probability of the most likely token, 1/Σ exp(l_i − max).
func (d Dist) TopProb() float64 { return math.Exp(-d.LogZ) }

// entropyChunk is the number of logits summed into one partial sum. Partial
// sums are always combined in index order, so the result is bit-identical
// however many goroutines compute them.
const entropyChunk = 16384

// Entropy kernels: the C code that computes the sums of an entropy pass
// (entropy_kernel.c). Their results agree to a few units in the last place
// but not bit for bit, so a run records the kernel it used (the manifest's
// tool entry "entropy_kernel") and verify replays with that kernel.
const (
	// EntropyKernelV1 is the first kernel: eight Kahan-compensated float64
	// lanes and a degree-13 Taylor exp (fragility_entropy_sums). Runs whose
	// manifest names no kernel were recorded with it.
	EntropyKernelV1 = "v1"
	// EntropyKernelV2 is the faster kernel (fragility_entropy_sums2): a
	// degree-11 exp, plain float64 runs of 16 terms per lane folded with
	// Kahan compensation, AVX-512 or AVX2 intrinsics (EntropyISA). About
	// 3× faster than v1; the two differ by at most a few ulps of the
	// entropy (a third of the distributions of a random test differ at all).
	EntropyKernelV2 = "v2"
	// EntropyKernel is the kernel of new generations (the default of
	// GenerateOptions.EntropyKernel).
	EntropyKernel = EntropyKernelV2
)

// CheckEntropyKernel returns an error naming the known kernels when k is
// not one of them; "" (the default, EntropyKernel) is accepted.
func CheckEntropyKernel(k string) error {
	switch k {
	case "", EntropyKernelV1, EntropyKernelV2:
		return nil
	}
	return fmt.Errorf("entropy kernel %q is not one this binary has (%s, %s)", k, EntropyKernelV1, EntropyKernelV2)
}

// Entropy computes the exact Shannon entropy of softmax(logits) in bits with
// a max-subtracted log-sum-exp and float64 accumulation, in one pass over the
// logits after the max:
//
//	m = max_i l_i,  e_i = exp(l_i − m),  Z = Σ e_i,  S = Σ e_i (l_i − m)
//	H_nats = ln Z − S/Z,  H_bits = H_nats / ln 2
//
// which follows from log p_i = (l_i − m) − ln Z and H = −Σ p_i log p_i
// (Shannon 1948; the max subtraction is the standard overflow-safe
// log-sum-exp). Logits of −Inf (masked tokens) contribute p = 0, and so do
// logits more than 700 nats below the max (p < 1e-304). The sums run in the C
// kernel EntropyKernel (entropy_kernel.c), per block of entropyChunk logits,
// and the blocks are combined in index order with Neumaier compensation, so
// the value is bit-for-bit reproducible for a given binary whatever the
// thread count (EntropyWorkers).
//
// Error bound (kernel v2): Z and S are each within a relative error
// ε ≈ (16 + 6)·2^-53 ≈ 2.5e-15 of the exact sums of the float32 logits
// (every e_i within about 1 ulp, plain runs of 16 terms, compensated
// beyond); since −S/Z = ln Z − H_nats ≤ ln n, the entropy is within about
// (1 + 2 ln n)·ε/ln 2 + a few ulps: below 1e-13 bits for n = 262,144
// (tested against a 160-bit math/big reference, TestEntropyKernelsAccuracy).
// logits has shape [n_vocab]; it must be non-empty and free of NaN and +Inf.
func Entropy(logits []float32) (Dist, error) {
	return entropyWith(EntropyKernel, logits)
}

// entropyWith is Entropy with the given kernel ("" = EntropyKernel).
func entropyWith(kernel string, logits []float32) (Dist, error) {
	m, arg, err := checkedMax(logits)
	if err != nil {
		return Dist{}, err
	}
	return entropyAt(kernel, logits, m, arg), nil
}

// checkedMax returns the largest logit and its lowest index, or an error
// when logits is empty, holds a NaN or its maximum is infinite.
func checkedMax(logits []float32) (float32, int, error) {
	if len(logits) == 0 {
		return 0, 0, fmt.Errorf("entropy: empty logits")
	}
	m, arg, nan := maxLogit(logits)
	if err := maxError(m, nan); err != nil {
		return 0, 0, err
	}
	return m, arg, nil
}

// maxError is the error of a pass whose largest logit is m (nan: the row
// holds a NaN): the row has no distribution when it holds a NaN or its
// maximum is infinite; nil otherwise.
func maxError(m float32, nan bool) error {
	switch {
	case nan:
		return fmt.Errorf("entropy: logits contain NaN")
	case math.IsInf(float64(m), 0):
		return fmt.Errorf("entropy: largest logit is %v", m)
	}
	return nil
}

// entropyAt is the pass after the max: m is the largest logit (finite) and
// arg its lowest index, as maxLogit returns them.
func entropyAt(kernel string, logits []float32, m float32, arg int) Dist {
	nb := (len(logits) + entropyChunk - 1) / entropyChunk
	var zs0, ss0 [16]float64
	zs, ss := zs0[:0], ss0[:0]
	if nb > len(zs0) {
		zs, ss = make([]float64, nb), make([]float64, nb)
	} else {
		zs, ss = zs0[:nb], ss0[:nb]
	}
	blockSums(kernel == EntropyKernelV1, logits, float64(m), zs, ss)
	return combineBlocks(zs, ss, m, arg)
}

// combineBlocks adds the blocks' sums in index order (Neumaier) and
// finishes the distribution: m is the largest logit, arg its lowest index.
func combineBlocks(zs, ss []float64, m float32, arg int) Dist {
	var z, s, cz, cs float64
	for b := range zs {
		z, cz = neumaier(z, cz, zs[b])
		s, cs = neumaier(s, cs, ss[b])
	}
	return finishDist(z+cz, s+cs, m, arg)
}

// neumaier adds x to the sum with compensation c and returns both updated
// (Neumaier 1974, an improved Kahan summation).
func neumaier(sum, c, x float64) (float64, float64) {
	t := sum + x
	if math.Abs(sum) >= math.Abs(x) {
		c += (sum - t) + x
	} else {
		c += (x - t) + sum
	}
	return t, c
}

func finishDist(z, s float64, m float32, arg int) Dist {
	lnZ := math.Log(z)
	h := (lnZ - s/z) / math.Ln2
	if h < 0 { // rounding at a one-hot distribution
		h = 0
	}
	return Dist{EntropyBits: h, LogZ: lnZ, Max: m, ArgMax: Token(arg)}
}
