package templates

import (
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
)

// expression is a compiled Python expression. Parsing is done by gpython's
// Python parser and the tree converted by pyparse.go; evaluation is over
// exact rationals, with Python's semantics for //, %, int() and round().
type expression struct {
	src   string
	tree  pnode
	ndivs int      // number of / and // operators (indexed by pBin.div)
	vars  []string // identifiers read (not called), first-use order
	calls []string // helper names called, first-use order
}

// helpers lists every function an expression may call, with a one-line
// meaning used in error messages and the README.
var helpers = map[string]string{
	"int":               "truncate toward zero",
	"float":             "the same exact value",
	"round":             "round half to even, to n decimals (default 0)",
	"abs":               "absolute value",
	"min":               "smallest argument",
	"max":               "largest argument",
	"floor":             "largest integer ≤ x",
	"ceil":              "smallest integer ≥ x",
	"math.floor":        "largest integer ≤ x",
	"math.ceil":         "smallest integer ≥ x",
	"sum":               "sum of a list",
	"len":               "length of a list",
	"divides":           "divides(a, b): b divides a exactly",
	"is_int":            "x is an integer value",
	"fix_floats":        "the same exact value (a number, list or domain): exact arithmetic has no float error to fix",
	"Fraction":          "Fraction(a[, b]): the exact fraction a/b; a may be a text such as \"3/4\"",
	"range":             "range(a, b[, step]): a ≤ v < b (init only)",
	"frange":            "frange(a, b[, step]): decimal range, b exclusive (init only)",
	"arange":            "like frange (init only)",
	"np.arange":         "like frange (init only)",
	"numbers_within":    "numbers_within(a, b): integers a..b inclusive (init only)",
	"np.random.randint": "np.random.randint([a,] b[, size]): integers a ≤ v < b (a defaults to 0); with size, the domain a ≤ v < b to sample from (init only)",
	"sample":            "sample(x[, k]): one value, or k distinct values, of a domain, list or pool (init only)",
	"sample_sequential": "sample_sequential(x, k): k distinct values (init only)",
	"list":              "a domain as a list",
	"shuffle_list":      "the same list (order does not matter to sampling)",
	"random.choice":     "like sample(x) (init only)",
	"np.random.choice":  "like sample(x) (init only)",
	"random.sample":     "like sample(x, k) (init only)",
	"random.randint":    "random.randint(a, b): one integer a ≤ v ≤ b (init only)",
	"str":               "the value as it is written in text",
	"pow":               "pow(a, b): a ** b",
	"math.gcd":          "greatest common divisor of integers",
	"math.lcm":          "least common multiple of integers",
	"math.sqrt":         "exact square root (an error when it is irrational)",
	"sorted":            "a list in ascending order",
	"any":               "some element of a list is true",
	"all":               "every element of a list is true",
}

// initOnly are the helpers that draw at random: allowed in #init lines and
// own-format variable specs only.
var initOnly = map[string]bool{
	"range": true, "frange": true, "arange": true, "np.arange": true, "numbers_within": true,
	"np.random.randint": true, "sample": true, "sample_sequential": true, "random.choice": true,
	"np.random.choice": true, "random.sample": true, "random.randint": true,
}

// catchPanics turns a panic inside a parser or the evaluator into an error
// (the default: bad input must never crash the tool). The fuzz tests turn it
// off so that a panic is seen and fixed instead of hidden.
var catchPanics = true

// constants are the Python names every expression can read.
var constants = map[string]value{
	"True":  boolV(true),
	"False": boolV(false),
}

// compileExpr parses src (Python syntax) into an expression. Errors are one
// line and name what is wrong; they never include the source position of the
// enclosing file (the caller adds it). An expression wrapped in braces as a
// whole ("{a + b}", the answer_annotated style) is the expression inside.
func compileExpr(src string) (e *expression, err error) {
	defer func() {
		if !catchPanics {
			return
		}
		if r := recover(); r != nil {
			e, err = nil, fmt.Errorf("cannot parse expression %q", src)
		}
	}()
	if strings.TrimSpace(src) == "" {
		return nil, errors.New("empty expression")
	}
	if len(src) > 4096 {
		return nil, errors.New("expression longer than 4096 bytes")
	}
	tree, ndivs, perr := parsePython(src)
	if perr != nil {
		var se *pySyntaxError
		if errors.As(perr, &se) {
			return nil, fmt.Errorf("syntax error in expression %q at column %d: %s", src, se.at+1, se.msg)
		}
		return nil, fmt.Errorf("expression %q: %v", src, perr)
	}
	if l, ok := tree.(*pList); ok && l.kind == '{' && len(l.elts) == 1 {
		tree = l.elts[0]
	}
	e = &expression{src: src, tree: tree, ndivs: ndivs}
	if err := e.scan(tree); err != nil {
		return nil, fmt.Errorf("expression %q: %w", src, err)
	}
	return e, nil
}

// scan checks that every call names a known helper and collects the
// identifiers read and the helpers called.
func (e *expression) scan(n pnode) error {
	switch n := n.(type) {
	case *pNum, *pStr:
		return nil
	case *pName:
		if !slices.Contains(e.vars, n.name) {
			e.vars = append(e.vars, n.name)
		}
		return nil
	case *pList:
		if n.kind == '{' {
			return errors.New("sets are not supported")
		}
		for _, a := range n.elts {
			if err := e.scan(a); err != nil {
				return err
			}
		}
		return nil
	case *pBin:
		if err := e.scan(n.l); err != nil {
			return err
		}
		return e.scan(n.r)
	case *pUnary:
		return e.scan(n.x)
	case *pBool:
		if err := e.scan(n.l); err != nil {
			return err
		}
		return e.scan(n.r)
	case *pCmp:
		if err := e.scan(n.first); err != nil {
			return err
		}
		for _, r := range n.rest {
			if err := e.scan(r); err != nil {
				return err
			}
		}
		return nil
	case *pIf:
		for _, x := range []pnode{n.test, n.body, n.orelse} {
			if err := e.scan(x); err != nil {
				return err
			}
		}
		return nil
	case *pCall:
		if _, ok := helpers[n.name]; !ok {
			return fmt.Errorf("unknown helper %q", n.name)
		}
		if !slices.Contains(e.calls, n.name) {
			e.calls = append(e.calls, n.name)
		}
		for _, a := range n.args {
			if err := e.scan(a); err != nil {
				return err
			}
		}
		return nil
	case *pIndex:
		if err := e.scan(n.x); err != nil {
			return err
		}
		return e.scan(n.i)
	case *pSlice:
		for _, x := range []pnode{n.x, n.lo, n.hi, n.stride} {
			if x != nil {
				if err := e.scan(x); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return errors.New("unsupported syntax")
}

// usesInitHelpers reports whether the expression draws at random.
func (e *expression) usesInitHelpers() bool {
	for _, c := range e.calls {
		if initOnly[c] {
			return true
		}
	}
	return false
}

// env is what an evaluation sees.
type env struct {
	vars    map[string]value
	rng     *rand.Rand                               // non-nil only while drawing (#init, variable specs)
	domains bool                                     // with rng nil: sampling helpers give the domain they would draw from
	divs    func(e *expression, idx int, exact bool) // optional: records each / and // (idx: pBin.div)
	pools   map[string][]value                       // named pools; nil means the package pools
}

// eval evaluates the expression.
func (e *expression) eval(en *env) (v value, err error) {
	defer func() {
		if !catchPanics {
			return
		}
		if r := recover(); r != nil {
			v, err = value{}, fmt.Errorf("cannot evaluate %q", e.src)
		}
	}()
	return e.node(e.tree, en)
}

// evalNum evaluates to a number or fails saying what it got.
func (e *expression) evalNum(en *env) (*big.Rat, error) {
	v, err := e.eval(en)
	if err != nil {
		return nil, err
	}
	if v.k != kNum {
		return nil, fmt.Errorf("%q is a %s, not a number", e.src, v.kindName())
	}
	return v.n, nil
}

// evalBool evaluates a condition.
func (e *expression) evalBool(en *env) (bool, error) {
	v, err := e.eval(en)
	if err != nil {
		return false, err
	}
	switch v.k {
	case kBool:
		return v.b, nil
	case kNum:
		return v.n.Sign() != 0, nil
	}
	return false, fmt.Errorf("condition %q is a %s, not true or false", e.src, v.kindName())
}

// node evaluates one parsed node in en, one function per kind of node.
func (e *expression) node(n pnode, en *env) (value, error) {
	switch n := n.(type) {
	case *pNum:
		return numV(new(big.Rat).Set(n.r)), nil
	case *pStr:
		return strV(n.s), nil
	case *pName:
		return e.nodeName(n, en)
	case *pList:
		return e.nodeList(n, en)
	case *pUnary:
		return e.nodeUnary(n, en)
	case *pBool: // short-circuit; the value is an operand, as in Python
		return e.nodeBool(n, en)
	case *pCmp:
		return e.nodeCmp(n, en)
	case *pIf:
		return e.nodeIf(n, en)
	case *pBin:
		return e.binary(n, en)
	case *pCall:
		return e.call(n.name, n.args, en)
	case *pIndex:
		return e.nodeIndex(n, en)
	case *pSlice:
		return e.nodeSlice(n, en)
	}
	return value{}, errors.New("unsupported syntax")
}

// nodeName is a variable's value, then a constant, then a pool of names as a domain.
func (e *expression) nodeName(n *pName, en *env) (value, error) {
	if v, ok := en.vars[n.name]; ok {
		return v, nil
	}
	if v, ok := constants[n.name]; ok {
		return v, nil
	}
	if items, ok := lookupPool(en.pools, n.name); ok {
		return value{k: kDomain, dom: &domain{name: n.name, items: items, n: int64(len(items))}}, nil
	}
	return value{}, fmt.Errorf("unknown variable or pool %q", n.name)
}

// nodeList is a list or tuple display; a set display is an error.
func (e *expression) nodeList(n *pList, en *env) (value, error) {
	if n.kind == '{' {
		return value{}, errors.New("sets are not supported")
	}
	l := make([]value, 0, len(n.elts))
	for _, a := range n.elts {
		v, err := e.node(a, en)
		if err != nil {
			return value{}, err
		}
		l = append(l, v)
	}
	return value{k: kList, l: l, tuple: n.kind == '('}, nil
}

// nodeUnary is not, unary minus and unary plus.
func (e *expression) nodeUnary(n *pUnary, en *env) (value, error) {
	v, err := e.node(n.x, en)
	if err != nil {
		return value{}, err
	}
	switch n.op {
	case "not":
		b, err := truth(v)
		return boolV(!b), err
	case "-":
		if v.k != kNum {
			return value{}, fmt.Errorf("cannot negate a %s", v.kindName())
		}
		return numV(new(big.Rat).Neg(v.n)), nil
	case "+":
		if v.k != kNum {
			return value{}, fmt.Errorf("unary + on a %s", v.kindName())
		}
		return numV(v.n), nil
	}
	return value{}, errors.New("unsupported syntax")
}

// nodeBool is and/or, short-circuited; the value is an operand, as in Python.
func (e *expression) nodeBool(n *pBool, en *env) (value, error) {
	l, err := e.node(n.l, en)
	if err != nil {
		return value{}, err
	}
	lb, err := truth(l)
	if err != nil {
		return value{}, err
	}
	if n.op == "and" && !lb || n.op == "or" && lb {
		return l, nil
	}
	return e.node(n.r, en)
}

// nodeCmp is a chain of comparisons, as in Python (a < b < c).
func (e *expression) nodeCmp(n *pCmp, en *env) (value, error) {
	l, err := e.node(n.first, en)
	if err != nil {
		return value{}, err
	}
	for i, op := range n.ops {
		r, err := e.node(n.rest[i], en)
		if err != nil {
			return value{}, err
		}
		ok, err := compare(op, l, r)
		if err != nil {
			return value{}, err
		}
		if !ok {
			return boolV(false), nil
		}
		l = r
	}
	return boolV(true), nil
}

// nodeIf is the conditional expression body if test else orelse.
func (e *expression) nodeIf(n *pIf, en *env) (value, error) {
	c, err := e.node(n.test, en)
	if err != nil {
		return value{}, err
	}
	b, err := truth(c)
	if err != nil {
		return value{}, err
	}
	if b {
		return e.node(n.body, en)
	}
	return e.node(n.orelse, en)
}

// nodeIndex is x[i].
func (e *expression) nodeIndex(n *pIndex, en *env) (value, error) {
	x, err := e.node(n.x, en)
	if err != nil {
		return value{}, err
	}
	i, err := e.node(n.i, en)
	if err != nil {
		return value{}, err
	}
	return index(x, i)
}

// nodeSlice is x[lo:hi:stride] with integer bounds.
func (e *expression) nodeSlice(n *pSlice, en *env) (value, error) {
	x, err := e.node(n.x, en)
	if err != nil {
		return value{}, err
	}
	var bounds [3]*big.Rat
	for j, b := range []pnode{n.lo, n.hi, n.stride} {
		if b == nil {
			continue
		}
		v, err := e.node(b, en)
		if err != nil {
			return value{}, err
		}
		if v.k != kNum || !v.n.IsInt() {
			return value{}, fmt.Errorf("a slice bound must be an integer, not a %s", v.kindName())
		}
		bounds[j] = v.n
	}
	return slice(x, bounds)
}

// truth is Python's truth value: zero, empty texts and empty lists are false.
func truth(v value) (bool, error) {
	switch v.k {
	case kBool:
		return v.b, nil
	case kNum:
		return v.n.Sign() != 0, nil
	case kStr:
		return v.s != "", nil
	case kList:
		return len(v.l) > 0, nil
	}
	return false, fmt.Errorf("a %s is not true or false", v.kindName())
}

// compare applies one comparison operator.
func compare(op string, l, r value) (bool, error) {
	switch op {
	case "==":
		return l.equal(r), nil
	case "!=":
		return !l.equal(r), nil
	case "in", "not in":
		var in bool
		switch r.k {
		case kList:
			in = slices.ContainsFunc(r.l, l.equal)
		case kDomain:
			in = r.dom.contains(l)
		case kStr:
			if l.k != kStr {
				return false, fmt.Errorf("%q with a text needs a text on the left, not a %s", op, l.kindName())
			}
			in = strings.Contains(r.s, l.s)
		default:
			return false, fmt.Errorf("%q needs a list, not a %s", op, r.kindName())
		}
		return in == (op == "in"), nil
	}
	var c int
	switch {
	case l.k == kNum && r.k == kNum:
		c = l.n.Cmp(r.n)
	case l.k == kStr && r.k == kStr:
		c = strings.Compare(l.s, r.s)
	default:
		return false, fmt.Errorf("%q needs numbers, got %s and %s", op, l.kindName(), r.kindName())
	}
	switch op {
	case "<":
		return c < 0, nil
	case ">":
		return c > 0, nil
	case "<=":
		return c <= 0, nil
	case ">=":
		return c >= 0, nil
	}
	return false, fmt.Errorf("unsupported operator %q", op)
}

// asList returns the elements of a list, or of a domain given by items (a
// pool), for list arithmetic.
func asList(v value) ([]value, bool) {
	switch v.k {
	case kList:
		return v.l, true
	case kDomain:
		if v.dom.items != nil {
			return v.dom.items, true
		}
		if l, err := v.dom.list(); err == nil {
			return l, true
		}
	}
	return nil, false
}

// index is x[i]: an element of a list, tuple or text, or a part of a worded
// number (0: its surface form, 1: its value; a worded number behaves as the
// pair (form, value) that it was drawn from).
func index(x, i value) (value, error) {
	if i.k != kNum || !i.n.IsInt() || i.n.Num().BitLen() > 31 {
		return value{}, fmt.Errorf("an index must be a small integer, not %s", i)
	}
	k := int(i.n.Num().Int64())
	var n int
	switch x.k {
	case kList:
		n = len(x.l)
	case kStr:
		n = len([]rune(x.s))
	case kNum:
		if x.form == "" {
			return value{}, errors.New("cannot index a number")
		}
		n = 2
	case kDomain:
		n = int(min(x.dom.n, 1<<31-1))
	default:
		return value{}, fmt.Errorf("cannot index a %s", x.kindName())
	}
	if k < 0 {
		k += n
	}
	if k < 0 || k >= n {
		return value{}, fmt.Errorf("index %s out of range (length %d)", i, n)
	}
	switch x.k {
	case kList:
		return x.l[k], nil
	case kStr:
		return strV(string([]rune(x.s)[k])), nil
	case kNum:
		if k == 0 {
			return strV(x.form), nil
		}
		return numV(x.n), nil
	}
	return x.dom.at(int64(k)), nil
}

// slice is x[lo:hi:step] with Python's rules for omitted and negative bounds.
func slice(x value, b [3]*big.Rat) (value, error) {
	var items []value
	switch x.k {
	case kList:
		items = x.l
	case kDomain:
		l, err := x.dom.list()
		if err != nil {
			return value{}, err
		}
		items = l
	case kStr:
		for _, r := range x.s {
			items = append(items, strV(string(r)))
		}
	default:
		return value{}, fmt.Errorf("cannot slice a %s", x.kindName())
	}
	n := len(items)
	step := 1
	if b[2] != nil {
		if b[2].Num().BitLen() > 31 || b[2].Sign() == 0 {
			return value{}, errors.New("bad slice step")
		}
		step = int(b[2].Num().Int64())
	}
	clamp := func(r *big.Rat, def int) int {
		if r == nil {
			return def
		}
		if r.Num().BitLen() > 31 {
			if r.Sign() < 0 {
				return -1
			}
			return n
		}
		k := int(r.Num().Int64())
		if k < 0 {
			k += n
		}
		if step > 0 {
			return max(0, min(k, n))
		}
		return max(-1, min(k, n-1))
	}
	var out []value
	if step > 0 {
		for i := clamp(b[0], 0); i < clamp(b[1], n); i += step {
			out = append(out, items[i])
		}
	} else {
		for i := clamp(b[0], n-1); i > clamp(b[1], -1); i += step {
			out = append(out, items[i])
		}
	}
	if x.k == kStr {
		var sb strings.Builder
		for _, v := range out {
			sb.WriteString(v.s)
		}
		return strV(sb.String()), nil
	}
	return value{k: kList, l: out, tuple: x.tuple}, nil
}

// binary evaluates a binary operator: sequences first, then exact rational
// arithmetic with Python's // and % (floor) semantics.
func (e *expression) binary(n *pBin, en *env) (value, error) {
	l, err := e.node(n.l, en)
	if err != nil {
		return value{}, err
	}
	r, err := e.node(n.r, en)
	if err != nil {
		return value{}, err
	}
	// Lists and texts: concatenation and repetition, as in Python.
	if v, ok, err := sequenceOp(n.op, l, r); ok || err != nil {
		return v, err
	}
	if l.k != kNum || r.k != kNum {
		return value{}, fmt.Errorf("%q needs numbers, got %s and %s", n.op, l.kindName(), r.kindName())
	}
	a, b := l.n, r.n
	out := new(big.Rat)
	switch n.op {
	case "+":
		out.Add(a, b)
	case "-":
		out.Sub(a, b)
	case "*":
		out.Mul(a, b)
	case "/", "//":
		if b.Sign() == 0 {
			return value{}, fmt.Errorf("division by zero in %q", e.src)
		}
		out.Quo(a, b)
		exact := out.IsInt()
		if n.op == "//" {
			out.SetInt(floorRat(out))
		}
		if en.divs != nil {
			en.divs(e, n.div, exact)
		}
	case "%":
		if b.Sign() == 0 {
			return value{}, fmt.Errorf("modulo by zero in %q", e.src)
		}
		q := new(big.Rat).SetInt(floorRat(new(big.Rat).Quo(a, b)))
		out.Sub(a, q.Mul(q, b)) // Python: the result has the sign of b
	case "**":
		if err := e.power(out, a, b); err != nil {
			return value{}, err
		}
	default:
		return value{}, fmt.Errorf("unsupported operator %q", n.op)
	}
	if err := checkSize(out); err != nil {
		return value{}, fmt.Errorf("%w in %q", err, e.src)
	}
	return numV(out), nil
}

// sequenceOp is + and * on texts and lists (concatenation and repetition, as
// in Python); ok is false when the operands are not sequences for op, and the
// caller goes on to arithmetic.
func sequenceOp(op string, l, r value) (v value, ok bool, err error) {
	switch op {
	case "+":
		if l.k == kStr && r.k == kStr {
			return strV(l.s + r.s), true, nil
		}
		ll, lok := asList(l)
		rl, rok := asList(r)
		if lok && rok {
			if len(ll)+len(rl) > maxList {
				return value{}, true, fmt.Errorf("list longer than %d values", maxList)
			}
			return value{k: kList, l: slices.Concat(ll, rl)}, true, nil
		}
	case "*":
		lst, cnt := l, r
		if r.k == kList || r.k == kDomain {
			lst, cnt = r, l
		}
		if items, ok := asList(lst); ok && lst.k != kNum {
			if cnt.k != kNum || !cnt.n.IsInt() {
				return value{}, true, fmt.Errorf("a list can be repeated by an integer, not a %s", cnt.kindName())
			}
			if cnt.n.Sign() > 0 && (cnt.n.Num().BitLen() > 31 || int64(len(items))*cnt.n.Num().Int64() > maxList) {
				return value{}, true, fmt.Errorf("list longer than %d values", maxList)
			}
			var out []value
			for i := int64(0); i < cnt.n.Num().Int64(); i++ {
				out = append(out, items...)
			}
			return value{k: kList, l: out}, true, nil
		}
	}
	return value{}, false, nil
}

// power sets out to a ** b for an integer b with |b| ≤ 64; the errors name the
// expression.
func (e *expression) power(out, a, b *big.Rat) error {
	if !b.IsInt() {
		return fmt.Errorf("non-integer power in %q", e.src)
	}
	if b.Num().BitLen() > 7 || b.Num().Int64() > 64 || b.Num().Int64() < -64 {
		return fmt.Errorf("power too large in %q", e.src)
	}
	p := b.Num().Int64()
	if a.Sign() == 0 && p < 0 {
		return fmt.Errorf("division by zero (0 to a negative power) in %q", e.src)
	}
	pp := big.NewInt(int64(abs(int(p))))
	num := new(big.Int).Exp(a.Num(), pp, nil)
	den := new(big.Int).Exp(a.Denom(), pp, nil)
	if p < 0 {
		num, den = den, num
	}
	out.SetFrac(num, den)
	return nil
}

func (e *expression) args(args []pnode, en *env) ([]value, error) {
	vs := make([]value, len(args))
	for i, a := range args {
		v, err := e.node(a, en)
		if err != nil {
			return nil, err
		}
		vs[i] = v
	}
	return vs, nil
}

func nums(name string, vs []value, min, max int) ([]*big.Rat, error) {
	if len(vs) < min || len(vs) > max {
		if min == max {
			return nil, fmt.Errorf("%s takes %d argument(s), got %d", name, min, len(vs))
		}
		return nil, fmt.Errorf("%s takes %d to %d arguments, got %d", name, min, max, len(vs))
	}
	out := make([]*big.Rat, len(vs))
	for i, v := range vs {
		if v.k != kNum {
			return nil, fmt.Errorf("%s needs numbers, argument %d is a %s", name, i+1, v.kindName())
		}
		out[i] = v.n
	}
	return out, nil
}

// call evaluates a helper call; each helper or family of helpers is its own
// function below, and the random ones are allowed only in #init lines.
func (e *expression) call(name string, argNodes []pnode, en *env) (value, error) {
	if initOnly[name] && en.rng == nil && !en.domains {
		return value{}, fmt.Errorf("%s draws at random and is allowed only in #init lines", name)
	}
	vs, err := e.args(argNodes, en)
	if err != nil {
		return value{}, err
	}
	switch name {
	case "fix_floats":
		return callFixFloats(name, vs)
	case "pow":
		return e.callPow(name, vs, en)
	case "math.gcd", "math.lcm":
		return callGCDLCM(name, vs)
	case "math.sqrt":
		return callSqrt(name, vs)
	case "sorted", "any", "all":
		return callSortedAnyAll(name, vs)
	case "str":
		return callStr(name, vs)
	case "Fraction":
		return e.callFraction(name, vs, en)
	case "int", "float", "abs", "floor", "ceil", "math.floor", "math.ceil", "is_int":
		return callNumber1(name, vs)
	case "round":
		return callRound(name, vs)
	case "divides":
		return callDivides(name, vs)
	case "min", "max", "sum", "len":
		return callAggregate(name, vs)
	case "list", "shuffle_list":
		return callList(name, vs)
	case "range", "frange", "arange", "np.arange", "numbers_within":
		return callRange(name, vs)
	case "np.random.randint", "random.randint":
		return e.callRandint(name, vs, en)
	case "sample", "sample_sequential", "random.choice", "np.random.choice", "random.sample":
		return e.callSample(name, vs, en)
	}
	return value{}, fmt.Errorf("unknown helper %q", name)
}

// callFixFloats returns its one number, list or domain unchanged: values are
// exact rationals already, so Python's float clean-up has nothing to do.
func callFixFloats(name string, vs []value) (value, error) {
	if len(vs) != 1 {
		return value{}, fmt.Errorf("fix_floats takes one argument, got %d", len(vs))
	}
	switch vs[0].k {
	case kNum, kList, kDomain:
		return vs[0], nil
	}
	return value{}, fmt.Errorf("fix_floats needs a number or a list, not a %s", vs[0].kindName())
}

// callPow is pow(a, b), evaluated as a ** b.
func (e *expression) callPow(name string, vs []value, en *env) (value, error) {
	a, err := nums(name, vs, 2, 2)
	if err != nil {
		return value{}, err
	}
	return e.binary(&pBin{op: "**", l: &pNum{r: a[0]}, r: &pNum{r: a[1]}, div: -1}, en)
}

// callGCDLCM is math.gcd and math.lcm of one to eight integers (absolute
// values; lcm with a zero is 0).
func callGCDLCM(name string, vs []value) (value, error) {
	a, err := nums(name, vs, 1, 8)
	if err != nil {
		return value{}, err
	}
	acc := new(big.Int)
	for i, x := range a {
		if !x.IsInt() {
			return value{}, fmt.Errorf("%s needs integers, got %s", name, x.RatString())
		}
		n := new(big.Int).Abs(x.Num())
		switch {
		case i == 0:
			acc.Set(n)
		case name == "math.gcd":
			acc.GCD(nil, nil, acc, n)
		case acc.Sign() == 0 || n.Sign() == 0:
			acc.SetInt64(0)
		default:
			g := new(big.Int).GCD(nil, nil, acc, n)
			acc.Mul(acc, n).Quo(acc, g)
		}
	}
	r := new(big.Rat).SetInt(acc)
	return numV(r), checkSize(r)
}

// callSqrt is math.sqrt of a non-negative rational whose root is rational; an
// irrational root is an error.
func callSqrt(name string, vs []value) (value, error) {
	a, err := nums(name, vs, 1, 1)
	if err != nil {
		return value{}, err
	}
	if a[0].Sign() < 0 {
		return value{}, errors.New("math.sqrt of a negative number")
	}
	num, den := new(big.Int).Sqrt(a[0].Num()), new(big.Int).Sqrt(a[0].Denom())
	r := new(big.Rat).SetFrac(num, den)
	if new(big.Rat).Mul(r, r).Cmp(a[0]) != 0 {
		return value{}, fmt.Errorf("math.sqrt(%s) is irrational", a[0].RatString())
	}
	return numV(r), nil
}

// callSortedAnyAll is sorted (stable, numbers or texts of one kind), any and all of one list.
func callSortedAnyAll(name string, vs []value) (value, error) {
	if len(vs) != 1 {
		return value{}, fmt.Errorf("%s takes one list", name)
	}
	items, ok := asList(vs[0])
	if !ok {
		return value{}, fmt.Errorf("%s needs a list, not a %s", name, vs[0].kindName())
	}
	if name == "sorted" {
		out := slices.Clone(items)
		var cmpErr error
		slices.SortStableFunc(out, func(x, y value) int {
			if x.k == kNum && y.k == kNum {
				return x.n.Cmp(y.n)
			}
			if x.k == kStr && y.k == kStr {
				return strings.Compare(x.s, y.s)
			}
			cmpErr = errors.New("sorted needs numbers or texts of one kind")
			return 0
		})
		return value{k: kList, l: out}, cmpErr
	}
	for _, it := range items {
		b, err := truth(it)
		if err != nil {
			return value{}, err
		}
		if name == "any" && b {
			return boolV(true), nil
		}
		if name == "all" && !b {
			return boolV(false), nil
		}
	}
	return boolV(name == "all"), nil
}

// callStr is str(x), the value's text as Python prints it.
func callStr(name string, vs []value) (value, error) {
	if len(vs) != 1 {
		return value{}, fmt.Errorf("str takes one argument, got %d", len(vs))
	}
	return strV(vs[0].String()), nil
}

// callFraction is Fraction(text), Fraction(x) or Fraction(a, b).
func (e *expression) callFraction(name string, vs []value, en *env) (value, error) {
	if len(vs) == 1 && vs[0].k == kStr {
		r, ok := parseFraction(vs[0].s)
		if !ok {
			return value{}, fmt.Errorf("Fraction(%q): not a number", vs[0].s)
		}
		return numV(r), nil
	}
	a, err := nums(name, vs, 1, 2)
	if err != nil {
		return value{}, err
	}
	if len(a) == 1 {
		return numV(a[0]), nil
	}
	if a[1].Sign() == 0 {
		return value{}, fmt.Errorf("division by zero in %q", e.src)
	}
	return numV(new(big.Rat).Quo(a[0], a[1])), nil
}

// callNumber1 is the one-number helpers int (also of a text), float, abs,
// floor, ceil, math.floor, math.ceil and is_int.
func callNumber1(name string, vs []value) (value, error) {
	if name == "int" && len(vs) == 1 && vs[0].k == kStr {
		r, ok := parseNumber(vs[0].s)
		if !ok || !r.IsInt() {
			return value{}, fmt.Errorf("int(%q): not an integer", vs[0].s)
		}
		return numV(r), nil
	}
	a, err := nums(name, vs, 1, 1)
	if err != nil {
		return value{}, err
	}
	x := a[0]
	switch name {
	case "int":
		return numV(new(big.Rat).SetInt(truncRat(x))), nil
	case "abs":
		return numV(new(big.Rat).Abs(x)), nil
	case "floor", "math.floor":
		return numV(new(big.Rat).SetInt(floorRat(x))), nil
	case "ceil", "math.ceil":
		return numV(new(big.Rat).SetInt(ceilRat(x))), nil
	case "is_int":
		return boolV(x.IsInt()), nil
	}
	return numV(x), nil
}

// callRound is round(x) or round(x, decimals), rounding half to even as Python does.
func callRound(name string, vs []value) (value, error) {
	a, err := nums(name, vs, 1, 2)
	if err != nil {
		return value{}, err
	}
	dec := 0
	if len(a) == 2 {
		if !a[1].IsInt() || a[1].Num().BitLen() > 5 {
			return value{}, fmt.Errorf("round: bad number of decimals %s", a[1].RatString())
		}
		dec = int(a[1].Num().Int64())
	}
	return numV(roundHalfEven(a[0], dec)), nil
}

// callDivides is divides(a, b): whether a / b is an integer (false when b is 0).
func callDivides(name string, vs []value) (value, error) {
	a, err := nums(name, vs, 2, 2)
	if err != nil {
		return value{}, err
	}
	if a[1].Sign() == 0 {
		return boolV(false), nil
	}
	return boolV(new(big.Rat).Quo(a[0], a[1]).IsInt()), nil
}

// callAggregate is min, max and sum of several numbers or of one list or
// domain, and len of one list, domain or text.
func callAggregate(name string, vs []value) (value, error) {
	items := vs
	if len(vs) == 1 {
		switch vs[0].k {
		case kList:
			items = vs[0].l
		case kDomain:
			l, err := vs[0].dom.list()
			if err != nil {
				return value{}, err
			}
			items = l
		}
	}
	if name == "len" {
		if len(vs) != 1 {
			return value{}, errors.New("len takes one argument")
		}
		switch vs[0].k {
		case kList, kDomain:
			return intV(int64(len(items))), nil
		case kStr:
			return intV(int64(len([]rune(vs[0].s)))), nil
		}
		return value{}, fmt.Errorf("len of a %s", vs[0].kindName())
	}
	ns, err := nums(name, items, 0, 1<<20)
	if err != nil {
		return value{}, err
	}
	if name == "sum" {
		s := new(big.Rat)
		for _, x := range ns {
			s.Add(s, x)
		}
		return numV(s), checkSize(s)
	}
	if len(ns) == 0 {
		return value{}, fmt.Errorf("%s of nothing", name)
	}
	best := ns[0]
	for _, x := range ns[1:] {
		if name == "min" && x.Cmp(best) < 0 || name == "max" && x.Cmp(best) > 0 {
			best = x
		}
	}
	return numV(best), nil
}

// callList is list and shuffle_list of one list or domain: the values as a
// list, in order (the drawn order is the shuffle).
func callList(name string, vs []value) (value, error) {
	if len(vs) != 1 {
		return value{}, fmt.Errorf("%s takes one argument", name)
	}
	switch vs[0].k {
	case kList:
		return value{k: kList, l: vs[0].l}, nil
	case kDomain:
		l, err := vs[0].dom.list()
		return value{k: kList, l: l}, err
	}
	return value{}, fmt.Errorf("%s needs a list, not a %s", name, vs[0].kindName())
}

// callRange is range, frange, arange, np.arange (stop; start, stop; or start,
// stop, step) and numbers_within (both ends included): a domain.
func callRange(name string, vs []value) (value, error) {
	a, err := nums(name, vs, 1, 3)
	if err != nil {
		return value{}, err
	}
	if name == "range" || name == "numbers_within" {
		for _, x := range a {
			if !x.IsInt() {
				return value{}, fmt.Errorf("%s needs integers, got %s", name, x.RatString())
			}
		}
	}
	lo, hi, step := new(big.Rat), a[0], big.NewRat(1, 1)
	if len(a) >= 2 {
		lo, hi = a[0], a[1]
	}
	if len(a) == 3 {
		step = a[2]
	}
	if name == "numbers_within" {
		if len(a) != 2 {
			return value{}, errors.New("numbers_within takes 2 arguments")
		}
		hi = new(big.Rat).Add(hi, big.NewRat(1, 1))
	}
	d, err := progression(name, lo, hi, step)
	if err != nil {
		return value{}, err
	}
	return value{k: kDomain, dom: d}, nil
}

// callRandint is np.random.randint (stop excluded, optional size) and
// random.randint (both ends included): a draw from en.rng in #init lines, the
// domain otherwise.
func (e *expression) callRandint(name string, vs []value, en *env) (value, error) {
	maxArgs := 3
	if name == "random.randint" {
		maxArgs = 2
	}
	a, err := nums(name, vs, 1, maxArgs)
	if err != nil {
		return value{}, err
	}
	if name == "random.randint" && len(a) != 2 {
		return value{}, errors.New("random.randint takes 2 arguments")
	}
	lo, hi := new(big.Rat), a[0]
	if len(a) >= 2 {
		lo, hi = a[0], a[1]
	}
	if !lo.IsInt() || !hi.IsInt() {
		return value{}, fmt.Errorf("%s needs integers", name)
	}
	if name == "random.randint" {
		hi = new(big.Rat).Add(hi, big.NewRat(1, 1))
	}
	d, err := progression(name, lo, hi, big.NewRat(1, 1))
	if err != nil {
		return value{}, err
	}
	if len(a) == 3 || en.rng == nil {
		// np.random.randint(a, b, size) is size uniform draws from
		// a ≤ v < b; drawing one of them is a uniform draw from that
		// domain, which is what the caller samples.
		return value{k: kDomain, dom: d}, nil
	}
	return d.at(en.rng.Int64N(d.n)), nil
}

// callSample is sample, random.choice, np.random.choice (one value of a
// domain) and sample_sequential, random.sample (k distinct values): drawn from
// en.rng in #init lines, the domain otherwise.
func (e *expression) callSample(name string, vs []value, en *env) (value, error) {
	one := name == "random.choice"
	if len(vs) < 1 || len(vs) > 2 || (name == "sample_sequential" || name == "random.sample") && len(vs) != 2 || one && len(vs) != 1 {
		return value{}, fmt.Errorf("%s: wrong number of arguments (%d)", name, len(vs))
	}
	d, err := asDomain(vs[0])
	if err != nil {
		return value{}, fmt.Errorf("%s: %w", name, err)
	}
	if len(vs) == 1 {
		if en.rng == nil { // the domain itself (base values, solving)
			return value{k: kDomain, dom: d}, nil
		}
		return d.at(en.rng.Int64N(d.n)), nil
	}
	k, err := nums(name, vs[1:], 1, 1)
	if err != nil {
		return value{}, err
	}
	if !k[0].IsInt() || k[0].Sign() <= 0 || k[0].Num().BitLen() > 10 {
		return value{}, fmt.Errorf("%s: bad count %s", name, k[0].RatString())
	}
	if en.rng == nil {
		if int64(k[0].Num().Int64()) > d.n {
			return value{}, fmt.Errorf("cannot draw %s distinct values from %s (%d values)", k[0].RatString(), d.name, d.n)
		}
		return value{k: kDomain, dom: d}, nil
	}
	l, err := d.distinct(en.rng, int(k[0].Num().Int64()))
	return value{k: kList, l: l}, err
}

func asDomain(v value) (*domain, error) {
	switch v.k {
	case kDomain:
		if v.dom.n == 0 {
			return nil, fmt.Errorf("%s is empty", v.dom.name)
		}
		return v.dom, nil
	case kList:
		if len(v.l) == 0 {
			return nil, errors.New("empty list")
		}
		return &domain{name: "list", items: v.l, n: int64(len(v.l))}, nil
	}
	return nil, fmt.Errorf("cannot sample from a %s", v.kindName())
}
