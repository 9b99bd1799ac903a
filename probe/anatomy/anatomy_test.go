package anatomy

import (
	"slices"
	"testing"
)

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

// TestClassifyClauseOperand (errors/3): an answer that goes on from the
// clause's own number is clause_used without the clause's alt_answer; one
// that writes the number but does not carry the operation into its answer,
// or uses its own intermediate result that happens to equal it, is not.
func TestClassifyClauseOperand(t *testing.T) {
	if Version != "errors/3" {
		t.Errorf("Version %s, want errors/3", Version)
	}
	for _, c := range []struct {
		name   string
		t      Trial
		want   string
		errors string // the kind without the clause's numbers (errors/2's reading)
	}{
		{"the clause's 3 subtracted", Trial{Response: "Ann has 11 apples. 11 - 3 = 8\nFinal answer: 8", Extracted: "8", Rule: "final_answer", StopReason: "eos", Expected: "11", ClauseNumbers: []string{"3"}}, ClauseUsed, Other},
		{"carried on after", Trial{Response: "20 - 5 = 15 apples are left.\nShe doubles them: 15 * 2 = 30.\nFinal answer: 30", Extracted: "30", Rule: "final_answer", StopReason: "eos", Expected: "40", ClauseNumbers: []string{"5"}}, ClauseUsed, Other},
		{"with a currency sign and a unit", Trial{Response: "$1,200 - $150 = $1,050 dollars\nFinal answer: $1,050", Extracted: "1050", Rule: "final_answer", StopReason: "eos", Expected: "1200", ClauseNumbers: []string{"150"}}, ClauseUsed, Other},
		{"written but not carried", Trial{Response: "20 - 5 = 15, but the 5 do not count.\n20 * 2 = 40\nFinal answer: 40", Extracted: "40", Rule: "final_answer", StopReason: "eos", Expected: "42", ClauseNumbers: []string{"5"}}, Other, Other},
		{"its own intermediate result", Trial{Response: "2 + 1 = 3 boxes.\n3 * 4 = 12\nFinal answer: 12", Extracted: "12", Rule: "final_answer", StopReason: "eos", Expected: "15", ClauseNumbers: []string{"3"}}, Other, Other},
		{"a slip comes first", Trial{Response: "11 - 3 = 7\nFinal answer: 7", Extracted: "7", Rule: "final_answer", StopReason: "eos", Expected: "11", ClauseNumbers: []string{"3"}}, Arithmetic, Arithmetic},
		{"no clause", Trial{Response: "11 - 3 = 8\nFinal answer: 8", Extracted: "8", Rule: "final_answer", StopReason: "eos", Expected: "11"}, Other, Other},
		{"right answer", Trial{Correct: true, Response: "11 - 3 = 8\nFinal answer: 8", Extracted: "8", Rule: "final_answer", StopReason: "eos", Expected: "8", ClauseNumbers: []string{"3"}}, "", ""},
	} {
		if got := Classify(c.t); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		c.t.ClauseNumbers = nil
		if got := Classify(c.t); got != c.errors {
			t.Errorf("%s, without the clause's numbers: %q, want %q", c.name, got, c.errors)
		}
	}
}

// TestClauseNumbers: the clause's numbers are those of its text and of its
// own variables, less those the problem gives outside the clause.
func TestClauseNumbers(t *testing.T) {
	for _, c := range []struct {
		name, question, clause string
		values                 map[string]string
		want                   []string
	}{
		{"drawn number", "Ann has 11 apples. 3 of them are smaller than usual. How many apples does she have?", "3 of them are smaller than usual.", map[string]string{"k": "3"}, []string{"3"}},
		{"the problem's own number repeated", "Ann has 11 apples. 3 of the 11 are smaller. She eats 3. How many are left?", "3 of the 11 are smaller.", nil, nil},
		{"written in words", "Ann has 11 apples. Five of them are smaller. How many?", "Five of them are smaller.", map[string]string{"k": "5", "name": "Ann"}, []string{"5"}},
		{"thousands and money", "A car costs $12,000. A friend paid $1,500 for a bike. What does the car cost?", "A friend paid $1,500 for a bike.", nil, []string{"1500"}},
		{"no clause", "Ann has 11 apples.", "", nil, nil},
	} {
		got := ClauseNumbers(c.question, c.clause, c.values)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
