package templates

import (
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-python/gpython/ast"
	"github.com/go-python/gpython/parser"
	"github.com/go-python/gpython/py"
)

// Template annotations are Python 3 expressions (The Python Language
// Reference, §6 "Expressions"). They are parsed by gpython's parser (a
// Python 3.4 grammar: no "_" in number literals, no ":=") and its syntax
// tree is turned here into pnode, the tree this package evaluates exactly
// (expr.go), bounds, solves and shows. Two additions to Python, handled by
// prepare: "$name" reads the variable name (answers are written
// "#answer: $ans"), and "#" starts a comment, as in Python (§2.1.3).
// Constructs the evaluator has no meaning for are refused with a message
// that names them: bitwise operators, lambdas, comprehensions, dictionaries,
// keyword and star arguments, "is", None, and attribute access other than a
// dotted helper name (np.random.randint).

// pnode is a node of a parsed expression.
type pnode interface{ isNode() }

type (
	pNum  struct{ r *big.Rat }
	pStr  struct{ s string }
	pName struct{ name string }
	pList struct { // a list [a, b], a tuple (a, b) or a set {a}
		elts []pnode
		kind byte // '[', '(' or '{'
	}
	pBin struct {
		op   string // + - * / // % **
		l, r pnode
		div  int // for / and //: index of the division in its expression (source order of its end); -1 otherwise
	}
	pUnary struct {
		op string // - + not
		x  pnode
	}
	pBool struct {
		op   string // and, or
		l, r pnode
	}
	pCmp struct {
		first pnode
		ops   []string // < > <= >= == != in "not in"
		rest  []pnode
	}
	pIf   struct{ test, body, orelse pnode }
	pCall struct {
		name string // dotted: "sample", "np.random.randint"
		args []pnode
	}
	pIndex struct{ x, i pnode }
	pSlice struct {
		x              pnode
		lo, hi, stride pnode // nil when omitted
	}
)

func (*pNum) isNode()   {}
func (*pStr) isNode()   {}
func (*pName) isNode()  {}
func (*pList) isNode()  {}
func (*pBin) isNode()   {}
func (*pUnary) isNode() {}
func (*pBool) isNode()  {}
func (*pCmp) isNode()   {}
func (*pIf) isNode()    {}
func (*pCall) isNode()  {}
func (*pIndex) isNode() {}
func (*pSlice) isNode() {}

// pySyntaxError is a syntax error at a rune column (0-based) of the
// expression as written.
type pySyntaxError struct {
	at  int
	msg string
}

func (e *pySyntaxError) Error() string { return fmt.Sprintf("column %d: %s", e.at+1, e.msg) }

// maxDepth bounds the depth of an expression tree, so that a hostile
// expression cannot make the evaluator recurse without end.
const maxDepth = 100

// parsePython parses one expression. It returns the tree and the number of
// / and // operators in it.
func parsePython(src string) (pnode, int, error) {
	body, err := prepare(src)
	if err != nil {
		return nil, 0, err
	}
	// gpython reads a leading blank as an indent; Python's eval() skips it.
	lead := len(body) - len(strings.TrimLeft(body, " \t"))
	if lead == len(body) {
		return nil, 0, errors.New("empty expression")
	}
	c := &converter{src: src, lead: lead}
	tree, err := parser.ParseString(body[lead:], py.EvalMode)
	if err != nil {
		return nil, 0, c.syntaxError(body, err)
	}
	n, err := c.expr(tree.(*ast.Expression).Body)
	return n, c.divs, err
}

// prepare is the one step between the annotation language and Python. It
// checks that src is one line, cuts a "#" comment, and blanks the "$" of
// each "$name" (so every byte keeps its column); a "$" or "#" inside a
// string literal is text.
func prepare(src string) (string, error) {
	b := []byte(src)
	quote := "" // the closing quote of the string literal being read
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case quote != "":
			if c == '\\' {
				i++
			} else if strings.HasPrefix(src[i:], quote) {
				i += len(quote) - 1
				quote = ""
			}
		case c == '\n' || c == '\r':
			return "", &pySyntaxError{utf8.RuneCountInString(src[:i]), "an expression is one line"}
		case c == '\\': // outside a string it joins lines (§2.1.5)
			return "", &pySyntaxError{utf8.RuneCountInString(src[:i]), `"\" outside a string: an expression is one line`}
		case c == '"' || c == '\'':
			quote = src[i : i+1]
			if triple := strings.Repeat(quote, 3); strings.HasPrefix(src[i:], triple) {
				quote, i = triple, i+2
			}
		case c == '#':
			return string(b[:i]), nil
		case c == '$':
			if r, _ := utf8.DecodeRuneInString(src[i+1:]); r != '_' && !unicode.IsLetter(r) {
				return "", &pySyntaxError{utf8.RuneCountInString(src[:i]), `"$" must be followed by a variable name`}
			}
			b[i] = ' '
		}
	}
	return string(b), nil
}

// converter turns gpython's tree into pnode.
type converter struct {
	src   string // the expression as written
	lead  int    // bytes of src before the text given to gpython
	divs  int    // / and // operators seen
	depth int
}

// errAt is a syntax error at a byte offset of the text given to gpython.
func (c *converter) errAt(off int, format string, a ...any) error {
	off = min(max(c.lead+off, 0), len(c.src))
	return &pySyntaxError{utf8.RuneCountInString(c.src[:off]), fmt.Sprintf(format, a...)}
}

// refuse is the error for a construct the evaluator does not support.
func (c *converter) refuse(n ast.Ast, format string, a ...any) error {
	return c.errAt(n.GetColOffset(), format, a...)
}

var (
	binOps = map[ast.OperatorNumber]string{ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/",
		ast.FloorDiv: "//", ast.Modulo: "%", ast.Pow: "**"}
	bitOps = map[ast.OperatorNumber]string{ast.BitOr: "|", ast.BitAnd: "&", ast.LShift: "<<", ast.RShift: ">>"}
	cmpOps = map[ast.CmpOp]string{ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
		ast.GtE: ">=", ast.In: "in", ast.NotIn: "not in"}
	unaryOps = map[ast.UnaryOpNumber]string{ast.Not: "not", ast.UAdd: "+", ast.USub: "-"}
	boolOps  = map[ast.BoolOpNumber]string{ast.And: "and", ast.Or: "or"}
)

// expr converts one expression node. Children are converted in source
// order, so divisions are numbered as they end in the text.
func (c *converter) expr(x ast.Expr) (pnode, error) {
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > maxDepth {
		return nil, c.refuse(x, "expression nested too deeply")
	}
	switch x := x.(type) {
	case *ast.Num:
		return c.number(x)
	case *ast.Str:
		return &pStr{string(x.S)}, nil
	case *ast.Name:
		return &pName{string(x.Id)}, nil
	case *ast.NameConstant:
		if x.Value == py.None {
			return nil, c.refuse(x, "None is not supported")
		}
		return &pName{map[bool]string{true: "True", false: "False"}[x.Value == py.True]}, nil // see constants
	case *ast.Tuple:
		return c.list(x.Elts, '(')
	case *ast.List:
		return c.list(x.Elts, '[')
	case *ast.Set:
		return c.list(x.Elts, '{') // refused by compileExpr unless it wraps the whole expression
	case *ast.BinOp:
		return c.binOp(x)
	case *ast.UnaryOp:
		op, ok := unaryOps[x.Op]
		if !ok {
			return nil, c.refuse(x, `bitwise operator "~" is not supported`)
		}
		v, err := c.expr(x.Operand)
		return &pUnary{op: op, x: v}, err
	case *ast.BoolOp: // a or b or c is (a or b) or c
		return c.boolOp(x)
	case *ast.Compare:
		return c.compare(x)
	case *ast.IfExp: // body if test else orelse, in that order in the text
		body, test, err := c.pair(x.Body, x.Test)
		if err != nil {
			return nil, err
		}
		orelse, err := c.expr(x.Orelse)
		return &pIf{test: test, body: body, orelse: orelse}, err
	case *ast.Call:
		return c.call(x)
	case *ast.Attribute:
		return nil, c.refuse(x, "attribute access .%s is not supported (only helper calls such as np.arange(...))", x.Attr)
	case *ast.Subscript:
		return c.subscript(x)
	case *ast.Lambda:
		return nil, c.refuse(x, "lambda is not supported")
	case *ast.ListComp, *ast.SetComp, *ast.DictComp, *ast.GeneratorExp:
		return nil, c.refuse(x, "comprehensions are not supported")
	case *ast.Dict:
		return nil, c.refuse(x, "dictionaries are not supported")
	case *ast.Starred:
		return nil, c.refuse(x, "*unpacking is not supported")
	case *ast.Bytes:
		return nil, c.refuse(x, "bytes literals are not supported")
	case *ast.Ellipsis:
		return nil, c.refuse(x, "... is not supported")
	}
	return nil, c.refuse(x, "%s is not supported", strings.ToLower(x.Type().Name))
}

// binOp converts an arithmetic operator, numbering the divisions in source order; bitwise operators are refused.
func (c *converter) binOp(x *ast.BinOp) (pnode, error) {
	op, ok := binOps[x.Op]
	if x.Op == ast.BitXor {
		return nil, c.refuse(x, `"^" is XOR in Python; write ** for a power`)
	} else if !ok {
		return nil, c.refuse(x, "bitwise operator %q is not supported", bitOps[x.Op])
	}
	c.depth-- // a+b+c is a chain (§6.7), not nesting: its left operand is no deeper
	l, err := c.expr(x.Left)
	c.depth++
	if err != nil {
		return nil, err
	}
	r, err := c.expr(x.Right)
	if err != nil {
		return nil, err
	}
	b := &pBin{op: op, l: l, r: r, div: -1}
	if op == "/" || op == "//" {
		b.div = c.divs
		c.divs++
	}
	return b, nil
}

// boolOp converts a or b or c into (a or b) or c.
func (c *converter) boolOp(x *ast.BoolOp) (pnode, error) {
	l, err := c.list(x.Values, '(')
	if err != nil {
		return nil, err
	}
	vals := l.(*pList).elts
	n := vals[0]
	for _, r := range vals[1:] {
		n = &pBool{op: boolOps[x.Op], l: n, r: r}
	}
	return n, nil
}

// compare converts a chain of comparisons; is and is not are refused.
func (c *converter) compare(x *ast.Compare) (pnode, error) {
	n := &pCmp{}
	for _, op := range x.Ops {
		if op == ast.Is || op == ast.IsNot {
			return nil, c.refuse(x, `"is" is not supported; write ==`)
		}
		n.ops = append(n.ops, cmpOps[op])
	}
	l, err := c.list(append([]ast.Expr{x.Left}, x.Comparators...), '(')
	if err != nil {
		return nil, err
	}
	n.first, n.rest = l.(*pList).elts[0], l.(*pList).elts[1:]
	return n, nil
}

// pair converts two expressions, a first.
func (c *converter) pair(a, b ast.Expr) (pnode, pnode, error) {
	l, err := c.expr(a)
	if err != nil {
		return nil, nil, err
	}
	r, err := c.expr(b)
	return l, r, err
}

// list converts the elements of a tuple, list or set.
func (c *converter) list(elts []ast.Expr, kind byte) (pnode, error) {
	n := &pList{kind: kind}
	for _, e := range elts {
		v, err := c.expr(e)
		if err != nil {
			return nil, err
		}
		n.elts = append(n.elts, v)
	}
	return n, nil
}

// call converts a call of a helper, named by a dotted name.
func (c *converter) call(x *ast.Call) (pnode, error) {
	name, ok := dotted(x.Func)
	switch {
	case !ok:
		if a, is := x.Func.(*ast.Attribute); is {
			return c.expr(a)
		}
		return nil, c.refuse(x, "only named helpers can be called")
	case len(x.Keywords) > 0:
		return nil, c.refuse(x.Keywords[0], "keyword argument %s= is not supported", x.Keywords[0].Arg)
	case x.Starargs != nil:
		return nil, c.refuse(x.Starargs, "*args is not supported")
	case x.Kwargs != nil:
		return nil, c.refuse(x.Kwargs, "**kwargs is not supported")
	}
	args, err := c.list(x.Args, '(')
	if err != nil {
		return nil, err
	}
	return &pCall{name: name, args: args.(*pList).elts}, nil
}

// dotted returns the name a.b.c that x spells, if it spells one.
func dotted(x ast.Expr) (string, bool) {
	switch x := x.(type) {
	case *ast.Name:
		return string(x.Id), true
	case *ast.Attribute:
		s, ok := dotted(x.Value)
		return s + "." + string(x.Attr), ok
	}
	return "", false
}

// subscript converts x[i] and x[lo:hi:stride] (§6.3.2, §6.3.3).
func (c *converter) subscript(x *ast.Subscript) (pnode, error) {
	v, err := c.expr(x.Value)
	if err != nil {
		return nil, err
	}
	switch s := x.Slice.(type) {
	case *ast.Index:
		i, err := c.expr(s.Value)
		return &pIndex{x: v, i: i}, err
	case *ast.Slice:
		var parts [3]pnode // nil where omitted
		for i, part := range []ast.Expr{s.Lower, s.Upper, s.Step} {
			if part != nil {
				if parts[i], err = c.expr(part); err != nil {
					return nil, err
				}
			}
		}
		return &pSlice{x: v, lo: parts[0], hi: parts[1], stride: parts[2]}, nil
	}
	return nil, c.refuse(x, "a subscript with several slices is not supported")
}

// numLitRE is a Python number literal (§2.4.5 "Numeric literals", as
// gpython reads them: without "_").
const numLitRE = `0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?`

// numLit matches the number literal that starts a text.
var numLit = regexp.MustCompile(`^(?:` + numLitRE + `)`)

// number reads a number literal exactly from the text at the node's column:
// gpython's own value of 0.1 is a float64 and is never used.
func (c *converter) number(x *ast.Num) (pnode, error) {
	if _, complex := x.N.(py.Complex); complex {
		return nil, c.refuse(x, "complex numbers are not supported")
	}
	lit := numLit.FindString(c.src[c.lead+x.ColOffset:])
	mant, exp, _ := strings.Cut(strings.ToLower(lit), "e")
	if strings.HasPrefix(mant, "0x") {
		mant, exp = lit, ""
	}
	if len(mant) > 60 || len(strings.TrimLeft(exp, "+-")) > 3 {
		return nil, c.refuse(x, "number %q is too long", lit)
	}
	r, ok := new(big.Rat).SetString(lit)
	if !ok || checkSize(r) != nil {
		return nil, c.refuse(x, "bad number %q", lit)
	}
	return &pNum{r}, nil
}

// syntaxError words gpython's SyntaxError. Its offset is where gpython's
// lexer stood: at the character or literal it could not read (the message
// says what), or, for a grammar error, just after the token the grammar
// could not take (the message then says "unexpected EOF while parsing" for
// any one-line text, so it is not used). A grammar error is at the end of
// the expression when more text would move it; "A if C" that would be
// complete with "else B" is told so.
func (c *converter) syntaxError(body string, err error) error {
	e, ok := err.(*py.Exception)
	if !ok {
		return err
	}
	msg := ""
	if args, ok := e.Args.(py.Tuple); ok && len(args) > 0 {
		msg = fmt.Sprint(args[0])
	}
	off := 0
	if o, ok := e.Dict["offset"].(py.Int); ok {
		off = int(o)
	}
	text := body[c.lead:]
	off = min(max(off, 0), len(text))
	switch msg {
	case "illegal decimal with leading zero":
		return c.errAt(off, "leading zeros in %q are not allowed in Python", numLit.FindString(text[off:]))
	case "EOL while scanning string literal", "EOF while scanning triple-quoted string literal":
		return c.errAt(strings.LastIndexAny(text[:off], `'"`), "unterminated string")
	case "invalid syntax": // at a character no token starts with, or (at the end) gpython's refusal of "<>"
		if off == len(text) {
			return c.errAt(strings.LastIndex(text, "<>"), `"<>" is not Python 3; write !=`)
		}
		r, _ := utf8.DecodeRuneInString(text[off:])
		hint := map[rune]string{'!': `"!" is not Python; write not`, '?': `"?" is not Python; write A if C else B`}[r]
		if hint == "" {
			hint = fmt.Sprintf("unexpected character %q", r)
		}
		return c.errAt(off, "%s", hint)
	case "unexpected EOF while parsing":
	default:
		return c.errAt(off, "%s", msg)
	}
	if _, again := parser.ParseString(text+" _", py.EvalMode); again == nil || !sameOffset(again, off) {
		if _, err := parser.ParseString(text+" else 0", py.EvalMode); err == nil {
			return c.errAt(off, `"A if C" needs "else B"`)
		}
		return c.errAt(off, "unexpected end of expression")
	}
	tok := lastTok.FindString(text[:off])
	if tok == "=" {
		return c.errAt(off-1, `"=" assigns; write == to compare`)
	}
	return c.errAt(off-len(tok), "unexpected %q", tok)
}

// sameOffset reports whether err is a SyntaxError at offset off.
func sameOffset(err error, off int) bool {
	e, ok := err.(*py.Exception)
	return ok && e.Dict["offset"] == py.Int(off)
}

// lastTok is the token that ends a text, for messages: its leftmost
// match is a number, a name (§2.3), a two-character operator or one
// character.
var lastTok = regexp.MustCompile(`(?:` + numLitRE + `|[\pL_][\pL\pN\pM_]*|\*\*|//|[=!<>]=|<<|>>|.)$`)
