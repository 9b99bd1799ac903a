package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/templates/fixtures"
)

// copyFixtures writes our GSM-Symbolic-format fixtures of one level
// (fixtures.GSMSym) into dir/level and returns that folder.
func copyFixtures(t *testing.T, dir, level string) string {
	t.Helper()
	dst := filepath.Join(dir, level)
	n := 0
	for name, content := range fixtures.GSMSym {
		if filepath.Dir(name) != level {
			continue
		}
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, filepath.Base(name)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n == 0 {
		t.Fatalf("no fixtures for level %s", level)
	}
	return dst
}

// TestTemplatesCheckContract: one line per template starting with ok, warn
// or FAIL, then a count line; exit 1 when one failed; generate-set on the
// same folder leaves the refused template out with a one-line reason.
func TestTemplatesCheckContract(t *testing.T) {
	dir := t.TempDir()
	sym := copyFixtures(t, dir, "symbolic")
	b, _ := os.ReadFile(filepath.Join(sym, "rolls.json"))
	os.WriteFile(filepath.Join(sym, "wrong.json"), []byte(strings.NewReplacer("#answer: n - k", "#answer: n + k", "#### {n-k}", "#### {n+k}").Replace(string(b))), 0o644)

	r := fragility(t, nil, "templates", "check", sym)
	if r.code != exitFailure {
		t.Fatalf("exit %d, want %d:\n%s%s", r.code, exitFailure, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 5 || lines[4] != "4 checked: 2 ok, 1 warn, 1 FAIL" {
		t.Fatalf("output:\n%s", r.stdout)
	}
	for _, l := range lines[:4] {
		word := strings.Fields(l)[0]
		if word != "ok" && word != "warn" && word != "FAIL" {
			t.Errorf("line starts with %q: %s", word, l)
		}
		if word == "FAIL" && !strings.Contains(l, "wrong.json") {
			t.Errorf("FAIL line does not name the file: %s", l)
		}
		if word == "warn" && !strings.Contains(l, "text differs from the original question") {
			t.Errorf("warn line without its deviation: %s", l)
		}
	}

	out := filepath.Join(dir, "set.jsonl")
	r = fragility(t, nil, "generate-set", "--templates", sym, "--variants", "base,symbolic", "--instances", "2", "--out", out)
	if r.code != 0 {
		t.Fatalf("generate-set: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "fragility: skipped "+filepath.Join(sym, "wrong.json")) || strings.Count(r.stderr, "skipped ") != 1 {
		t.Errorf("skip not logged once:\n%s", r.stderr)
	}
	set, _ := os.ReadFile(out)
	header := strings.SplitN(string(set), "\n", 2)[0]
	if !strings.Contains(header, `"skipped":[{"source":`) || strings.Contains(string(set), `"template":"gsms-wrong"`) {
		t.Errorf("set header does not list the skip, or the set holds the refused template")
	}

	// list, show and review leave the refused template out with one line
	// too: one bad file does not hide the others; asking for the refused
	// one says why it is missing.
	r = fragility(t, nil, "templates", "show", "--templates", sym, "gsms-rolls")
	if r.code != 0 || !strings.Contains(r.stdout, "gsms-rolls") || strings.Count(r.stderr, "skipped "+filepath.Join(sym, "wrong.json")) != 1 {
		t.Errorf("show beside a refused template: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = fragility(t, nil, "templates", "list", "--templates", sym)
	if r.code != 0 || !strings.Contains(r.stdout, "gsms-rolls") || strings.Contains(r.stdout, "gsms-wrong") {
		t.Errorf("list beside a refused template: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = fragility(t, nil, "templates", "show", "--templates", sym, "gsms-wrong")
	if r.code != exitFailure || !strings.Contains(r.stderr, "no template with ID gsms-wrong (1 file(s) refused when loaded, listed above)") {
		t.Errorf("show of the refused template: exit %d\n%s", r.code, r.stderr)
	}

	// The level: from the folder's name, or --level; a bad one is wrong usage.
	p1 := copyFixtures(t, dir, "p1")
	r = fragility(t, nil, "generate-set", "--templates", p1, "--variants", "base", "--instances", "1", "--out", "-")
	if r.code != 0 || !strings.Contains(r.stdout, `"level":"p1"`) || !strings.Contains(r.stdout, `"id_orig":"9001"`) {
		t.Errorf("p1 level not in the set: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = fragility(t, nil, "templates", "check", "--level", "p2", p1)
	if r.code != 0 || !strings.Contains(r.stdout, "gsms-p2-rolls") {
		t.Errorf("--level p2: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = fragility(t, nil, "templates", "check", "--level", "p9", p1)
	if r.code != exitUsage || !strings.Contains(r.stderr, `unknown level "p9"`) {
		t.Errorf("--level p9: exit %d\n%s", r.code, r.stderr)
	}
	r = fragility(t, nil, "run", "--prompt", "cot", "--out", filepath.Join(dir, "run"))
	if r.code != exitUsage || !strings.Contains(r.stderr, `unknown prompt "cot"`) {
		t.Errorf("--prompt cot: exit %d\n%s", r.code, r.stderr)
	}
	r = fragility(t, nil, "run", "--prompt", "gsm-symbolic", "--shots", "9", "--out", filepath.Join(dir, "run"))
	if r.code != exitUsage || !strings.Contains(r.stderr, "--shots must be between 0 and 8 with --prompt gsm-symbolic") {
		t.Errorf("--shots 9: exit %d\n%s", r.code, r.stderr)
	}
}

// TestTemplatesLevelFolders: a folder holding symbolic/, p1/ and p2/ (as the
// templates folder of apple/ml-gsm-symbolic) is checked and generated at all
// three levels in one go; a --level for it is wrong usage.
func TestTemplatesLevelFolders(t *testing.T) {
	dir := t.TempDir()
	for _, l := range []string{"symbolic", "p1", "p2"} {
		copyFixtures(t, dir, l)
	}
	r := fragility(t, nil, "templates", "check", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "5 checked: ") || !strings.Contains(r.stdout, "gsms-p1-rolls") || !strings.Contains(r.stdout, "gsms-p2-rolls") {
		t.Errorf("check of the level folders: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = fragility(t, nil, "generate-set", "--templates", dir, "--variants", "base", "--instances", "1", "--out", "-")
	for _, want := range []string{`"level":"symbolic"`, `"level":"p1"`, `"level":"p2"`} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("generate-set on the level folders lacks %s: exit %d\n%s", want, r.code, r.stderr)
		}
	}
	r = fragility(t, nil, "templates", "check", "--level", "p1", dir)
	if r.code != exitUsage || !strings.Contains(r.stderr, "holds level folders (symbolic, p1, p2)") {
		t.Errorf("--level for level folders: exit %d\n%s", r.code, r.stderr)
	}
}

// TestGenerateSetAnswerSource: a template whose #answer misses the
// original's answer, and whose answer_annotated expression is used instead,
// is named on standard error by generate-set (one line) and marked in the
// set header (answer_source), not only in templates check.
func TestGenerateSetAnswerSource(t *testing.T) {
	dir := t.TempDir()
	sym := copyFixtures(t, dir, "symbolic")
	b, _ := os.ReadFile(filepath.Join(sym, "rolls.json"))
	fixed := strings.Replace(string(b), "#answer: n - k", "#answer: n + k", 1)
	if fixed == string(b) || !strings.Contains(fixed, "#### {n-k}") {
		t.Fatal("rolls.json fixture changed: no #answer: n - k or #### {n-k}")
	}
	os.WriteFile(filepath.Join(sym, "fallback.json"), []byte(fixed), 0o644)
	out := filepath.Join(dir, "set.jsonl")
	r := fragility(t, nil, "generate-set", "--templates", sym, "--variants", "base,symbolic", "--instances", "2", "--out", out)
	if r.code != 0 {
		t.Fatalf("generate-set: exit %d\n%s", r.code, r.stderr)
	}
	if strings.Count(r.stderr, "fragility: template gsms-fallback: #answer misses the original's answer; answer_annotated") != 1 || strings.Count(r.stderr, "answer_annotated") != 1 {
		t.Errorf("the answer source is not told once:\n%s", r.stderr)
	}
	set, _ := os.ReadFile(out)
	header := strings.SplitN(string(set), "\n", 2)[0]
	if strings.Count(header, `"answer_source":"answer_annotated"`) != 1 || !strings.Contains(header, `"id":"gsms-fallback","title"`) {
		t.Errorf("set header does not mark the template once:\n%s", header)
	}
	// plan says it too, as run will.
	r = fragility(t, noModels(t), "plan", "--templates", sym, "--variants", "base,symbolic", "--instances", "2")
	if r.code != 0 || strings.Count(r.stdout, "Note: template gsms-fallback: #answer misses the original's answer") != 1 {
		t.Errorf("plan: exit %d, the answer source not told once:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestRunAnswerSource: run tells the user about a template whose answer is
// answer_annotated's expression (one line on standard error), and the run's
// set.jsonl keeps answer_source in its header.
func TestRunAnswerSource(t *testing.T) {
	dir := t.TempDir()
	sym := copyFixtures(t, dir, "symbolic")
	b, _ := os.ReadFile(filepath.Join(sym, "rolls.json"))
	os.WriteFile(filepath.Join(sym, "fallback.json"), []byte(strings.Replace(string(b), "#answer: n - k", "#answer: n + k", 1)), 0o644)
	out := filepath.Join(t.TempDir(), "run")
	r := fragility(t, nil, "run", "--model", gemmaName, "--templates", sym, "--template-ids", "gsms-fallback,gsms-rolls", "--variants", "base",
		"--instances", "1", "--max-tokens", "4", "--no-ddc", "--quiet", "--out", out)
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, tail(r.stderr))
	}
	if strings.Count(r.stderr, "template gsms-fallback: #answer misses the original's answer; answer_annotated") != 1 || strings.Count(r.stderr, "gsms-rolls: #answer") != 0 {
		t.Errorf("the answer source is not told once:\n%s", r.stderr)
	}
	set, _ := os.ReadFile(filepath.Join(out, "set.jsonl"))
	header := strings.SplitN(string(set), "\n", 2)[0]
	if strings.Count(header, `"answer_source":"answer_annotated"`) != 1 {
		t.Errorf("set.jsonl header does not mark the template once:\n%s", header)
	}
}
