package llm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkEntropy measures one full-vocabulary entropy pass per iteration
// (ns/op is the cost per generated token) for several vocabulary sizes, with
// one worker and with the default number.
func BenchmarkEntropy(b *testing.B) {
	for _, n := range []int{32000, 151936, 262144} {
		logits := make([]float32, n)
		r := rand.New(rand.NewPCG(1, 2))
		for i := range logits {
			logits[i] = float32(r.NormFloat64() * 3)
		}
		for _, w := range []int{1, 2} {
			b.Run(fmt.Sprintf("vocab=%d/workers=%d", n, w), func(b *testing.B) {
				old := EntropyWorkers
				EntropyWorkers = w
				defer func() { EntropyWorkers = old }()
				b.SetBytes(int64(4 * n))
				for i := 0; i < b.N; i++ {
					if _, err := Entropy(logits); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
