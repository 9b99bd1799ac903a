package anatomy

import "testing"

// TestClassify: each kind on responses of the shape the default model
// writes, and the order of the rules (the first that fires).
func TestClassify(t *testing.T) {
	for _, c := range []struct {
		name string
		t    Trial
		want string
	}{
		{"right", Trial{Correct: true, Extracted: "48", Expected: "48", Rule: "final_answer"}, ""},
		{"cut before the final line", Trial{Response: "Step 1: 6 × 8 = 48\nStep 2: 48 + 1", Extracted: "1", Rule: "last_number", StopReason: "max_tokens", Expected: "49"}, Unfinished},
		{"cut after the final line is not unfinished", Trial{Response: "6 × 8 = 48\nFinal answer: 48", Extracted: "48", Rule: "final_answer", StopReason: "max_tokens", Expected: "49"}, Other},
		{"no number", Trial{Response: "I cannot tell.", Rule: "none", StopReason: "eos", Expected: "3"}, NoAnswer},
		{"slip is the answer", Trial{Response: "She has 6 boxes of 8: 6 × 8 = 46.\nFinal answer: 46", Extracted: "46", Rule: "final_answer", StopReason: "eos", Expected: "48"}, Arithmetic},
		{"slip carried on", Trial{Response: "6 * 8 = 46 pencils. Then 46 + 2 = 48.\nFinal answer: 48", Extracted: "48", Rule: "final_answer", StopReason: "eos", Expected: "50"}, Arithmetic},
		{"slip not used", Trial{Response: "6 * 8 = 46, no, 48 pencils; 48 / 2 = 24.\nFinal answer: 24", Extracted: "24", Rule: "final_answer", StopReason: "eos", Expected: "25"}, Other},
		{"thousands and decimals", Trial{Response: "1,200 × 0.5 = 700\nFinal answer: 700", Extracted: "700", Rule: "final_answer", StopReason: "eos", Expected: "600"}, Arithmetic},
		{"LaTeX operator", Trial{Response: `\(12 \times 3 = 38\)` + "\nFinal answer: 38", Extracted: "38", Rule: "final_answer", StopReason: "eos", Expected: "36"}, Arithmetic},
		{"right arithmetic, wrong relation", Trial{Response: "12 + 3 = 15\nFinal answer: 15", Extracted: "15", Rule: "final_answer", StopReason: "eos", Expected: "9"}, Other},
		{"clause applied", Trial{Response: "20 - 5 = 15\nFinal answer: 15", Extracted: "15", Rule: "final_answer", StopReason: "eos", Expected: "20", AltAnswer: "15"}, ClauseUsed},
		{"original recalled", Trial{Response: "Final answer: 78", Extracted: "78", Rule: "final_answer", StopReason: "eos", Expected: "64", OriginalAnswer: "78"}, OriginalRecalled},
		{"original equals the answer", Trial{Response: "Final answer: 70", Extracted: "70", Rule: "final_answer", StopReason: "eos", Expected: "78", OriginalAnswer: "78"}, Other},
		{"currency signs", Trial{Response: "$1750 + $27 = $1877\nFinal answer: $1877", Extracted: "1877", Rule: "final_answer", StopReason: "eos", Expected: "1838"}, Arithmetic},
		{"unit words", Trial{Response: "1260 meters + 130 meters = 1490 meters\nFinal answer: 1490", Extracted: "1490", Rule: "final_answer", StopReason: "eos", Expected: "1960"}, Arithmetic},
		{"unit words, right sum", Trial{Response: "1260 meters + 130 meters = 1390 meters\nFinal answer: 1390", Extracted: "1390", Rule: "final_answer", StopReason: "eos", Expected: "1960"}, Other},
		{"a slip comes before the clause", Trial{Response: "20 - 5 = 14\nFinal answer: 14", Extracted: "14", Rule: "final_answer", StopReason: "eos", Expected: "20", AltAnswer: "14"}, Arithmetic},
	} {
		if got := Classify(c.t); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
