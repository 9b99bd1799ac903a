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
// kernel of entropy_kernel.c (eight Kahan-compensated float64 lanes, our own
// vectorisable exp), per block of entropyChunk logits, and the blocks are
// combined in index order, so the value is bit-for-bit reproducible for a
// given binary whatever the thread count. logits has shape [n_vocab]; it must
// be non-empty and free of NaN and +Inf.
func Entropy(logits []float32) (Dist, error) {
	if len(logits) == 0 {
		return Dist{}, fmt.Errorf("entropy: empty logits")
	}
	m, arg, nan := maxLogit(logits)
	if nan {
		return Dist{}, fmt.Errorf("entropy: logits contain NaN")
	}
	if math.IsInf(float64(m), 0) {
		return Dist{}, fmt.Errorf("entropy: largest logit is %v", m)
	}
	nb := (len(logits) + entropyChunk - 1) / entropyChunk
	zs := make([]float64, nb)
	ss := make([]float64, nb)
	blockSums(logits, float64(m), zs, ss)
	var z, s, cz, cs float64
	for b := range zs {
		z, cz = neumaier(z, cz, zs[b])
		s, cs = neumaier(s, cs, ss[b])
	}
	return finishDist(z+cz, s+cs, m, arg), nil
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
