package llm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkEntropy measures one full-vocabulary entropy pass per iteration
// (ns/op is the cost per generated token) for several vocabulary sizes, with
// the current kernel (EntropyKernel) on one and two block workers, and with
// kernel v1 on one, for comparison. The logits are Gaussian (sd 3), about
// the spread of a small model's.
func BenchmarkEntropy(b *testing.B) {
	for _, n := range []int{32000, 151936, 262144} {
		logits := make([]float32, n)
		r := rand.New(rand.NewPCG(1, 2))
		for i := range logits {
			logits[i] = float32(r.NormFloat64() * 3)
		}
		for _, c := range []struct {
			kernel string
			w      int
		}{{EntropyKernel, 1}, {EntropyKernel, 2}, {EntropyKernelV1, 1}} {
			b.Run(fmt.Sprintf("vocab=%d/kernel=%s/workers=%d", n, c.kernel, c.w), func(b *testing.B) {
				old := EntropyWorkers
				EntropyWorkers = c.w
				defer func() { EntropyWorkers = old }()
				b.SetBytes(int64(4 * n))
				for i := 0; i < b.N; i++ {
					if _, err := entropyWith(c.kernel, logits); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
