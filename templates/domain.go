package templates

import (
	"fmt"
	"math/big"
	"math/rand/v2"
)

// domain is a finite set of values to draw from: an arithmetic progression
// lo, lo+step, ... (n values, never materialised) or an explicit item list.
type domain struct {
	name     string
	lo, step *big.Rat
	items    []value
	n        int64
}

// maxDomain bounds the size of a domain, so that an index fits an int64 draw
// and a list() of it cannot exhaust memory by accident.
const (
	maxDomain = 1 << 40
	maxList   = 100000
)

// progression builds the domain lo ≤ v < hi by step (hi exclusive, as in
// Python's range), or lo ≥ v > hi for a negative step.
func progression(name string, lo, hi, step *big.Rat) (*domain, error) {
	if step.Sign() == 0 {
		return nil, fmt.Errorf("%s: step is zero", name)
	}
	span := new(big.Rat).Sub(hi, lo)
	q := new(big.Rat).Quo(span, step)
	n := ceilRat(q)
	if n.Sign() <= 0 {
		return nil, fmt.Errorf("%s(%s, %s, %s) is empty", name, lo.RatString(), hi.RatString(), step.RatString())
	}
	if !n.IsInt64() || n.Int64() > maxDomain {
		return nil, fmt.Errorf("%s(%s, %s, %s) has too many values", name, lo.RatString(), hi.RatString(), step.RatString())
	}
	return &domain{name: name, lo: lo, step: step, n: n.Int64()}, nil
}

func poolDomain(name string, items []string) *domain {
	vs := make([]value, len(items))
	for i, s := range items {
		vs[i] = strV(s)
	}
	return &domain{name: name, items: vs, n: int64(len(vs))}
}

// at returns the i-th value, 0 ≤ i < n.
func (d *domain) at(i int64) value {
	if d.items != nil {
		return d.items[i]
	}
	v := new(big.Rat).SetInt64(i)
	v.Mul(v, d.step)
	return numV(v.Add(v, d.lo))
}

func (d *domain) contains(v value) bool {
	if d.items != nil {
		for _, it := range d.items {
			if it.equal(v) {
				return true
			}
		}
		return false
	}
	if v.k != kNum {
		return false
	}
	k := new(big.Rat).Sub(v.n, d.lo)
	k.Quo(k, d.step)
	return k.IsInt() && k.Sign() >= 0 && k.Num().IsInt64() && k.Num().Int64() < d.n
}

func (d *domain) list() ([]value, error) {
	if d.n > maxList {
		return nil, fmt.Errorf("%s has more than %d values", d.name, maxList)
	}
	out := make([]value, d.n)
	for i := range out {
		out[i] = d.at(int64(i))
	}
	return out, nil
}

// distinct draws k values without repeats (Python's random.sample), in draw
// order.
func (d *domain) distinct(r *rand.Rand, k int) ([]value, error) {
	if int64(k) > d.n {
		return nil, fmt.Errorf("cannot draw %d distinct values from %s (%d values)", k, d.name, d.n)
	}
	seen := map[int64]bool{}
	out := make([]value, 0, k)
	for len(out) < k {
		i := r.Int64N(d.n)
		if seen[i] {
			continue
		}
		seen[i] = true
		out = append(out, d.at(i))
	}
	return out, nil
}
