package templates

import "testing"

func TestEvalArithmetic(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"3*4", "12"},
		{"3 × 4 + 2", "14"},
		{"48/2", "24"},
		{"10 ÷ 4", "5/2"},
		{"1/3 + 1/6", "1/2"},
		{"0.1 + 0.2", "3/10"},
		{"(5 − 2) * 3", "9"},
		{"15% * 80", "12"},
		{"12.5 % * 8", "1"},
		{"1,250,000 / 1,000", "1250"},
		{"$20 - $5", "15"},
		{"2**10", "1024"},
		{"7 // 2", "3"},
		{"-4 + 1", "-3"},
		{"3x4", "12"},
	} {
		got, err := EvalArithmetic(c.in)
		if err != nil {
			t.Errorf("EvalArithmetic(%q): %v", c.in, err)
			continue
		}
		if got.RatString() != c.want {
			t.Errorf("EvalArithmetic(%q) = %s, want %s", c.in, got.RatString(), c.want)
		}
	}
	for _, bad := range []string{"", "1/0", "a + 1", "max(1, 2)", "2**1000", "3 +", "[1, 2]", "'x'", "1 < 2"} {
		if v, err := EvalArithmetic(bad); err == nil {
			t.Errorf("EvalArithmetic(%q) = %v, want an error", bad, v)
		}
	}
}
