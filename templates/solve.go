package templates

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Smarter sampling for equality conditions. A condition such as
// "d3 == d1 + d2" rejects almost every independent draw of d1, d2 and d3
// (995 of 1,000 for ranges of a hundred values). When one drawn number
// appears exactly once in an equality, through +, -, * and / only, the
// equality is solved for it: it is computed from the others after they are
// drawn and the draw is kept only when the value lies in its own domain. The
// result has the distribution of rejection sampling conditioned on the
// equality (every other variable is drawn from its domain as before, and the
// solved one is the only value that satisfies the equality), without the
// rejections. Variables are then drawn in dependency order.

// domainAt evaluates the variable's draw expression to the set it draws from
// (a range, a list, a pool), at the values in en.
func (x *variable) domainAt(en *env) (*domain, error) {
	if x.draw == nil {
		return nil, errors.New("not drawn")
	}
	v, err := x.draw.eval(&env{vars: en.vars, pools: en.pools, domains: true})
	if err != nil {
		return nil, err
	}
	d, err := asDomain(v)
	if err != nil {
		return nil, fmt.Errorf("%s does not give a domain: %w", x.draw.src, err)
	}
	return d, nil
}

// occurrences counts the reads of name in n.
func occurrences(n pnode, name string) int {
	c := 0
	walk(n, func(m pnode) {
		if nm, ok := m.(*pName); ok && nm.name == name {
			c++
		}
	})
	return c
}

// walk calls f on n and every node below it.
func walk(n pnode, f func(pnode)) {
	if n == nil {
		return
	}
	f(n)
	switch n := n.(type) {
	case *pList:
		for _, e := range n.elts {
			walk(e, f)
		}
	case *pBin:
		walk(n.l, f)
		walk(n.r, f)
	case *pUnary:
		walk(n.x, f)
	case *pBool:
		walk(n.l, f)
		walk(n.r, f)
	case *pCmp:
		walk(n.first, f)
		for _, r := range n.rest {
			walk(r, f)
		}
	case *pIf:
		walk(n.test, f)
		walk(n.body, f)
		walk(n.orelse, f)
	case *pCall:
		for _, a := range n.args {
			walk(a, f)
		}
	case *pIndex:
		walk(n.x, f)
		walk(n.i, f)
	case *pSlice:
		walk(n.x, f)
		walk(n.lo, f)
		walk(n.hi, f)
		walk(n.stride, f)
	}
}

// isolate solves side == other for name, which occurs exactly once in side:
// it returns an expression equal to name, or false when the path to name
// goes through anything but +, -, *, / and unary signs.
func isolate(side, other pnode, name string) (pnode, bool) {
	switch n := side.(type) {
	case *pName:
		return other, n.name == name
	case *pUnary:
		switch n.op {
		case "-":
			return isolate(n.x, &pUnary{op: "-", x: other}, name)
		case "+":
			return isolate(n.x, other, name)
		}
	case *pBin:
		inLeft := occurrences(n.l, name) == 1
		bin := func(op string, l, r pnode) pnode { return &pBin{op: op, l: l, r: r, div: -1} }
		switch n.op {
		case "+":
			if inLeft {
				return isolate(n.l, bin("-", other, n.r), name)
			}
			return isolate(n.r, bin("-", other, n.l), name)
		case "-":
			if inLeft {
				return isolate(n.l, bin("+", other, n.r), name)
			}
			return isolate(n.r, bin("-", n.l, other), name)
		case "*":
			if inLeft {
				return isolate(n.l, bin("/", other, n.r), name)
			}
			return isolate(n.r, bin("/", other, n.l), name)
		case "/":
			if inLeft {
				return isolate(n.l, bin("*", other, n.r), name)
			}
			return isolate(n.r, bin("/", n.l, other), name)
		}
	}
	return nil, false
}

// pyString writes a parsed expression back in Python syntax (fully
// parenthesised), for templates show and error messages.
func pyString(n pnode) string {
	switch n := n.(type) {
	case *pNum:
		return numV(n.r).String()
	case *pStr:
		return fmt.Sprintf("%q", n.s)
	case *pName:
		return n.name
	case *pList:
		parts := make([]string, len(n.elts))
		for i, e := range n.elts {
			parts[i] = pyString(e)
		}
		if n.kind == '(' {
			return "(" + strings.Join(parts, ", ") + ")"
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *pBin:
		return "(" + pyString(n.l) + " " + n.op + " " + pyString(n.r) + ")"
	case *pUnary:
		if n.op == "not" {
			return "(not " + pyString(n.x) + ")"
		}
		return "(" + n.op + pyString(n.x) + ")"
	case *pBool:
		return "(" + pyString(n.l) + " " + n.op + " " + pyString(n.r) + ")"
	case *pCmp:
		s := pyString(n.first)
		for i, op := range n.ops {
			s += " " + op + " " + pyString(n.rest[i])
		}
		return "(" + s + ")"
	case *pIf:
		return "(" + pyString(n.body) + " if " + pyString(n.test) + " else " + pyString(n.orelse) + ")"
	case *pCall:
		parts := make([]string, len(n.args))
		for i, a := range n.args {
			parts[i] = pyString(a)
		}
		return n.name + "(" + strings.Join(parts, ", ") + ")"
	case *pIndex:
		return pyString(n.x) + "[" + pyString(n.i) + "]"
	case *pSlice:
		b := func(x pnode) string {
			if x == nil {
				return ""
			}
			return pyString(x)
		}
		return pyString(n.x) + "[" + b(n.lo) + ":" + b(n.hi) + ":" + b(n.stride) + "]"
	}
	return "?"
}

// plan chooses, for each equality condition, a variable to solve for, and
// sets t.order, the order in which variables are drawn and computed: every
// variable after those its domain, formula or solution reads, and otherwise
// in declaration order. Candidates are drawn single numbers that occur once
// in the equality and can be isolated; a variable the question never states
// is preferred (the equality is what fixes it), then one alone on a side,
// then the one declared last. A choice that would make the order circular is
// skipped.
func (t *Template) plan() error {
	stated := map[string]bool{}
	for _, ph := range t.question.placeholders() {
		stated[ph] = true
	}
	for _, c := range t.conds {
		cmp, ok := c.e.tree.(*pCmp)
		if !ok || len(cmp.ops) != 1 || cmp.ops[0] != "==" {
			continue
		}
		type cand struct {
			x     *variable
			expr  pnode
			score int
			idx   int
		}
		var cands []cand
		for idx, x := range t.vars {
			if x.draw == nil || x.solve != nil || len(x.names) != 1 || !x.numeric {
				continue
			}
			nm := x.names[0]
			nl, nr := occurrences(cmp.first, nm), occurrences(cmp.rest[0], nm)
			if nl+nr != 1 {
				continue
			}
			side, other := cmp.first, cmp.rest[0]
			if nr == 1 {
				side, other = other, side
			}
			sol, ok := isolate(side, other, nm)
			if !ok {
				continue
			}
			score := 0
			if !stated[nm] {
				score += 4
			}
			if _, alone := side.(*pName); alone {
				score += 2
			}
			cands = append(cands, cand{x, sol, score, idx})
		}
		slices.SortStableFunc(cands, func(a, b cand) int {
			if a.score != b.score {
				return b.score - a.score
			}
			return b.idx - a.idx
		})
		for _, cd := range cands {
			src := pyString(cd.expr)
			e := &expression{src: src, tree: cd.expr}
			if err := e.scan(cd.expr); err != nil {
				continue
			}
			cd.x.solve, cd.x.solveLine = e, c.line
			if _, err := t.dependencyOrder(); err != nil {
				cd.x.solve = nil
				continue
			}
			break
		}
	}
	order, err := t.dependencyOrder()
	if err != nil {
		return err
	}
	t.order = order
	t.planLocal()
	return nil
}

// reads lists the variables x needs before it can be drawn or computed.
func (x *variable) reads() []string {
	var out []string
	for _, e := range []*expression{x.draw, x.derived, x.solve} {
		if e != nil {
			out = append(out, e.vars...)
		}
	}
	return out
}

// dependencyOrder sorts t.vars so that each comes after the variables it
// reads, keeping declaration order otherwise (Kahn's algorithm, always taking
// the earliest declared ready variable).
func (t *Template) dependencyOrder() ([]*variable, error) {
	owner := map[string]int{}
	for i, x := range t.vars {
		for _, n := range x.names {
			owner[n] = i
		}
	}
	n := len(t.vars)
	deps := make([]map[int]bool, n)
	for i, x := range t.vars {
		deps[i] = map[int]bool{}
		for _, r := range x.reads() {
			if j, ok := owner[r]; ok && j != i {
				deps[i][j] = true
			} else if ok && j == i && x.solve != nil {
				return nil, fmt.Errorf("%s is solved from an expression that reads it", x.names[0])
			}
		}
	}
	done := make([]bool, n)
	var out []*variable
	for len(out) < n {
		progress := false
		for i := 0; i < n; i++ {
			if done[i] {
				continue
			}
			ready := true
			for j := range deps[i] {
				if !done[j] {
					ready = false
					break
				}
			}
			if ready {
				done[i] = true
				out = append(out, t.vars[i])
				progress = true
				break
			}
		}
		if !progress {
			var left []string
			for i := 0; i < n; i++ {
				if !done[i] {
					left = append(left, strings.Join(t.vars[i].names, ", "))
				}
			}
			return nil, fmt.Errorf("variables read each other in a circle: %s", strings.Join(left, "; "))
		}
	}
	return out, nil
}

// solveValue computes a solved variable from the values drawn so far and
// returns the entry of its domain with that value (a worded number keeps its
// form; when several entries share the value one is chosen at random), or a
// reason why the draw is invalid.
func (x *variable) solveValue(en *env) (value, string) {
	v, err := x.solve.eval(&env{vars: en.vars, pools: en.pools})
	if err != nil {
		return value{}, fmt.Sprintf("%s (solved from the condition at line %d): %v", x.names[0], x.solveLine, err)
	}
	if v.k != kNum {
		return value{}, fmt.Sprintf("%s (solved from the condition at line %d) is a %s", x.names[0], x.solveLine, v.kindName())
	}
	d, err := x.domainAt(en)
	if err != nil {
		return value{}, fmt.Sprintf("%s: %v", x.names[0], err)
	}
	if d.items == nil {
		if !d.contains(v) {
			return value{}, fmt.Sprintf("%s = %s (solved from the condition at line %d) is outside its domain %s", x.names[0], v, x.solveLine, x.draw.src)
		}
		return numV(v.n), ""
	}
	var match []value
	for _, it := range d.items {
		w := asWorded(it)
		if w.k == kNum && w.n.Cmp(v.n) == 0 && !slices.ContainsFunc(match, func(m value) bool { return m.form == w.form }) {
			match = append(match, w)
		}
	}
	if len(match) == 0 {
		return value{}, fmt.Sprintf("%s = %s (solved from the condition at line %d) is not in its domain %s", x.names[0], v, x.solveLine, x.draw.src)
	}
	if len(match) == 1 || en.rng == nil {
		return match[0], ""
	}
	return match[en.rng.IntN(len(match))], ""
}

// statedCheck refuses a template whose answer reads a drawn variable that
// the question never states: such a question has different answers in
// different draws. A variable is stated when it has a placeholder in the
// question (and, when there is one, the paraphrase), or is computed (derived
// or solved from an equality) from stated variables only. When conditions
// read such a variable (directly or through computed values), they may fix
// it from the stated values (determined.go): statedCheck then returns the
// set to check by enumeration (checkDetermined) once the base values are
// known, and no error.
func (t *Template) statedCheck() (*determinedSet, error) {
	known := map[string]bool{}
	for _, ph := range t.question.placeholders() {
		known[ph] = true
	}
	if t.paraphrase != nil {
		inPara := map[string]bool{}
		for _, ph := range t.paraphrase.placeholders() {
			inPara[ph] = true
		}
		for k := range known {
			known[k] = inPara[k]
		}
	}
	stated := maps.Clone(known)
	isVar := map[string]bool{}
	for _, x := range t.vars {
		for _, n := range x.names {
			isVar[n] = true
		}
	}
	allKnown := func(e *expression) bool {
		for _, v := range e.vars {
			if isVar[v] && !known[v] {
				return false
			}
		}
		return true
	}
	for changed := true; changed; {
		changed = false
		for _, x := range t.vars {
			n := x.names[0]
			if known[n] {
				continue
			}
			if x.derived != nil && allKnown(x.derived) || x.solve != nil && allKnown(x.solve) {
				known[n], changed = true, true
			}
		}
	}
	// root finds a drawn, unstated variable behind an unknown one.
	var root func(v string, depth int) string
	root = func(v string, depth int) string {
		x := t.variable(v)
		if x == nil || x.derived == nil || depth > len(t.vars) {
			return v
		}
		for _, r := range x.derived.vars {
			if isVar[r] && !known[r] {
				return root(r, depth+1)
			}
		}
		return v
	}
	var unknown []string
	for _, v := range t.answer.vars {
		if isVar[v] && !known[v] {
			unknown = append(unknown, v)
		}
	}
	if len(unknown) == 0 {
		return nil, nil
	}
	if ds := t.determinedVars(unknown, known, stated); ds != nil {
		return ds, nil
	}
	v, via := unknown[0], ""
	if r := root(v, 0); r != v {
		v, via = r, v
	}
	return nil, unstatedError(v, via, "")
}

// Conditions applied while drawing (GSM-Symbolic templates). Each drawn
// variable is drawn from the values of its domain that satisfy the parts of
// the conditions it completes: a condition is split into its conjuncts
// ("a < b < c" into "a < b" and "b < c", "p and q" into p and q), and a
// conjunct is checked as soon as the last drawn variable it depends on
// (directly or through computed values) has a candidate value; the values
// computed from that variable are computed with it, and a solved variable
// must lie in its domain. Candidates are tried up to localTries times before
// the draw as a whole is rejected. The draw is then checked against every
// rule as before. This samples in dependency order: the result is always a
// valid draw, and each variable is uniform over the values that are valid
// given the ones drawn before it.

// localTries is the number of candidate values tried for one variable.
const localTries = 200

// conjunct is one part of a condition, checked while drawing.
type conjunct struct {
	e      *expression
	parent *condition
}

// conjuncts splits a condition into parts that must all hold.
func conjuncts(n pnode) []pnode {
	switch n := n.(type) {
	case *pBool:
		if n.op == "and" {
			return append(conjuncts(n.l), conjuncts(n.r)...)
		}
	case *pCmp:
		if len(n.ops) > 1 {
			out := make([]pnode, len(n.ops))
			prev := n.first
			for i, op := range n.ops {
				out[i] = &pCmp{first: prev, ops: []string{op}, rest: []pnode{n.rest[i]}}
				prev = n.rest[i]
			}
			return out
		}
	}
	return []pnode{n}
}

// planLocal assigns each conjunct of each condition, and each computed
// variable, to the drawn variable that completes it (see above), and gives
// each drawn variable the conjuncts it takes part in that a later one
// completes (checked over intervals; bounds.go).
func (t *Template) planLocal() {
	pos := map[*variable]int{}
	for i, x := range t.order {
		pos[x] = i
		x.dependents, x.local, x.pending = nil, nil, nil
	}
	roots := map[string]map[*variable]bool{} // name → the drawn variables it depends on
	free := func(x *variable) bool { return x.derived == nil && x.solve == nil }
	rootsOf := func(names []string) map[*variable]bool {
		out := map[*variable]bool{}
		for _, n := range names {
			for r := range roots[n] {
				out[r] = true
			}
		}
		return out
	}
	lastOf := func(rs map[*variable]bool) *variable {
		var best *variable
		for r := range rs {
			if best == nil || pos[r] > pos[best] {
				best = r
			}
		}
		return best
	}
	for _, x := range t.order {
		if free(x) {
			for _, n := range x.names {
				roots[n] = map[*variable]bool{x: true}
			}
			continue
		}
		rs := rootsOf(x.reads())
		roots[x.names[0]] = rs
		if l := lastOf(rs); l != nil {
			l.dependents = append(l.dependents, x)
		}
	}
	for _, c := range t.conds {
		for _, part := range conjuncts(c.e.tree) {
			e := &expression{src: c.e.src, tree: part}
			if e.scan(part) != nil {
				continue
			}
			rs := rootsOf(e.vars)
			l := lastOf(rs)
			if l == nil {
				continue
			}
			cj := &conjunct{e: e, parent: c}
			l.local = append(l.local, cj)
			for r := range rs {
				if r != l {
					r.pending = append(r.pending, cj)
				}
			}
		}
	}
	// Map iteration above is unordered; keep each list in condition order.
	for _, x := range t.order {
		slices.SortStableFunc(x.pending, func(a, b *conjunct) int { return a.parent.line - b.parent.line })
	}
}

// computeDependents computes the values that x completes and checks the
// conjuncts x completes, after x got a candidate value. reason is "" when
// the candidate is valid.
func (t *Template) computeDependents(x *variable, vals map[string]value, en *env, numbers bool) string {
	for _, d := range x.dependents {
		switch {
		case d.derived != nil:
			v, err := d.derived.eval(en)
			if err != nil {
				return fmt.Sprintf("%s: %v", d.names[0], err)
			}
			vals[d.names[0]] = v
		case d.solve != nil && numbers:
			v, reason := d.solveValue(en)
			if reason != "" {
				return reason
			}
			vals[d.names[0]] = v
		}
	}
	cen := &env{vars: vals}
	for _, c := range x.local {
		if t.exempt(c.parent, vals) {
			continue
		}
		ok, err := c.e.evalBool(cen)
		if err != nil {
			return fmt.Sprintf("condition %q (line %d): %v", c.parent.e.src, c.parent.line, err)
		}
		if !ok {
			return fmt.Sprintf("condition %q (line %d) is false", c.parent.e.src, c.parent.line)
		}
	}
	return ""
}

// exempt reports whether condition c is not applied to vals: the base values
// break it (recorded as a warning) and every variable it reads is at its base
// value, as in the names variant, which keeps the original numbers.
func (t *Template) exempt(c *condition, vals map[string]value) bool {
	if !t.baseBroken[c] {
		return false
	}
	for _, v := range c.e.vars {
		if b, ok := t.base[v]; ok && !vals[v].equal(b) {
			return false
		}
	}
	return true
}
