package templates

import (
	"fmt"
	"strings"
)

// Review returns the review aid for t: the base instance and one instance of
// every other variant (index 0 of a set generated with seed), each with its
// question, its answer and the arithmetic spelled out: the values that
// differ from base, every derived value and the answer expression with the
// instance's values substituted, then each operation with its result, in the
// order a worked solution would do them. It is meant to let a person check a
// template in a minute: that the story is plausible at every draw, the
// numbers fit the story and the answer follows from the text.
func (t *Template) Review(seed int64) (string, error) {
	var b strings.Builder
	loc := t.Source
	if t.Line > 0 {
		loc = fmt.Sprintf("%s:%d", t.Source, t.Line)
	}
	fmt.Fprintf(&b, "%s: %s\n", t.ID, t.Title)
	fmt.Fprintf(&b, "  %s · relation %s · %d steps · %s answer · seed %d\n", loc, t.Relation, t.Steps, t.AnswerType, seed)
	if !t.fixed {
		fmt.Fprintf(&b, "  answer = %s   (%d operations)\n", t.answer.src, t.Operations())
		if len(t.conds) > 0 {
			srcs := make([]string, len(t.conds))
			for i, c := range t.conds {
				srcs[i] = c.e.src
			}
			fmt.Fprintf(&b, "  conditions: %s\n", strings.Join(srcs, "; "))
		}
	}
	set := &Set{}
	var baseVals map[string]value
	for _, v := range AllVariants {
		fmt.Fprintf(&b, "\n[%s]", v)
		if ok, why := t.Supports(v); !ok {
			fmt.Fprintf(&b, " %s\n", why)
			continue
		}
		inst, vals, err := t.instantiateValues(v, 0, deriveSeed(seed, t.ID, v, 0), DefaultMaxDraws, set, nil)
		if err != nil {
			return "", err
		}
		if v == VariantBase {
			baseVals = vals
		}
		same := vals != nil && baseVals != nil && v != VariantBase && t.sameValues(vals, baseVals)
		if v != VariantBase && vals != nil {
			if ch := t.changes(vals, baseVals); ch != "" {
				fmt.Fprintf(&b, " changed: %s", ch)
			} else {
				b.WriteString(" values as base")
			}
		}
		b.WriteString("\n")
		writeWrapped(&b, inst.Question, "  Q: ", "     ", 100)
		if inst.NoopClause != "" {
			fmt.Fprintf(&b, "  clause (%s, %s line %d): %s\n", inst.NoopKind, inst.NoopSource, inst.NoopLine, inst.NoopClause)
			if inst.NoopReason != "" {
				fmt.Fprintf(&b, "  why the answer is unchanged: %s\n", inst.NoopReason)
			}
		}
		switch {
		case vals == nil:
		case same:
			b.WriteString("  arithmetic as base\n")
		default:
			t.writeArithmetic(&b, vals)
		}
		fmt.Fprintf(&b, "  answer: %s\n", inst.Answer)
	}
	return b.String(), nil
}

// sameValues reports whether two assignments give the same arithmetic:
// equal on every number (names may differ).
func (t *Template) sameValues(a, b map[string]value) bool {
	for k, v := range a {
		if (v.k == kNum || b[k].k == kNum) && !v.equal(b[k]) {
			return false
		}
	}
	return len(a) == len(b)
}

// changes lists the drawn variables whose value differs from base, as
// "name old → new".
func (t *Template) changes(vals, base map[string]value) string {
	var out []string
	for _, x := range t.vars {
		if x.derived != nil {
			continue
		}
		for _, n := range x.names {
			if !vals[n].equal(base[n]) {
				out = append(out, fmt.Sprintf("%s %s → %s", n, t.renderVar(n, base, nil), t.renderVar(n, vals, nil)))
			}
		}
	}
	return strings.Join(out, ", ")
}

// writeArithmetic writes the drawn values, each derived value and the answer
// with the values substituted and every operation with its result, then the
// conditions with their values.
func (t *Template) writeArithmetic(b *strings.Builder, vals map[string]value) {
	var drawn []string
	for _, x := range t.vars {
		if x.derived != nil {
			continue
		}
		for _, n := range x.names {
			drawn = append(drawn, n+"="+t.renderVar(n, vals, nil))
		}
	}
	writeWrapped(b, strings.Join(drawn, ", "), "  values: ", "          ", 100)
	en := &env{vars: vals}
	for _, x := range t.vars {
		if x.derived == nil {
			continue
		}
		n := x.names[0]
		sub, steps := x.derived.explain(en)
		fmt.Fprintf(b, "  %s = %s = %s", n, x.derived.src, sub)
		if len(steps) == 1 {
			fmt.Fprintf(b, " = %s\n", vals[n])
			continue
		}
		b.WriteString("\n")
		for _, s := range steps {
			fmt.Fprintf(b, "      %s\n", s)
		}
	}
	sub, steps := t.answer.explain(en)
	fmt.Fprintf(b, "  answer = %s\n", sub)
	for _, s := range steps {
		fmt.Fprintf(b, "      %s\n", s)
	}
	for _, c := range t.conds {
		sub, _ := c.e.explain(en)
		ok, err := c.e.evalBool(en)
		verdict := "holds"
		if err != nil || !ok {
			verdict = "FAILS"
		}
		fmt.Fprintf(b, "  condition %s: %s (%s)\n", c.e.src, sub, verdict)
	}
}

// writeWrapped writes s in lines of at most width runes, the first prefixed
// by first and the others by rest.
func writeWrapped(b *strings.Builder, s, first, rest string, width int) {
	line, prefix := "", first
	for _, w := range strings.Fields(s) {
		if line != "" && len([]rune(prefix+line+" "+w)) > width {
			b.WriteString(prefix + line + "\n")
			line, prefix = "", rest
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	b.WriteString(prefix + line + "\n")
}

// Operations counts the arithmetic operations a worked solution performs:
// every operator and helper call in the answer expression and in each
// derived value it reads (directly or through other derived values), each
// derived value counted once. Steps in our own templates are authored to
// match it within one.
func (t *Template) Operations() int {
	if t.fixed {
		return 0
	}
	seen := map[string]bool{}
	var count func(e *expression) int
	count = func(e *expression) int {
		n := countOps(e.tree)
		for _, v := range e.vars {
			x := t.variable(v)
			if x == nil || x.derived == nil || seen[v] {
				continue
			}
			seen[v] = true
			n += count(x.derived)
		}
		return n
	}
	return count(t.answer)
}

func countOps(n pnode) int {
	c := 0
	switch n := n.(type) {
	case *pBin:
		return 1 + countOps(n.l) + countOps(n.r)
	case *pCall:
		c = 1
	}
	// Everything else counts the operations inside it.
	switch n := n.(type) {
	case *pUnary:
		return countOps(n.x)
	case *pBool:
		return countOps(n.l) + countOps(n.r)
	case *pCmp:
		c = countOps(n.first)
		for _, r := range n.rest {
			c += countOps(r)
		}
	case *pIf:
		c = countOps(n.test) + countOps(n.body) + countOps(n.orelse)
	case *pCall:
		for _, a := range n.args {
			c += countOps(a)
		}
	case *pList:
		for _, a := range n.elts {
			c += countOps(a)
		}
	case *pIndex:
		c = countOps(n.x) + countOps(n.i)
	}
	return c
}

// explain renders the expression with the values of en substituted, and
// lists each operation with its operands' values and its result, innermost
// first ("36 * 4 = 144"). A part that cannot be evaluated is shown as
// written.
func (e *expression) explain(en *env) (string, []string) {
	var steps []string
	var walk func(n pnode)
	step := func(n, l, r pnode, op string) {
		lv, errL := e.node(l, en)
		rv, errR := e.node(r, en)
		v, err := e.node(n, en)
		if errL != nil || errR != nil || err != nil {
			return
		}
		steps = append(steps, fmt.Sprintf("%s %s %s = %s", arith(lv), op, arith(rv), arith(v)))
	}
	walk = func(n pnode) {
		switch n := n.(type) {
		case *pBin:
			walk(n.l)
			walk(n.r)
			step(n, n.l, n.r, n.op)
		case *pBool:
			walk(n.l)
			walk(n.r)
			step(n, n.l, n.r, n.op)
		case *pCmp:
			walk(n.first)
			for _, r := range n.rest {
				walk(r)
			}
			if len(n.ops) == 1 {
				step(n, n.first, n.rest[0], n.ops[0])
			}
		case *pUnary:
			walk(n.x)
		case *pIf:
			walk(n.test)
			walk(n.body)
			walk(n.orelse)
		case *pCall:
			parts := make([]string, len(n.args))
			for i, a := range n.args {
				walk(a)
				v, err := e.node(a, en)
				if err != nil {
					return
				}
				parts[i] = arith(v)
			}
			v, err := e.node(n, en)
			if err != nil {
				return
			}
			steps = append(steps, fmt.Sprintf("%s(%s) = %s", n.name, strings.Join(parts, ", "), arith(v)))
		}
	}
	walk(e.tree)
	return e.substitute(e.tree, en, 0), steps
}

// arith writes a value as arithmetic uses it: a worded number ("half") as
// its number ("1/2"), exact.
func arith(v value) string {
	if v.k == kNum {
		return numV(v.n).String()
	}
	return v.String()
}

// precedence of Python's binary operators (higher binds tighter).
func precedence(op string) int {
	switch op {
	case "or":
		return 1
	case "and":
		return 2
	case "==", "!=", "<", ">", "<=", ">=", "in", "not in":
		return 4
	case "+", "-":
		return 5
	case "*", "/", "//", "%":
		return 6
	case "**":
		return 8
	}
	return 9
}

// substitute writes n with every variable replaced by its value, adding
// parentheses only where Python's precedence needs them. outer is the
// precedence of the enclosing operator (0 at the top).
func (e *expression) substitute(n pnode, en *env, outer int) string {
	wrap := func(p int, s string) string {
		if p < outer {
			return "(" + s + ")"
		}
		return s
	}
	switch n := n.(type) {
	case *pName:
		if v, ok := en.vars[n.name]; ok {
			return arith(v)
		}
		return n.name
	case *pNum:
		return numV(n.r).String()
	case *pStr:
		return fmt.Sprintf("%q", n.s)
	case *pUnary:
		if n.op == "not" {
			return wrap(3, "not "+e.substitute(n.x, en, 3))
		}
		return n.op + e.substitute(n.x, en, 7)
	case *pBin:
		p := precedence(n.op)
		right := p + 1 // left-associative: an equal-precedence right operand needs parentheses
		if n.op == "**" {
			right = p
		}
		return wrap(p, e.substitute(n.l, en, p)+" "+n.op+" "+e.substitute(n.r, en, right))
	case *pBool:
		p := precedence(n.op)
		return wrap(p, e.substitute(n.l, en, p)+" "+n.op+" "+e.substitute(n.r, en, p+1))
	case *pCmp:
		s := e.substitute(n.first, en, 5)
		for i, op := range n.ops {
			s += " " + op + " " + e.substitute(n.rest[i], en, 5)
		}
		return wrap(4, s)
	case *pIf:
		return wrap(0, e.substitute(n.body, en, 1)+" if "+e.substitute(n.test, en, 1)+" else "+e.substitute(n.orelse, en, 0))
	case *pList:
		parts := make([]string, len(n.elts))
		for i, a := range n.elts {
			parts[i] = e.substitute(a, en, 0)
		}
		if n.kind == '(' {
			return "(" + strings.Join(parts, ", ") + ")"
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *pCall:
		parts := make([]string, len(n.args))
		for i, a := range n.args {
			parts[i] = e.substitute(a, en, 0)
		}
		return n.name + "(" + strings.Join(parts, ", ") + ")"
	}
	if v, err := e.node(n, en); err == nil {
		return v.String()
	}
	return pyString(n)
}
