package probe

import (
	"slices"
	"strings"
	"testing"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/models"
	"github.com/fragility/fragility/probe/answer"
	"github.com/fragility/fragility/probe/internal/probetest"
)

func TestRenderAnswer(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"39", "39", true}, {"-3", "-3", true}, {"12.5", "12.5", true}, {"45.0", "45", true},
		{"0.250", "0.25", true}, {"-0.05", "-0.05", true}, {"1250000", "1250000", true},
		{"1/4", "0.25", true}, {"1/3", "", false}, {"1,250", "", false}, {"", "", false}, {"abc", "", false},
	} {
		got, ok := RenderAnswer(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("RenderAnswer(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// generationOf tokenizes text with m and returns it as a generation that
// the model wrote token by token (the text its pieces give).
func generationOf(t *testing.T, m *llm.Model, text string) *llm.Generation {
	t.Helper()
	toks, err := m.Tokenize(text, false, false)
	if err != nil {
		t.Fatal(err)
	}
	g := &llm.Generation{PromptTokens: 10}
	for _, id := range toks {
		g.Tokens = append(g.Tokens, llm.TokenRecord{ID: id, Piece: m.Piece(id)})
		g.Text += m.Piece(id)
	}
	if g.Text != text {
		t.Fatalf("%q: pieces give %q", text, g.Text)
	}
	return g
}

// TestAnswerForcedTokensAreTheModels checks, on the tokenizers of both test
// models, that the tokens forced for an answer after a model's own
// final-answer marker are the tokens of the model's text itself: a
// response that ends in the preset's final-answer form, tokenized whole,
// has the forced tokens as its tail (integers, negatives, decimals; the
// fragility and gsm-symbolic forms), and the scored tokens are those of
// the number; the form the model wrote stays in context and is not forced
// again. Without a marker the preset's separator and form follow the text,
// and a calculator trial is scored after its last tool result.
func TestAnswerForcedTokensAreTheModels(t *testing.T) {
	for _, name := range []string{probetest.GemmaName, probetest.ChatName} {
		p, err := models.PathOf(name)
		if err != nil {
			t.Fatal(err)
		}
		m, err := llm.Load(p, llm.Params{Threads: 1, NCtx: 256})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct{ preset, body, value string }{
			{PromptFragility, "She has 5 + 37 = 42 apples.\nFinal answer: ", "42"},
			{PromptFragility, "The temperature falls to 5 - 8 = -3 degrees.\n\nFinal answer: ", "-3"},
			{PromptFragility, "Each costs 25 / 2 = 12.5 dollars.\nFinal answer: ", "12.5"},
			{PromptGSMSymbolic, "Let's think step by step. He has 3 * 4 = 12 cards. The final answer is ", "12"},
		} {
			g := generationOf(t, m, c.body+c.value)
			ex := answer.Extract(g.Text)
			plan, ok := planAnswer(g, ex, c.preset)
			if !ok {
				t.Fatalf("%s %q: no plan", name, g.Text)
			}
			f, ok, err := forcingFor(m, 0, plan, c.value)
			if err != nil || !ok {
				t.Fatalf("%s %q: forcing: %v %v", name, g.Text, ok, err)
			}
			if strings.Contains(strings.ToLower(plan.Prefix), "answer") {
				t.Errorf("%s %q: prefix %q forces the form the model wrote", name, g.Text, plan.Prefix)
			}
			var tail []llm.Token
			for _, r := range g.Tokens[plan.Keep:] {
				tail = append(tail, r.ID)
			}
			if !slices.Equal(f.Tokens, tail) {
				t.Errorf("%s %q: forced %v after %d kept tokens, the text's own tokens are %v", name, g.Text, f.Tokens, plan.Keep, tail)
			}
			if lps, ok := generatedLogProbs(g, f); !ok || len(lps) != f.To-f.From {
				t.Errorf("%s %q: the model wrote the forced tokens, but their recorded log-probabilities are not used (%v)", name, g.Text, ok)
			}
			var num string
			for _, id := range f.Tokens[f.From:] {
				num += m.Piece(id)
			}
			if len(num) < len(c.value) || num[len(num)-len(c.value):] != c.value || len(num) > len(c.value)+1 {
				t.Errorf("%s %q: scored pieces %q, want the number %q (a leading space at most)", name, g.Text, num, c.value)
			}
		}
		// The budget cut the text: the separator and the form follow it.
		g := generationOf(t, m, "She has 5 + 37 = 42")
		plan, _ := planAnswer(g, answer.Truncated(answer.Extract(g.Text)), PromptFragility)
		if plan.Keep != len(g.Tokens) || plan.Prefix != "\nFinal answer: " {
			t.Errorf("%s: cut text: keep %d of %d, prefix %q", name, plan.Keep, len(g.Tokens), plan.Prefix)
		}
		// A calculator trial is scored after its last tool result: a
		// marker before it does not cut the text.
		g = generationOf(t, m, "Final answer: <<3*4=")
		res := "12>>"
		g.Tokens = append(g.Tokens, llm.TokenRecord{ID: 1, Piece: res, Injected: true})
		g.Text += res
		plan, _ = planAnswer(g, answer.Extract(g.Text), PromptFragility)
		if plan.Keep != len(g.Tokens) || plan.Prefix != "\nFinal answer: " {
			t.Errorf("%s: calculator: keep %d of %d, prefix %q", name, plan.Keep, len(g.Tokens), plan.Prefix)
		}
		m.Close()
	}
}
