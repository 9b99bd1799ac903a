package templates

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHarderLevelImports: each of our p1/p2 test templates shows one way the
// original's values fail to be an instance of the harder problem. All of them
// import (their base assignment is a valid draw) except the two whose
// annotation is wrong, which are refused with the reason.
func TestHarderLevelImports(t *testing.T) {
	dir := gsmsymLevelsDir(t)
	cases := []struct {
		file     string
		refused  string            // "" when it imports
		defaults map[string]string // record: the original's default texts
	}{
		{"p1/toy-cars-negative-at-original.json", "", map[string]string{"n": "9", "b": "4", "g": "6"}},
		{"p1/muffin-boxes-floor-division.json", "", map[string]string{"total": "24", "per": "4"}},
		{"p1/seed-tray-bare-fraction-word.json", "", map[string]string{"frac": "quarter"}},
		{"p1/annotated-answer-disagrees.json", `answer_annotated: #### {a + b - c} gives `, nil},
		{"p2/paint-tin-two-defaults.json", "", map[string]string{"frac": "half"}},
		{"p2/raffle-name-without-default.json", "", map[string]string{"name": "Priya"}},
		{"p2/relay-pair-partly-stated.json", "", map[string]string{"runner": "Omar", "lap": "400"}},
		{"p2/apple-share-zero-divisor-at-original.json", "", map[string]string{"m": "6", "k": "6"}},
		{"p2/stickers-answer-reads-unstated.json", "the answer reads packs, which the question never states", nil},
	}
	for _, c := range cases {
		path := filepath.Join(dir, c.file)
		ts, err := LoadFile(path)
		if c.refused != "" {
			if err == nil || !strings.Contains(err.Error(), c.refused) || !strings.Contains(err.Error(), path) {
				t.Errorf("%s: want refusal %q naming the file, got %v", c.file, c.refused, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		tp := ts[0]
		if tp.Level != strings.Split(c.file, "/")[0] || tp.IDOrig == "" || len(tp.Warnings) != 0 {
			t.Errorf("%s: level %q id_orig %q warnings %v", c.file, tp.Level, tp.IDOrig, tp.Warnings)
		}
		for k, v := range c.defaults {
			if tp.record == nil || tp.record.defaults[k] != v {
				t.Errorf("%s: record default of %s = %q, want %q", c.file, k, tp.record.defaults[k], v)
			}
		}
		// The base assignment is itself a valid instance: every condition
		// holds, and the answer recomputes, is not negative and is whole.
		vals := tp.baseValues()
		out := tp.evaluate(vals, false)
		if out.reason != "" || out.answer.n.Cmp(tp.baseAnswer.n) != 0 || tp.baseAnswer.n.Sign() < 0 || !tp.baseAnswer.n.IsInt() {
			t.Errorf("%s: base assignment %s: reason %q answer %s", c.file, tp.valuesText(vals), out.reason, tp.BaseAnswer())
		}
		for _, cd := range tp.conds {
			if ok, err := cd.e.evalBool(&env{vars: vals}); err != nil || !ok {
				t.Errorf("%s: condition %q at base: %v %v", c.file, cd.e.src, ok, err)
			}
		}
		// The same file gives the same base instance.
		again, err := LoadFile(path)
		if err != nil || again[0].BaseQuestion() != tp.BaseQuestion() {
			t.Errorf("%s: base instance differs between loads: %q vs %v", c.file, tp.BaseQuestion(), err)
		}
		set, err := Generate(ts, Options{Variants: []Variant{VariantSymbolic}, Instances: 30, Seed: 3})
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		for _, in := range set.Instances {
			if strings.HasPrefix(in.Answer, "-") || strings.Contains(in.Answer, ".") {
				t.Errorf("%s: instance %s has answer %s", c.file, in.ID, in.Answer)
			}
		}
	}
}

// TestHarderLevelRules: the rules that hold on draws at p1/p2 without the
// original's values: a whole-number original answer makes the answer
// integral, a decimal one does not; a derived value the question states as a
// whole number stays one; a template with no valid draw is refused.
func TestHarderLevelRules(t *testing.T) {
	ann := func(answer string) string {
		return "{name,Ines} cuts {n,12} metres of ribbon into {k,4} equal pieces. How long is each piece?\n\n" +
			"#init:\n- name = sample(names_female)\n- $n = range(10, 40)\n- $k = range(2, 6)\n\n#answer: " + answer
	}
	q, a := "Ines cuts 12 metres of ribbon into 4 pieces. How long is each?", "#### 3"
	whole := mustGSMS(t, "p1/ribbon.json", gsmsJSON(t, q, a, ann("n / k")), "")
	if whole.AnswerType != "integer" {
		t.Fatalf("answer type %q, want integer from the original's 3", whole.AnswerType)
	}
	vals := whole.baseValues()
	vals["n"], vals["k"] = numV(ratOf(t, "13")), numV(ratOf(t, "4"))
	if out := whole.evaluate(vals, false); !strings.Contains(out.reason, "not an integer") {
		t.Errorf("13/4 with an integer answer type: %q", out.reason)
	}
	dec := mustGSMS(t, "p1/ribbon.json", gsmsJSON(t, q, "#### 2.5", ann("n / k")), "")
	if dec.AnswerType != "decimal" {
		t.Errorf("answer type %q, want decimal from the original's 2.5", dec.AnswerType)
	}
	vals = dec.baseValues()
	vals["n"], vals["k"] = numV(ratOf(t, "13")), numV(ratOf(t, "4"))
	if out := dec.evaluate(vals, false); out.reason != "" || out.answer.String() != "3.25" {
		t.Errorf("13/4 with a decimal answer type: %q %s", out.reason, out.answer)
	}

	// When no draw gives a whole number, the answer is a decimal (with a
	// warning) even though the original's was whole.
	halves := mustGSMS(t, "p1/ribbon.json", gsmsJSON(t, q, a, ann("n / k + 1/2")+"\n#conditions:\n- divides(n, k)"), "")
	if halves.AnswerType != "decimal" || len(halves.Warnings) != 1 || !strings.Contains(halves.Warnings[0], "gives a whole-number answer") ||
		!strings.HasSuffix(halves.BaseAnswer(), ".5") {
		t.Errorf("always-half answers: type %s, answer %s, warnings %q", halves.AnswerType, halves.BaseAnswer(), halves.Warnings)
	}

	// A derived value stated as a whole number ("{each,3}") must stay one.
	stated := "{name,Ines} cuts {n,12} metres of ribbon into {k,4} equal pieces of {each,3} metres and adds {m,2} metres. How much ribbon is there?\n\n" +
		"#init:\n- name = sample(names_female)\n- $n = range(10, 40)\n- $k = range(2, 6)\n- $m = range(1, 5)\n- each = n / k\n\n#answer: n + m"
	tp := mustGSMS(t, "p2/ribbon.json", gsmsJSON(t, q, a, stated), "")
	vals = tp.baseValues()
	vals["n"], vals["k"] = numV(ratOf(t, "13")), numV(ratOf(t, "4"))
	if out := tp.evaluate(vals, false); !strings.Contains(out.reason, "derived value each is 3.25; the question states it as a whole number") {
		t.Errorf("stated derived value 13/4: %q", out.reason)
	}
	if tp.base["each"].n == nil || !tp.base["each"].n.IsInt() {
		t.Errorf("base assignment has each = %v", tp.base["each"])
	}

	// A condition that reads a drawn value the question never shows is
	// allowed, with a warning.
	hidden := strings.Replace(ann("n / k"), "- $k = range(2, 6)\n", "- $k = range(2, 6)\n- $w = range(1, 4)\n\n#conditions:\n- k > w\n", 1)
	if tp := mustGSMS(t, "p1/hidden.json", gsmsJSON(t, q, a, hidden), ""); len(tp.Warnings) != 1 ||
		!strings.Contains(tp.Warnings[0], `w is never stated in the question, and no condition fixes it, but condition "k > w"`) {
		t.Errorf("unstated variable in a condition: warnings %q", tp.Warnings)
	}
	shown := strings.Replace(hidden, "equal pieces.", "equal pieces, {w} of them red.", 1)
	if tp := mustGSMS(t, "p1/shown.json", gsmsJSON(t, q, a, shown), ""); len(tp.Warnings) != 0 {
		t.Errorf("a variable stated as {w} (no default): warnings %q", tp.Warnings)
	}

	// No draw can satisfy the conditions: refused, naming the reason.
	never := ann("n - k") + "\n"
	never = strings.Replace(never, "#answer", "#conditions:\n- n < k\n\n#answer", 1)
	_, err := ParseGSMSymbolicLevel("p1/never.json", gsmsJSON(t, q, a, never), "")
	if err == nil || !strings.Contains(err.Error(), "no draw satisfies the conditions") || !strings.Contains(err.Error(), `"n < k"`) {
		t.Errorf("unsatisfiable conditions: %v", err)
	}
	// A placeholder the #init block never declares stays an error.
	undeclared := strings.Replace(ann("n / k"), "{k,4} equal", "{k,4} equal {shape,flat}", 1)
	if _, err := ParseGSMSymbolicLevel("p1/x.json", gsmsJSON(t, q, a, undeclared), ""); err == nil || !strings.Contains(err.Error(), "placeholder {shape,...} has no #init line") {
		t.Errorf("undeclared placeholder: %v", err)
	}
}

// TestLevelFolders: a folder holding symbolic/, p1/ and p2/ (the templates
// folder of apple/ml-gsm-symbolic) loads all three levels, each file at its
// folder's level; a level given for such a folder is refused.
func TestLevelFolders(t *testing.T) {
	dir := gsmsymDir(t)
	ts, err := LoadWith(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tp := range ts {
		got = append(got, tp.Level+":"+tp.ID)
	}
	want := "symbolic:gsms-dice symbolic:gsms-path symbolic:gsms-rolls p1:gsms-p1-rolls p2:gsms-p2-rolls"
	if strings.Join(got, " ") != want {
		t.Errorf("loaded %v, want %s", got, want)
	}
	rs, err := CheckPathWith(dir, 20, 1, LoadOptions{})
	if err != nil || len(rs) != 5 {
		t.Errorf("check of the level folders: %d results, %v", len(rs), err)
	}
	// Only some levels present; refused templates are skipped, not fatal.
	ok, skips, err := LoadSkipping(gsmsymLevelsDir(t), LoadOptions{})
	if err != nil || len(ok) != 7 || len(skips) != 2 {
		t.Errorf("gsmsym_levels: %d loaded, %d skipped, %v", len(ok), len(skips), err)
	}
	for _, fn := range []func() error{
		func() error { _, err := LoadWith(dir, LoadOptions{Level: "p1"}); return err },
		func() error { _, _, err := LoadSkipping(dir, LoadOptions{Level: "p1"}); return err },
		func() error { _, err := CheckPathWith(dir, 20, 1, LoadOptions{Level: "p1"}); return err },
	} {
		if err := fn(); err == nil || !strings.Contains(err.Error(), "a level cannot be given for a folder of level folders: "+dir+" holds level folders (symbolic, p1, p2)") {
			t.Errorf("a level for a folder of levels: %v", err)
		}
	}
	empty := t.TempDir()
	if err := os.Mkdir(filepath.Join(empty, "other"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadWith(empty, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "no template files") {
		t.Errorf("folder without templates: %v", err)
	}
	if err := os.Mkdir(filepath.Join(empty, "P1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadWith(empty, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "in its level folders (P1)") {
		t.Errorf("empty level folder: %v", err)
	}
}
