package llm

import (
	"context"
	"strings"
	"testing"
)

// TestChatModelMetadata: the chat model of the tests is the Qwen2.5 Coder
// 0.5B Instruct file the manifest pins, and its GGUF carries a ChatML chat
// template.
func TestChatModelMetadata(t *testing.T) {
	md := chatModel(t).Metadata()
	if md.Architecture != "qwen2" || md.NVocab != 151936 || md.Quantization != "Q4_K_M" {
		t.Errorf("architecture %q, n_vocab %d, quantization %q; want qwen2, 151936, Q4_K_M", md.Architecture, md.NVocab, md.Quantization)
	}
	if md.SHA256 != "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32" || md.FileSize != 491400064 {
		t.Errorf("sha256 %s, size %d", md.SHA256, md.FileSize)
	}
	if !strings.Contains(md.Name, "Qwen2.5 Coder 0.5B Instruct") {
		t.Errorf("general.name %q", md.Name)
	}
	if !strings.Contains(md.ChatTemplate, "<|im_start|>") || !strings.Contains(md.ChatTemplate, "<|im_end|>") {
		t.Errorf("chat template is not ChatML: %.200q", md.ChatTemplate)
	}
}

// TestRenderChatML: the model's own template is applied (no plain
// fallback), turns are ChatML, the prompt ends where the assistant's reply
// starts, and the markers tokenize to single special tokens.
func TestRenderChatML(t *testing.T) {
	m := chatModel(t)
	r, err := m.RenderChat([]Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Hi"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
	if r.Text != want || r.Template != "model" || r.Reason != "" || len(r.Stop) != 0 {
		t.Errorf("rendering %+v, want the model's template giving %q", r, want)
	}
	// Without a system message llama.cpp's ChatML rendering adds none (the
	// Jinja template in the GGUF would add Qwen's default one).
	r, err = m.RenderChat([]Message{{Role: "user", Content: "Hi"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"; r.Text != want || r.Template != "model" {
		t.Errorf("user only: %+v, want %q", r, want)
	}
	toks, err := m.Tokenize(r.Text, true, true)
	if err != nil {
		t.Fatal(err)
	}
	start, end := specialToken(t, m, "<|im_start|>"), specialToken(t, m, "<|im_end|>")
	var ns, ne int
	for _, tk := range toks {
		switch tk {
		case start:
			ns++
		case end:
			ne++
		}
	}
	if ns != 2 || ne != 1 {
		t.Errorf("%v: %d <|im_start|> and %d <|im_end|> tokens, want 2 and 1", toks, ns, ne)
	}
}

// specialToken returns the single token that s (a special marker) parses to.
func specialToken(t *testing.T, m *Model, s string) Token {
	t.Helper()
	toks, err := m.Tokenize(s, false, true)
	if err != nil || len(toks) != 1 {
		t.Fatalf("%s tokenizes to %v (%v), want one token", s, toks, err)
	}
	return toks[0]
}

// TestEndOfTurnStopsGeneration: greedy generation on the chat model ends
// at <|im_end|> (stop reason eos), well inside the budget; the end-of-turn
// token is recorded as the last token with its entropy but no piece, and is
// not part of the text.
func TestEndOfTurnStopsGeneration(t *testing.T) {
	m := chatModel(t)
	r, err := m.RenderChat([]Message{{Role: "user", Content: "What is 7 plus 5? Reply with the number only."}})
	if err != nil {
		t.Fatal(err)
	}
	toks, err := m.Tokenize(r.Text, true, true)
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.Generate(context.Background(), toks, GenerateOptions{MaxTokens: 48})
	if err != nil {
		t.Fatal(err)
	}
	end := specialToken(t, m, "<|im_end|>")
	if g.StopReason != StopEOS || len(g.Tokens) == 0 || len(g.Tokens) >= 48 {
		t.Fatalf("stop %q after %d tokens (%q), want eos inside the budget", g.StopReason, len(g.Tokens), g.Text)
	}
	last := g.Tokens[len(g.Tokens)-1]
	if last.ID != end || last.Piece != "" || last.EntropyBits < 0 || last.Prob <= 0 {
		t.Errorf("last token %+v, want <|im_end|> (%d) with an entropy and no piece", last, end)
	}
	if strings.Contains(g.Text, "<|im_") || !strings.Contains(g.Text, "12") {
		t.Errorf("text %q: want the answer 12 and no chat markers", g.Text)
	}
	t.Logf("%q in %d tokens", g.Text, len(g.Tokens))
}
