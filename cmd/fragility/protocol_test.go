package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProtocolCommand: protocol freeze writes a protocol; run --protocol
// refuses a flag the protocol fixes (wrong usage, exit 2) and an edited
// protocol file (bad input, exit 1, naming it) before any model loads;
// freeze refuses to overwrite without --force and a bad --split.
func TestProtocolCommand(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "protocol.json")
	tdir := templateDir(t)
	if r := fragility(t, noModels(t), "protocol", "freeze", "--templates", tdir, "--split", "test", "--max-tokens", "64", "--out", p); r.code != 0 || !strings.Contains(r.stderr, "frozen in "+p) {
		t.Fatalf("freeze: exit %d: %s", r.code, r.stderr)
	}
	if r := fragility(t, noModels(t), "protocol", "freeze", "--templates", tdir, "--out", p); r.code != 1 || !strings.Contains(r.stderr, "already exists") {
		t.Errorf("freeze over an existing file: exit %d: %s", r.code, r.stderr)
	}
	if r := fragility(t, noModels(t), "protocol", "freeze", "--split", "train", "--out", filepath.Join(dir, "x.json")); r.code != 2 || !strings.Contains(r.stderr, "--split") {
		t.Errorf("bad split: exit %d: %s", r.code, r.stderr)
	}
	if r := fragility(t, noModels(t), "run", "--protocol", p, "--max-tokens", "65", "--out", filepath.Join(dir, "run")); r.code != 2 || !strings.Contains(r.stderr, "--max-tokens with --protocol") {
		t.Errorf("run --protocol --max-tokens: exit %d: %s", r.code, r.stderr)
	}
	// plan sizes the run the protocol defines: its budget (64 tokens an
	// item) and its split, and refuses a flag that would change it.
	if r := fragility(t, noModels(t), "plan", "--protocol", p, "--json"); r.code != 0 || !strings.Contains(r.stdout, `"max_tokens": 64`) {
		t.Errorf("plan --protocol: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if r := fragility(t, noModels(t), "plan", "--protocol", p, "--instances", "3"); r.code != 2 || !strings.Contains(r.stderr, "--instances with --protocol") {
		t.Errorf("plan --protocol --instances: exit %d: %s", r.code, r.stderr)
	}
	// A pre-specified primary variant is part of the protocol: frozen,
	// applied by run and plan, and not to be changed beside it.
	pp := filepath.Join(dir, "primary.json")
	if r := fragility(t, noModels(t), "protocol", "freeze", "--templates", tdir, "--variants", "base,noop-seeming", "--primary", "noop-seeming", "--out", pp); r.code != 0 {
		t.Fatalf("freeze --primary: exit %d: %s", r.code, r.stderr)
	}
	if data, _ := os.ReadFile(pp); !strings.Contains(string(data), `"primary_variant": "noop-seeming"`) {
		t.Errorf("frozen protocol has no primary variant:\n%s", data)
	}
	if r := fragility(t, noModels(t), "plan", "--protocol", pp, "--json"); r.code != 0 || !strings.Contains(r.stdout, `"primary_variant": "noop-seeming"`) {
		t.Errorf("plan --protocol with a primary: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if r := fragility(t, noModels(t), "run", "--protocol", pp, "--primary", "symbolic", "--out", filepath.Join(dir, "run")); r.code != 2 || !strings.Contains(r.stderr, "--primary with --protocol") {
		t.Errorf("run --protocol --primary: exit %d: %s", r.code, r.stderr)
	}
	data, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(data), `"max_tokens": 64`, `"max_tokens": 640`, 1)), 0o644)
	if r := fragility(t, noModels(t), "run", "--protocol", p, "--out", filepath.Join(dir, "run")); r.code != 1 || !strings.Contains(r.stderr, p) || !strings.Contains(r.stderr, "sha256") {
		t.Errorf("edited protocol: exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "run")); err == nil {
		t.Error("a refused run created its directory")
	}
}

// TestDemoProtocol: the demo's frozen protocol (make demo runs it) is read
// by this binary, its templates are unchanged since the freeze and it
// sizes the demo's 176 items with noop-seeming as the primary variant; a
// change of the prompt, the scoring rules or the built-in templates that
// breaks make demo fails here first (freeze it again, docs/demo-design.md).
func TestDemoProtocol(t *testing.T) {
	r := fragility(t, noModels(t), "plan", "--protocol", filepath.Join("..", "..", "examples", "demo-protocol.json"), "--json")
	if r.code != 0 {
		t.Fatalf("plan --protocol examples/demo-protocol.json: exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{`"items": 176`, `"primary_variant": "noop-seeming"`, `"max_tokens": 384`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan of the demo protocol lacks %s:\n%.2000s", want, r.stdout)
		}
	}
}
