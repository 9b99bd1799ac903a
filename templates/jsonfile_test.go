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
