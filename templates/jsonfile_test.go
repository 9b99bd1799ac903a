package templates

import (
	"encoding/json"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// rollsJSON is a level-symbolic GSM-Symbolic file (the original's answer is
// 7) with the given #answer, condition and answer_annotated ("" leaves
// answer_annotated out).
func rollsJSON(t *testing.T, answer, cond, annotated string) []byte {
	t.Helper()
	m := map[string]any{
		"question": "Nadia bakes 12 rolls and gives 5 to her neighbour. How many rolls does she have left?",
		"answer":   "She has 12 - 5 = <<12-5=7>>7 rolls left.\n#### 7",
		"id_orig":  9001,
		"question_annotated": "{name,Nadia} bakes {n,12} rolls and gives {k,5} to her {who,neighbour}. How many rolls does she have left?\n\n" +
			"#init:\n- name = sample(names_female)\n- who = sample([\"neighbour\", \"aunt\", \"coach\"])\n- $n = range(10, 40)\n- $k = range(2, 9)\n\n" +
			"#conditions:\n- " + cond + "\n\n#answer: " + answer,
	}
	if annotated != "" {
		m["answer_annotated"] = annotated
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestJSONFileErrors: a .json file that is not a GSM-Symbolic template is
// still JSON: a syntax error and a value that is neither an object nor a list
// are reported in JSON terms (never in the YAML parser's), and an object
// with GSM-Symbolic fields but no question_annotated is refused as a
// GSM-Symbolic template, not as an own-format one with unknown keys.
func TestJSONFileErrors(t *testing.T) {
	noQA := strings.Replace(string(rollsJSON(t, "n - k", "k < n", "#### {n-k}")), `"question_annotated"`, `"question_annotated_x"`, 1)
	cases := []struct{ name, data, want string }{
		{"truncated", `{"question": "abc", "answer": "#### 3", `, `t.json:1: JSON syntax error: unexpected end of JSON input`},
		{"syntax error on line 2", "{\"question\": \"abc\",\n \"answer\" \"#### 3\"}", `t.json:2: JSON syntax error: invalid character '"' after object key`},
		{"binary", "\x00\xff garbage", `t.json:1: JSON syntax error`},
		{"null", "null", `t.json:1: a .json template file holds a JSON object (one template) or a list of them, not null`},
		{"number", "\n42\n", `t.json:2: a .json template file holds a JSON object (one template) or a list of them, not a number`},
		{"string", `"x"`, `not a string`},
		{"GSM-Symbolic without question_annotated", noQA, `t.json:1: this looks like a GSM-Symbolic template (it has answer_annotated, id_orig), and a GSM-Symbolic template needs question_annotated`},
	}
	for _, c := range cases {
		_, err := ParseFile("t.json", []byte(c.data))
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q, want it to contain %q", c.name, err, c.want)
		}
		for _, yamlWords := range []string{"mapping", "did not find expected", "unknown key"} {
			if strings.Contains(err.Error(), yamlWords) {
				t.Errorf("%s: error %q is in the own format's (YAML) terms", c.name, err)
			}
		}
	}
	// The same bytes as .yaml stay the own format's business.
	if _, err := ParseFile("t.yaml", []byte("42")); err == nil || !strings.Contains(err.Error(), "mapping") {
		t.Errorf(".yaml scalar: %v", err)
	}
	// White space only is an empty template file, as for YAML.
	if _, err := ParseFile("t.json", []byte(" \n")); err == nil || !strings.Contains(err.Error(), "empty template file") {
		t.Errorf("empty .json: %v", err)
	}
}

// TestJSONFileOwnFormat: an own-format template written as JSON (a built-in
// YAML template converted) still loads from a .json file, alone and in a
// list, as the same template.
func TestJSONFileOwnFormat(t *testing.T) {
	data, err := builtinFS.ReadFile("builtin/discount.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	want, err := ParseOwn("discount.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []any{v, []any{v}} {
		js, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		ts, err := ParseFile("discount.json", js)
		if err != nil {
			t.Fatalf("%s: %v", js[:40], err)
		}
		if len(ts) != 1 || ts[0].ID != want[0].ID || ts[0].Format != "own" || ts[0].BaseAnswer() != want[0].BaseAnswer() {
			t.Errorf("discount.json: %d templates, first %s %s %s; want %s own %s", len(ts), ts[0].ID, ts[0].Format, ts[0].BaseAnswer(), want[0].ID, want[0].BaseAnswer())
		}
	}
	// A GSM-Symbolic file is still routed to its parser.
	ts, err := ParseFile("rolls.json", rollsJSON(t, "n - k", "k < n", "#### {n-k}"))
	if err != nil || ts[0].Format != "gsm-symbolic" {
		t.Fatalf("rolls.json: %v", err)
	}
}

// TestAnnotatedAnswerFallback: a level-symbolic template whose #answer
// misses the original's answer imports with answer_annotated's expression
// when that gives it (AnswerSource records it, and the set header keeps
// it), and is refused, naming what answer_annotated gives, when it misses
// too.
func TestAnnotatedAnswerFallback(t *testing.T) {
	_, err := ParseFile("rolls.json", rollsJSON(t, "n + k", "k < n", "She has {n} - {k} rolls left.\n#### {n*k}"))
	want := `answer "n + k" gives 17 at base values, but the stated answer is 7; answer_annotated's #### {n*k} gives 60, not 7 either`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("both wrong: %v, want %q", err, want)
	}
	_, err = ParseFile("rolls.json", rollsJSON(t, "n + k", "k < n", "#### {n/(k-5)}"))
	if err == nil || !strings.Contains(err.Error(), "answer_annotated's #### {n/(k-5)} cannot be evaluated at base values either: division by zero") {
		t.Errorf("answer_annotated broken: %v", err)
	}
	_, err = ParseFile("rolls.json", rollsJSON(t, "n + k", "k < n", ""))
	if err == nil || strings.Contains(err.Error(), "answer_annotated") {
		t.Errorf("no answer_annotated: %v", err)
	}

	ts, err := ParseFile("rolls.json", rollsJSON(t, "n + k", "k < n", "She has {n} - {k} rolls left.\n#### {n-k}"))
	if err != nil {
		t.Fatal(err)
	}
	if ts[0].AnswerSource != AnswerFromAnnotated || ts[0].BaseAnswer() != "7" {
		t.Fatalf("fallback: answer source %q, base answer %s", ts[0].AnswerSource, ts[0].BaseAnswer())
	}
	own, err := ParseFile("rolls.json", rollsJSON(t, "n - k", "k < n", "#### {n-k}"))
	if err != nil || own[0].AnswerSource != "" {
		t.Fatalf("own #answer: %v, answer source %q", err, own[0].AnswerSource)
	}
	set, err := Generate([]*Template{ts[0], mustBuiltin(t)[0]}, Options{Variants: []Variant{VariantSymbolic}, Instances: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if set.Templates[0].AnswerSource != AnswerFromAnnotated || set.Templates[1].AnswerSource != "" {
		t.Errorf("set header answer sources %q, %q", set.Templates[0].AnswerSource, set.Templates[1].AnswerSource)
	}
	if n := set.Templates[0].Notice(); !strings.Contains(n, "template gsms-rolls: #answer misses the original's answer; answer_annotated") {
		t.Errorf("notice %q", n)
	}
	if n := set.Templates[1].Notice(); n != "" {
		t.Errorf("notice for an own answer: %q", n)
	}
	var b strings.Builder
	if err := set.WriteJSONL(&b); err != nil {
		t.Fatal(err)
	}
	if c := strings.Count(b.String(), `"answer_source":"answer_annotated"`); c != 1 {
		t.Errorf("set file holds answer_source %d times, want once", c)
	}
	back, err := ReadSet(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if back.Templates[0].AnswerSource != AnswerFromAnnotated || back.Templates[1].AnswerSource != "" {
		t.Errorf("read back: %+v", back.Templates)
	}
}

// TestConditionNeverMet: a condition the base values break is a warning
// (conditions constrain new draws only), but one that no values of its
// variables can meet would be met only by keeping them at their base
// values, so the template is refused, naming the variables. One that some
// draws meet still imports, and its variables are re-drawn.
func TestConditionNeverMet(t *testing.T) {
	for cond, want := range map[string]string{
		"k > 100":            `question_annotated line 10: condition "k > 100" holds for no values of k, drawn or base (k = 5): k would never be re-drawn`,
		"k > n + 30":         `condition "k > n + 30" holds for no values of k, n, drawn or base (k = 5, n = 12): k, n would never be re-drawn`,
		"k > 9 and k < n":    `condition "k > 9 and k < n" holds for no values of k, n`,
		"n * k > 40 * 9 + 1": `holds for no values of n, k`,
	} {
		_, err := ParseFile("rolls.json", rollsJSON(t, "n - k", cond, "#### {n-k}"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", cond, err, want)
		}
	}
	// Broken at base, met by some draws (k = 6..8): imported with the
	// warning, and k is re-drawn.
	ts, err := ParseFile("rolls.json", rollsJSON(t, "n - k", "k > 5", "#### {n-k}"))
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(ts[0].Warnings, "; "); !strings.Contains(w, `base values are outside condition "k > 5"`) {
		t.Errorf("warnings %q", w)
	}
	set, err := Generate(ts, Options{Variants: []Variant{VariantSymbolic}, Instances: 10, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	moved := 0
	for _, in := range set.Instances {
		if v := in.Values["k"]; in.Variant == VariantSymbolic && v != "" && v != "5" {
			moved++
		}
	}
	if moved == 0 {
		t.Errorf("k never re-drawn in %d instances", len(set.Instances))
	}
}
