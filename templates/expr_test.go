package templates

import (
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

func evalStr(t *testing.T, src string, vars map[string]value) (value, error) {
	t.Helper()
	e, err := compileExpr(src)
	if err != nil {
		return value{}, err
	}
	return e.eval(&env{vars: vars})
}

// TestPythonSemantics checks the evaluator against values computed by hand
// from Python 3's definitions (floor division and modulo round toward
// negative infinity; int() truncates; round() ties to even), on exact values.
func TestPythonSemantics(t *testing.T) {
	vars := map[string]value{"a": intV(3), "b": intV(4), "c": intV(5), "s": strV("x")}
	cases := []struct{ src, want string }{
		{"7 // 2", "3"},
		{"-7 // 2", "-4"},
		{"7 // -2", "-4"},
		{"7.5 // 2", "3"},
		{"-7 % 3", "2"},
		{"7 % -3", "-2"},
		{"7 % 3", "1"},
		{"7 / 2", "3.5"},
		{"1 / 8", "0.125"},
		{"int(-3.5)", "-3"},
		{"int(3.99)", "3"},
		{"round(2.5)", "2"},
		{"round(3.5)", "4"},
		{"round(-2.5)", "-2"},
		{"round(0.125, 2)", "0.12"},
		{"round(0.375, 2)", "0.38"},
		{"round(1234, -2)", "1200"},
		{"2 ** 10", "1024"},
		{"2 ** -2", "0.25"},
		{"-2 ** 2", "-4"},
		{"(a + b) * c", "35"},
		{"a * b // c", "2"},
		{"abs(a - c)", "2"},
		{"min(a, b, c) + max([a, b, c])", "8"},
		{"sum([1.5, 2.5])", "4"},
		{"floor(-0.5) + ceil(0.5)", "0"},
		{"0.1 + 0.2", "0.3"},
		{"1 // 1 # a comment with // inside", "1"},
	}
	for _, c := range cases {
		v, err := evalStr(t, c.src, vars)
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		if got := v.String(); got != c.want {
			t.Errorf("%s = %s, want %s", c.src, got, c.want)
		}
	}
	bools := []struct {
		src  string
		want bool
	}{
		{"0.1 + 0.2 == 0.3", true},
		{"a < b < c", true},
		{"a < c < b", false},
		{"divides(120, 5)", true},
		{"divides(121, 5)", false},
		{"divides(5, 0)", false},
		{"is_int(7 / 2)", false},
		{"is_int(8 / 2)", true},
		{"not (a > b) and True", true},
		{"b == 0 or a / (b - 4) > 1", false}, // must not evaluate the division
		{"a in [1, 2, 3]", true},
		{"s == \"x\"", true},
		{"s != 'x//y'", true}, // // inside a string is not floor division
	}
	for _, c := range bools {
		e, err := compileExpr(c.src)
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		v := map[string]value{"a": intV(3), "b": intV(4), "c": intV(5), "s": strV("x")}
		if c.src == "b == 0 or a / (b - 4) > 1" {
			v["b"] = intV(0)
			c.want = true
		}
		got, err := e.evalBool(&env{vars: v})
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s = %v, want %v", c.src, got, c.want)
		}
	}
}

func TestExpressionErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"1 / 0", "division by zero"},
		{"5 % 0", "modulo by zero"},
		{"0 ** -1", "division by zero"},
		{"sqrt(4)", `unknown helper "sqrt"`},
		{"x ^ 2", "XOR"},
		{"2 ** 1000", "power too large"},
		{"2 ** 0.5", "non-integer power"},
		{"zz + 1", `unknown variable or pool "zz"`},
		{"sample(names)", "allowed only in #init"},
		{"(1 + ", "syntax error"},
		{"'a' * 2", "needs numbers"},
		{"", "empty expression"},
		{"x.y", "attribute access .y is not supported"},
		{"a if b", `needs "else B"`},
		{"lambda: 1", "lambda is not supported"},
		{"[x for x in y]", "comprehensions are not supported"},
		{"f(x=1)", "keyword argument"},
		{"{1: 2}", "dictionaries are not supported"},
		{"{1, 2}", "sets are not supported"},
		{"a = 1", `"=" assigns`},
		{"a | b", "bitwise operator"},
		{"a is b", `"is" is not supported`},
		{"007", "leading zeros"},
		{"'abc", "unterminated string"},
		{"(1, 2)[5]", "index 5 out of range"},
		{"[1] * 1.5", "repeated by an integer"},
		{"Fraction(1, 0)", "division by zero"},
	}
	for _, c := range cases {
		_, err := evalStr(t, c.src, map[string]value{"x": intV(1)})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got error %v, want one containing %q", c.src, err, c.want)
		}
	}
}

func TestFormatRat(t *testing.T) {
	cases := []struct {
		num, den int64
		want     string
		ok       bool
	}{
		{39, 1, "39", true}, {25, 2, "12.5", true}, {-3, 1, "-3", true}, {1, 8, "0.125", true},
		{-1, 20, "-0.05", true}, {1, 3, "", false}, {7, 6, "", false}, {0, 1, "0", true},
	}
	for _, c := range cases {
		got, ok := formatRat(big.NewRat(c.num, c.den))
		if ok != c.ok || got != c.want {
			t.Errorf("formatRat(%d/%d) = %q, %v; want %q, %v", c.num, c.den, got, ok, c.want, c.ok)
		}
	}
}

func TestParseNumber(t *testing.T) {
	good := map[string]string{"12": "12", "-3": "-3", "12.50": "12.5", "1,200": "1200", "70,000": "70000", "1e3": "1000"}
	for in, want := range good {
		r, ok := parseNumber(in)
		if !ok || numV(r).String() != want {
			t.Errorf("parseNumber(%q) = %v, %v; want %s", in, r, ok, want)
		}
	}
	for _, in := range []string{"", "1,2", "12,34,5", "abc", "1e999", "$5"} {
		if _, ok := parseNumber(in); ok {
			t.Errorf("parseNumber(%q) accepted", in)
		}
	}
}

// TestDomains checks range semantics (b exclusive, as Python) and that
// draws stay inside the domain.
func TestDomains(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	en := &env{vars: map[string]value{}, rng: r}
	for _, c := range []struct {
		src      string
		min, max string
		n        int64
	}{
		{"range(2, 20)", "2", "19", 18},
		{"range(40, 600, 10)", "40", "590", 56},
		{"frange(0.5, 2, 0.25)", "0.5", "1.75", 6},
		{"numbers_within(1, 5)", "1", "5", 5},
	} {
		e, err := compileExpr(c.src)
		if err != nil {
			t.Fatal(err)
		}
		v, err := e.eval(en)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if v.k != kDomain || v.dom.n != c.n {
			t.Fatalf("%s: got %d values, want %d", c.src, v.dom.n, c.n)
		}
		if v.dom.at(0).String() != c.min || v.dom.at(c.n-1).String() != c.max {
			t.Errorf("%s: from %s to %s, want %s to %s", c.src, v.dom.at(0), v.dom.at(c.n-1), c.min, c.max)
		}
	}
	e, _ := compileExpr("sample_sequential(names, 3)")
	for i := 0; i < 200; i++ {
		v, err := e.eval(en)
		if err != nil {
			t.Fatal(err)
		}
		if len(v.l) != 3 || v.l[0].equal(v.l[1]) || v.l[0].equal(v.l[2]) || v.l[1].equal(v.l[2]) {
			t.Fatalf("sample_sequential gave repeats: %v", v)
		}
	}
	if _, err := evalStrRng("range(5, 5)", en); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty range: %v", err)
	}
}

func evalStrRng(src string, en *env) (value, error) {
	e, err := compileExpr(src)
	if err != nil {
		return value{}, err
	}
	return e.eval(en)
}

func TestPoolsDistinct(t *testing.T) {
	for _, name := range PoolNames() {
		p, _ := Pool(name)
		seen := map[string]bool{}
		for _, s := range p {
			if seen[s] || strings.TrimSpace(s) != s || s == "" {
				t.Errorf("pool %s: bad or repeated entry %q", name, s)
			}
			seen[s] = true
		}
	}
	for _, need := range []string{"names", "names_male", "names_female", "currencies_sym", "fractions", "fruits", "colors", "weekdays", "cities", "sports", "multi_times"} {
		if _, ok := Pool(need); !ok {
			t.Errorf("missing pool %s", need)
		}
	}
}

func TestGenericNoopsClean(t *testing.T) {
	for _, c := range genericClauses() {
		if c.flag != "" {
			t.Errorf("generic clause %q contains flagged word %q", c.text.source(), c.flag)
		}
	}
	if got := insertNoop("A has 3. B has 4. How many?", "It rained."); got != "A has 3. B has 4. It rained. How many?" {
		t.Errorf("insertNoop: %q", got)
	}
	if got := insertNoop("How many is 2.5 plus 1?", "It rained."); got != "It rained. How many is 2.5 plus 1?" {
		t.Errorf("insertNoop one sentence: %q", got)
	}
}
