package templates

import (
	"bytes"
	"fmt"
	"math/big"
	"strings"
	"testing"
)

func allTemplates(t *testing.T) []*Template {
	t.Helper()
	ts := mustBuiltin(t)
	s, err := Load(samplesDir(t))
	if err != nil {
		t.Fatal(err)
	}
	return append(ts, s...)
}

func genBytes(t *testing.T, ts []*Template, opt Options) ([]byte, *Set) {
	t.Helper()
	set, err := Generate(ts, opt)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := set.WriteJSONL(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), set
}

func TestBuiltinCount(t *testing.T) {
	ts := mustBuiltin(t)
	rel := map[string]bool{}
	for _, x := range ts {
		rel[x.Relation] = true
	}
	if len(ts) < 5 || len(rel) < 5 {
		t.Fatalf("%d built-ins with %d relation types, want at least 5 each", len(ts), len(rel))
	}
	b, err := Find(ts, "baker")
	if err != nil || b.Relation != "unit-price" {
		t.Fatalf("baker: %v %v", b, err)
	}
}

func TestDeterminism(t *testing.T) {
	ts := allTemplates(t)
	opt := Options{Variants: AllVariants, Instances: 4, Seed: 42}
	a, _ := genBytes(t, ts, opt)
	// Load again: nothing may depend on load order state or map iteration.
	b, _ := genBytes(t, allTemplates(t), opt)
	if !bytes.Equal(a, b) {
		t.Fatal("same seed gave different sets")
	}
	opt.Seed = 43
	c, setC := genBytes(t, ts, opt)
	if bytes.Equal(a, c) {
		t.Fatal("another seed gave the same set")
	}
	_, setA := genBytes(t, ts, Options{Variants: AllVariants, Instances: 4, Seed: 42})
	differ := 0
	for i := range setA.Instances {
		x, y := setA.Instances[i], setC.Instances[i]
		if x.ID != y.ID {
			t.Fatalf("instance order differs: %s vs %s", x.ID, y.ID)
		}
		if x.Variant == VariantNumbers && fmt.Sprint(x.Values) != fmt.Sprint(y.Values) {
			differ++
		}
	}
	if differ == 0 {
		t.Fatal("another seed gave the same numbers")
	}
	// The file reads back to the same set.
	back, err := ReadSet(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := back.WriteJSONL(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, again.Bytes()) {
		t.Fatal("set does not round-trip through ReadSet")
	}
}

// TestOneFactor compares each variant instance with the base instance of the
// same template and index: only its factor may change.
func TestOneFactor(t *testing.T) {
	ts := allTemplates(t)
	_, set := genBytes(t, ts, Options{Variants: AllVariants, Instances: 6, Seed: 9})
	byID := map[string]*Template{}
	for _, x := range ts {
		byID[x.ID] = x
	}
	base := map[string]Instance{}
	ids := map[string]bool{}
	for _, in := range set.Instances {
		if ids[in.ID] {
			t.Fatalf("duplicate instance ID %s", in.ID)
		}
		ids[in.ID] = true
		if in.Variant == VariantBase {
			base[fmt.Sprintf("%s/%d", in.TemplateID, in.Index)] = in
		}
	}
	for _, x := range ts {
		for i := 0; i < 6; i++ {
			b, ok := base[fmt.Sprintf("%s/%d", x.ID, i)]
			if !ok {
				t.Fatalf("no base instance for %s index %d", x.ID, i)
			}
			if b.Question != x.BaseQuestion() || b.Answer != x.BaseAnswer() {
				t.Fatalf("%s: base instance is not the as-authored problem", b.ID)
			}
		}
	}
	counts := map[Variant]int{}
	for _, in := range set.Instances {
		b := base[fmt.Sprintf("%s/%d", in.TemplateID, in.Index)]
		tp := byID[in.TemplateID]
		counts[in.Variant]++
		if in.Seed == b.Seed && in.Variant != VariantBase {
			t.Errorf("%s: same seed as base", in.ID)
		}
		changed := map[factor]int{}
		for k, v := range in.Values {
			if v != b.Values[k] {
				vr := tp.variable(k)
				if vr.derived != nil {
					continue // derived values follow their inputs
				}
				changed[vr.factor]++
			}
		}
		switch in.Variant {
		case VariantBase, VariantParaphrase, VariantNoop, VariantNoopSeeming:
			if len(changed) != 0 || in.Answer != b.Answer {
				t.Errorf("%s: values or answer changed: %v vs %v", in.ID, in.Values, b.Values)
			}
		case VariantNames:
			if changed[factorNumbers] != 0 || changed[factorNames] == 0 || in.Answer != b.Answer {
				t.Errorf("%s: names variant changed %v (answer %s vs %s)", in.ID, changed, in.Answer, b.Answer)
			}
		case VariantNumbers:
			if changed[factorNames] != 0 || changed[factorNumbers] == 0 {
				t.Errorf("%s: numbers variant changed %v", in.ID, changed)
			}
		case VariantSymbolic:
			if changed[factorNames] == 0 || changed[factorNumbers] == 0 {
				t.Errorf("%s: symbolic variant changed %v; it must change names and numbers", in.ID, changed)
			}
		}
		switch in.Variant {
		case VariantNoop, VariantNoopSeeming:
			if in.NoopClause == "" || !strings.Contains(in.Question, in.NoopClause) {
				t.Errorf("%s: no clause in %q", in.ID, in.Question)
			}
			if strings.Replace(in.Question, " "+in.NoopClause, "", 1) != b.Question &&
				strings.Replace(in.Question, in.NoopClause+" ", "", 1) != b.Question {
				t.Errorf("%s: removing the clause does not give the base question:\n%s\n%s", in.ID, in.Question, b.Question)
			}
			want := "template"
			if tp.Format == "gsm-symbolic" {
				want = "generic"
			}
			if in.NoopSource != want {
				t.Errorf("%s: noop source %q, want %q", in.ID, in.NoopSource, want)
			}
			if strings.Contains(in.NoopClause, "reserved") {
				t.Errorf("%s: a flagged, unreviewed clause was used", in.ID)
			}
			if wantKind := map[Variant]NoopKind{VariantNoop: NoopIrrelevant, VariantNoopSeeming: NoopSeeming}[in.Variant]; in.NoopKind != wantKind {
				t.Errorf("%s: clause kind %q in variant %s", in.ID, in.NoopKind, in.Variant)
			}
		case VariantParaphrase:
			if in.Question == b.Question {
				t.Errorf("%s: paraphrase equals the question", in.ID)
			}
		default:
			if in.NoopClause != "" {
				t.Errorf("%s: noop clause outside noop", in.ID)
			}
		}
	}
	for _, v := range AllVariants {
		if counts[v] == 0 {
			t.Errorf("no %s instance generated", v)
		}
	}
	reserved := false
	for _, f := range set.Flagged {
		if f.Template == "baker" && f.Word == "reserved" {
			reserved = !f.Used
		}
		if f.Used && !f.Reviewed || f.Reason == "" {
			t.Errorf("flag %+v: used without review, or no reason", f)
		}
	}
	if !reserved {
		t.Errorf("baker's unreviewed \"reserved\" clause is not flagged and excluded: %+v", set.Flagged)
	}
	na := 0
	for _, e := range set.Excluded {
		if e.Draw == 0 {
			na++
			if e.Variant != VariantParaphrase && e.Variant != VariantNoopSeeming || !strings.HasPrefix(e.Template, "gsms-") {
				t.Errorf("unexpected not-applicable exclusion %+v", e)
			}
		} else if e.Reason == "" {
			t.Errorf("exclusion without reason: %+v", e)
		}
	}
	if na != 3*6*2 {
		t.Errorf("%d not-applicable exclusions, want 36 (paraphrase and noop-seeming of the three samples × 6)", na)
	}
}

func rat(t *testing.T, s string) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("not a number: %q", s)
	}
	return r
}

// TestAnswersRederived recomputes every answer in plain Go from the filled
// values, independently of the template expressions, and checks the
// conditions the same way.
func TestAnswersRederived(t *testing.T) {
	ts := allTemplates(t)
	_, set := genBytes(t, ts, Options{Variants: []Variant{VariantNumbers, VariantSymbolic}, Instances: 40, Seed: 3})
	type fn func(v func(string) *big.Rat) (*big.Rat, bool)
	q := func(a, b *big.Rat) *big.Rat { return new(big.Rat).Quo(a, b) }
	mul := func(a, b *big.Rat) *big.Rat { return new(big.Rat).Mul(a, b) }
	add := func(a, b *big.Rat) *big.Rat { return new(big.Rat).Add(a, b) }
	sub := func(a, b *big.Rat) *big.Rat { return new(big.Rat).Sub(a, b) }
	n := func(i int64) *big.Rat { return big.NewRat(i, 1) }
	isInt := func(r *big.Rat) bool { return r.IsInt() }
	rules := map[string]fn{
		"baker": func(v func(string) *big.Rat) (*big.Rat, bool) {
			rest := sub(v("total"), v("morning"))
			return add(mul(v("morning"), v("p1")), mul(rest, v("p2"))), rest.Sign() > 0 && v("p2").Cmp(v("p1")) < 0
		},
		"cycling": func(v func(string) *big.Rat) (*big.Rat, bool) {
			ride := q(mul(v("d"), n(60)), v("s"))
			return add(ride, v("rest")), isInt(ride)
		},
		"discount": func(v func(string) *big.Rat) (*big.Rat, bool) {
			return q(mul(v("price"), sub(n(100), v("pct"))), n(100)), true
		},
		"fruit-stand": func(v func(string) *big.Rat) (*big.Rat, bool) {
			return add(mul(v("kg"), v("price")), v("bag")), true
		},
		"packing": func(v func(string) *big.Rat) (*big.Rat, bool) {
			nn, k := v("n").Num().Int64(), v("k").Num().Int64()
			return mul(n(nn/k), v("p")), nn%k != 0 && nn > k
		},
		"stickers": func(v func(string) *big.Rat) (*big.Rat, bool) {
			return sub(add(v("start"), v("bought")), v("given")), v("given").Cmp(add(v("start"), v("bought"))) < 0
		},
		"gsms-pencils": func(v func(string) *big.Rat) (*big.Rat, bool) {
			tot := mul(v("b"), v("p"))
			return sub(tot, v("g")), v("g").Cmp(tot) < 0
		},
		"gsms-novel": func(v func(string) *big.Rat) (*big.Rat, bool) {
			r := q(v("x"), v("d"))
			return r, isInt(r)
		},
		"gsms-notebooks": func(v func(string) *big.Rat) (*big.Rat, bool) {
			cost := mul(v("n"), v("p"))
			return sub(v("bill"), cost), cost.Cmp(v("bill")) < 0
		},
		// A cross-section of the library's constructs: rounding up, two
		// fractions, compound percentages, a rate against a current, many
		// terms, a difference of unit prices.
		"trip-vans": func(v func(string) *big.Rat) (*big.Rat, bool) {
			people := add(v("s"), v("t"))
			vans := new(big.Int).Div(new(big.Int).Add(people.Num(), new(big.Int).Sub(v("cap").Num(), big.NewInt(1))), v("cap").Num())
			return mul(new(big.Rat).SetInt(vans), v("c")), !isInt(q(people, v("cap")))
		},
		"school-transport": func(v func(string) *big.Rat) (*big.Rat, bool) {
			walk := q(mul(v("n"), v("a")), v("b"))
			rest := sub(v("n"), walk)
			bus := q(mul(rest, v("c")), v("d"))
			return sub(rest, bus), isInt(walk) && isInt(bus)
		},
		"town-growth": func(v func(string) *big.Rat) (*big.Rat, bool) {
			y1 := mul(v("p"), q(add(n(100), v("g1")), n(100)))
			y2 := mul(y1, q(add(n(100), v("g2")), n(100)))
			return y2, isInt(y1) && isInt(y2)
		},
		"boat-current": func(v func(string) *big.Rat) (*big.Rat, bool) {
			down, up := q(mul(v("d"), n(60)), add(v("b"), v("c"))), q(mul(v("d"), n(60)), sub(v("b"), v("c")))
			return add(down, up), isInt(down) && isInt(up)
		},
		"piggy-bank": func(v func(string) *big.Rat) (*big.Rat, bool) {
			cents := add(add(mul(n(25), v("q")), mul(n(10), v("d"))), mul(n(5), v("n")))
			left := sub(cents, mul(n(100), v("s")))
			return left, left.Cmp(n(20)) >= 0
		},
		"shop-payroll": func(v func(string) *big.Rat) (*big.Rat, bool) {
			pay := mul(n(3), v("al"))
			for _, i := range []string{"1", "2", "3"} {
				pay = add(pay, mul(v("h"+i), v("r"+i)))
			}
			left := sub(v("t"), pay)
			return left, left.Sign() > 0
		},
		"price-per-item": func(v func(string) *big.Rat) (*big.Rat, bool) {
			d := mul(sub(q(v("p1"), v("k1")), q(v("p2"), v("k2"))), n(100))
			return d, d.Sign() > 0 && isInt(d)
		},
	}
	checked := 0
	seen := map[string]bool{}
	for _, in := range set.Instances {
		rule, ok := rules[in.TemplateID]
		if !ok {
			continue // checked by its expect line and by review
		}
		seen[in.TemplateID] = true
		get := func(k string) *big.Rat { return rat(t, in.Values[k]) }
		want, valid := rule(get)
		if !valid {
			t.Errorf("%s: values %v break the template's conditions", in.ID, in.Values)
		}
		if got := rat(t, in.Answer); got.Cmp(want) != 0 {
			t.Errorf("%s: answer %s, recomputed %s (values %v)", in.ID, in.Answer, want.FloatString(4), in.Values)
		}
		checked++
	}
	if len(seen) != len(rules) || checked < len(rules)*2*40 {
		t.Fatalf("checked only %d instances of %d templates (rules for %d)", checked, len(seen), len(rules))
	}
}

// TestBruteForceDomain enumerates a small template's whole domain in Go and
// checks that generation yields only valid assignments, with the right
// answers, and reaches many of them.
func TestBruteForceDomain(t *testing.T) {
	src := `
id: tiny
relation: multiply-divide
steps: 1
variables:
  a: {min: 2, max: 30, base: 12}
  b: {min: 2, max: 9, base: 4}
conditions:
  - divides(a, b)
  - a > b
answer: a / b + a % 7
question: "Split {a} into groups of {b}."
`
	ts, err := ParseOwn("tiny.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	valid := map[[2]int64]int64{}
	for a := int64(2); a <= 30; a++ {
		for b := int64(2); b <= 9; b++ {
			if a%b == 0 && a > b && !(a == 12 && b == 4) {
				valid[[2]int64{a, b}] = a/b + a%7
			}
		}
	}
	_, set := genBytes(t, ts, Options{Variants: []Variant{VariantNumbers}, Instances: 300, Seed: 1})
	seen := map[[2]int64]bool{}
	for _, in := range set.Instances {
		if in.Variant != VariantNumbers {
			continue
		}
		k := [2]int64{rat(t, in.Values["a"]).Num().Int64(), rat(t, in.Values["b"]).Num().Int64()}
		want, ok := valid[k]
		if !ok {
			t.Fatalf("%s: invalid assignment %v", in.ID, k)
		}
		if in.Answer != fmt.Sprint(want) {
			t.Fatalf("%s: answer %s, want %d", in.ID, in.Answer, want)
		}
		seen[k] = true
	}
	if len(seen) < len(valid)*3/4 {
		t.Errorf("reached %d of %d valid assignments", len(seen), len(valid))
	}
	rejected := 0
	for _, e := range set.Excluded {
		if e.Draw > 0 {
			rejected++
		}
	}
	if rejected == 0 {
		t.Error("no rejected draw logged, though most of the domain is invalid")
	}
}

func TestGenerateOptions(t *testing.T) {
	ts := mustBuiltin(t)
	if _, err := Generate(ts, Options{Instances: 0}); err == nil {
		t.Error("0 instances accepted")
	}
	if _, err := Generate(ts, Options{Instances: 1, Variants: []Variant{"bogus"}}); err == nil {
		t.Error("unknown variant accepted")
	}
	set, err := Generate(ts, Options{Instances: 2, Variants: []Variant{VariantNoop}})
	if err != nil {
		t.Fatal(err)
	}
	if got := set.Options.Variants; len(got) != 2 || got[0] != VariantBase {
		t.Errorf("variants %v: base must be added first", got)
	}
	if _, err := Generate(append(ts, ts[0]), Options{Instances: 1}); err == nil {
		t.Error("duplicate template IDs accepted")
	}
	vs, err := ParseVariants(" base, symbolic,noop")
	if err != nil || len(vs) != 3 || vs[1] != VariantSymbolic {
		t.Errorf("ParseVariants: %v %v", vs, err)
	}
	if _, err := ParseVariants("base,noop, base"); err == nil || !strings.Contains(err.Error(), `"base" named twice`) {
		t.Errorf("ParseVariants(base,noop, base): %v, want the second base refused", err)
	}
	for _, bad := range []string{"base,", "base,,noop", ",symbolic"} {
		if _, err := ParseVariants(bad); err == nil || !strings.Contains(err.Error(), "empty variant name") {
			t.Errorf("ParseVariants(%q): %v, want the empty name refused", bad, err)
		}
	}
	if _, err := ParseVariants("base,typo"); err == nil || !strings.Contains(err.Error(), `"typo"`) {
		t.Errorf("ParseVariants did not name the unknown variant: %v", err)
	}
}
