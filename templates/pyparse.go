package templates

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
	"unicode"
)

// This file is a parser for the subset of Python 3 expression syntax that
// template annotations use (the grammar of The Python Language Reference,
// section 6 "Expressions", with the same precedence and associativity):
//
//	test        = or_test ["if" or_test "else" test]
//	or_test     = and_test {"or" and_test}
//	and_test    = not_test {"and" not_test}
//	not_test    = "not" not_test | comparison
//	comparison  = arith {comp_op arith}          (chained, as in Python)
//	arith       = term {("+" | "-") term}
//	term        = factor {("*" | "/" | "//" | "%") factor}
//	factor      = ("+" | "-") factor | power
//	power       = primary ["**" factor]
//	primary     = atom {"(" args ")" | "[" subscript "]" | "." NAME}
//	atom        = NAME | NUMBER | STRING+ | "(" [tests] ")" | "[" [tests] "]" | "{" tests "}"
//
// Two additions for the GSM-Symbolic annotation language: "$name" reads the
// variable name (answers are written "#answer: $ans"), and "#" starts a
// comment. Bitwise operators, lambdas, comprehensions, keyword arguments and
// attribute access other than a dotted helper name (np.random.randint) are
// refused with a message that names them.

// pnode is a node of a parsed expression.
type pnode interface{ col() int }

type (
	pNum struct {
		at int
		r  *big.Rat
	}
	pStr struct {
		at int
		s  string
	}
	pName struct {
		at   int
		name string
	}
	pList struct { // a list [a, b], a tuple (a, b) or a set {a}
		at   int
		elts []pnode
		kind byte // '[', '(' or '{'
	}
	pBin struct {
		at   int
		op   string // + - * / // % **
		l, r pnode
		div  int // for / and //: index of the division in its expression
	}
	pUnary struct {
		at int
		op string // - + not
		x  pnode
	}
	pBool struct {
		at   int
		op   string // and, or
		l, r pnode
	}
	pCmp struct {
		at    int
		first pnode
		ops   []string // < > <= >= == != in "not in"
		rest  []pnode
	}
	pIf struct {
		at                 int
		test, body, orelse pnode
	}
	pCall struct {
		at   int
		name string // dotted: "sample", "np.random.randint"
		args []pnode
	}
	pIndex struct {
		at int
		x  pnode
		i  pnode
	}
	pSlice struct {
		at             int
		x              pnode
		lo, hi, stride pnode // nil when omitted
	}
)

func (n *pNum) col() int   { return n.at }
func (n *pStr) col() int   { return n.at }
func (n *pName) col() int  { return n.at }
func (n *pList) col() int  { return n.at }
func (n *pBin) col() int   { return n.at }
func (n *pUnary) col() int { return n.at }
func (n *pBool) col() int  { return n.at }
func (n *pCmp) col() int   { return n.at }
func (n *pIf) col() int    { return n.at }
func (n *pCall) col() int  { return n.at }
func (n *pIndex) col() int { return n.at }
func (n *pSlice) col() int { return n.at }

// token kinds
const (
	tEOF = iota
	tNum
	tStr
	tName
	tOp
)

type ptoken struct {
	kind int
	s    string // operator or name text; the decoded text of a string
	num  *big.Rat
	at   int // rune column, 0-based
}

// pySyntaxError is a syntax error at a rune column (0-based).
type pySyntaxError struct {
	at  int
	msg string
}

func (e *pySyntaxError) Error() string { return fmt.Sprintf("column %d: %s", e.at+1, e.msg) }

// maxDepth bounds nesting, so that a hostile expression cannot exhaust the
// stack.
const maxDepth = 100

// lexPython splits src into tokens.
func lexPython(src string) ([]ptoken, error) {
	rs := []rune(src)
	var out []ptoken
	for i := 0; i < len(rs); {
		c := rs[i]
		switch {
		case c == ' ' || c == '\t':
			i++
			continue
		case c == '\n' || c == '\r':
			return nil, &pySyntaxError{i, "an expression is one line"}
		case c == '#':
			i = len(rs)
			continue
		case c == '$':
			if i+1 < len(rs) && isNameStart(rs[i+1]) {
				i++ // "$x" is the variable x
				continue
			}
			return nil, &pySyntaxError{i, `"$" must be followed by a variable name`}
		case isNameStart(c):
			j := i
			for j < len(rs) && isNameChar(rs[j]) {
				j++
			}
			out = append(out, ptoken{kind: tName, s: string(rs[i:j]), at: i})
			i = j
			continue
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(rs) && rs[i+1] >= '0' && rs[i+1] <= '9':
			j := i
			for j < len(rs) && (rs[j] >= '0' && rs[j] <= '9' || rs[j] == '.' || rs[j] == '_') {
				j++
			}
			if j < len(rs) && (rs[j] == 'e' || rs[j] == 'E') {
				k := j + 1
				if k < len(rs) && (rs[k] == '+' || rs[k] == '-') {
					k++
				}
				if k < len(rs) && rs[k] >= '0' && rs[k] <= '9' {
					for k < len(rs) && rs[k] >= '0' && rs[k] <= '9' {
						k++
					}
					j = k
				}
			}
			lit := strings.ReplaceAll(string(rs[i:j]), "_", "")
			if strings.HasSuffix(lit, ".") {
				lit += "0"
			}
			if j < len(rs) && (isNameChar(rs[j])) {
				return nil, &pySyntaxError{i, fmt.Sprintf("bad number %q", string(rs[i:j+1]))}
			}
			if len(lit) > 1 && lit[0] == '0' && !strings.ContainsAny(lit, ".eE") && strings.Trim(lit, "0") != "" {
				return nil, &pySyntaxError{i, fmt.Sprintf("leading zeros in %q are not allowed in Python", lit)}
			}
			mant, exp, _ := strings.Cut(strings.ToLower(lit), "e")
			if len(mant) > 60 || len(strings.TrimLeft(exp, "+-")) > 3 {
				return nil, &pySyntaxError{i, fmt.Sprintf("number %q is too long", lit)}
			}
			if strings.Count(mant, ".") > 1 {
				return nil, &pySyntaxError{i, fmt.Sprintf("bad number %q", lit)}
			}
			r, ok := new(big.Rat).SetString(lit)
			if !ok || checkSize(r) != nil {
				return nil, &pySyntaxError{i, fmt.Sprintf("bad number %q", lit)}
			}
			out = append(out, ptoken{kind: tNum, num: r, s: lit, at: i})
			i = j
			continue
		case c == '"' || c == '\'':
			s, j, err := lexString(rs, i)
			if err != nil {
				return nil, err
			}
			out = append(out, ptoken{kind: tStr, s: s, at: i})
			i = j
			continue
		}
		// Operators, longest first.
		op := matchOp(rs[i:])
		if op == "" {
			return nil, &pySyntaxError{i, fmt.Sprintf("unexpected character %q", c)}
		}
		out = append(out, ptoken{kind: tOp, s: op, at: i})
		i += len([]rune(op))
	}
	out = append(out, ptoken{kind: tEOF, at: len(rs)})
	return out, nil
}

var pyOps = []string{"**", "//", "==", "!=", "<=", ">=", "<<", ">>", "<>", "->", ":=",
	"+", "-", "*", "/", "%", "<", ">", "(", ")", "[", "]", "{", "}", ",", ":", ".", "^", "|", "&", "~", "@", "=", ";", "!", "?", "`"}

// matchOp returns the operator at the start of rs, or "".
func matchOp(rs []rune) string {
	head := string(rs[:min(len(rs), 2)])
	for _, op := range pyOps {
		if strings.HasPrefix(head, op) {
			return op
		}
	}
	return ""
}

func isNameStart(c rune) bool { return c == '_' || unicode.IsLetter(c) }
func isNameChar(c rune) bool  { return c == '_' || unicode.IsLetter(c) || unicode.IsDigit(c) }

// lexString reads a Python string literal starting at rs[i] (a quote), with
// the common escapes. It returns the text and the index after the literal.
func lexString(rs []rune, i int) (string, int, error) {
	q := rs[i]
	var b strings.Builder
	for j := i + 1; j < len(rs); j++ {
		c := rs[j]
		if c == q {
			return b.String(), j + 1, nil
		}
		if c != '\\' {
			b.WriteRune(c)
			continue
		}
		j++
		if j >= len(rs) {
			break
		}
		switch rs[j] {
		case 'n':
			b.WriteRune('\n')
		case 't':
			b.WriteRune('\t')
		case '\\', '\'', '"':
			b.WriteRune(rs[j])
		default:
			b.WriteRune('\\')
			b.WriteRune(rs[j])
		}
	}
	return "", 0, &pySyntaxError{i, "unterminated string"}
}

// pyParser is a recursive-descent parser over the tokens.
type pyParser struct {
	toks  []ptoken
	i     int
	depth int
	divs  int
}

// parsePython parses one expression.
func parsePython(src string) (pnode, int, error) {
	toks, err := lexPython(src)
	if err != nil {
		return nil, 0, err
	}
	p := &pyParser{toks: toks}
	if p.peek().kind == tEOF {
		return nil, 0, errors.New("empty expression")
	}
	n, err := p.tests()
	if err != nil {
		return nil, 0, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, 0, p.unexpected(t)
	}
	return n, p.divs, nil
}

func (p *pyParser) peek() ptoken { return p.toks[p.i] }
func (p *pyParser) next() ptoken {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *pyParser) isOp(s string) bool {
	t := p.peek()
	return t.kind == tOp && t.s == s
}

func (p *pyParser) isKw(s string) bool {
	t := p.peek()
	return t.kind == tName && t.s == s
}

func (p *pyParser) expect(op string) error {
	if !p.isOp(op) {
		return p.unexpected(p.peek())
	}
	p.next()
	return nil
}

func (p *pyParser) unexpected(t ptoken) error {
	switch t.kind {
	case tEOF:
		return &pySyntaxError{t.at, "unexpected end of expression"}
	case tOp:
		switch t.s {
		case "^":
			return &pySyntaxError{t.at, `"^" is XOR in Python; write ** for a power`}
		case "|", "&", "~", "<<", ">>":
			return &pySyntaxError{t.at, fmt.Sprintf("bitwise operator %q is not supported", t.s)}
		case "=":
			return &pySyntaxError{t.at, `"=" assigns; write == to compare`}
		case "!":
			return &pySyntaxError{t.at, `"!" is not Python; write not`}
		case "?":
			return &pySyntaxError{t.at, `"?" is not Python; write A if C else B`}
		}
		return &pySyntaxError{t.at, fmt.Sprintf("unexpected %q", t.s)}
	case tName:
		return &pySyntaxError{t.at, fmt.Sprintf("unexpected name %q", t.s)}
	}
	return &pySyntaxError{t.at, "unexpected value"}
}

func (p *pyParser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return &pySyntaxError{p.peek().at, "expression nested too deeply"}
	}
	return nil
}

// tests parses "test {, test} [,]": a tuple when there is a comma.
func (p *pyParser) tests() (pnode, error) {
	at := p.peek().at
	first, err := p.test()
	if err != nil {
		return nil, err
	}
	if !p.isOp(",") {
		return first, nil
	}
	elts := []pnode{first}
	for p.isOp(",") {
		p.next()
		if p.startsTest() {
			n, err := p.test()
			if err != nil {
				return nil, err
			}
			elts = append(elts, n)
		} else {
			break
		}
	}
	return &pList{at: at, elts: elts, kind: '('}, nil
}

func (p *pyParser) startsTest() bool {
	t := p.peek()
	switch t.kind {
	case tNum, tStr:
		return true
	case tName:
		switch t.s {
		case "and", "or", "if", "else", "in", "is", "for":
			return false
		}
		return true
	case tOp:
		switch t.s {
		case "(", "[", "{", "-", "+":
			return true
		}
	}
	return false
}

func (p *pyParser) test() (pnode, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	if p.isKw("lambda") {
		return nil, &pySyntaxError{p.peek().at, "lambda is not supported"}
	}
	at := p.peek().at
	body, err := p.orTest()
	if err != nil {
		return nil, err
	}
	if !p.isKw("if") {
		return body, nil
	}
	p.next()
	cond, err := p.orTest()
	if err != nil {
		return nil, err
	}
	if !p.isKw("else") {
		return nil, &pySyntaxError{p.peek().at, `"A if C" needs "else B"`}
	}
	p.next()
	orelse, err := p.test()
	if err != nil {
		return nil, err
	}
	return &pIf{at: at, test: cond, body: body, orelse: orelse}, nil
}

func (p *pyParser) orTest() (pnode, error) {
	l, err := p.andTest()
	if err != nil {
		return nil, err
	}
	for p.isKw("or") {
		t := p.next()
		r, err := p.andTest()
		if err != nil {
			return nil, err
		}
		l = &pBool{at: t.at, op: "or", l: l, r: r}
	}
	return l, nil
}

func (p *pyParser) andTest() (pnode, error) {
	l, err := p.notTest()
	if err != nil {
		return nil, err
	}
	for p.isKw("and") {
		t := p.next()
		r, err := p.notTest()
		if err != nil {
			return nil, err
		}
		l = &pBool{at: t.at, op: "and", l: l, r: r}
	}
	return l, nil
}

func (p *pyParser) notTest() (pnode, error) {
	if p.isKw("not") {
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		t := p.next()
		x, err := p.notTest()
		if err != nil {
			return nil, err
		}
		return &pUnary{at: t.at, op: "not", x: x}, nil
	}
	return p.comparison()
}

func (p *pyParser) compOp() (string, bool) {
	t := p.peek()
	if t.kind == tOp {
		switch t.s {
		case "<", ">", "<=", ">=", "==", "!=":
			p.next()
			return t.s, true
		}
		return "", false
	}
	if t.kind == tName {
		switch t.s {
		case "in":
			p.next()
			return "in", true
		case "not":
			if n := p.toks[p.i+1]; n.kind == tName && n.s == "in" {
				p.i += 2
				return "not in", true
			}
		case "is":
			return "is", true
		}
	}
	return "", false
}

func (p *pyParser) comparison() (pnode, error) {
	at := p.peek().at
	first, err := p.arith()
	if err != nil {
		return nil, err
	}
	var ops []string
	var rest []pnode
	for {
		opAt := p.peek().at
		op, ok := p.compOp()
		if !ok {
			break
		}
		if op == "is" {
			return nil, &pySyntaxError{opAt, `"is" is not supported; write ==`}
		}
		r, err := p.arith()
		if err != nil {
			return nil, err
		}
		ops, rest = append(ops, op), append(rest, r)
	}
	if ops == nil {
		return first, nil
	}
	return &pCmp{at: at, first: first, ops: ops, rest: rest}, nil
}

func (p *pyParser) arith() (pnode, error) {
	l, err := p.term()
	if err != nil {
		return nil, err
	}
	for p.isOp("+") || p.isOp("-") {
		t := p.next()
		r, err := p.term()
		if err != nil {
			return nil, err
		}
		l = &pBin{at: t.at, op: t.s, l: l, r: r}
	}
	return l, nil
}

func (p *pyParser) term() (pnode, error) {
	l, err := p.factor()
	if err != nil {
		return nil, err
	}
	for p.isOp("*") || p.isOp("/") || p.isOp("//") || p.isOp("%") || p.isOp("@") {
		t := p.next()
		if t.s == "@" {
			return nil, &pySyntaxError{t.at, `"@" (matrix product) is not supported`}
		}
		r, err := p.factor()
		if err != nil {
			return nil, err
		}
		b := &pBin{at: t.at, op: t.s, l: l, r: r, div: -1}
		if t.s == "/" || t.s == "//" {
			b.div = p.divs
			p.divs++
		}
		l = b
	}
	return l, nil
}

func (p *pyParser) factor() (pnode, error) {
	if p.isOp("-") || p.isOp("+") {
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		t := p.next()
		x, err := p.factor()
		if err != nil {
			return nil, err
		}
		return &pUnary{at: t.at, op: t.s, x: x}, nil
	}
	return p.power()
}

func (p *pyParser) power() (pnode, error) {
	base, err := p.primary()
	if err != nil {
		return nil, err
	}
	if !p.isOp("**") {
		return base, nil
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	t := p.next()
	exp, err := p.factor() // right-associative; binds tighter than unary minus on its left
	if err != nil {
		return nil, err
	}
	return &pBin{at: t.at, op: "**", l: base, r: exp, div: -1}, nil
}

func (p *pyParser) primary() (pnode, error) {
	x, err := p.atom()
	if err != nil {
		return nil, err
	}
	for {
		switch {
		case p.isOp("."):
			t := p.next()
			nt := p.next()
			if nt.kind != tName {
				return nil, p.unexpected(nt)
			}
			nm, ok := x.(*pName)
			if !ok || !p.isOp("(") && !p.isOp(".") {
				return nil, &pySyntaxError{t.at, fmt.Sprintf("attribute access .%s is not supported (only helper calls such as np.arange(...))", nt.s)}
			}
			x = &pName{at: nm.at, name: nm.name + "." + nt.s}
		case p.isOp("("):
			t := p.next()
			nm, ok := x.(*pName)
			if !ok {
				return nil, &pySyntaxError{t.at, "only named helpers can be called"}
			}
			var args []pnode
			for !p.isOp(")") {
				if p.peek().kind == tName && p.toks[p.i+1].kind == tOp && p.toks[p.i+1].s == "=" {
					return nil, &pySyntaxError{p.peek().at, fmt.Sprintf("keyword argument %s= is not supported", p.peek().s)}
				}
				if p.isOp("*") {
					return nil, &pySyntaxError{p.peek().at, "*args is not supported"}
				}
				a, err := p.test()
				if err != nil {
					return nil, err
				}
				if p.isKw("for") {
					return nil, &pySyntaxError{p.peek().at, "comprehensions are not supported"}
				}
				args = append(args, a)
				if !p.isOp(",") {
					break
				}
				p.next()
			}
			if err := p.expect(")"); err != nil {
				return nil, err
			}
			x = &pCall{at: nm.at, name: nm.name, args: args}
		case p.isOp("["):
			t := p.next()
			n, err := p.subscript(x, t.at)
			if err != nil {
				return nil, err
			}
			x = n
		default:
			if nm, ok := x.(*pName); ok && strings.Contains(nm.name, ".") {
				return nil, &pySyntaxError{nm.at, fmt.Sprintf("attribute access %s is not supported", nm.name)}
			}
			return x, nil
		}
	}
}

// subscript parses what follows "[": an index or a slice lo:hi:step.
func (p *pyParser) subscript(x pnode, at int) (pnode, error) {
	var parts [3]pnode
	colons := 0
	for {
		if !p.isOp(":") && !p.isOp("]") {
			if colons > 2 {
				return nil, p.unexpected(p.peek())
			}
			n, err := p.test()
			if err != nil {
				return nil, err
			}
			parts[colons] = n
		}
		if p.isOp(":") {
			colons++
			if colons > 2 {
				return nil, p.unexpected(p.peek())
			}
			p.next()
			continue
		}
		break
	}
	if err := p.expect("]"); err != nil {
		return nil, err
	}
	if colons == 0 {
		if parts[0] == nil {
			return nil, &pySyntaxError{at, "empty index"}
		}
		return &pIndex{at: at, x: x, i: parts[0]}, nil
	}
	return &pSlice{at: at, x: x, lo: parts[0], hi: parts[1], stride: parts[2]}, nil
}

func (p *pyParser) atom() (pnode, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	t := p.next()
	switch t.kind {
	case tNum:
		return &pNum{at: t.at, r: t.num}, nil
	case tStr:
		s := t.s
		for p.peek().kind == tStr { // "a" "b" is "ab"
			s += p.next().s
		}
		return &pStr{at: t.at, s: s}, nil
	case tName:
		switch t.s {
		case "and", "or", "not", "if", "else", "in", "is", "for", "lambda", "None":
			if t.s == "None" {
				return nil, &pySyntaxError{t.at, "None is not supported"}
			}
			return nil, p.unexpected(t)
		}
		return &pName{at: t.at, name: t.s}, nil
	case tOp:
		switch t.s {
		case "(", "[", "{":
			closer := map[string]string{"(": ")", "[": "]", "{": "}"}[t.s]
			var elts []pnode
			trailingComma := false
			for !p.isOp(closer) {
				n, err := p.test()
				if err != nil {
					return nil, err
				}
				if p.isKw("for") {
					return nil, &pySyntaxError{p.peek().at, "comprehensions are not supported"}
				}
				if t.s == "{" && p.isOp(":") {
					return nil, &pySyntaxError{p.peek().at, "dictionaries are not supported"}
				}
				elts = append(elts, n)
				trailingComma = false
				if !p.isOp(",") {
					break
				}
				p.next()
				trailingComma = true
			}
			if err := p.expect(closer); err != nil {
				return nil, err
			}
			switch t.s {
			case "(":
				if len(elts) == 1 && !trailingComma {
					return elts[0], nil // grouping
				}
				return &pList{at: t.at, elts: elts, kind: '('}, nil
			case "{":
				if len(elts) == 0 {
					return nil, &pySyntaxError{t.at, "dictionaries are not supported"}
				}
			}
			return &pList{at: t.at, elts: elts, kind: t.s[0]}, nil
		}
	}
	return nil, p.unexpected(t)
}
