package protocol

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

// TestProtocolFreezeApply: a frozen protocol read back applies its fields
// to a Config and records its hash; an edited file, a changed template
// folder and an unknown version are refused naming the file.
func TestProtocolFreezeApply(t *testing.T) {
	tdir := t.TempDir()
	for _, n := range []string{"baker", "packing"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "templates", "builtin", n+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(tdir, n+".yaml"), b, 0o644)
	}
	cfg := rundir.Config{Templates: tdir, Variants: []templates.Variant{templates.VariantBase, templates.VariantNoop}, Instances: 3, Seed: 9,
		MaxTokens: 77, Shots: 2, Reference: templates.ReferenceDrawn, Split: templates.SplitTest}
	p, err := FreezeProtocol(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "protocol.json")
	if err := rundir.WriteJSONAtomic(path, p); err != nil {
		t.Fatal(err)
	}
	got, err := ReadProtocol(path)
	if err != nil || got.SHA256 != p.SHA256 || len(p.SHA256) != 64 {
		t.Fatalf("read back: %v, %+v", err, got)
	}
	var run rundir.Config
	if err := got.Apply(&run, path); err != nil {
		t.Fatal(err)
	}
	if run.MaxTokens != 77 || run.Shots != 2 || run.Instances != 3 || run.Seed != 9 || run.Templates != tdir || run.Split != templates.SplitTest ||
		run.Reference != templates.ReferenceDrawn || len(run.Variants) != 2 || run.ProtocolSHA256 != p.SHA256 || run.Protocol != path {
		t.Errorf("applied: %+v", run)
	}
	// An edited file.
	data, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(data), `"max_tokens": 77`, `"max_tokens": 78`, 1)), 0o644)
	if _, err := ReadProtocol(path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "do not match its sha256") {
		t.Errorf("edited protocol: %v", err)
	}
	os.WriteFile(path, data, 0o644)
	// A changed template folder.
	os.WriteFile(filepath.Join(tdir, "baker.yaml"), append(mustRead(t, filepath.Join(tdir, "baker.yaml")), '\n'), 0o644)
	if err := got.Apply(&run, path); err == nil || !strings.Contains(err.Error(), "changed since the protocol was frozen") {
		t.Errorf("changed templates: %v", err)
	}
	os.WriteFile(path, []byte(strings.Replace(string(data), ProtocolVersion, "protocol/0", 1)), 0o644)
	if _, err := ReadProtocol(path); err == nil || !strings.Contains(err.Error(), "protocol_version") {
		t.Errorf("unknown version: %v", err)
	}
	// Another answer-scoring procedure, sealed with a matching sha256.
	if p.AnswerScore != probe.AnswerScoreVersion {
		t.Errorf("answer_score %q, want %s", p.AnswerScore, probe.AnswerScoreVersion)
	}
	other := *p
	other.AnswerScore = "answer-score/0"
	if other.SHA256, err = other.hash(); err != nil {
		t.Fatal(err)
	}
	if err := rundir.WriteJSONAtomic(path, &other); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadProtocol(path); err == nil || !strings.Contains(err.Error(), "answer scoring answer-score/0") {
		t.Errorf("another answer scoring: %v", err)
	}
	if _, err := FreezeProtocol(rundir.Config{Items: "x.jsonl"}); err == nil {
		t.Error("a protocol of document questions was frozen")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
