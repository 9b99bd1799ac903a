package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe/plan"
	"github.com/fragility/fragility/probe/protocol"
)

// copyBuiltin writes the named built-in templates into a new folder.
func copyBuiltin(t *testing.T, names ...string) string {
	t.Helper()
	d := t.TempDir()
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("..", "..", "templates", "builtin", n+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, n+".yaml"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// planTemplates runs `plan --json` with args and returns the number of
// templates its power section counts, failing on a non-zero exit.
func planTemplates(t *testing.T, args ...string) int {
	t.Helper()
	r := fragility(t, noModels(t), append([]string{"plan", "--json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("plan %v: exit %d: %s", args, r.code, r.stderr)
	}
	var p plan.RunPlan
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil || p.Power == nil {
		t.Fatalf("plan %v: %v\n%s", args, err, r.stdout)
	}
	return p.Power.Templates
}

// TestTemplatesRepeatAndSubset: a repeated --templates reads the union of
// its folders (a template ID in two of them is refused naming both files);
// --template-ids and --limit pick a subset; an unknown ID is one line, exit
// 1; protocol freeze records the subset.
func TestTemplatesRepeatAndSubset(t *testing.T) {
	a, b := copyBuiltin(t, "baker", "cinema"), copyBuiltin(t, "orchard")
	if n := planTemplates(t, "--templates", a, "--templates", b); n != 3 {
		t.Errorf("union of 2+1 templates: plan counts %d", n)
	}
	if n := planTemplates(t, "--templates", a, "--templates", b, "--template-ids", "orchard,baker"); n != 2 {
		t.Errorf("--template-ids orchard,baker: plan counts %d", n)
	}
	if n := planTemplates(t, "--templates", a, "--templates", b, "--limit", "1"); n != 1 {
		t.Errorf("--limit 1: plan counts %d", n)
	}
	dup := copyBuiltin(t, "baker")
	r := fragility(t, noModels(t), "plan", "--templates", a, "--templates", dup)
	if r.code != 1 || !strings.Contains(r.stderr, filepath.Join(a, "baker.yaml")) || !strings.Contains(r.stderr, filepath.Join(dup, "baker.yaml")) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("duplicate ID: exit %d, want 1 and one line naming both files:\n%s", r.code, r.stderr)
	}
	for _, cmd := range [][]string{{"plan"}, {"generate-set", "--instances", "1"}, {"protocol", "freeze", "--out", filepath.Join(t.TempDir(), "p.json")}} {
		r = fragility(t, noModels(t), append(cmd, "--templates", a, "--template-ids", "baker,nosuch")...)
		if r.code != 1 || !strings.Contains(r.stderr, `"nosuch"`) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v with an unknown ID: exit %d, want 1 and one line:\n%s", cmd, r.code, r.stderr)
		}
	}
	if r = fragility(t, noModels(t), "plan", "--limit", "-1"); r.code != 2 {
		t.Errorf("--limit -1: exit %d, want 2\n%s", r.code, r.stderr)
	}
	out := filepath.Join(t.TempDir(), "p.json")
	r = fragility(t, noModels(t), "protocol", "freeze", "--templates", a, "--templates", b, "--template-ids", "cinema,orchard", "--limit", "1", "--out", out)
	data, _ := os.ReadFile(out)
	var p protocol.Protocol
	if r.code != 0 || json.Unmarshal(data, &p) != nil || strings.Join(p.TemplateIDs, ",") != "cinema,orchard" || p.Limit != 1 ||
		!strings.Contains(p.Templates, a) || !strings.Contains(p.Templates, b) {
		t.Errorf("protocol freeze: exit %d %s, protocol %+v", r.code, r.stderr, p)
	}
	r = fragility(t, noModels(t), "generate-set", "--templates", a, "--templates", b, "--template-ids", "cinema,orchard", "--limit", "1", "--instances", "1", "--variants", "base")
	if r.code != 0 || !strings.Contains(r.stdout, `"template":"cinema"`) || strings.Contains(r.stdout, `"template":"orchard"`) {
		t.Errorf("generate-set subset: exit %d %s\n%.600s", r.code, r.stderr, r.stdout)
	}
}

// TestSplitEmptyNamesSelection: a --split that keeps none of the templates
// --template-ids selects names that selection, not the whole source; one
// that keeps only some of them names the ones it would drop.
func TestSplitEmptyNamesSelection(t *testing.T) {
	// allowance is in the dev split of the built-in library (Template.Split).
	r := fragility(t, noModels(t), "plan", "--split", "test", "--template-ids", "allowance", "--variants", "base")
	want := "--split test: none of the templates --template-ids selects (allowance) is in the test split"
	if r.code != exitFailure || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, stderr %q; want exit %d and %q", r.code, r.stderr, exitFailure, want)
	}
	// baker is in the test split: the named allowance would vanish.
	r = fragility(t, noModels(t), "plan", "--split", "test", "--template-ids", "allowance,baker", "--variants", "base")
	want = "--split test: allowance, named by --template-ids, is not in the test split"
	if r.code != exitFailure || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, stderr %q; want exit %d and %q", r.code, r.stderr, exitFailure, want)
	}
}

// TestTemplatesListSplit: `templates list --json` gives each template's
// split, and the templates it puts in dev are the ones `plan --split dev`
// counts.
func TestTemplatesListSplit(t *testing.T) {
	r := fragility(t, noModels(t), "templates", "list", "--json")
	if r.code != 0 {
		t.Fatalf("templates list: exit %d: %s", r.code, r.stderr)
	}
	var rows []struct {
		ID    string `json:"id"`
		Split string `json:"split"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatal(err)
	}
	dev := 0
	for _, row := range rows {
		switch row.Split {
		case "dev":
			dev++
		case "test":
		default:
			t.Errorf("%s: split %q", row.ID, row.Split)
		}
	}
	if n := planTemplates(t, "--split", "dev", "--variants", "base,noop", "--instances", "1"); n != dev {
		t.Errorf("templates list puts %d templates in dev, plan --split dev counts %d", dev, n)
	}
}
