package templates

import (
	"encoding/json"
	"fmt"
	"github.com/fragility/fragility/templates/fixtures"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gsmsJSON builds a GSM-Symbolic file from our own text.
func gsmsJSON(t *testing.T, question, answer, annotated string) []byte {
	t.Helper()
	m := map[string]any{"question": question, "answer": answer, "id_orig": 77, "question_annotated": annotated}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustGSMS(t *testing.T, path string, data []byte, level string) *Template {
	t.Helper()
	ts, err := ParseGSMSymbolicLevel(path, data, level)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return ts[0]
}

func ratOf(t *testing.T, s string) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("not a number: %q", s)
	}
	return r
}

// TestParseQuantity: numbers in digits, words, fractions and multipliers, as
// GSM8K questions write them.
func TestParseQuantity(t *testing.T) {
	good := map[string]string{
		"two": "2", "Twenty": "20", "forty-two": "42", "one hundred and five": "105", "a dozen": "12",
		"2 dozen": "24", "three thousand two hundred": "3200", "half": "1/2", "a half": "1/2",
		"a third": "1/3", "one-third": "1/3", "two-thirds": "2/3", "three quarters": "3/4", "three-fifths": "3/5",
		"one-fifth": "1/5", "1/16": "1/16", "25%": "1/4", "0.25": "1/4", "twice": "2", "thrice": "3",
		"triple": "3", "three times": "3", "4 times": "4", "1,200": "1200",
	}
	for in, want := range good {
		r, ok := parseQuantity(in)
		if !ok || r.Cmp(ratOf(t, want)) != 0 {
			t.Errorf("parseQuantity(%q) = %v, %v; want %s", in, r, ok, want)
		}
	}
	for _, in := range []string{"", "third", "oats", "twenty dollars", "a", "times", "1/0", "two-dogs"} {
		if r, ok := parseQuantity(in); ok {
			t.Errorf("parseQuantity(%q) = %v, accepted", in, r)
		}
	}
}

// TestNumberPools: a variable drawn from a number pool is its value in
// arithmetic and its surface form in the question; a fraction pool, a
// multiple pool, pool concatenation and slicing all work; an unknown pool is
// named.
func TestNumberPools(t *testing.T) {
	q := "Ada has 12 pears and eats half of them. Bo has twice as many pears as Ada has left. How many pears does Bo have?"
	ann := "{a,Ada} has {n,12} pears and eats {f,half} of them. {b,Bo} has {m,twice} as many pears as {a,Ada} has left. How many pears does {b,Bo} have?" +
		"\n\n#init:\n- a, b = sample_sequential(names, 2)\n- $n = range(6, 60, 6)\n- $f = sample(fraction_nums[:4] + fraction_alnum)\n- $m = sample(multi_times + multiple_ice + multiple)" +
		"\n\n#conditions:\n- is_int(n * f)\n\n#answer: int((n - n * f) * m)"
	tp := mustGSMS(t, "x/pools.json", gsmsJSON(t, q, "#### 12", ann), "")
	if tp.BaseQuestion() != q || tp.BaseAnswer() != "12" || len(tp.Warnings) != 0 {
		t.Fatalf("base %q %s %v", tp.BaseQuestion(), tp.BaseAnswer(), tp.Warnings)
	}
	set, err := Generate([]*Template{tp}, Options{Variants: []Variant{VariantSymbolic}, Instances: 60, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	forms := map[string]bool{}
	for _, in := range set.Instances {
		f, m, n := ratOf(t, in.Numbers["f"]), ratOf(t, in.Numbers["m"]), ratOf(t, in.Numbers["n"])
		if !strings.Contains(in.Question, " eats "+in.Values["f"]+" of them") || !strings.Contains(in.Question, " has "+in.Values["m"]+" as many") {
			t.Errorf("%s: forms %q %q not in %q", in.ID, in.Values["f"], in.Values["m"], in.Question)
		}
		if fv, ok := parseQuantity(in.Values["f"]); !ok || fv.Cmp(f) != 0 {
			t.Errorf("%s: form %q does not mean %s", in.ID, in.Values["f"], f.RatString())
		}
		want := new(big.Rat).Mul(new(big.Rat).Sub(n, new(big.Rat).Mul(n, f)), m)
		if !want.IsInt() || in.Answer != want.Num().String() {
			t.Errorf("%s: answer %s, want %s", in.ID, in.Answer, want.RatString())
		}
		forms[in.Values["f"]] = true
	}
	if len(forms) < 5 {
		t.Errorf("only %d fraction forms drawn: %v", len(forms), forms)
	}
	// An unknown pool is named.
	bad := strings.Replace(ann, "sample(multi_times + multiple_ice + multiple)", "sample(multi_times_words)", 1)
	_, err = ParseGSMSymbolicLevel("x/pools.json", gsmsJSON(t, q, "#### 12", bad), "")
	if err == nil || !strings.Contains(err.Error(), `unknown pool "multi_times_words"`) {
		t.Errorf("unknown pool: %v", err)
	}
	// Every number pool's forms mean their values.
	for name, entries := range wordPools {
		for _, e := range entries {
			r, ok := parseQuantity(e.form)
			if !ok || r.Cmp(big.NewRat(e.num, e.den)) != 0 {
				t.Errorf("pool %s: %q does not read as %d/%d", name, e.form, e.num, e.den)
			}
		}
	}
}

// TestPythonConstructs: conditional expressions, tuples and tuple sampling
// with indexing, list repetition, Fraction, np.random.randint with one to
// three arguments, fix_floats over lists, slicing, "not in", "$name" and a
// braced answer.
func TestPythonConstructs(t *testing.T) {
	vars := map[string]value{"p": strV("week"), "w": wordedV(big.NewRat(1, 2), "half"), "n": intV(7)}
	cases := []struct{ src, want string }{
		{`7 if p == "week" else 30`, "7"},
		{`7 if p == "month" else 30`, "30"},
		{`1 if n > 5 else 2 if n > 2 else 3`, "1"},
		{`[("d4", 4), ("d6", 6)][1][1]`, "6"},
		{`len([1, 2] * 3)`, "6"},
		{`len([2, 3] * 10)`, "20"},
		{`sum((1, 2, 3))`, "6"},
		{`Fraction(3, 4) + Fraction("1/4") + Fraction(w)`, "1.5"},
		{`w * 4 + w[1]`, "2.5"},
		{`sum(fix_floats([0.1, 0.2]))`, "0.3"},
		{`len(fraction_nums[:4])`, "4"},
		{`[1, 2, 3, 4][-1] + [1, 2, 3, 4][1:3][0]`, "6"},
		{`3 not in [1, 2]`, "True"},
		{`$n + 1`, "8"},
		{`{n * 2}`, "14"},
		{`(n > 5) and "yes" or "no"`, "yes"},
		{`w[0]`, "half"},
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
	// np.random.randint: one argument is 0 ≤ v < a, two a ≤ v < b, and a
	// size (third argument) gives the domain to sample from.
	en := &env{vars: map[string]value{}, rng: newRand(3)}
	for src, lim := range map[string][2]int64{
		"np.random.randint(5)": {0, 4}, "np.random.randint(3, 6)": {3, 5}, "sample(np.random.randint(10, 20, 50))": {10, 19},
	} {
		e, err := compileExpr(src)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int64]bool{}
		for i := 0; i < 300; i++ {
			v, err := e.eval(en)
			if err != nil || v.k != kNum || !v.n.IsInt() {
				t.Fatalf("%s: %v %v", src, v, err)
			}
			x := v.n.Num().Int64()
			if x < lim[0] || x > lim[1] {
				t.Fatalf("%s gave %d, outside %d..%d", src, x, lim[0], lim[1])
			}
			seen[x] = true
		}
		if int64(len(seen)) != lim[1]-lim[0]+1 {
			t.Errorf("%s: drew %d distinct values, want %d", src, len(seen), lim[1]-lim[0]+1)
		}
	}
}

// TestConstructFixtures imports our own fixtures (fixtures.GSMSym): tuple
// sampling, number pools, list variables, words as base values, one variable
// written in two cases, a conditional in the answer.
func TestConstructFixtures(t *testing.T) {
	tp := mustGSMS(t, filepath.Join(gsmsymDir(t), "symbolic", "dice.json"), readFile(t, filepath.Join(gsmsymDir(t), "symbolic", "dice.json")), "")
	if tp.Level != LevelSymbolic || tp.IDOrig != "9002" || tp.ID != "gsms-dice" || len(tp.Warnings) != 0 {
		t.Fatalf("level %q id_orig %q id %q warnings %v", tp.Level, tp.IDOrig, tp.ID, tp.Warnings)
	}
	set, err := Generate([]*Template{tp}, Options{Variants: []Variant{VariantNames, VariantNumbers, VariantSymbolic}, Instances: 40, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range set.Instances {
		die := in.Values["die"]
		sides := map[string]string{"four-sided": "4", "six-sided": "6", "d8": "8"}[die]
		if sides == "" || in.Numbers["die"] != sides {
			t.Errorf("%s: die %q with value %s", in.ID, die, in.Numbers["die"])
		}
		food := in.Values["food"]
		if !strings.Contains(in.Question, capitalize(food)+" are cheap") || !strings.Contains(in.Question, "buy "+strings.ToLower(food)+" for") {
			t.Errorf("%s: %q does not follow the case of each place (%q)", in.ID, in.Question, food)
		}
		if in.Values["count"] != "Two" {
			t.Errorf("%s: count %q (a one-value list keeps its base)", in.ID, in.Values["count"])
		}
	}
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEqualitySolved: "d3 == d1 + d2" is solved for d3, so almost no draw is
// rejected (independent draws from these ranges meet it about 5 times in
// 1,000), and every draw satisfies it with d3 inside its own range. A
// variable the question never states is fixed by its equality; numbers in
// words ("forty-two") are base values; "Dad"/"dad" and a synonym list are one
// variable.
func TestEqualitySolved(t *testing.T) {
	path := filepath.Join(gsmsymDir(t), "symbolic", "path.json")
	tp := mustGSMS(t, path, readFile(t, path), "")
	if x := tp.variable("d3"); x.solve == nil {
		t.Fatal("d3 not solved")
	}
	r := checkTemplate(tp, 400, 1)
	if r.Err != nil || r.Valid < 200 {
		t.Fatalf("%d of %d draws valid (%v): %v", r.Valid, r.Draws, r.Reasons, r.Err)
	}
	for reason := range r.Reasons { // the rest: a names draw that keeps "dad"
		if strings.Contains(reason, "d3") {
			t.Errorf("a draw was rejected for d3: %s", reason)
		}
	}
	set, err := Generate([]*Template{tp}, Options{Variants: []Variant{VariantSymbolic}, Instances: 100, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range set.Instances {
		d1, d2, d3 := ratOf(t, in.Numbers["d1"]), ratOf(t, in.Numbers["d2"]), ratOf(t, in.Numbers["d3"])
		if new(big.Rat).Add(d1, d2).Cmp(d3) != 0 || d3.Cmp(big.NewRat(50, 1)) < 0 || d3.Cmp(big.NewRat(199, 1)) > 0 {
			t.Errorf("%s: %s + %s != %s or out of range", in.ID, in.Numbers["d1"], in.Numbers["d2"], in.Numbers["d3"])
		}
	}
	// Without the solver the same template is rejected almost always.
	for _, x := range tp.vars {
		x.solve = nil
	}
	tp.order = nil
	tp.planLocal()
	if r := checkTemplate(tp, 400, 1); r.Valid > 40 {
		t.Errorf("rejection sampling alone kept %d of 400; the test template is not hard enough", r.Valid)
	}
}

// TestUnstatedVariable (issue 19, item 3): a template whose answer reads a
// drawn variable that the question never states is refused, naming it, for
// imports and own templates alike; a derived value, or one fixed by an
// equality, is fine.
func TestUnstatedVariable(t *testing.T) {
	q := "Ada packs 4 boxes of 6 eggs. How many eggs does she pack?"
	ann := "{a,Ada} packs {b,4} boxes of {e,6} eggs. How many eggs does she pack?\n\n#init:\n- a = sample(names)\n- $b = range(2, 9)\n- $e = range(2, 13)\n- $k = range(1, 5)\n- total = b * e\n\n#answer: total"
	if _, err := ParseGSMSymbolicLevel("u.json", gsmsJSON(t, q, "#### 24", ann), ""); err != nil {
		t.Fatalf("derived value refused: %v", err)
	}
	bad := strings.Replace(ann, "#answer: total", "#answer: total * k // k + k - k", 1)
	_, err := ParseGSMSymbolicLevel("u.json", gsmsJSON(t, q, "#### 24", bad), "")
	if err == nil || !strings.Contains(err.Error(), "the answer reads k, which the question never states") {
		t.Errorf("unstated k: %v", err)
	}
	through := strings.Replace(ann, "- total = b * e", "- total = b * e + k - k", 1)
	_, err = ParseGSMSymbolicLevel("u.json", gsmsJSON(t, q, "#### 24", through), "")
	if err == nil || !strings.Contains(err.Error(), "the answer reads k (through total)") {
		t.Errorf("unstated k through a derived value: %v", err)
	}
	fixed := strings.Replace(ann, "#answer: total", "#conditions:\n- k + b == 7\n\n#answer: total + k - k", 1)
	if _, err := ParseGSMSymbolicLevel("u.json", gsmsJSON(t, q, "#### 24", fixed), ""); err != nil {
		t.Errorf("k fixed by an equality refused: %v", err)
	}
	// Own format: a drawn variable used by the answer but absent from the
	// question.
	own := strings.Replace(good, "answer: rest * 2", "answer: rest * 2 + 0 * b2", 1)
	own = strings.Replace(own, "  rest: {expr: a - b}", "  rest: {expr: a - b}\n  b2: {min: 1, max: 9, base: 3}", 1)
	_, err = ParseOwn("t.yaml", []byte(own))
	if err == nil || !strings.Contains(err.Error(), "the answer reads b2, which the question never states") {
		t.Errorf("own format: %v", err)
	}
}

// TestGenuineBugRefused: an answer expression that does not give the
// original answer at the original values is refused with both numbers.
func TestGenuineBugRefused(t *testing.T) {
	q := "Ada has 30 stickers and buys 40% more. How many stickers does she have now?"
	ann := "{a,Ada} has {n,30} stickers and buys {p,40}% more. How many stickers does she have now?\n\n#init:\n- a = sample(names)\n- $n = range(10, 100, 10)\n- $p = range(10, 90, 10)\n\n#conditions:\n- is_int(n * p / 100)\n\n#answer: 2 * (n + n * p / 100)"
	_, err := ParseGSMSymbolicLevel("b.json", gsmsJSON(t, q, "#### 42", ann), "")
	if err == nil || !strings.Contains(err.Error(), `answer "2 * (n + n * p / 100)" gives 84 at base values, but the stated answer is 42`) {
		t.Errorf("bug: %v", err)
	}
}

// TestAnnotatedAnswerDecides: when #answer disagrees with the original's
// answer at the base values but answer_annotated's "#### {expr}" agrees, the
// annotated expression is the answer (with a warning naming both), on the
// base and on every draw; when it disagrees too, the template stays refused.
func TestAnnotatedAnswerDecides(t *testing.T) {
	q := "Ada has 30 stickers and buys 40% more. How many stickers does she have now?"
	ann := "{a,Ada} has {n,30} stickers and buys {p,40}% more. How many stickers does she have now?\n\n#init:\n- a = sample(names)\n- $n = range(10, 100, 10)\n- $p = range(10, 90, 10)\n\n#conditions:\n- is_int(n * p / 100)\n\n#answer: 2 * (n + n * p / 100)"
	file := func(final string) []byte {
		b, err := json.Marshal(map[string]any{"question": q, "answer": "#### 42", "question_annotated": ann,
			"answer_annotated": "She buys {n*p/100} more.\n#### {" + final + "}"})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tp := mustGSMS(t, "b.json", file("n + n * p / 100"), "")
	if tp.BaseAnswer() != "42" {
		t.Fatalf("base answer %s, want 42", tp.BaseAnswer())
	}
	warned := false
	for _, w := range tp.Warnings {
		if strings.Contains(w, `#answer "2 * (n + n * p / 100)" (line 11) gives 84 at base values, but the original's answer is 42; answer_annotated's #### {n + n * p / 100} gives it and is used`) {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no warning naming both expressions: %q", tp.Warnings)
	}
	set, err := Generate([]*Template{tp}, Options{Variants: []Variant{VariantSymbolic}, Instances: 30, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range set.Instances {
		n, p := ratOf(t, in.Numbers["n"]), ratOf(t, in.Numbers["p"])
		want := new(big.Rat).Add(n, new(big.Rat).Mul(n, new(big.Rat).Quo(p, big.NewRat(100, 1))))
		if in.Answer != want.RatString() {
			t.Errorf("%s: answer %s, want %s", in.ID, in.Answer, want.RatString())
		}
	}
	if _, err := ParseGSMSymbolicLevel("b.json", file("n * p"), ""); err == nil || !strings.Contains(err.Error(), "gives 84 at base values, but the stated answer is 42") {
		t.Errorf("both expressions wrong: %v", err)
	}
}

// TestLevels: the level comes from --level or the folder's name. P1 and P2
// files keep the original in question/answer and in the placeholders'
// defaults, a record only: their base instance is a valid draw of the
// annotation, with the answer #answer gives there.
func TestLevels(t *testing.T) {
	dir := gsmsymDir(t)
	sym, err := LoadWith(filepath.Join(dir, "symbolic", "rolls.json"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p1, err := LoadWith(filepath.Join(dir, "p1"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := LoadWith(filepath.Join(dir, "p2"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	num := func(tp *Template, n string) int64 {
		v := tp.base[n]
		if v.k != kNum || !v.n.IsInt() {
			t.Fatalf("%s: %s = %v at base", tp.ID, n, v)
		}
		return v.n.Num().Int64()
	}
	if sym[0].BaseAnswer() != "7" || !strings.HasPrefix(sym[0].Title, "Nadia bakes 12 rolls") {
		t.Errorf("symbolic: answer %s title %q", sym[0].BaseAnswer(), sym[0].Title)
	}
	// P1: the answer at its base (drawn) values is n - k + m, and the
	// question shows those values, not the original's.
	b1 := p1[0]
	if want := fmt.Sprint(num(b1, "n") - num(b1, "k") + num(b1, "m")); b1.BaseAnswer() != want {
		t.Errorf("p1 base answer %s, want %s", b1.BaseAnswer(), want)
	}
	if q := b1.BaseQuestion(); !strings.Contains(q, fmt.Sprintf("Later she bakes %d more rolls.", num(b1, "m"))) || strings.HasPrefix(q, "Nadia bakes 12 rolls") {
		t.Errorf("p1 base question %q", q)
	}
	if d := b1.Describe(); !strings.Contains(d, "for the record only") || !strings.Contains(d, `m="three"`) || !strings.Contains(d, "answer: 7") {
		t.Errorf("p1 show lacks the original's record:\n%s", d)
	}
	cases := []struct {
		tp        *Template
		level, id string
		steps     int
	}{
		{sym[0], "symbolic", "gsms-rolls", 1},
		{b1, "p1", "gsms-p1-rolls", 2},
		{p2[0], "p2", "gsms-p2-rolls", 3},
	}
	for _, c := range cases {
		tp := c.tp
		if tp.Level != c.level || tp.ID != c.id || tp.IDOrig != "9001" || tp.Steps != c.steps {
			t.Errorf("%s: level %q id %q id_orig %q steps %d", c.id, tp.Level, tp.ID, tp.IDOrig, tp.Steps)
		}
		set, err := Generate([]*Template{tp}, Options{Variants: []Variant{VariantSymbolic, VariantNoop}, Instances: 20, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range set.Instances {
			if in.Level != c.level || in.IDOrig != "9001" {
				t.Errorf("%s: level %q id_orig %q", in.ID, in.Level, in.IDOrig)
			}
		}
		if set.Templates[0].Level != c.level {
			t.Errorf("%s: set header level %q", c.id, set.Templates[0].Level)
		}
	}
	// --level overrides the folder name.
	lv, err := LoadWith(filepath.Join(dir, "p1"), LoadOptions{Level: "P2"})
	if err == nil && lv[0].Level != "p2" {
		t.Errorf("--level p2 gave %q", lv[0].Level)
	} else if err != nil {
		t.Errorf("--level: %v", err)
	}
	if _, err := LoadWith(dir, LoadOptions{Level: "p3"}); err == nil || !strings.Contains(err.Error(), `unknown level "p3"`) {
		t.Errorf("bad level: %v", err)
	}
	// A P1 file read as symbolic is checked against its original and fails:
	// the clause changes the answer.
	if _, err := LoadWith(filepath.Join(dir, "p1"), LoadOptions{Level: "symbolic"}); err == nil || !strings.Contains(err.Error(), "gives 10 at base values, but the stated answer is 7") {
		t.Errorf("p1 read as symbolic: %v", err)
	}
	// At p1 and p2, answer_annotated must agree with #answer on valid draws.
	data := string(readFile(t, filepath.Join(dir, "p1", "rolls.json")))
	bad := strings.Replace(data, "#### {n-k+m}", "#### {n-k}", 1)
	if _, err := ParseGSMSymbolicLevel("p1/x.json", []byte(bad), ""); err == nil || !strings.Contains(err.Error(), `answer_annotated: #### {n-k} gives `) ||
		!strings.Contains(err.Error(), `where #answer "n - k + m" gives `) {
		t.Errorf("answer_annotated disagreement at p1: %v", err)
	}
}

// TestLoadSkipping: generate-set and run on a folder leave out a refused
// template, with its reason, instead of stopping.
func TestLoadSkipping(t *testing.T) {
	dir := t.TempDir()
	src := readFile(t, filepath.Join(gsmsymDir(t), "symbolic", "rolls.json"))
	os.WriteFile(filepath.Join(dir, "a.json"), src, 0o644)
	os.WriteFile(filepath.Join(dir, "b.json"), []byte(strings.NewReplacer("#answer: n - k", "#answer: n + k", "#### {n-k}", "#### {n+k}").Replace(string(src))), 0o644)
	ts, skips, err := LoadSkipping(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 1 || len(skips) != 1 || !strings.Contains(skips[0].String(), "b.json") || !strings.Contains(skips[0].Reason, "gives 17 at base values, but the stated answer is 7") {
		t.Fatalf("templates %d, skips %v", len(ts), skips)
	}
	if _, err := LoadWith(dir, LoadOptions{}); err == nil {
		t.Error("LoadWith accepted a folder with a refused template")
	}
	// Generate with SkipFailing leaves out a template that cannot be drawn
	// (its conditions fix n and k at their base values, which draws must
	// leave; a condition that the base values break too is refused when
	// loaded, TestConditionNeverMet).
	hard := strings.Replace(string(src), "- k < n", "- k < n\\n- n == 12\\n- k == 5", 1)
	os.WriteFile(filepath.Join(dir, "b.json"), []byte(hard), 0o644)
	ts, skips, err = LoadSkipping(dir, LoadOptions{})
	if err != nil || len(ts) != 2 || len(skips) != 0 {
		t.Fatalf("%d templates, skips %v, %v", len(ts), skips, err)
	}
	if _, err := Generate(ts, Options{Variants: []Variant{VariantNumbers}, Instances: 2, MaxDraws: 50}); err == nil {
		t.Error("Generate without SkipFailing accepted an impossible template")
	}
	set, err := Generate(ts, Options{Variants: []Variant{VariantNumbers}, Instances: 2, MaxDraws: 50, SkipFailing: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Skipped) != 1 || set.Skipped[0].Template != "gsms-b" || len(set.Templates) != 1 || len(set.Instances) != 4 {
		t.Fatalf("skipped %v, %d templates, %d instances", set.Skipped, len(set.Templates), len(set.Instances))
	}
	for _, in := range set.Instances {
		if in.TemplateID != "gsms-a" {
			t.Errorf("instance %s of a skipped template", in.ID)
		}
	}
	for _, e := range set.Excluded {
		if e.Template == "gsms-b" {
			t.Errorf("exclusion of a skipped template: %+v", e)
		}
	}
}

// TestRendering: a drawn value takes the case of its place, the article
// before it agrees with it, it keeps the base text's decimal places, and a
// worded number drawn from a pool shows its own words.
func TestRendering(t *testing.T) {
	cases := []struct{ prev, next, want string }{
		{"rolls a ", "8-sided die", "rolls an "}, {"rolls an ", "six-sided die", "rolls a "},
		{"He ate a ", "orange", "He ate an "}, {"A ", "unicorn", "A "}, {"An ", "hour", "An "},
		{"a ", "11,000", "an "}, {"a ", "110", "a "}, {"ate a ", "one", "ate a "},
	}
	for _, c := range cases {
		if got := fixArticle(c.prev, c.next); got != c.want {
			t.Errorf("fixArticle(%q, %q) = %q, want %q", c.prev, c.next, got, c.want)
		}
	}
	q := "A cake costs $1.50. Ada buys a apple-shaped cake three times a week. How much does she spend a week?"
	ann := "A {item,cake} costs ${p,1.50}. {a,Ada} buys a {shape,apple}-shaped {item,cake} {m,three} a week. How much does she spend a week?" +
		"\n\n#init:\n- item = sample([\"cake\", \"pie\"])\n- a = sample(names)\n- shape = sample([\"apple\", \"pear\", \"egg\"])\n- $p = frange(0.5, 3, 0.5)\n- $m = sample(multi_times)\n\n#answer: p * m"
	tp := mustGSMS(t, "r.json", gsmsJSON(t, q, "#### 4.5", ann), "")
	set, err := Generate([]*Template{tp}, Options{Variants: []Variant{VariantSymbolic}, Instances: 40, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range set.Instances {
		if in.Variant == VariantBase {
			continue
		}
		p := ratOf(t, in.Numbers["p"])
		if !strings.Contains(in.Question, "$"+p.FloatString(2)+".") {
			t.Errorf("%s: price not written with two decimals: %q", in.ID, in.Question)
		}
		article := "a "
		if anBefore(in.Values["shape"]) {
			article = "an "
		}
		// the base value keeps the annotation's own text ("a apple")
		if in.Values["shape"] != "apple" && !strings.Contains(in.Question, " buys "+article+in.Values["shape"]+"-shaped") {
			t.Errorf("%s: article: %q", in.ID, in.Question)
		}
		if in.Numbers["m"] == "3" && !strings.Contains(in.Question, "three times a week") {
			t.Errorf("%s: the pool's words are not shown: %q", in.ID, in.Question)
		}
	}
}

// TestREADMEPools: README.md's pool table lists every pool with every entry
// (number pools as "form = value").
func TestREADMEPools(t *testing.T) {
	doc := string(readFile(t, "README.md"))
	for _, n := range PoolNames() {
		i := strings.Index(doc, "| `"+n+"` | text |")
		if _, ok := wordPools[n]; ok {
			i = strings.Index(doc, "| `"+n+"` | number |")
		}
		if i < 0 {
			t.Errorf("pool %s is not in README.md's table", n)
			continue
		}
		row := doc[i : i+strings.Index(doc[i:], "\n")]
		if w, ok := wordPools[n]; ok {
			for _, e := range w {
				if !strings.Contains(row, e.form+" = "+big.NewRat(e.num, e.den).RatString()) {
					t.Errorf("pool %s: %q = %d/%d not in README.md", n, e.form, e.num, e.den)
				}
			}
			continue
		}
		p, _ := Pool(n)
		for _, s := range p {
			if !strings.Contains(row, s) {
				t.Errorf("pool %s: %q not in README.md", n, s)
			}
		}
	}
}

// TestMoreSyntax: a placeholder without a base text shows a computed value
// (braces around an undeclared name stay text), and the exact math helpers.
func TestMoreSyntax(t *testing.T) {
	q := "Ada has 3 bags of 4 plums, 12 plums in all {really}. How many plums does she have?"
	ann := "{a,Ada} has {b,3} bags of {p,4} plums, {total} plums in all {really}. How many plums does she have?\n\n#init:\n- a = sample(names)\n- $b = range(2, 9)\n- $p = range(2, 9)\n- total = b * p\n\n#answer: total"
	tp := mustGSMS(t, "m.json", gsmsJSON(t, q, "#### 12", ann), "")
	if len(tp.Warnings) != 0 {
		t.Errorf("warnings: %v", tp.Warnings)
	}
	set, err := Generate([]*Template{tp}, Options{Variants: []Variant{VariantNumbers}, Instances: 10, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range set.Instances {
		if !strings.Contains(in.Question, ", "+in.Answer+" plums in all {really}.") {
			t.Errorf("%s: %q", in.ID, in.Question)
		}
	}
	bad := strings.Replace(ann, "{b,3} bags", "{b} bags", 1)
	bad = strings.Replace(bad, "- total = b * p", "- total = b * p\n- $k = range(1, 3)", 1)
	if _, err := ParseGSMSymbolicLevel("m.json", gsmsJSON(t, q, "#### 12", bad), ""); err == nil || !strings.Contains(err.Error(), "{b} has no base text") {
		t.Errorf("drawn variable without a base text: %v", err)
	}
	for src, want := range map[string]string{
		"pow(2, 5)": "32", "math.gcd(12, 18)": "6", "math.lcm(4, 6)": "12", "math.sqrt(2.25)": "1.5",
		"sorted([3, 1, 2])[0]": "1", "any([0, 2])": "True", "all([1, 0])": "False",
	} {
		v, err := evalStr(t, src, nil)
		if err != nil || v.String() != want {
			t.Errorf("%s = %v (%v), want %s", src, v, err, want)
		}
	}
	if _, err := evalStr(t, "math.sqrt(2)", nil); err == nil || !strings.Contains(err.Error(), "irrational") {
		t.Errorf("math.sqrt(2): %v", err)
	}
}

// gsmsymDir writes our GSM-Symbolic-format fixtures (fixtures.GSMSym) into
// a temporary folder of the running test and returns it.
func gsmsymDir(t testing.TB) string {
	t.Helper()
	dir, err := fixtures.WriteGSMSym(filepath.Join(t.TempDir(), "gsmsym"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// gsmsymLevelsDir writes our p1/p2 fixtures (fixtures.GSMSymLevels) into a
// temporary folder of the running test and returns it.
func gsmsymLevelsDir(t testing.TB) string {
	t.Helper()
	dir, err := fixtures.Write(filepath.Join(t.TempDir(), "gsmsym_levels"), fixtures.GSMSymLevels)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
