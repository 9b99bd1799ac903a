package templates

import (
	"os"
	"path/filepath"
	"testing"
)

// fuzzCheck parses nothing itself: it instantiates whatever a parser
// accepted, so that the evaluator and generator also see fuzzed templates.
func fuzzCheck(ts []*Template) {
	for _, t := range ts {
		_ = t.Describe()
	}
	_, _ = Generate(ts, Options{Variants: AllVariants, Instances: 1, Seed: 1, MaxDraws: 20})
}

func noCatch(f *testing.F) {
	catchPanics = false
	f.Cleanup(func() { catchPanics = true })
}

// FuzzParseOwn: no input makes the own-format parser (or generation from
// what it accepts) panic. Run: go test -fuzz=FuzzParseOwn -fuzztime=10s -fuzzminimizetime=1s ./templates/
// (without the minimize cap, minimizing one new input can take the whole run)
func FuzzParseOwn(f *testing.F) {
	noCatch(f)
	entries, _ := builtinFS.ReadDir("builtin")
	for _, e := range entries {
		data, _ := builtinFS.ReadFile("builtin/" + e.Name())
		f.Add(data)
	}
	f.Add([]byte(good))
	f.Add([]byte("- id: a\n- id: b\n"))
	f.Add([]byte(`{"id": "j", "relation": "x", "steps": 1, "variables": {"a": {"min": 1, "max": 3, "base": 2}}, "answer": "a // 0", "question": "{a}?"}`))
	f.Add([]byte("id: &x a\nrelation: *x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, err := ParseOwn("f.yaml", data)
		if err != nil {
			return
		}
		fuzzCheck(ts)
	})
}

// FuzzParseGSMSymbolic: no input makes the GSM-Symbolic importer (or
// generation from what it accepts) panic.
// Run: go test -fuzz=FuzzParseGSMSymbolic -fuzztime=10s ./templates/
func FuzzParseGSMSymbolic(f *testing.F) {
	noCatch(f)
	for _, data := range gsmsStyleProblems {
		f.Add([]byte(data))
	}
	files, _ := filepath.Glob(filepath.Join(gsmsymDir(f), "*", "*.json"))
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"question": "Ada has 3 cats.", "answer": "#### 3", "question_annotated": "{n,Ada} has {c,3} cats.\n\n#init:\n- n = sample(names)\n- $c = range(1, 9)\n\n#answer: c"}`))
	f.Add([]byte(`{"question": "x", "answer": "#### 2", "question_annotated": "x\n#init:\n- a, b = sample_sequential(colors, 2)\n#conditions:\n- divides(4, 2) or is_int(1/3)\n#answer = 4 // 2 % 5"}`))
	f.Add([]byte(`{"question": "q", "answer": "#### 6", "question_annotated": "{a,two} and {f,half} of {b,Twelve} {c,(5, 5)}.\n#init:\n- $a = [2] * 3\n- $f = sample(fraction_alnum[:3] + multi_times)\n- $b = np.random.randint(2, 20, 5)\n- $c = sample([(\"x\", 1), (\"y\", 2)])\n- k = 1 if a > 1 else 2\n#conditions:\n- b == a * 6\n- 0 < a < b\n#answer: {int(b * f[1]) + k - 1}"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, err := ParseGSMSymbolic("f.json", data)
		if err != nil {
			return
		}
		fuzzCheck(ts)
	})
}
