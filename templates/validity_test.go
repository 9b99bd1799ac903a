package templates

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// good is a valid own-format template; each case below breaks one rule.
const good = `id: t
relation: add-subtract
steps: 2
variables:
  name: {pool: names_female, base: Ada}
  a: {min: 2, max: 50, base: 10}
  b: {min: 1, max: 20, base: 4}
  rest: {expr: a - b}
conditions:
  - b < a
answer: rest * 2
question: "{name} has {a} cards and gives {b} away. How many cards are left, doubled?"
paraphrase: "{name} gives {b} of her {a} cards away. How many cards are left, doubled?"
noop:
  - text: "Her cat is {age} years old."
    variables:
      age: {min: 1, max: 9}
`

func TestGoodTemplate(t *testing.T) {
	ts, err := ParseOwn("t.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if ts[0].BaseAnswer() != "12" || ts[0].BaseQuestion() != "Ada has 10 cards and gives 4 away. How many cards are left, doubled?" {
		t.Fatalf("base: %q %q", ts[0].BaseAnswer(), ts[0].BaseQuestion())
	}
}

// TestValidityRules: templates built to violate one rule each are rejected
// with that rule's reason, naming the file and line.
func TestValidityRules(t *testing.T) {
	cases := []struct {
		name, old, new, want string
	}{
		{"base breaks condition", "  - b < a", "  - b > a", `t.yaml:1: template t: at base values: condition "b > a" (line 10) is false`},
		{"negative answer", "answer: rest * 2", "answer: b - a", "answer is -6; it must be positive"},
		{"zero quantity", "rest: {expr: a - b}", "rest: {expr: a - 10}", "derived value rest is 0; it must be positive"},
		{"non-integer answer", "answer: rest * 2", "answer: rest / 4", "t.yaml:11: template t: at base values: answer 1.5 is not an integer"},
		// An error at the base values that is the answer's is named at the
		// answer's line, a stated answer it misses at expect's line (both
		// were named at the template's first line).
		{"division by zero", "answer: rest * 2", "answer: a / (b - 4)", `t.yaml:11: template t: at base values: answer: division by zero in "a / (b - 4)"`},
		{"base outside range", "base: 10}", "base: 51}", "t.yaml:6: template t: variable a: base 51 is outside its domain 2..50 step 1"},
		{"base off step", "a: {min: 2, max: 50, base: 10}", "a: {min: 2, max: 50, step: 4, base: 12}", "outside its domain"},
		{"answer reads noop", "answer: rest * 2", "answer: rest * age", "answer reads age, a variable of the no-op clause"},
		{"condition reads noop", "  - b < a", "  - age < a", "a variable of the no-op clause"},
		{"noop reads a number", "Her cat is {age} years old.", "Her cat is {a} years old.", "reads {a}, a quantity of the problem"},
		{"unknown variable", "answer: rest * 2", "answer: rest * zz", `t.yaml:11: template t: answer: unknown variable "zz"`},
		{"unknown helper", "answer: rest * 2", "answer: sqrt(rest)", `unknown helper "sqrt"`},
		{"unknown pool", "pool: names_female", "pool: planets", `t.yaml:5: template t: variable name: unknown pool "planets"`},
		{"forward reference", "b: {min: 1, max: 20, base: 4}", "b: {min: 1, max: c, base: 4}", `"c" is not a variable declared before it`},
		{"expression syntax", "answer: rest * 2", "answer: rest * (2", "syntax error in expression"},
		{"yaml syntax", "steps: 2", "steps: [2", "t.yaml:"},
		// A mis-indented key is named at its own line, not at the block
		// that holds it (yaml.v3 reports the block's line).
		{"yaml indentation in a mapping", "  b: {min: 1", "   b: {min: 1", "t.yaml:7: syntax error: did not find expected key (wrong indentation? the parser was in the block that starts on line 5)"},
		{"yaml indentation at the top", "  b: {min: 1", " b: {min: 1", "t.yaml:7: syntax error"},
		{"yaml unclosed flow mapping", "b: {min: 1, max: 20, base: 4}", "b: {min: 1, max: 20, base: 4", "t.yaml:7: syntax error: did not find expected ',' or '}'"},
		{"yaml indentation after a list", "answer: rest * 2", "  answer: rest * 2", "t.yaml:11: syntax error"},
		{"unknown key", "steps: 2", "steps: 2\nanswr: 3", `unknown key "answr"`},
		{"paraphrase drops a fact", "gives {b} of her {a} cards away", "gives some of her {a} cards away", "it lacks {b}"},
		{"expect mismatch", "answer: rest * 2", "answer: rest * 2\nexpect: 13", "t.yaml:12: template t: answer \"rest * 2\" gives 12 at base values, but the stated answer is 13"},
		{"too large", "answer: rest * 2", "answer: rest * 2000000", "larger than the template's limit"},
		{"unknown placeholder", "How many cards", "How many {cardz}", "unknown variable {cardz}"},
		{"bad brace", "How many cards", "How many {cards", "bad placeholder"},
		{"random in own format", "rest: {expr: a - b}", `rest: {expr: "sample([1, 2])"}`, "draws at random"},
	}
	for _, c := range cases {
		if !strings.Contains(good, c.old) {
			t.Fatalf("%s: %q not in the good template", c.name, c.old)
		}
		src := strings.Replace(good, c.old, c.new, 1)
		_, err := ParseOwn("t.yaml", []byte(src))
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q, want it to contain %q", c.name, err, c.want)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error is more than one line: %q", c.name, err)
		}
	}
}

func mustOwn(t *testing.T, src string) []*Template {
	t.Helper()
	ts, err := ParseOwn("x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestUnsatisfiable(t *testing.T) {
	ts := mustOwn(t, `
id: unsat
relation: multiply-divide
steps: 1
variables:
  a: {min: 1, max: 9, base: 5}
  b: {min: 1, max: 9, base: 5}
conditions:
  - a * b == 25
answer: a * b
question: "What is {a} times {b}?"
`)
	_, err := Generate(ts, Options{Variants: []Variant{VariantNumbers}, Instances: 1, MaxDraws: 50})
	if err == nil {
		t.Fatal("unsatisfiable template generated")
	}
	for _, want := range []string{"template unsat", "no valid numbers instance in 50 draws", `condition "a * b == 25"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// TestExactDivisionStaysExact: a division exact at base values must be exact
// in every instance, even where the answer type would allow decimals.
func TestExactDivisionStaysExact(t *testing.T) {
	ts := mustOwn(t, `
id: share
relation: multiply-divide
steps: 1
answer_type: decimal
variables:
  a: {min: 2, max: 40, base: 12}
  b: {min: 2, max: 9, base: 4}
answer: a / b
question: "Share {a} among {b}. How much each?"
`)
	set, err := Generate(ts, Options{Variants: []Variant{VariantNumbers}, Instances: 30, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range set.Instances {
		if strings.Contains(in.Answer, ".") {
			t.Errorf("%s: answer %s; the division was exact at base", in.ID, in.Answer)
		}
	}
	found := false
	for _, e := range set.Excluded {
		found = found || strings.Contains(e.Reason, "was exact at base values and is not exact here")
	}
	if !found {
		t.Error("no draw rejected for an inexact division")
	}
}

func TestNoopFlagging(t *testing.T) {
	src := strings.Replace(good, `  - text: "Her cat is {age} years old."`, `  - text: "Two of her pens were lost."
    reviewed: REVIEWED
  - text: "Her cat is {age} years old."`, 1)
	for _, reviewed := range []string{"false", "true"} {
		ts := mustOwn(t, strings.Replace(src, "REVIEWED", reviewed, 1))
		set, err := Generate(ts, Options{Variants: []Variant{VariantNoop}, Instances: 40, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(set.Flagged) != 1 || set.Flagged[0].Word != "lost" || set.Flagged[0].Used != (reviewed == "true") {
			t.Fatalf("reviewed=%s: flags %+v", reviewed, set.Flagged)
		}
		used := false
		for _, in := range set.Instances {
			used = used || strings.Contains(in.NoopClause, "lost")
		}
		if used != (reviewed == "true") {
			t.Errorf("reviewed=%s: flagged clause used=%v", reviewed, used)
		}
	}
	// Only a flagged clause: noop does not apply, and says why.
	only := strings.Replace(good, "Her cat is {age} years old.", "She spent some of them.", 1)
	ts := mustOwn(t, only)
	set, err := Generate(ts, Options{Variants: []Variant{VariantNoop}, Instances: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Excluded) != 1 || !strings.Contains(set.Excluded[0].Reason, "flagged for review") {
		t.Errorf("excluded: %+v", set.Excluded)
	}
}

func TestNameCollision(t *testing.T) {
	ts := mustOwn(t, `
id: two
relation: add-subtract
steps: 1
variables:
  p: {choices: [Ann, Bo], base: Ann}
  q: {choices: [Ann, Bo], base: Bo}
  a: {min: 1, max: 5, base: 2}
answer: a + 1
question: "{p} gives {q} {a} pens and one more. How many pens does {q} get?"
`)
	set, err := Generate(ts, Options{Variants: []Variant{VariantNames, VariantSymbolic}, Instances: 20, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range set.Instances {
		if in.Values["p"] == in.Values["q"] {
			t.Errorf("%s: both are %s", in.ID, in.Values["p"])
		}
	}
	found := false
	for _, e := range set.Excluded {
		found = found || strings.Contains(e.Reason, "are both")
	}
	if !found {
		t.Error("no draw rejected for a name collision")
	}
}

func TestSequentialDraws(t *testing.T) {
	ts := mustOwn(t, `
id: seq
relation: add-subtract
steps: 1
variables:
  "x, y": {pool: names_male, base: [Hugo, Ivan]}
  a: {min: 1, max: 5, base: 2}
answer: a + 1
question: "{x} and {y} have {a} and one more pens. How many pens?"
`)
	set, err := Generate(ts, Options{Variants: []Variant{VariantNames}, Instances: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range set.Instances {
		if in.Values["x"] == in.Values["y"] {
			t.Errorf("%s: repeated %s", in.ID, in.Values["x"])
		}
	}
}

func TestCheckPath(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(good), 0o644)
	os.WriteFile(filepath.Join(dir, "b.yaml"), []byte(strings.Replace(strings.Replace(good, "id: t", "id: u", 1), "answer: rest * 2", "answer: rest * zz", 1)), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("ignored"), 0o644)
	rs, err := CheckPath(dir, 50, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Err != nil || rs[1].Err == nil || rs[0].Valid == 0 {
		t.Fatalf("results: %v", rs)
	}
	if !regexp.MustCompile(`b\.yaml:11: template u: answer: unknown variable "zz"`).MatchString(rs[1].String()) {
		t.Errorf("report: %s", rs[1])
	}
	if _, err := Load(dir); err == nil {
		t.Error("Load accepted a directory with a bad file")
	}
	if _, err := CheckPath(filepath.Join(dir, "missing"), 10, 1); err == nil {
		t.Error("missing path accepted")
	}
	empty := t.TempDir()
	if _, err := Load(empty); err == nil || !strings.Contains(err.Error(), "no template files") {
		t.Errorf("empty dir: %v", err)
	}
}

func TestWriteFile(t *testing.T) {
	set, err := Generate(mustBuiltin(t), Options{Instances: 1})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "set.jsonl")
	if err := set.WriteFile(p, false); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("set file mode: %v %v, want -rw-r--r-- as a run's files", st.Mode(), err)
	}
	if err := set.WriteFile(p, false); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("overwrote without force: %v", err)
	}
	if err := set.WriteFile(p, true); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(p)
	defer f.Close()
	back, err := ReadSet(f)
	if err != nil || len(back.Instances) != len(set.Instances) {
		t.Fatalf("read back: %v", err)
	}
	if err := set.WriteFile(filepath.Join(t.TempDir(), "no", "such", "dir.jsonl"), false); err == nil {
		t.Error("unwritable path accepted")
	}
}
