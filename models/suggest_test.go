package models

import (
	"strings"
	"testing"
)

// TestResolveDidYouMean: a bare name one typo from a model of the
// manifest is told that model, beside the list of names.
func TestResolveDidYouMean(t *testing.T) {
	t.Setenv("OLLAMA_MODELS", t.TempDir()) // no Ollama store to consult
	_, err := Resolve("gemma-3-270m-q4_k", "llm")
	if err == nil || !strings.Contains(err.Error(), "did you mean gemma-3-270m-q4_k_m? known: ") {
		t.Errorf("gemma-3-270m-q4_k: %v", err)
	}
	man, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := man.Find("qwen2.5-coder-0.5"); err == nil || !strings.Contains(err.Error(), "did you mean qwen2.5-coder-0.5b?") {
		t.Errorf("Find: %v", err)
	}
	if _, err := man.Find("zzzzzzzz"); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("Find far: %v", err)
	}
}
