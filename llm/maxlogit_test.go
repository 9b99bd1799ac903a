package llm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// refMax is the scalar definition: the largest value and the first index
// holding it (== comparison, so -0 and +0 tie), and whether a NaN is present.
func refMax(x []float32) (float32, int, bool) {
	m, nan := x[0], false
	for _, v := range x {
		if v != v {
			nan = true
		} else if v > m || m != m {
			m = v
		}
	}
	for i, v := range x {
		if v == m {
			return m, i, nan
		}
	}
	return m, 0, nan
}

// TestMaxLogitKernel checks the vectorised argmax-and-copy kernel against the
// scalar definition on lengths around the 8-lane width, with the maximum in
// the first lane block, in the scalar tail, tied across and within lanes,
// and with NaNs; the copy must be bit-exact.
func TestMaxLogitKernel(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	lengths := []int{1, 2, 7, 8, 9, 15, 16, 17, 23, 24, 31, 33, 100, 262144, 262147}
	for _, n := range lengths {
		for trial := 0; trial < 40; trial++ {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64() * 4)
			}
			switch trial % 8 {
			case 1: // ties at several places, some in the same lane
				v := float32(50)
				for k := 0; k < 4; k++ {
					x[r.IntN(n)] = v
				}
			case 2: // maximum in the last element (tail)
				x[n-1] = 60
			case 3: // maximum at index 0
				x[0] = 70
			case 4: // all equal
				for i := range x {
					x[i] = -3
				}
			case 5: // signed zeros as the maximum
				for i := range x {
					x[i] = -1
				}
				x[r.IntN(n)] = float32(math.Copysign(0, -1))
				x[r.IntN(n)] = 0
			case 6: // a NaN somewhere
				x[r.IntN(n)] = float32(math.NaN())
			case 7: // -inf entries and a +inf maximum
				x[r.IntN(n)] = float32(math.Inf(-1))
				x[r.IntN(n)] = float32(math.Inf(1))
			}
			wm, wa, wn := refMax(x)
			dst := make([]float32, n)
			for _, copyToo := range []bool{false, true} {
				var m float32
				var a int
				var nan bool
				if copyToo {
					m, a, nan = maxLogitCopy(dst, x)
				} else {
					m, a, nan = maxLogit(x)
				}
				if nan != wn {
					t.Fatalf("n=%d trial %d copy=%v: nan=%v, want %v", n, trial, copyToo, nan, wn)
				}
				if wn {
					continue // the caller refuses the logits; max and index are unspecified
				}
				if m != wm || a != wa {
					t.Fatalf("n=%d trial %d copy=%v: max %v at %d, want %v at %d", n, trial, copyToo, m, a, wm, wa)
				}
			}
			for i := range x {
				if math.Float32bits(dst[i]) != math.Float32bits(x[i]) {
					t.Fatalf("n=%d trial %d: copy differs at %d: %v vs %v", n, trial, i, dst[i], x[i])
				}
			}
		}
	}
}

// BenchmarkMaxLogitCopy measures the greedy step's critical-path pass over
// one row of logits: argmax, NaN check and copy for the entropy pass.
func BenchmarkMaxLogitCopy(b *testing.B) {
	x := make([]float32, 262144)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range x {
		x[i] = float32(r.NormFloat64() * 3)
	}
	dst := make([]float32, len(x))
	b.SetBytes(4 * int64(len(x)))
	for i := 0; i < b.N; i++ {
		maxLogitCopy(dst, x)
	}
}
