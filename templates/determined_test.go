package templates

import (
	"math/big"
	"strings"
	"testing"
)

// rectangle is a template of our own (not from GSM-Symbolic): the question
// states a rectangle's area and how much longer than wide it is, never its
// width w, which the answer reads. "area == w * (w + d)" holds w twice, so
// no equality solves for it; the conditions fix it all the same, as only
// one positive width gives that area.
const rectangleQ = "A rectangle's area is 48 square feet, and it is 2 feet longer than it is wide. What is its perimeter in feet?"

const rectangleAnn = "A rectangle's area is {area,48} square feet, and it is {d,2} feet longer than it is wide. What is its perimeter in feet?\n\n" +
	"#init:\n- $w = range(2, 30)\n- $d = range(1, 10)\n- $area = range(10, 1000)\n\n" +
	"#conditions:\n- area == w * (w + d)\n\n#answer: 2 * (2 * w + d)"

// TestUnstatedDetermined (issue 54, item A): an answer that reads a value
// the question never states is accepted when the conditions fix it from the
// stated values on every draw (checked by enumerating its domain), with the
// value they fix as its base value; every instance asks a question with
// one answer.
func TestUnstatedDetermined(t *testing.T) {
	tp := mustGSMS(t, "rect.json", gsmsJSON(t, rectangleQ, "#### 28", rectangleAnn), LevelSymbolic)
	if tp.determined == nil {
		t.Fatal("no determined set")
	}
	if w := tp.base["w"]; w.k != kNum || w.n.Cmp(big.NewRat(6, 1)) != 0 {
		t.Errorf("base w = %v, want 6 (fixed by area 48 and difference 2)", w)
	}
	if tp.BaseAnswer() != "28" {
		t.Errorf("base answer %s, want 28", tp.BaseAnswer())
	}
	if !strings.Contains(tp.Describe(), "never stated: the conditions fix it from the stated values") {
		t.Errorf("templates show does not say w is fixed:\n%s", tp.Describe())
	}
	if out := tp.evaluate(tp.baseValues(), false); out.reason != "" {
		t.Errorf("base values as a draw: %s", out.reason)
	}
	set, err := Generate([]*Template{tp}, Options{Variants: []Variant{VariantSymbolic}, Instances: 30, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range set.Instances {
		area, d := ratOf(t, in.Numbers["area"]), ratOf(t, in.Numbers["d"])
		// The only positive w with w * (w + d) = area, and the perimeter.
		var w int64
		for w = 1; w < 1000; w++ {
			x := big.NewRat(w*(w+d.Num().Int64()), 1)
			if x.Cmp(area) == 0 {
				break
			}
		}
		want := big.NewRat(2*(2*w+d.Num().Int64()), 1)
		if got := ratOf(t, in.Answer); got.Cmp(want) != 0 {
			t.Errorf("%s: area %s, d %s: answer %s, want %s", in.ID, in.Numbers["area"], in.Numbers["d"], in.Answer, want.RatString())
		}
	}

	// Two widths give the area when the question states the half
	// perimeter s instead (w and s - w): refused, naming a second one,
	// until a condition says w is the shorter side.
	half := "A rectangle's area is {area,48} square feet, and its length and width add up to {s,14} feet. What is the difference of its sides?\n\n" +
		"#init:\n- $w = range(1, 40)\n- $s = range(4, 40)\n- $area = range(3, 400)\n\n" +
		"#conditions:\n- area == w * (s - w)\n\n#answer: s - 2 * w"
	hq := "A rectangle's area is 48 square feet, and its length and width add up to 14 feet. What is the difference of its sides?"
	_, err = ParseGSMSymbolicLevel("half.json", gsmsJSON(t, hq, "#### 2", half), LevelSymbolic)
	if err == nil || !strings.Contains(err.Error(), "the answer reads w, which the question never states") || !strings.Contains(err.Error(), "meets the conditions too") {
		t.Errorf("two widths: %v", err)
	}
	shorter := strings.Replace(half, "- area == w * (s - w)", "- area == w * (s - w)\n- w < s - w", 1)
	tp = mustGSMS(t, "shorter.json", gsmsJSON(t, hq, "#### 2", shorter), LevelSymbolic)
	if tp.determined == nil || tp.BaseAnswer() != "2" {
		t.Fatalf("shorter side: determined %v, base answer %s", tp.determined != nil, tp.BaseAnswer())
	}
	// Once accepted, a draw that leaves w free is invalid: without the
	// second condition the base values admit w = 8 as well as w = 6.
	tp.conds = tp.conds[:1]
	tp.determined.conds = tp.determined.conds[:1]
	if out := tp.evaluate(tp.baseValues(), false); out.reason != "the question does not fix w: w=8 meets the conditions too" {
		t.Errorf("a draw with two widths: reason %q", out.reason)
	}
}

// TestUnstatedFree: a value the question never states that a condition
// reads but does not fix (an inequality leaves many) is refused as before,
// naming the variable and a second value that meets the conditions.
func TestUnstatedFree(t *testing.T) {
	free := strings.Replace(rectangleAnn, "- area == w * (w + d)", "- area >= w * (w + d)", 1)
	_, err := ParseGSMSymbolicLevel("free.json", gsmsJSON(t, rectangleQ, "#### 28", free), LevelSymbolic)
	if err == nil || !strings.Contains(err.Error(), "the answer reads w, which the question never states (drawn, with no placeholder, and no condition fixes it: at ") ||
		!strings.Contains(err.Error(), "meets the conditions too): the same question would have different answers in different draws") {
		t.Errorf("free w: %v", err)
	}
	// Drawn base values (level p2): the same verdicts.
	if _, err := ParseGSMSymbolicLevel("p2/free.json", gsmsJSON(t, rectangleQ, "#### 28", free), "p2"); err == nil || !strings.Contains(err.Error(), "the answer reads w, which the question never states") {
		t.Errorf("free w, level p2: %v", err)
	}
	if tp := mustGSMS(t, "p2/rect.json", gsmsJSON(t, rectangleQ, "#### 28", rectangleAnn), "p2"); tp.determined == nil {
		t.Error("determined w, level p2: no determined set")
	}
}

// TestUnstatedDeterminedOwn: the own YAML format takes the same check; a
// computed value the question shows (area) keeps its value in the
// enumeration, as a condition would.
func TestUnstatedDeterminedOwn(t *testing.T) {
	own := `id: rect
relation: area
steps: 3
variables:
  w: {min: 2, max: 29, base: 6}
  d: {min: 1, max: 9, base: 2}
  area: {expr: w * (w + d)}
conditions:
  - area < 1000
answer: 2 * (2 * w + d)
question: "A rectangle's area is {area} square feet, and it is {d} feet longer than it is wide. What is its perimeter in feet?"
`
	ts, err := ParseOwn("rect.yaml", []byte(own))
	if err != nil {
		t.Fatalf("determined w refused: %v", err)
	}
	if ts[0].BaseAnswer() != "28" || ts[0].determined == nil {
		t.Errorf("base answer %s, determined %v", ts[0].BaseAnswer(), ts[0].determined != nil)
	}
	if _, err := Generate(ts, Options{Variants: []Variant{VariantNumbers}, Instances: 10, Seed: 1}); err != nil {
		t.Errorf("generate: %v", err)
	}
	// Shown as the area's parity only, w is free.
	free := strings.Replace(own, "  area: {expr: w * (w + d)}", "  area: {expr: w * (w + d)}\n  odd: {expr: area % 2}", 1)
	free = strings.Replace(free, "A rectangle's area is {area} square feet", "A rectangle's area has remainder {odd} when halved", 1)
	if _, err := ParseOwn("free.yaml", []byte(free)); err == nil || !strings.Contains(err.Error(), "the answer reads w, which the question never states") {
		t.Errorf("free w: %v", err)
	}
}
