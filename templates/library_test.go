package templates

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The quality gates of the built-in library (issue 15). Each test fails
// with the template and the value that broke the gate.

// libraryRelations are the relation types the library covers.
var libraryRelations = []string{"add-subtract", "multiply-divide", "unit-price", "percentage", "fraction", "ratio",
	"time-distance", "money-change", "comparison", "bookkeeping"}

func TestLibraryShape(t *testing.T) {
	ts := mustBuiltin(t)
	if len(ts) < 60 {
		t.Fatalf("%d built-in templates, want at least 60", len(ts))
	}
	rel := map[string]int{}
	steps := map[int]int{}
	long := 0
	for _, x := range ts {
		rel[x.Relation]++
		steps[x.Steps]++
		if x.Steps >= 5 {
			long++
		}
		if x.Steps < 2 || x.Steps > 8 {
			t.Errorf("%s: %d steps, want 2 to 8", x.ID, x.Steps)
		}
		if x.paraphrase == nil {
			t.Errorf("%s: no paraphrase", x.ID)
		}
	}
	for _, r := range libraryRelations {
		if rel[r] < 4 {
			t.Errorf("relation %s has %d templates, want at least 4", r, rel[r])
		}
	}
	for r := range rel {
		if !slices.Contains(libraryRelations, r) {
			t.Errorf("relation %s is not one of the library's types %v", r, libraryRelations)
		}
	}
	for s := 2; s <= 8; s++ {
		if steps[s] == 0 {
			t.Errorf("no template with %d steps", s)
		}
	}
	if long < 10 {
		t.Errorf("%d templates of 5 steps or more, want at least 10", long)
	}
	t.Logf("%d templates; relations %v; steps %v; %d of ≥5 steps", len(ts), rel, steps, long)
}

// TestLibraryExpect: every built-in states its base answer (expect:), the
// author's own arithmetic, which loading checks against the expression.
func TestLibraryExpect(t *testing.T) {
	err := fs.WalkDir(builtinFS, "builtin", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := builtinFS.ReadFile(p)
		if err != nil {
			return err
		}
		if !regexp.MustCompile(`(?m)^expect: `).Match(b) {
			t.Errorf("%s: no expect: line", path.Base(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestLibraryDraws: every template generates 200 valid instances of every
// variant, every variant applies, symbolic instances change both names and
// numbers, and numbers draws rarely land on the base answer.
func TestLibraryDraws(t *testing.T) {
	if testing.Short() {
		t.Skip("200 instances per variant of every template")
	}
	const n = 200
	worst, worstID := 0, ""
	defer func() { t.Logf("highest share of numbers draws with the base answer: %s, %d of %d", worstID, worst, n) }()
	for _, x := range mustBuiltin(t) {
		for _, v := range AllVariants {
			if ok, why := x.Supports(v); !ok {
				t.Errorf("%s: variant %s: %s", x.ID, v, why)
			}
		}
		set, err := Generate([]*Template{x}, Options{Variants: AllVariants, Instances: n, Seed: 11})
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		per := map[Variant]int{}
		base := map[int]Instance{}
		for _, in := range set.Instances {
			per[in.Variant]++
			if in.Variant == VariantBase {
				base[in.Index] = in
			}
		}
		for _, v := range AllVariants {
			if per[v] != n {
				t.Errorf("%s: %d %s instances, want %d", x.ID, per[v], v, n)
			}
		}
		same := 0
		for _, in := range set.Instances {
			b := base[in.Index]
			switch in.Variant {
			case VariantNumbers:
				if in.Answer == b.Answer {
					same++
				}
			case VariantSymbolic:
				var names, numbers bool
				for k, val := range in.Values {
					vr := x.variable(k)
					if vr.derived != nil || val == b.Values[k] {
						continue
					}
					names = names || vr.factor == factorNames
					numbers = numbers || vr.factor == factorNumbers
				}
				if !names || !numbers {
					t.Errorf("%s: symbolic draw changed names %v, numbers %v: %v", in.ID, names, numbers, in.Values)
				}
			}
		}
		if same > worst {
			worst, worstID = same, x.ID
		}
		if same*100 > 5*n {
			t.Errorf("%s: %d of %d numbers draws have the base answer %s (more than 5%%)", x.ID, same, n, x.BaseAnswer())
		}
	}
}

// TestSymbolicChangesBoth: a symbolic draw that leaves the names (or the
// numbers) at base is re-drawn, even where the names pool is tiny.
func TestSymbolicChangesBoth(t *testing.T) {
	ts := mustOwn(t, `
id: tiny-names
relation: add-subtract
steps: 1
variables:
  who: {choices: [Ann, Bo], base: Ann}
  a: {min: 1, max: 3, base: 2}
answer: a + 1
question: "{who} has {a} pens and finds one more. How many pens does {who} have?"
`)
	set, err := Generate(ts, Options{Variants: []Variant{VariantSymbolic}, Instances: 40, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range set.Instances {
		if in.Variant == VariantSymbolic && (in.Values["who"] == "Ann" || in.Values["a"] == "2") {
			t.Errorf("%s: %v keeps a factor at base", in.ID, in.Values)
		}
	}
	found := false
	for _, e := range set.Excluded {
		found = found || strings.HasPrefix(e.Reason, "symbolic draw leaves the")
	}
	if !found {
		t.Error("no draw was rejected for keeping a factor at base")
	}
}

// TestSkeletons: no two templates share a question skeleton, and no two
// are near-duplicates (token similarity of the skeletons at most 0.8).
func TestSkeletons(t *testing.T) {
	ts := mustBuiltin(t)
	seen := map[string]string{}
	best, pair := 0.0, ""
	for i, x := range ts {
		sk := x.Skeleton()
		if sk == "" {
			t.Fatalf("%s: empty skeleton", x.ID)
		}
		if prev, ok := seen[sk]; ok {
			t.Errorf("%s and %s share the skeleton %q", prev, x.ID, sk)
		}
		seen[sk] = x.ID
		for _, y := range ts[:i] {
			s := skeletonSimilarity(sk, y.Skeleton())
			if s > best {
				best, pair = s, y.ID+" / "+x.ID
			}
			if s > 0.8 {
				t.Errorf("%s and %s have near-identical skeletons (similarity %.2f):\n%s\n%s", y.ID, x.ID, s, y.Skeleton(), sk)
			}
		}
	}
	t.Logf("most similar pair: %s (%.2f)", pair, best)
}

func TestSkeletonNormalisation(t *testing.T) {
	a := mustOwn(t, `
id: s1
relation: add-subtract
steps: 1
variables:
  name: {pool: names, base: Ada}
  a: {min: 1, max: 9, base: 3}
answer: a + 2
question: "{name} had {a} apples, then found two more. How many apples does {name} have?"
`)[0]
	b := mustOwn(t, `
id: s2
relation: add-subtract
steps: 1
variables:
  who: {pool: names, base: Bo}
  n: {min: 1, max: 9, base: 4}
answer: n + 5
question: "{who} had {n} shells, then collected 5 more! How many shells does {who} have?"
`)[0]
	if got := a.Skeleton(); got != "X had N w then w N more . how many w does X have ?" {
		t.Errorf("skeleton: %q", got)
	}
	if b.Skeleton() != "X had N w then w N more ! how many w does X have ?" {
		t.Errorf("skeleton b: %q", b.Skeleton())
	}
	if s := skeletonSimilarity(a.Skeleton(), b.Skeleton()); s < 0.9 || s >= 1 {
		t.Errorf("similarity %.2f", s)
	}
	if s := skeletonSimilarity("a b c", "x y z"); s != 0 {
		t.Errorf("unrelated similarity %.2f", s)
	}
}

// TestLibraryNoops: every built-in has at least two usable irrelevant clauses
// and one reviewed noop-seeming clause; no irrelevant clause of the library
// shares a unit or counted word with its question (the authors fix such a
// clause rather than leave it to be excluded); every seeming clause in use
// is reviewed and gives a reason.
func TestLibraryNoops(t *testing.T) {
	for _, x := range mustBuiltin(t) {
		irr, seem := 0, 0
		for _, c := range x.noops {
			if c.kind == NoopIrrelevant && c.clash != "" {
				t.Errorf("%s line %d: %q %s", x.ID, c.line, c.text.source(), c.clash)
			}
			if !c.usable() {
				continue
			}
			if c.kind == NoopSeeming {
				seem++
				if !c.reviewed || c.reason == "" {
					t.Errorf("%s line %d: seeming clause in use without review and reason", x.ID, c.line)
				}
				if strings.Contains(c.reason, "{") {
					t.Errorf("%s line %d: the reason is not rendered; write it without placeholders: %q", x.ID, c.line, c.reason)
				}
				if !regexp.MustCompile(`\{[A-Za-z_]+\}|\d`).MatchString(c.text.source()) {
					t.Errorf("%s line %d: a seeming clause should mention a quantity: %q", x.ID, c.line, c.text.source())
				}
			} else {
				irr++
			}
		}
		if irr < 2 || seem < 1 {
			t.Errorf("%s: %d usable irrelevant and %d usable seeming clauses, want at least 2 and 1", x.ID, irr, seem)
		}
	}
}

// TestUnitClash checks the rule of issue 13 item 11 on its own examples: a
// generic clause is excluded for a question that shares its unit, and kept
// for one that does not; the exclusion is logged in the set.
func TestUnitClash(t *testing.T) {
	mk := func(id, question string) *Template {
		src := fmt.Sprintf(`
id: %s
relation: add-subtract
steps: 1
variables:
  name: {pool: names, base: Ada}
  a: {min: 2, max: 9, base: 4}
answer: a + 3
question: "%s"
noop:
  - text: "A clock on the wall ran {m} minutes fast."
    variables:
      m: {min: 2, max: 9}
  - text: "The nearest train station is {km} kilometers away."
    variables:
      km: {min: 2, max: 9}
  - text: "The town library opened {y} years ago."
    variables:
      y: {min: 3, max: 40}
  - text: "A neighbor's {pet} slept by the window."
    variables:
      pet: {choices: [cat, dog, parrot]}
  - text: "The weather was mild."
`, id, question)
		return mustOwn(t, src)[0]
	}
	cases := []struct {
		id, q    string
		excluded []int // clause positions (0-based) that must be excluded
	}{
		{"minutes", "{name} runs {a} laps of 3 minutes each. How many minutes does {name} run?", []int{0, 2}},
		{"distance", "{name} walks {a} km and then 3 km more. How many kilometers does {name} walk?", []int{1}},
		{"age", "{name} is {a} years old. How old will {name} be in 3 years?", []int{0, 2}},
		{"cats", "{name} has {a} cats and adopts 3 more. How many cats does {name} have?", []int{3}},
		{"pens", "{name} has {a} pens and buys 3 more. How many pens does {name} have?", nil},
	}
	for _, c := range cases {
		x := mk(c.id, c.q)
		for i, cl := range x.noops {
			want := slices.Contains(c.excluded, i)
			if got := cl.clash != ""; got != want {
				t.Errorf("%s: clause %q excluded=%v (%s), want %v", c.id, cl.text.source(), got, cl.clash, want)
			}
		}
		set, err := Generate([]*Template{x}, Options{Variants: []Variant{VariantNoop}, Instances: 30, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(set.Flagged) != len(c.excluded) {
			t.Errorf("%s: %d flags, want %d: %+v", c.id, len(set.Flagged), len(c.excluded), set.Flagged)
		}
		for _, in := range set.Instances {
			for _, f := range set.Flagged {
				if in.NoopLine == f.Line {
					t.Errorf("%s: excluded clause used in %s", c.id, in.ID)
				}
			}
		}
	}
	// The generic pool, for an imported template asked in minutes.
	g, err := ParseGSMSymbolic("clock.json", []byte(`{"question": "A runner does 4 laps of 6 minutes each. How many minutes does she run?",
 "answer": "4 * 6 = 24\n#### 24",
 "question_annotated": "A runner does {n,4} laps of {m,6} minutes each. How many minutes does she run?\n\n#init:\n- $n = range(2, 9)\n- $m = range(3, 9)\n\n#answer: n * m"}`))
	if err != nil {
		t.Fatal(err)
	}
	set, err := Generate(g, Options{Variants: []Variant{VariantNoop}, Instances: 60, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var flagged []string
	for _, f := range set.Flagged {
		if f.Source != "generic" || f.Used || f.Reason == "" {
			t.Errorf("generic flag %+v", f)
		}
		flagged = append(flagged, f.Clause)
	}
	// A time quantity is excluded; a time word without a number is not a
	// quantity and stays.
	if want := []string{"The town library opened {years} years ago.", "A clock on the wall ran {minutes} minutes fast."}; !slices.Equal(flagged, want) {
		t.Errorf("generic clauses excluded for a minutes question: %q, want %q", flagged, want)
	}
	for _, in := range set.Instances {
		if in.Variant == VariantNoop && (strings.Contains(in.NoopClause, "minutes") || strings.Contains(in.NoopClause, "years")) {
			t.Errorf("%s: %q", in.ID, in.NoopClause)
		}
	}
}

// wantsAn reports whether a word takes "an": a vowel sound at its start.
// Numbers are read aloud: "an 8", "an 11", "an 18", "an 80", "an 11000".
func wantsAn(w string) bool {
	lw := strings.ToLower(w)
	if lw != "" && lw[0] >= '0' && lw[0] <= '9' {
		digits := strings.SplitN(lw, ".", 2)[0]
		return lw[0] == '8' || digits == "11" || digits == "18" ||
			len(digits) == 5 && (strings.HasPrefix(digits, "11") || strings.HasPrefix(digits, "18"))
	}
	for _, p := range []string{"hour", "honest", "honor", "heir"} {
		if strings.HasPrefix(lw, p) {
			return true
		}
	}
	for _, p := range []string{"uni", "use", "usu", "uto", "eu", "one", "once"} {
		if strings.HasPrefix(lw, p) {
			return false
		}
	}
	return lw != "" && strings.ContainsRune("aeiou", rune(lw[0]))
}

// numberValues lists what a numeric variable renders as in 300 seeded draws
// and at base.
func numberValues(x *variable, base map[string]value) []string {
	seen := map[string]bool{}
	for _, b := range x.base {
		seen[b.String()] = true
	}
	vals := map[string]value{}
	for k, v := range base {
		vals[k] = v
	}
	en := &env{vars: vals, rng: newRand(7)}
	for i := 0; i < 300; i++ {
		got, err := drawVar(x, en)
		if err != nil {
			break
		}
		for _, g := range got {
			seen[g.String()] = true
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	return out
}

var articleRE = regexp.MustCompile(`(?i)\b(a|an) +(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z]+)`)

// TestArticles: "a" and "an" agree with every value a placeholder after them
// can take, in every text of every built-in.
func TestArticles(t *testing.T) {
	for _, x := range mustBuiltin(t) {
		texts := []*text{x.question, x.paraphrase}
		owners := []map[string]*variable{nil, nil}
		for _, c := range x.noops {
			texts = append(texts, c.text)
			own := map[string]*variable{}
			for _, v := range c.vars {
				for _, n := range v.names {
					own[n] = v
				}
			}
			owners = append(owners, own)
		}
		for i, tx := range texts {
			src := tx.source()
			for _, m := range articleRE.FindAllStringSubmatch(src, -1) {
				art, next := strings.ToLower(m[1]), m[2]
				var words []string
				if strings.HasPrefix(next, "{") {
					name := strings.Trim(next, "{}")
					if v, ok := owners[i][name]; ok && v.numeric {
						words = numberValues(v, x.base)
					} else if ok {
						words = variableValues(v, nil)
					} else if v := x.variable(name); v != nil && !v.numeric {
						words = x.possibleValues(name)
					} else if v != nil {
						words = numberValues(v, x.base)
					}
				} else {
					words = []string{next}
				}
				for _, w := range words {
					if wantsAn(w) != (art == "an") {
						t.Errorf("%s: %q before %q in %q", x.ID, m[1], w, src)
					}
				}
			}
		}
	}
}

// TestStatedVariables: every drawn variable the answer reads, directly or
// through derived values, is stated in the question and the paraphrase.
func TestStatedVariables(t *testing.T) {
	for _, x := range mustBuiltin(t) {
		need := map[string]bool{}
		var walk func(e *expression)
		walk = func(e *expression) {
			for _, v := range e.vars {
				vr := x.variable(v)
				if vr == nil || need[v] {
					continue
				}
				need[v] = true
				if vr.derived != nil {
					walk(vr.derived)
				}
			}
		}
		walk(x.answer)
		for _, tx := range []*text{x.question, x.paraphrase} {
			stated := map[string]bool{}
			for _, p := range tx.placeholders() {
				stated[p] = true
			}
			for v := range need {
				if x.variable(v).derived == nil && !stated[v] {
					t.Errorf("%s: the answer reads %s, which the text does not state: %q", x.ID, v, tx.source())
				}
			}
		}
	}
}

// TestStepsMatchOperations: the declared steps are within one of the
// operations a worked solution performs.
func TestStepsMatchOperations(t *testing.T) {
	for _, x := range mustBuiltin(t) {
		if d := x.Steps - x.Operations(); d < -1 || d > 1 {
			t.Errorf("%s: %d steps declared, %d operations in %q", x.ID, x.Steps, x.Operations(), x.answer.src)
		}
	}
}

// TestNoopSeemingInstances: noop-seeming instances use reviewed seeming
// clauses only and record the clause, its kind, line and reason; noop
// instances use irrelevant clauses only.
func TestNoopSeemingInstances(t *testing.T) {
	ts := mustBuiltin(t)
	set, err := Generate(ts, Options{Variants: []Variant{VariantNoop, VariantNoopSeeming}, Instances: 5, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*Template{}
	for _, x := range ts {
		byID[x.ID] = x
	}
	counts := map[Variant]int{}
	for _, in := range set.Instances {
		if in.Variant == VariantBase {
			continue
		}
		counts[in.Variant]++
		var c *noopClause
		for _, cl := range byID[in.TemplateID].noops {
			if cl.line == in.NoopLine {
				c = cl
			}
		}
		if c == nil || in.NoopSource != "template" {
			t.Fatalf("%s: clause line %d (%s) not found", in.ID, in.NoopLine, in.NoopSource)
		}
		if c.kind.variant() != in.Variant || in.NoopKind != c.kind || !c.usable() {
			t.Errorf("%s: clause of kind %s (usable %v) in variant %s", in.ID, c.kind, c.usable(), in.Variant)
		}
		if (in.Variant == VariantNoopSeeming) != (in.NoopReason != "") {
			t.Errorf("%s: reason %q", in.ID, in.NoopReason)
		}
		if !strings.Contains(in.Question, in.NoopClause) {
			t.Errorf("%s: clause not in question", in.ID)
		}
	}
	if counts[VariantNoop] != 5*len(ts) || counts[VariantNoopSeeming] != 5*len(ts) {
		t.Errorf("counts %v", counts)
	}
}

// TestNoopKindParsing: the kind, reviewed and reason fields.
func TestNoopKindParsing(t *testing.T) {
	base := strings.Replace(good, `      age: {min: 1, max: 9}
`, `      age: {min: 1, max: 9}
  - text: "Her brother has {m} cards of his own."
    kind: KIND
    variables:
      m: {min: 2, max: 9}
REST
`, 1)
	cases := []struct {
		kind, rest, wantErr string
		seemingOK           bool
	}{
		{"seeming", "    reviewed: true\n    reason: his cards are not hers\n", "", true},
		{"seeming", "    reviewed: false\n", "", false},
		{"seeming", "", "", false},
		{"seeming", "    reviewed: true\n", "needs a reason", false},
		{"seeming", "    reviewed: true\n    reason: \"two\\nlines\"\n", "one non-empty line", false},
		{"odd", "", `noop kind "odd"`, false},
		{"irrelevant", "", "", false},
	}
	for _, c := range cases {
		src := strings.Replace(strings.Replace(base, "KIND", c.kind, 1), "REST\n", c.rest, 1)
		ts, err := ParseOwn("k.yaml", []byte(src))
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.HasPrefix(err.Error(), "k.yaml:") {
				t.Errorf("%s %q: error %v, want %q", c.kind, c.rest, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %q: %v", c.kind, c.rest, err)
			continue
		}
		ok, _ := ts[0].Supports(VariantNoopSeeming)
		if ok != c.seemingOK {
			t.Errorf("%s %q: noop-seeming applies=%v", c.kind, c.rest, ok)
		}
		set, err := Generate(ts, Options{Variants: AllVariants, Instances: 3, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		unreviewed := c.kind == "seeming" && !c.seemingOK
		flagged := false
		for _, f := range set.Flagged {
			flagged = flagged || (f.Kind == NoopSeeming && !f.Used)
		}
		if flagged != unreviewed {
			t.Errorf("%s %q: unreviewed seeming clause flagged=%v (%+v)", c.kind, c.rest, flagged, set.Flagged)
		}
	}
}

// TestReview: the review aid shows every variant with the arithmetic
// spelled out and the answer.
func TestReview(t *testing.T) {
	b, err := Find(mustBuiltin(t), "baker")
	if err != nil {
		t.Fatal(err)
	}
	out, err := b.Review(1)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"[base]", "[names]", "[numbers]", "[symbolic]", "[paraphrase]", "[noop]", "[noop-seeming]",
		"rest = total - morning = 60 - 36 = 24",
		"answer = 36 * 4 + 24 * 2",
		"36 * 4 = 144", "24 * 2 = 48", "144 + 48 = 192",
		"answer: 192",
		"condition p2 < p1: 2 < 4 (holds)",
		"clause (seeming, template line",
		"why the answer is unchanged:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("review lacks %q:\n%s", want, out)
		}
	}
	// Each numbers-variant answer in the review follows from its own steps.
	sec := out[strings.Index(out, "[numbers]"):strings.Index(out, "[symbolic]")]
	lines := strings.Split(strings.TrimSpace(sec), "\n")
	last := ""
	for _, l := range lines {
		if strings.HasPrefix(l, "      ") {
			last = l
		}
	}
	ans := strings.TrimPrefix(strings.TrimSpace(lines[len(lines)-1]), "answer: ")
	if !strings.HasSuffix(last, "= "+ans) {
		t.Errorf("last step %q does not give the answer %s", last, ans)
	}
	// Substitution keeps Python's precedence.
	e, _ := compileExpr("(a - b) * c - d // (e + 1)")
	sub, steps := e.explain(&env{vars: map[string]value{"a": intV(9), "b": intV(4), "c": intV(3), "d": intV(7), "e": intV(1)}})
	if sub != "(9 - 4) * 3 - 7 // (1 + 1)" || strings.Join(steps, "; ") != "9 - 4 = 5; 5 * 3 = 15; 1 + 1 = 2; 7 // 2 = 3; 15 - 3 = 12" {
		t.Errorf("explain: %q %q", sub, steps)
	}
	e, _ = compileExpr("a - (b - c)")
	if sub, _ := e.explain(&env{vars: map[string]value{"a": intV(9), "b": intV(4), "c": intV(3)}}); sub != "9 - (4 - 3)" {
		t.Errorf("explain right operand: %q", sub)
	}
}

// TestSingular covers the plural rules the unit check relies on.
func TestSingular(t *testing.T) {
	for in, want := range map[string]string{
		"loaves": "loaf", "boxes": "box", "cherries": "cherry", "mangoes": "mango", "buses": "bus",
		"minutes": "minute", "glasses": "glass", "kilometers": "kilometer", "feet": "foot", "sheep": "sheep",
		"houses": "house", "Cats": "cat", "bus": "bus", "class": "class",
	} {
		if got := singular(in); got != want {
			t.Errorf("singular(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTokensSymbols(t *testing.T) {
	tx, _ := parseText("It cost €5 and 20% more, or £3.50.")
	ts := tokens(tx, func(string) bool { return false }, func(string) []string { return nil })
	got := counted(ts)
	for _, w := range []string{"€", "%", "£"} {
		if !got[w] {
			t.Errorf("%q not read as a quantity word: %v", w, got)
		}
	}
	if d := dims(ts); d["money"] == "" || d["percent"] == "" {
		t.Errorf("dims %v", d)
	}
	x := mustOwn(t, `
id: sym
relation: add-subtract
steps: 1
variables:
  a: {min: 1, max: 9, base: 2}
answer: a + 1
question: "A pen costs €{a}. How much do a pen and €1 more cost?"
`)[0]
	if sk := x.Skeleton(); sk != "a w N . how much do a w and N more w ?" {
		t.Errorf("skeleton %q", sk)
	}
}
