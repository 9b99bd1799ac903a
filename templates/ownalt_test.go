package templates

import (
	"fmt"
	"math/big"
	"strings"
	"testing"
)

// ownAltBase is the test template `good` with one reviewed seeming clause
// whose alt_answer line is ALT.
var ownAltBase = strings.Replace(good, `      age: {min: 1, max: 9}
`, `      age: {min: 1, max: 9}
  - text: "Her brother has {m} cards of his own."
    kind: KIND
    variables:
      m: {min: 2, max: 9}
    reviewed: true
    reason: his cards are not hers
ALT`, 1)

// TestOwnAltAnswerParse: alt_answer on an own template's seeming clause is
// parsed, reaches the drawn instance's AltAnswer, and is refused (naming the
// file and line) on an irrelevant clause or with an unknown variable.
func TestOwnAltAnswerParse(t *testing.T) {
	cases := []struct{ kind, alt, wantErr string }{
		{"seeming", "    alt_answer: (rest + m) * 2\n", ""},
		{"seeming", "", ""},
		{"irrelevant", "    alt_answer: (rest + m) * 2\n", "noop-seeming clause (kind: seeming) only"},
		{"seeming", "    alt_answer: (rest + zz) * 2\n", `unknown variable "zz"`},
		{"seeming", "    alt_answer: (rest + \n", "alt_answer"},
	}
	for _, c := range cases {
		src := strings.Replace(strings.Replace(ownAltBase, "KIND", c.kind, 1), "ALT", c.alt, 1)
		ts, err := ParseOwn("k.yaml", []byte(src))
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.HasPrefix(err.Error(), "k.yaml:") {
				t.Errorf("%s %q: error %v, want %q", c.kind, c.alt, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s %q: %v", c.kind, c.alt, err)
		}
		set, err := Generate(ts, Options{Variants: []Variant{VariantNoopSeeming}, Instances: 20, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range set.Instances {
			if in.Variant != VariantNoopSeeming {
				continue
			}
			m := in.NoopValues["m"]
			var rest, mm int
			fmt.Sscan(in.Answer, &rest)
			fmt.Sscan(m, &mm)
			want := ""
			if c.alt != "" {
				want = fmt.Sprint(rest + 2*mm) // answer = rest*2, alt = (rest+m)*2
			}
			if in.AltAnswer != want {
				t.Errorf("%s: alt_answer %q, want %q (answer %s, m %s)", in.ID, in.AltAnswer, want, in.Answer, m)
			}
		}
	}
}

// seemingAltProblems runs the clause-set checks (checkClauseDraws) on every
// own seeming clause of tp that has an alt_answer, and returns one line per
// clause that fails, naming the template file and the clause's line: no
// valid draw, or an alternative equal to the answer on more than 1 draw in 20.
func seemingAltProblems(tp *Template, draws int) (problems []string, withAlt, without int) {
	for _, c := range tp.noops {
		if c.kind != NoopSeeming || c.setFile != "" {
			continue
		}
		if c.alt == nil {
			without++
			continue
		}
		withAlt++
		s := checkClauseDraws(tp, c, draws, 11)
		loc := fmt.Sprintf("%s:%d: clause %q", tp.Source, c.line, c.text.source())
		switch {
		case s.valid == 0:
			problems = append(problems, fmt.Sprintf("%s: no valid draw (%s)", loc, s.firstFail))
		case s.sameAlt*20 > s.valid:
			problems = append(problems, fmt.Sprintf("%s: alt_answer %q equals the answer on %d of %d draws", loc, c.alt.src, s.sameAlt, s.valid))
		}
	}
	return problems, withAlt, without
}

// TestSeemingAltEqualRefused: an alt_answer that equals the answer is
// refused by the check, naming the file and the clause.
func TestSeemingAltEqualRefused(t *testing.T) {
	src := strings.Replace(strings.Replace(ownAltBase, "KIND", "seeming", 1), "ALT", "    alt_answer: rest * 2 + m - m\n", 1)
	ts, err := ParseOwn("k.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ts[0].Source = "k.yaml"
	probs, n, _ := seemingAltProblems(ts[0], 50)
	if n != 1 || len(probs) != 1 || !strings.HasPrefix(probs[0], "k.yaml:") || !strings.Contains(probs[0], "Her brother has {m}") ||
		!strings.Contains(probs[0], "equals the answer") {
		t.Fatalf("problems %q (clauses with alt %d)", probs, n)
	}
}

// TestBuiltinSeemingAlts: every built-in seeming clause's alt_answer is a
// number on each of 100 draws and differs from the answer (the clause-set
// checks); the counts with and without one are logged.
func TestBuiltinSeemingAlts(t *testing.T) {
	draws := 100
	if testing.Short() {
		draws = 20
	}
	withAlt, without := 0, 0
	for _, tp := range mustBuiltin(t) {
		probs, w, wo := seemingAltProblems(tp, draws)
		withAlt, without = withAlt+w, without+wo
		for _, p := range probs {
			t.Error(p)
		}
	}
	t.Logf("built-in seeming clauses: %d with alt_answer, %d without", withAlt, without)
	if withAlt == 0 {
		t.Error("no built-in seeming clause has an alt_answer")
	}
}

// demoBakerAlt re-derives the alternative answer of the demo's baker
// noop-seeming item (runs/demo, m0/baker/noop-seeming/0: 112 loaves, 38 sold
// in the morning at $6, the rest at $3, "That day a bakery across the street
// sold 67 baguettes."; answer 450, the model answered 429) and returns the
// answer and the alternative at those values.
func demoBakerAlt(t *testing.T) (answer, alt string) {
	tp, err := Find(mustBuiltin(t), "baker")
	if err != nil {
		t.Fatal(err)
	}
	vals := tp.baseValues()
	for k, n := range map[string]int64{"total": 112, "morning": 38, "p1": 6, "p2": 3, "rest": 74} {
		vals[k] = numV(big.NewRat(n, 1))
	}
	out := tp.evaluate(vals, false)
	if out.reason != "" {
		t.Fatal(out.reason)
	}
	for _, c := range tp.noops {
		if c.kind != NoopSeeming || !strings.Contains(c.text.source(), "across the street") {
			continue
		}
		vals["k"] = numV(big.NewRat(67, 1))
		alt, err := c.checkDraw(vals)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := formatRat(out.answer.n)
		return s, alt
	}
	t.Fatal("baker: no seeming clause about the bakery across the street")
	return "", ""
}

// TestDemoBakerAlt: at the demo draw the answer is 450 and the clause's
// alternative is 429, the model's answer.
func TestDemoBakerAlt(t *testing.T) {
	ans, alt := demoBakerAlt(t)
	if ans != "450" || alt != "429" {
		t.Fatalf("answer %s, alt_answer %s; want 450 and 429", ans, alt)
	}
}

// TestDescribeOwnAlt: the template description (fragility templates
// show) lists a seeming clause's alt_answer beside its review.
func TestDescribeOwnAlt(t *testing.T) {
	tp, err := Find(mustBuiltin(t), "baker")
	if err != nil {
		t.Fatal(err)
	}
	if d := tp.Describe(); !strings.Contains(d, "alt_answer morning * p1 + k * p2") {
		t.Errorf("Describe does not list the alt_answer:\n%s", d)
	}
}
