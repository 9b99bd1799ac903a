package templates

import (
	"strings"
	"testing"
)

// TestNumberLiteralsExact: literals are read from their text, not through
// gpython's float64 (which would turn 0.1 and 12345678901234567890.5 into
// nearby binary values). Values by hand from §2.4.5 of the Python reference.
func TestNumberLiteralsExact(t *testing.T) {
	cases := []struct{ src, want string }{
		{"0.1", "1/10"},
		{"12345678901234567890.5", "24691357802469135781/2"},
		{"1e-3", "1/1000"},
		{".5", "1/2"},
		{"1.", "1"},
		{"1.5E2", "150"},
		{"0x1F", "31"},
		{"0o17", "15"},
		{"0b101", "5"},
		{"x[1:2] + [0.25]", ""},
	}
	for _, c := range cases {
		e, err := compileExpr(c.src)
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		if c.want == "" {
			continue
		}
		n, ok := e.tree.(*pNum)
		if !ok || n.r.RatString() != c.want {
			t.Errorf("%s = %s, want %s", c.src, pyString(e.tree), c.want)
		}
	}
}

// TestAnnotationAdditions: "$name" reads a variable and "#" starts a
// comment, except inside a string literal.
func TestAnnotationAdditions(t *testing.T) {
	vars := map[string]value{"s": strV("x"), "ans": intV(7)}
	for src, want := range map[string]string{
		"$ans":                      "7",
		"  $ans * 2  # twice $ans":  "14",
		`'$a#b' + $s # a "comment"`: "$a#bx",
		`"""it's""" + s`:            "it'sx",
		`'a\'#' + s`:                "a'#x",
	} {
		v, err := evalStr(t, src, vars)
		if err != nil || v.String() != want {
			t.Errorf("%s = %v (%v), want %s", src, v, err, want)
		}
	}
}

// TestDivisionOrder: divisions are numbered in the order they end in the
// text, which is how exactness checks name them.
func TestDivisionOrder(t *testing.T) {
	e, err := compileExpr("a / (b / c) if d // e else f / g")
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, e.ndivs)
	walk(e.tree, func(n pnode) {
		if b, ok := n.(*pBin); ok && b.div >= 0 {
			got[b.div] = pyString(b)
		}
	})
	want := "(b / c);(a / (b / c));(d // e);(f / g)"
	if strings.Join(got, ";") != want {
		t.Errorf("divisions %q, want %q", strings.Join(got, ";"), want)
	}
}

// TestSyntaxErrorMessages: a syntax error names the column (in runes of
// the text as written) and the offending part.
func TestSyntaxErrorMessages(t *testing.T) {
	cases := []struct{ src, want string }{
		{"a + (b", `at column 7: unexpected end of expression`},
		{"1 2", `at column 3: unexpected "2"`},
		{`"é" == x y`, `at column 10: unexpected "y"`},
		{"$ans == 1 $", `at column 11: "$" must be followed by a variable name`},
		{"a ! b", `at column 3: "!" is not Python; write not`},
		{"a ? b : c", `at column 3: "?" is not Python; write A if C else B`},
		{"a <> b", `at column 3: "<>" is not Python 3; write !=`},
		{"x == 1 if y", `at column 12: "A if C" needs "else B"`},
		{"a = 1", `at column 3: "=" assigns`},
		{"a\nb", `at column 2: an expression is one line`},
		{`1 + \`, `at column 5: "\" outside a string`},
		{"1_000", `unexpected "_000"`},
		{"  'abc", `at column 3: unterminated string`},
	}
	for _, c := range cases {
		_, err := compileExpr(c.src)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error containing %q", c.src, err, c.want)
		}
	}
}

// TestRefusedConstructs: Python that the evaluator gives no meaning is
// refused with a message naming it.
func TestRefusedConstructs(t *testing.T) {
	cases := []struct{ src, want string }{
		{"~a", `bitwise operator "~"`},
		{"a & b", `bitwise operator "&"`},
		{"a << 1", `bitwise operator "<<"`},
		{"None", "None is not supported"},
		{"f(*a)", "*args is not supported"},
		{"f(**a)", "**kwargs is not supported"},
		{"sum([*a])", "unpacking is not supported"},
		{"1j", "complex numbers are not supported"},
		{"a[1:2, 3]", "several slices"},
		{"b'x'", "bytes literals are not supported"},
		{"a is not b", `"is" is not supported`},
		{"np.random", "attribute access .random is not supported"},
		{"f(1).real", "attribute access .real is not supported"},
		{"(a)(1)", `unknown helper "a"`},
		{"(1)(2)", "only named helpers can be called"},
		{"{x: 1 for x in y}", "comprehensions are not supported"},
		{"sum(x for x in y)", "comprehensions are not supported"},
		{"-" + strings.Repeat("(-", 120) + "1" + strings.Repeat(")", 120), "nested too deeply"},
	}
	for _, c := range cases {
		_, err := compileExpr(c.src)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error containing %q", c.src, err, c.want)
		}
	}
	// A long flat chain is not nesting.
	if _, err := compileExpr("a" + strings.Repeat(" + a", 500)); err != nil {
		t.Errorf("a chain of 500 additions: %v", err)
	}
}
