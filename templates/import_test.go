package templates

import (
	"bufio"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSamplesRoundTrip: each GSM-Symbolic sample imports, reproduces its
// original question exactly at base values and its original #### answer.
func TestSamplesRoundTrip(t *testing.T) {
	dir := samplesDir(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 3 {
		t.Fatalf("%d sample files, want 3", len(files))
	}
	final := regexp.MustCompile(`#### (\S+)$`)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var raw struct{ Question, Answer string }
		if err := json.Unmarshal(data, &raw); err != nil {
			t.Fatal(err)
		}
		ts, err := LoadFile(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		tp := ts[0]
		if tp.Format != "gsm-symbolic" || !tp.genericNoop {
			t.Errorf("%s: format %s", f, tp.Format)
		}
		if got := tp.BaseQuestion(); got != raw.Question {
			t.Errorf("%s: base question\n got %q\nwant %q", f, got, raw.Question)
		}
		want := final.FindStringSubmatch(raw.Answer)[1]
		if got := tp.BaseAnswer(); got != want {
			t.Errorf("%s: base answer %s, want %s", f, got, want)
		}
	}
}

// sample0 returns the first sample's bytes.
func sample0(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(samplesDir(t), "pencils.json"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestGSMSymbolicErrors(t *testing.T) {
	data := string(sample0(t))
	cases := []struct{ name, old, new, want string }{
		{"unknown helper", `range(2, 20)`, `rnage(2, 20)`, `pencils.json:5: question_annotated line 5: expression "rnage(2, 20)": unknown helper "rnage"`},
		{"unknown pool", `sample([\"shop\", \"library\", \"studio\"])`, `sample(planets)`, `question_annotated line 4: unknown variable or pool "planets"`},
		{"unknown variable", `- g < b*p`, `- g < b*q`, `question_annotated line 10: unknown variable "q"`},
		{"answer mismatch, answer_annotated too", `#### {b*p-g}`, `#### {b*p+g}`, `gives 57 at base values, but the stated answer is 39`},
		{"division by zero", `#answer: b*p - g`, `#answer: b*p - g + g/(p-8)`, `division by zero`},
		{"two base numbers", `{b,6} boxes`, `{b,6} boxes ({b,7} in all)`, `{b} has two base values, "6" (6) and "7" (7)`},
		{"no answer", `\n\n#answer: b*p - g`, ``, `no #answer line`},
		{"unknown block", `#conditions:`, `#constraints:`, `unknown block "#constraints:"`},
		{"empty range", `range(1, 50)`, `range(50, 1)`, `is empty`},
		{"bad json", `"id_orig": 9000,`, `"id_orig": 9000,,`, `pencils.json:4: JSON syntax error`},
		{"answer reads an unstated variable", `{b,6} boxes`, `6 boxes`, `the answer reads b, which the question never states`},
	}
	for _, c := range cases {
		if !strings.Contains(data, c.old) {
			t.Fatalf("%s: %q not in sample", c.name, c.old)
		}
		in := strings.Replace(data, c.old, c.new, 1)
		if strings.HasPrefix(c.name, "answer mismatch") {
			in = strings.Replace(in, `#answer: b*p - g`, `#answer: b*p + g`, 1)
		}
		_, err := ParseGSMSymbolicLevel("pencils.json", []byte(in), LevelSymbolic)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q, want it to contain %q", c.name, err, c.want)
		}
	}
}

// TestGSMSymbolicWarnings: deviations that do not make a template wrong are
// recorded as warnings, and the base instance stays the original question.
func TestGSMSymbolicWarnings(t *testing.T) {
	data := string(sample0(t))
	cases := []struct{ name, old, new, want string }{
		{"one placeholder in two words", `A {place,shop} has`, `A {place,store} has`, `{place} is written "store" and "shop" at base values`},
		{"text differs", `It gives {g,9} pencils`, `It donates {g,9} pencils`, `text differs from the original question at byte`},
		{"condition false at base", `- g < b*p`, `- g != 9`, `base values are outside condition "g != 9" (line 10)`},
	}
	var raw struct{ Question string }
	json.Unmarshal([]byte(data), &raw)
	for _, c := range cases {
		ts, err := ParseGSMSymbolicLevel("pencils.json", []byte(strings.Replace(data, c.old, c.new, 1)), LevelSymbolic)
		if err != nil {
			t.Errorf("%s: refused: %v", c.name, err)
			continue
		}
		if w := strings.Join(ts[0].Warnings, "; "); !strings.Contains(w, c.want) {
			t.Errorf("%s: warnings %q, want %q", c.name, w, c.want)
		}
		if ts[0].BaseQuestion() != raw.Question {
			t.Errorf("%s: base question %q is not the original", c.name, ts[0].BaseQuestion())
		}
		if _, err := Generate(ts, Options{Variants: AllVariants, Instances: 3, Seed: 2}); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestGSMSymbolicHelpers imports a template using the other helpers of the
// format (frange, sample_sequential, literal lists, int, round, //, %).
func TestGSMSymbolicHelpers(t *testing.T) {
	ann := "{a,Ada} and {b,Bo} share {n,14} {f,pears} costing {cur,$}{p,1.5} each. How much is half the bill, rounded down?" +
		"\n\n#init:\n- a, b = sample_sequential(names, 2)\n- $n = range(4, 30, 2)\n- f = sample(fruits)\n- cur = sample(currencies_sym)" +
		"\n- $p = frange(0.5, 3, 0.5)\n- total = n * p\n\n#conditions:\n- is_int(total) and total % 2 == 1\n\n#answer = int(total // 2) + round(0.5)"
	file, _ := json.Marshal(map[string]string{
		"question":           "Ada and Bo share 14 pears costing $1.5 each. How much is half the bill, rounded down?",
		"answer":             "14*1.5=<<14*1.5=21>>21, half is 10\n#### 10",
		"question_annotated": ann,
		"answer_annotated":   "#### {int(n*p//2)}",
	})
	ts, err := ParseGSMSymbolic("h.json", file)
	if err != nil {
		t.Fatal(err)
	}
	set, err := Generate(ts, Options{Variants: []Variant{VariantSymbolic, VariantNoop}, Instances: 30, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range set.Instances {
		n, _ := new(big.Rat).SetString(in.Values["n"])
		p, _ := new(big.Rat).SetString(in.Values["p"])
		tot := new(big.Rat).Mul(n, p)
		if !tot.IsInt() || tot.Num().Int64()%2 != 1 {
			t.Errorf("%s: total %s breaks the condition", in.ID, tot.RatString())
		}
		if want := tot.Num().Int64() / 2; in.Answer != big.NewInt(want).String() {
			t.Errorf("%s: answer %s, want %d", in.ID, in.Answer, want)
		}
		if in.Values["a"] == in.Values["b"] {
			t.Errorf("%s: sample_sequential repeated %s", in.ID, in.Values["a"])
		}
		if in.Variant == VariantNoop && in.NoopSource != "generic" {
			t.Errorf("%s: noop source %q", in.ID, in.NoopSource)
		}
	}
}

// TestGSM8K loads the whole test split: 1,319 rows, each answer the integer
// after "####" with commas removed.
func TestGSM8K(t *testing.T) {
	path := filepath.Join(sharedDir(t), "data", "gsm8k_test.jsonl")
	ts, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 1319 {
		t.Fatalf("%d rows, want 1319", len(ts))
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	i := 0
	for sc.Scan() {
		var row struct{ Question, Answer string }
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		idx := strings.LastIndex(row.Answer, "####")
		want, ok := new(big.Int).SetString(strings.ReplaceAll(strings.TrimSpace(row.Answer[idx+4:]), ",", ""), 10)
		if !ok {
			t.Fatalf("row %d: answer %q is not an integer", i+1, row.Answer[idx:])
		}
		if ts[i].BaseAnswer() != want.String() || ts[i].BaseQuestion() != row.Question || ts[i].AnswerType != "integer" {
			t.Fatalf("row %d: got %s, want %s", i+1, ts[i].BaseAnswer(), want)
		}
		i++
	}
	if ts[0].ID != "gsm8k_test-0001" || ts[0].BaseAnswer() != "18" || ts[2].BaseAnswer() != "70000" {
		t.Errorf("first rows: %s %s %s", ts[0].ID, ts[0].BaseAnswer(), ts[2].BaseAnswer())
	}
	set, err := Generate(ts[:20], Options{Variants: []Variant{VariantBase, VariantSymbolic, VariantNoop}, Instances: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Instances) != 40 || len(set.Excluded) != 80 {
		t.Errorf("%d instances, %d exclusions; want 40 base and 80 not applicable", len(set.Instances), len(set.Excluded))
	}
	for _, e := range set.Excluded {
		if e.Draw != 0 || !strings.Contains(e.Reason, "only base applies") {
			t.Errorf("exclusion %+v", e)
		}
	}
}

func TestGSM8KErrors(t *testing.T) {
	cases := map[string]string{
		`{"question": "q", "answer": "no marker"}`: `x.jsonl:2: answer does not end with "#### N"`,
		`{"question": "q", "answer": "#### abc"}`:  `x.jsonl:2: answer: "abc" after #### is not a number`,
		`{"question": "q"`:                         `x.jsonl:2: bad JSON`,
		`{"answer": "#### 3"}`:                     `x.jsonl:2: a GSM8K row needs "question" and "answer"`,
	}
	for line, want := range cases {
		data := `{"question": "ok", "answer": "#### 1,234"}` + "\n" + line + "\n"
		_, err := ParseGSM8K("x.jsonl", []byte(data))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", line, err, want)
		}
	}
	ts, err := ParseGSM8K("x.jsonl", []byte(`{"question": "ok", "answer": "#### 1,234"}`))
	if err != nil || ts[0].BaseAnswer() != "1234" {
		t.Errorf("commas: %v %v", ts, err)
	}
}
