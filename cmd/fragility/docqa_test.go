package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestItemsBadInput: a file with bad items fails before any model loads,
// with one line per bad item naming file:line and the field; wrong flag
// combinations are usage errors.
func TestItemsBadInput(t *testing.T) {
	dir := t.TempDir()
	items := filepath.Join(dir, "items.jsonl")
	body := `{"id":"ok","passages":[{"id":"p","text":"The bell weighs 40 kg."}],"question":"How heavy is the bell?","answer":40}
{"id":"np","passages":[],"question":"q","answer":1}
{"id":"ok","passages":[{"id":"p","text":"t"}],"question":"q","answer":"x"}
`
	if err := os.WriteFile(items, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	r := fragility(t, nil, append([]string{"run", "--items", items, "--out", out, "--no-ddc"}, cpu...)...)
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	if r.code != exitFailure || len(lines) != 3 || !strings.HasPrefix(lines[0], "fragility: "+items+": 2 bad item(s)") ||
		!strings.HasPrefix(lines[1], items+":2: passages: ") || !strings.HasPrefix(lines[2], items+":3: id: ") {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a run directory was created for bad items")
	}
	for _, args := range [][]string{
		{"run", "--items", items, "--templates", "builtin", "--out", out},
		{"run", "--items", items, "--variants", "base,noop", "--out", out},
		{"run", "--items", items, "--prompt", "fragility", "--out", out},
		{"run", "--prompt", "docqa", "--out", out},
		{"plan", "--items", items, "--shots", "2"},
	} {
		if r := fragility(t, nil, append(args, cpu...)...); r.code != exitUsage {
			t.Errorf("%v: exit %d, want %d; stderr %s", args, r.code, exitUsage, r.stderr)
		}
	}
}

// TestPlanItems: plan sizes a run on document items, with the variants a
// "paraphrase" expands to in the Holm family.
func TestPlanItems(t *testing.T) {
	r := fragility(t, nil, "plan", "--items", filepath.Join("..", "..", "examples", "docqa.jsonl"), "--variants", "base,paraphrase,distractor", "--model", gemmaName, "--calibrate", "0")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"× 96 items", "24 items (", "one pair per item and variant", "Minimum detectable drop with 24 items:", "Holm-adjusted over 3 variants"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan output lacks %q:\n%s", want, r.stdout)
		}
	}
	// An item has one instance: no table over instances, no templates.
	power := r.stdout[strings.Index(r.stdout, "## Power"):]
	if strings.Contains(r.stdout, "drawn again") || !strings.Contains(power, "(the item's base question)") {
		t.Errorf("a plan on items speaks of draws or of another reference:\n%s", r.stdout)
	}
	for _, not := range []string{"instances per template", "templates", "instance", "symbolic"} {
		if strings.Contains(power, not) {
			t.Errorf("the power part of a plan on items speaks of %q:\n%s", not, power)
		}
	}
}
