package templates

import (
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
)

// expression is a compiled Python-style expression. Parsing is done by
// github.com/expr-lang/expr's parser; evaluation is ours, over exact
// rationals, with Python's semantics for //, %, int() and round().
type expression struct {
	src   string
	tree  ast.Node
	floor map[int]bool // rune offsets of '/' tokens written as '//' in src
	vars  []string     // identifiers read (not called), first-use order
	calls []string     // helper names called, first-use order
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
	"fix_floats":        "the same exact value",
	"range":             "range(a, b[, step]): a ≤ v < b (init only)",
	"frange":            "frange(a, b[, step]): decimal range, b exclusive (init only)",
	"arange":            "like frange (init only)",
	"np.arange":         "like frange (init only)",
	"numbers_within":    "numbers_within(a, b): integers a..b inclusive (init only)",
	"np.random.randint": "np.random.randint(a, b): one integer a ≤ v < b (init only)",
	"sample":            "sample(x[, k]): one value, or k distinct values, of a domain, list or pool (init only)",
	"sample_sequential": "sample_sequential(x, k): k distinct values (init only)",
	"list":              "a domain as a list",
	"shuffle_list":      "the same list (order does not matter to sampling)",
	"random.choice":     "like sample(x) (init only)",
	"random.randint":    "random.randint(a, b): one integer a ≤ v ≤ b (init only)",
}

// initOnly are the helpers that draw at random: allowed in #init lines and
// own-format variable specs only.
var initOnly = map[string]bool{
	"range": true, "frange": true, "arange": true, "np.arange": true, "numbers_within": true,
	"np.random.randint": true, "sample": true, "sample_sequential": true, "random.choice": true,
	"random.randint": true,
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
// enclosing file (the caller adds it).
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
	pre, floors, err := pythonToExpr(src)
	if err != nil {
		return nil, fmt.Errorf("expression %q: %w", src, err)
	}
	tree, perr := parser.Parse(pre)
	if perr != nil {
		var fe *file.Error
		if errors.As(perr, &fe) {
			return nil, fmt.Errorf("syntax error in expression %q at column %d: %s", src, fe.Column+1, fe.Message)
		}
		return nil, fmt.Errorf("syntax error in expression %q: %v", src, perr)
	}
	e = &expression{src: src, tree: tree.Node, floor: floors}
	if err := e.scan(tree.Node, false); err != nil {
		return nil, fmt.Errorf("expression %q: %w", src, err)
	}
	return e, nil
}

// pythonToExpr rewrites the two Python tokens expr's lexer reads differently:
// "//" (a comment in expr, floor division in Python) becomes " /" and its
// position is remembered; "#" starts a comment and ends the expression. The
// Python XOR operator "^" (power in expr) is refused.
func pythonToExpr(src string) (string, map[int]bool, error) {
	rs := []rune(src)
	out := make([]rune, 0, len(rs))
	floors := map[int]bool{}
	var quote rune
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		if quote != 0 {
			out = append(out, c)
			if c == '\\' && i+1 < len(rs) {
				i++
				out = append(out, rs[i])
			} else if c == quote {
				quote = 0
			}
			continue
		}
		switch {
		case c == '"' || c == '\'':
			quote = c
		case c == '#':
			return string(out), floors, nil
		case c == '^':
			return "", nil, errors.New(`"^" is XOR in Python; write ** for a power`)
		case c == '/' && i+1 < len(rs) && rs[i+1] == '/':
			out = append(out, ' ', '/')
			floors[len(out)-1] = true
			i++
			continue
		case c == '/' && i+1 < len(rs) && rs[i+1] == '*':
			return "", nil, errors.New(`"/*" is not Python`)
		}
		out = append(out, c)
	}
	return string(out), floors, nil
}

var binaryOps = map[string]bool{
	"+": true, "-": true, "*": true, "/": true, "%": true, "**": true,
	"==": true, "!=": true, "<": true, ">": true, "<=": true, ">=": true,
	"and": true, "or": true, "&&": true, "||": true, "in": true,
}

// scan checks that every node is of a supported kind and collects the
// identifiers read and the helpers called.
func (e *expression) scan(n ast.Node, callee bool) error {
	switch n := n.(type) {
	case *ast.IntegerNode, *ast.FloatNode, *ast.StringNode, *ast.BoolNode:
		return nil
	case *ast.IdentifierNode:
		if !slices.Contains(e.vars, n.Value) {
			e.vars = append(e.vars, n.Value)
		}
		return nil
	case *ast.UnaryNode:
		switch n.Operator {
		case "-", "+", "not", "!":
			return e.scan(n.Node, false)
		}
		return fmt.Errorf("unsupported operator %q", n.Operator)
	case *ast.BinaryNode:
		if !binaryOps[n.Operator] {
			return fmt.Errorf("unsupported operator %q", n.Operator)
		}
		if err := e.scan(n.Left, false); err != nil {
			return err
		}
		return e.scan(n.Right, false)
	case *ast.ArrayNode:
		for _, a := range n.Nodes {
			if err := e.scan(a, false); err != nil {
				return err
			}
		}
		return nil
	case *ast.CallNode:
		name, ok := calleeName(n.Callee)
		if !ok {
			return errors.New("unsupported call")
		}
		return e.scanCall(name, n.Arguments)
	case *ast.BuiltinNode:
		return e.scanCall(n.Name, n.Arguments)
	}
	return fmt.Errorf("unsupported syntax %q", n.String())
}

func (e *expression) scanCall(name string, args []ast.Node) error {
	if _, ok := helpers[name]; !ok {
		return fmt.Errorf("unknown helper %q", name)
	}
	if !slices.Contains(e.calls, name) {
		e.calls = append(e.calls, name)
	}
	for _, a := range args {
		if a == nil {
			return fmt.Errorf("bad argument to %s", name)
		}
		if err := e.scan(a, false); err != nil {
			return err
		}
	}
	return nil
}

// calleeName turns a callee (an identifier or a dotted member chain such as
// np.random.randint) into its dotted name.
func calleeName(n ast.Node) (string, bool) {
	switch n := n.(type) {
	case *ast.IdentifierNode:
		return n.Value, true
	case *ast.MemberNode:
		prop, ok := n.Property.(*ast.StringNode)
		if !ok || n.Optional {
			return "", false
		}
		head, ok := calleeName(n.Node)
		if !ok {
			return "", false
		}
		return head + "." + prop.Value, true
	}
	return "", false
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
	vars  map[string]value
	rng   *rand.Rand                               // non-nil only while drawing (#init, variable specs)
	divs  func(e *expression, pos int, exact bool) // optional: records each / and //
	pools map[string][]string                      // named pools; nil means the package pools
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

func (e *expression) node(n ast.Node, en *env) (value, error) {
	switch n := n.(type) {
	case *ast.IntegerNode:
		return intV(int64(n.Value)), nil
	case *ast.FloatNode:
		// The shortest decimal that round-trips is the literal as written
		// for every literal of up to 15 significant digits.
		r, ok := new(big.Rat).SetString(strconv.FormatFloat(n.Value, 'g', -1, 64))
		if !ok {
			return value{}, fmt.Errorf("bad number %v", n.Value)
		}
		return numV(r), nil
	case *ast.StringNode:
		return strV(n.Value), nil
	case *ast.BoolNode:
		return boolV(n.Value), nil
	case *ast.IdentifierNode:
		if v, ok := en.vars[n.Value]; ok {
			return v, nil
		}
		if v, ok := constants[n.Value]; ok {
			return v, nil
		}
		if items, ok := lookupPool(en.pools, n.Value); ok {
			return value{k: kDomain, dom: poolDomain(n.Value, items)}, nil
		}
		return value{}, fmt.Errorf("unknown variable or pool %q", n.Value)
	case *ast.UnaryNode:
		v, err := e.node(n.Node, en)
		if err != nil {
			return value{}, err
		}
		switch n.Operator {
		case "not", "!":
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
			return v, nil
		}
	case *ast.BinaryNode:
		return e.binary(n, en)
	case *ast.ArrayNode:
		l := make([]value, 0, len(n.Nodes))
		for _, a := range n.Nodes {
			v, err := e.node(a, en)
			if err != nil {
				return value{}, err
			}
			l = append(l, v)
		}
		return value{k: kList, l: l}, nil
	case *ast.CallNode:
		name, _ := calleeName(n.Callee)
		return e.call(name, n.Arguments, en)
	case *ast.BuiltinNode:
		return e.call(n.Name, n.Arguments, en)
	}
	return value{}, fmt.Errorf("unsupported syntax %q", n.String())
}

func truth(v value) (bool, error) {
	switch v.k {
	case kBool:
		return v.b, nil
	case kNum:
		return v.n.Sign() != 0, nil
	}
	return false, fmt.Errorf("a %s is not true or false", v.kindName())
}

func (e *expression) binary(n *ast.BinaryNode, en *env) (value, error) {
	l, err := e.node(n.Left, en)
	if err != nil {
		return value{}, err
	}
	switch n.Operator {
	case "and", "&&", "or", "||": // short-circuit, as Python does
		lb, err := truth(l)
		if err != nil {
			return value{}, err
		}
		isAnd := n.Operator == "and" || n.Operator == "&&"
		if isAnd && !lb || !isAnd && lb {
			return boolV(lb), nil
		}
		r, err := e.node(n.Right, en)
		if err != nil {
			return value{}, err
		}
		rb, err := truth(r)
		return boolV(rb), err
	}
	r, err := e.node(n.Right, en)
	if err != nil {
		return value{}, err
	}
	switch n.Operator {
	case "==":
		return boolV(l.equal(r)), nil
	case "!=":
		return boolV(!l.equal(r)), nil
	case "in":
		switch r.k {
		case kList:
			return boolV(slices.ContainsFunc(r.l, l.equal)), nil
		case kDomain:
			return boolV(r.dom.contains(l)), nil
		}
		return value{}, fmt.Errorf("\"in\" needs a list, not a %s", r.kindName())
	case "+":
		if l.k == kStr && r.k == kStr {
			return strV(l.s + r.s), nil
		}
	}
	if l.k != kNum || r.k != kNum {
		return value{}, fmt.Errorf("%q needs numbers, got %s and %s", n.Operator, l.kindName(), r.kindName())
	}
	a, b := l.n, r.n
	out := new(big.Rat)
	switch n.Operator {
	case "<":
		return boolV(a.Cmp(b) < 0), nil
	case ">":
		return boolV(a.Cmp(b) > 0), nil
	case "<=":
		return boolV(a.Cmp(b) <= 0), nil
	case ">=":
		return boolV(a.Cmp(b) >= 0), nil
	case "+":
		out.Add(a, b)
	case "-":
		out.Sub(a, b)
	case "*":
		out.Mul(a, b)
	case "/":
		if b.Sign() == 0 {
			return value{}, fmt.Errorf("division by zero in %q", e.src)
		}
		out.Quo(a, b)
		floor := e.floor[n.Location().From]
		if floor {
			exact := out.IsInt()
			out.SetInt(floorRat(out))
			if en.divs != nil {
				en.divs(e, n.Location().From, exact)
			}
		} else if en.divs != nil {
			en.divs(e, n.Location().From, out.IsInt())
		}
	case "%":
		if b.Sign() == 0 {
			return value{}, fmt.Errorf("modulo by zero in %q", e.src)
		}
		q := new(big.Rat).SetInt(floorRat(new(big.Rat).Quo(a, b)))
		out.Sub(a, q.Mul(q, b)) // Python: the result has the sign of b
	case "**":
		if !b.IsInt() {
			return value{}, fmt.Errorf("non-integer power in %q", e.src)
		}
		if b.Num().BitLen() > 7 || b.Num().Int64() > 64 || b.Num().Int64() < -64 {
			return value{}, fmt.Errorf("power too large in %q", e.src)
		}
		p := b.Num().Int64()
		if a.Sign() == 0 && p < 0 {
			return value{}, fmt.Errorf("division by zero (0 to a negative power) in %q", e.src)
		}
		pp := big.NewInt(int64(abs(int(p))))
		num := new(big.Int).Exp(a.Num(), pp, nil)
		den := new(big.Int).Exp(a.Denom(), pp, nil)
		if p < 0 {
			num, den = den, num
		}
		out.SetFrac(num, den)
	default:
		return value{}, fmt.Errorf("unsupported operator %q", n.Operator)
	}
	if err := checkSize(out); err != nil {
		return value{}, fmt.Errorf("%w in %q", err, e.src)
	}
	return numV(out), nil
}

func (e *expression) args(args []ast.Node, en *env) ([]value, error) {
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

func (e *expression) call(name string, argNodes []ast.Node, en *env) (value, error) {
	if initOnly[name] && en.rng == nil {
		return value{}, fmt.Errorf("%s draws at random and is allowed only in #init lines", name)
	}
	vs, err := e.args(argNodes, en)
	if err != nil {
		return value{}, err
	}
	switch name {
	case "int", "float", "fix_floats", "abs", "floor", "ceil", "math.floor", "math.ceil", "is_int":
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
	case "round":
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
	case "divides":
		a, err := nums(name, vs, 2, 2)
		if err != nil {
			return value{}, err
		}
		if a[1].Sign() == 0 {
			return boolV(false), nil
		}
		return boolV(new(big.Rat).Quo(a[0], a[1]).IsInt()), nil
	case "min", "max", "sum", "len":
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
			if len(vs) != 1 || vs[0].k != kList && vs[0].k != kDomain {
				return value{}, errors.New("len needs one list")
			}
			return intV(int64(len(items))), nil
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
	case "list", "shuffle_list":
		if len(vs) != 1 {
			return value{}, fmt.Errorf("%s takes one argument", name)
		}
		switch vs[0].k {
		case kList:
			return vs[0], nil
		case kDomain:
			l, err := vs[0].dom.list()
			return value{k: kList, l: l}, err
		}
		return value{}, fmt.Errorf("%s needs a list, not a %s", name, vs[0].kindName())
	case "range", "frange", "arange", "np.arange", "numbers_within":
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
	case "np.random.randint", "random.randint":
		a, err := nums(name, vs, 2, 2)
		if err != nil {
			return value{}, err
		}
		hi := a[1]
		if name == "random.randint" {
			hi = new(big.Rat).Add(hi, big.NewRat(1, 1))
		}
		d, err := progression(name, a[0], hi, big.NewRat(1, 1))
		if err != nil {
			return value{}, err
		}
		return d.at(en.rng.Int64N(d.n)), nil
	case "sample", "sample_sequential", "random.choice":
		if len(vs) < 1 || len(vs) > 2 || name == "sample_sequential" && len(vs) != 2 || name == "random.choice" && len(vs) != 1 {
			return value{}, fmt.Errorf("%s: wrong number of arguments (%d)", name, len(vs))
		}
		d, err := asDomain(vs[0])
		if err != nil {
			return value{}, fmt.Errorf("%s: %w", name, err)
		}
		if len(vs) == 1 {
			return d.at(en.rng.Int64N(d.n)), nil
		}
		k, err := nums(name, vs[1:], 1, 1)
		if err != nil {
			return value{}, err
		}
		if !k[0].IsInt() || k[0].Sign() <= 0 || k[0].Num().BitLen() > 10 {
			return value{}, fmt.Errorf("%s: bad count %s", name, k[0].RatString())
		}
		l, err := d.distinct(en.rng, int(k[0].Num().Int64()))
		return value{k: kList, l: l}, err
	}
	return value{}, fmt.Errorf("unknown helper %q", name)
}

func asDomain(v value) (*domain, error) {
	switch v.k {
	case kDomain:
		return v.dom, nil
	case kList:
		if len(v.l) == 0 {
			return nil, errors.New("empty list")
		}
		return &domain{name: "list", items: v.l, n: int64(len(v.l))}, nil
	}
	return nil, fmt.Errorf("cannot sample from a %s", v.kindName())
}
