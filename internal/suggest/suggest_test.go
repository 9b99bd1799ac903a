package suggest

import "testing"

func TestClosest(t *testing.T) {
	flags := []string{"instances", "max-tokens", "model", "temperature", "templates", "template", "n"}
	for _, c := range []struct{ want, got string }{
		{"instnces", "instances"},   // one letter dropped
		{"max-token", "max-tokens"}, // one letter dropped
		{"MODEL", "model"},          // case
		{"temper", "temperature"},   // a prefix, far by distance
		{"temp", "template"},        // several share it: the nearest
		{"templats", "templates"},   // nearer than template? both 1: the earlier wins
		{"m", ""},                   // too short for a typo or a prefix
		{"x", ""},                   // one letter from "n", but a guess
		{"seed", ""},                // nothing near
		{"instances-all", "instances"},
		{"isntances", "instances"}, // two letters swapped
	} {
		if got := Closest(c.want, flags); got != c.got {
			t.Errorf("Closest(%q) = %q, want %q", c.want, got, c.got)
		}
	}
	models := []string{"qwen2.5-coder-0.5b", "gemma-3-270m-q4_k_m", "all-minilm-l6-v2-int8", "qwen2.5-coder-1.5b"}
	if got := Closest("gemma-3-270m-q4_k", models); got != "gemma-3-270m-q4_k_m" {
		t.Errorf("model: %q", got)
	}
	if got := DidYouMean("noop-seming", "", []string{"noop", "noop-seeming"}); got != "did you mean noop-seeming?" {
		t.Errorf("DidYouMean: %q", got)
	}
	if got := DidYouMean("instnces", "--", flags); got != "did you mean --instances?" {
		t.Errorf("DidYouMean flag: %q", got)
	}
	if got := DidYouMean("zzz", "--", flags); got != "" {
		t.Errorf("DidYouMean far: %q", got)
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2}, {"abc", "abc", 0},
		// Adjacent swaps count one edit; "ca" → "abc" is 3 under this
		// distance (no substring edited twice), 2 under unrestricted Damerau.
		{"rnu", "run", 1}, {"ab", "ba", 1}, {"abcd", "badc", 2}, {"ca", "abc", 3}} {
		if d := Distance(c.a, c.b); d != c.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, d, c.d)
		}
	}
}
