package templates

import (
	"math/big"
	"slices"
)

// Forward checking with interval arithmetic (GSM-Symbolic templates). When a
// variable gets a candidate value, each condition part that it takes part in
// but that later variables complete is evaluated over intervals: a later
// variable stands for the interval of its domain (a computed one for the
// interval of its formula, a solved one for that of its domain). When no
// values in those intervals can satisfy the part, the candidate is refused at
// once, instead of after every later variable has been drawn. Interval
// arithmetic is conservative (Moore, "Interval Analysis", 1966): it never
// refuses a candidate that some completion would accept, so the set of valid
// draws is unchanged; only hopeless partial draws are cut short. A condition
// such as "int(a * b * c * d) < 10000", which independent draws meet a few
// times in a thousand, is met by every draw this way. Parts the intervals
// cannot judge (divisibility, texts) are left to the checks after the draw.

// tri is a three-valued truth: known true, known false, or unknown.
type tri int8

const (
	triUnknown tri = iota
	triTrue
	triFalse
)

// ival is an interval [lo, hi] of exact rationals; ok is false when nothing
// is known.
type ival struct {
	lo, hi *big.Rat
	ok     bool
}

func point(r *big.Rat) ival { return ival{r, r, true} }

// bounder evaluates over intervals for one partial draw.
type bounder struct {
	t       *Template
	vals    map[string]value
	pending map[string]*variable // later variables of this draw, not yet known
	depth   int
	// withBase widens each pending variable's interval to hold its base
	// value too (neverMet: a draw may keep a variable at its base value).
	withBase bool
}

// neverMet reports whether condition c holds for no values its variables
// can take: each variable it reads stands for the interval of its domain
// (a computed one for that of its formula) widened to hold its base value.
// The intervals are conservative (see above), so a condition reported
// cannot hold for any draw, nor for the base values; one not reported may
// still never hold. Under lenientBase such a condition, broken by the base
// values, is exempt only in draws that keep every variable it reads at its
// base value: those variables would never be re-drawn.
func (t *Template) neverMet(c *condition) bool {
	pending := map[string]*variable{}
	for _, x := range t.vars {
		for _, n := range x.names {
			pending[n] = x
		}
	}
	b := &bounder{t: t, vals: map[string]value{}, pending: pending, withBase: true}
	return b.truth(c.e, c.e.tree) == triFalse
}

// feasible reports whether the conjuncts x leaves open can still be met.
// reason names the first that cannot.
func (t *Template) feasible(x *variable, vals map[string]value, pending map[string]*variable) string {
	if len(x.pending) == 0 {
		return ""
	}
	b := &bounder{t: t, vals: vals, pending: pending}
	for _, c := range x.pending {
		if t.baseBroken[c.parent] && !t.leavesBase(x, c.parent, vals) {
			continue // may be exempt (every value it reads at base); judged after the draw
		}
		if b.truth(c.e, c.e.tree) == triFalse {
			return "condition " + quote(c.parent.e.src) + " cannot be met by the values left to draw"
		}
	}
	return ""
}

// leavesBase reports whether condition c reads x directly and x's value is
// not its base value, so that c cannot be exempt.
func (t *Template) leavesBase(x *variable, c *condition, vals map[string]value) bool {
	for _, n := range x.names {
		if slices.Contains(c.e.vars, n) && !vals[n].equal(t.base[n]) {
			return true
		}
	}
	return false
}

func quote(s string) string { return "\"" + s + "\"" }

// known reports whether every variable n reads has its value.
func (b *bounder) known(n pnode) bool {
	ok := true
	walk(n, func(m pnode) {
		if nm, is := m.(*pName); is {
			if _, p := b.pending[nm.name]; p {
				ok = false
			}
		}
	})
	return ok
}

func (b *bounder) truth(e *expression, n pnode) tri {
	if b.known(n) {
		v, err := e.node(n, &env{vars: b.vals})
		if err != nil {
			return triUnknown
		}
		if t, err := truth(v); err == nil {
			if t {
				return triTrue
			}
			return triFalse
		}
		return triUnknown
	}
	switch n := n.(type) {
	case *pUnary:
		if n.op == "not" {
			switch b.truth(e, n.x) {
			case triTrue:
				return triFalse
			case triFalse:
				return triTrue
			}
		}
	case *pBool:
		l, r := b.truth(e, n.l), b.truth(e, n.r)
		if n.op == "and" {
			if l == triFalse || r == triFalse {
				return triFalse
			}
			if l == triTrue && r == triTrue {
				return triTrue
			}
		} else {
			if l == triTrue || r == triTrue {
				return triTrue
			}
			if l == triFalse && r == triFalse {
				return triFalse
			}
		}
	case *pCmp:
		res := triTrue
		left := n.first
		for i, op := range n.ops {
			r := b.cmp(e, op, left, n.rest[i])
			if r == triFalse {
				return triFalse
			}
			if r == triUnknown {
				res = triUnknown
			}
			left = n.rest[i]
		}
		return res
	}
	return triUnknown
}

// cmp compares two intervals.
func (b *bounder) cmp(e *expression, op string, ln, rn pnode) tri {
	l, r := b.interval(e, ln), b.interval(e, rn)
	if !l.ok || !r.ok {
		return triUnknown
	}
	switch op {
	case "<":
		if l.hi.Cmp(r.lo) < 0 {
			return triTrue
		}
		if l.lo.Cmp(r.hi) >= 0 {
			return triFalse
		}
	case "<=":
		if l.hi.Cmp(r.lo) <= 0 {
			return triTrue
		}
		if l.lo.Cmp(r.hi) > 0 {
			return triFalse
		}
	case ">":
		return b.cmp(e, "<", rn, ln)
	case ">=":
		return b.cmp(e, "<=", rn, ln)
	case "==":
		if l.hi.Cmp(r.lo) < 0 || r.hi.Cmp(l.lo) < 0 {
			return triFalse
		}
	case "!=":
		if l.hi.Cmp(r.lo) < 0 || r.hi.Cmp(l.lo) < 0 {
			return triTrue
		}
	}
	return triUnknown
}

// interval bounds a numeric expression.
func (b *bounder) interval(e *expression, n pnode) ival {
	b.depth++
	defer func() { b.depth-- }()
	if b.depth > 2*maxDepth {
		return ival{}
	}
	if b.known(n) {
		v, err := e.node(n, &env{vars: b.vals})
		if err != nil || v.k != kNum {
			return ival{}
		}
		return point(v.n)
	}
	switch n := n.(type) {
	case *pName:
		iv := b.varInterval(b.pending[n.name])
		if b.withBase && iv.ok {
			base, ok := b.t.base[n.name]
			if w := asWorded(base); !ok || w.k != kNum {
				return ival{}
			} else {
				iv = ival{minRat(iv.lo, w.n), maxRat(iv.hi, w.n), true}
			}
		}
		return iv
	case *pUnary:
		x := b.interval(e, n.x)
		switch {
		case !x.ok:
		case n.op == "-":
			return ival{new(big.Rat).Neg(x.hi), new(big.Rat).Neg(x.lo), true}
		case n.op == "+":
			return x
		}
	case *pBin:
		return b.binInterval(e, n)
	case *pCall:
		return b.callInterval(e, n)
	}
	return ival{}
}

// binInterval bounds a binary operator from its operands' intervals (none when
// a divisor interval holds 0).
func (b *bounder) binInterval(e *expression, n *pBin) ival {
	l, r := b.interval(e, n.l), b.interval(e, n.r)
	if !l.ok || !r.ok {
		return ival{}
	}
	switch n.op {
	case "+":
		return ival{new(big.Rat).Add(l.lo, r.lo), new(big.Rat).Add(l.hi, r.hi), true}
	case "-":
		return ival{new(big.Rat).Sub(l.lo, r.hi), new(big.Rat).Sub(l.hi, r.lo), true}
	case "*":
		return span(mul(l.lo, r.lo), mul(l.lo, r.hi), mul(l.hi, r.lo), mul(l.hi, r.hi))
	case "/", "//":
		if r.lo.Sign() <= 0 && r.hi.Sign() >= 0 {
			return ival{} // the divisor may be 0
		}
		q := span(quo(l.lo, r.lo), quo(l.lo, r.hi), quo(l.hi, r.lo), quo(l.hi, r.hi))
		if n.op == "//" {
			return ival{new(big.Rat).SetInt(floorRat(q.lo)), new(big.Rat).SetInt(floorRat(q.hi)), true}
		}
		return q
	case "**":
		if l.lo.Sign() < 0 || r.lo.Cmp(r.hi) != 0 || !r.lo.IsInt() || r.lo.Sign() < 0 || r.lo.Num().Int64() > 16 {
			return ival{}
		}
		p := r.lo.Num().Int64()
		return ival{powRat(l.lo, p), powRat(l.hi, p), true}
	}
	return ival{}
}

// callInterval bounds the monotone helpers (int, floor, ceil, round, min, max)
// and the identities (float, fix_floats, Fraction) of one number.
func (b *bounder) callInterval(e *expression, n *pCall) ival {
	var args []ival
	for _, a := range n.args {
		iv := b.interval(e, a)
		if !iv.ok {
			return ival{}
		}
		args = append(args, iv)
	}
	mono := func(f func(*big.Rat) *big.Rat) ival {
		if len(args) != 1 {
			return ival{}
		}
		return ival{f(args[0].lo), f(args[0].hi), true}
	}
	switch n.name {
	case "int":
		return mono(func(r *big.Rat) *big.Rat { return new(big.Rat).SetInt(truncRat(r)) })
	case "floor", "math.floor":
		return mono(func(r *big.Rat) *big.Rat { return new(big.Rat).SetInt(floorRat(r)) })
	case "ceil", "math.ceil":
		return mono(func(r *big.Rat) *big.Rat { return new(big.Rat).SetInt(ceilRat(r)) })
	case "round":
		if len(args) == 1 {
			return mono(func(r *big.Rat) *big.Rat { return roundHalfEven(r, 0) })
		}
	case "float", "fix_floats", "Fraction":
		if len(args) == 1 {
			return args[0]
		}
	case "min", "max":
		if len(args) < 2 {
			return ival{}
		}
		out := args[0]
		for _, a := range args[1:] {
			if n.name == "min" {
				out = ival{minRat(out.lo, a.lo), minRat(out.hi, a.hi), true}
			} else {
				out = ival{maxRat(out.lo, a.lo), maxRat(out.hi, a.hi), true}
			}
		}
		return out
	}
	return ival{}
}

// varInterval bounds a variable not yet drawn: its domain, or its formula.
func (b *bounder) varInterval(x *variable) ival {
	if x == nil {
		return ival{}
	}
	if x.derived != nil {
		return b.interval(x.derived, x.derived.tree)
	}
	if x.draw == nil || !b.known(x.draw.tree) {
		return ival{} // its domain depends on values not drawn yet
	}
	d, err := x.domainAt(&env{vars: b.vals})
	if err != nil {
		return ival{}
	}
	if d.items == nil {
		last := new(big.Rat).Mul(new(big.Rat).SetInt64(d.n-1), d.step)
		last.Add(last, d.lo)
		return span(d.lo, last)
	}
	var out ival
	for _, it := range d.items {
		w := asWorded(it)
		if w.k != kNum {
			return ival{}
		}
		if !out.ok {
			out = point(w.n)
			continue
		}
		out = ival{minRat(out.lo, w.n), maxRat(out.hi, w.n), true}
	}
	return out
}

func mul(a, b *big.Rat) *big.Rat { return new(big.Rat).Mul(a, b) }
func quo(a, b *big.Rat) *big.Rat { return new(big.Rat).Quo(a, b) }

func span(rs ...*big.Rat) ival {
	lo, hi := rs[0], rs[0]
	for _, r := range rs[1:] {
		lo, hi = minRat(lo, r), maxRat(hi, r)
	}
	return ival{lo, hi, true}
}

func minRat(a, b *big.Rat) *big.Rat {
	if a.Cmp(b) <= 0 {
		return a
	}
	return b
}

func maxRat(a, b *big.Rat) *big.Rat {
	if a.Cmp(b) >= 0 {
		return a
	}
	return b
}

func powRat(r *big.Rat, p int64) *big.Rat {
	out := big.NewRat(1, 1)
	for i := int64(0); i < p; i++ {
		out.Mul(out, r)
	}
	return out
}
