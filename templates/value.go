package templates

import (
	"fmt"
	"math/big"
	"strings"
)

// kind is the dynamic type of a value in an expression.
type kind uint8

const (
	kNum    kind = iota + 1 // exact rational number
	kStr                    // text (a name, an item, a currency sign)
	kBool                   // truth value of a condition
	kList                   // literal list or a multi-value draw
	kDomain                 // a set to sample from: range(...), a pool
)

// value is one expression value. Numbers are exact rationals; nothing in this
// package computes with floating point.
type value struct {
	k     kind
	n     *big.Rat
	s     string
	b     bool
	l     []value
	dom   *domain
	form  string // kNum: the surface form of a worded number ("half", "twice", "six-sided"); "" for a plain number
	tuple bool   // kList: written as a tuple (a, b)
}

func numV(r *big.Rat) value { return value{k: kNum, n: r} }

// wordedV is a worded number: arithmetic uses r, text shows form.
func wordedV(r *big.Rat, form string) value { return value{k: kNum, n: r, form: form} }

// asWorded turns a pair (form, number) — a tuple drawn from a list such as
// [("six-sided", 6), ...] — into a worded number; other values are returned
// unchanged.
func asWorded(v value) value {
	if v.k != kList || len(v.l) != 2 || v.l[1].k != kNum {
		return v
	}
	switch f := v.l[0]; f.k {
	case kStr:
		return wordedV(v.l[1].n, f.s)
	case kNum:
		return wordedV(v.l[1].n, f.String())
	}
	return v
}
func intV(i int64) value  { return value{k: kNum, n: new(big.Rat).SetInt64(i)} }
func strV(s string) value { return value{k: kStr, s: s} }
func boolV(b bool) value  { return value{k: kBool, b: b} }

func (v value) kindName() string {
	switch v.k {
	case kNum:
		return "number"
	case kStr:
		return "text"
	case kBool:
		return "boolean"
	case kList:
		return "list"
	case kDomain:
		return "domain"
	}
	return "nothing"
}

// equal reports whether two values are the same (numbers by exact value).
func (v value) equal(w value) bool {
	if v.k != w.k {
		return false
	}
	switch v.k {
	case kNum:
		return v.n.Cmp(w.n) == 0
	case kStr:
		return v.s == w.s
	case kBool:
		return v.b == w.b
	case kList:
		if len(v.l) != len(w.l) {
			return false
		}
		for i := range v.l {
			if !v.l[i].equal(w.l[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// String renders a value as it appears in question text: numbers in exact
// decimal form (shortest, no exponent; a non-terminating fraction as a/b).
func (v value) String() string {
	switch v.k {
	case kNum:
		if v.form != "" {
			return v.form
		}
		if s, ok := formatRat(v.n); ok {
			return s
		}
		return v.n.RatString()
	case kStr:
		return v.s
	case kBool:
		if v.b {
			return "True"
		}
		return "False"
	case kList:
		parts := make([]string, len(v.l))
		for i, e := range v.l {
			parts[i] = e.String()
		}
		if v.tuple {
			if len(parts) == 1 {
				return "(" + parts[0] + ",)"
			}
			return "(" + strings.Join(parts, ", ") + ")"
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case kDomain:
		return "<domain>"
	}
	return ""
}

// formatRat writes r as an exact decimal string ("39", "12.5", "-3",
// "0.125"), with no exponent and no trailing zeros. ok is false when r has no
// terminating decimal expansion (its reduced denominator has a prime factor
// other than 2 and 5).
func formatRat(r *big.Rat) (s string, ok bool) {
	if r.IsInt() {
		return r.Num().String(), true
	}
	den := new(big.Int).Set(r.Denom())
	two, five := big.NewInt(2), big.NewInt(5)
	digits := 0
	m := new(big.Int)
	for _, p := range []*big.Int{two, five} {
		for {
			q, rem := new(big.Int).QuoRem(den, p, m)
			if rem.Sign() != 0 {
				break
			}
			den = q
		}
	}
	if den.Cmp(big.NewInt(1)) != 0 {
		return "", false
	}
	// Count the decimal places needed: the smallest d with 10^d divisible by
	// the denominator.
	d := new(big.Int).Set(r.Denom())
	ten := big.NewInt(10)
	pow := big.NewInt(1)
	for new(big.Int).Rem(pow, d).Sign() != 0 {
		pow.Mul(pow, ten)
		digits++
	}
	return r.FloatString(digits), true
}

// formatFixed writes r rounded half-to-even to exactly dec decimal places.
func formatFixed(r *big.Rat, dec int) string {
	return roundHalfEven(r, dec).FloatString(dec)
}

// parseNumber reads a decimal literal ("12", "-3", "12.50", "1,200", "1e3")
// as an exact rational. Thousands separators are accepted only between groups
// of three digits.
func parseNumber(s string) (*big.Rat, bool) {
	t := strings.TrimSpace(s)
	if t == "" || len(t) > 64 {
		return nil, false
	}
	if strings.Contains(t, ",") {
		intPart, _, _ := strings.Cut(strings.TrimLeft(t, "+-"), ".")
		groups := strings.Split(intPart, ",")
		if len(groups[0]) == 0 || len(groups[0]) > 3 {
			return nil, false
		}
		for _, g := range groups[1:] {
			if len(g) != 3 {
				return nil, false
			}
		}
		t = strings.ReplaceAll(t, ",", "")
	}
	for _, c := range t {
		if !(c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E') {
			return nil, false
		}
	}
	if strings.ContainsAny(t, "eE") {
		// Exponents are rare in word problems; keep them small.
		_, exp, _ := strings.Cut(strings.ToLower(t), "e")
		if len(strings.TrimLeft(exp, "+-")) > 2 {
			return nil, false
		}
	}
	r, ok := new(big.Rat).SetString(t)
	if !ok {
		return nil, false
	}
	return r, true
}

// maxBits bounds the size of numerators and denominators during evaluation,
// so that a hostile or mistaken expression cannot exhaust memory.
const maxBits = 256

func checkSize(r *big.Rat) error {
	if r.Num().BitLen() > maxBits || r.Denom().BitLen() > maxBits {
		return fmt.Errorf("number too large")
	}
	return nil
}

// floorRat returns the largest integer ≤ r.
func floorRat(r *big.Rat) *big.Int {
	// Euclidean division; the denominator of a big.Rat is always positive,
	// so the Euclidean quotient is the floor.
	q, _ := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
	return q
}

// ceilRat returns the smallest integer ≥ r.
func ceilRat(r *big.Rat) *big.Int {
	f := floorRat(r)
	if !r.IsInt() {
		f.Add(f, big.NewInt(1))
	}
	return f
}

// truncRat returns r rounded toward zero (Python's int()).
func truncRat(r *big.Rat) *big.Int {
	return new(big.Int).Quo(r.Num(), r.Denom())
}

// roundHalfEven rounds r to dec decimal places with ties to even, which is
// Python 3's round() on an exactly represented value.
func roundHalfEven(r *big.Rat, dec int) *big.Rat {
	scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(dec))), nil))
	x := new(big.Rat).Set(r)
	if dec >= 0 {
		x.Mul(x, scale)
	} else {
		x.Quo(x, scale)
	}
	f := floorRat(x)
	diff := new(big.Rat).Sub(x, new(big.Rat).SetInt(f)) // in [0,1)
	half := big.NewRat(1, 2)
	switch diff.Cmp(half) {
	case 1:
		f.Add(f, big.NewInt(1))
	case 0:
		if f.Bit(0) == 1 { // odd: round up to even
			f.Add(f, big.NewInt(1))
		}
	}
	out := new(big.Rat).SetInt(f)
	if dec >= 0 {
		out.Quo(out, scale)
	} else {
		out.Mul(out, scale)
	}
	return out
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}
