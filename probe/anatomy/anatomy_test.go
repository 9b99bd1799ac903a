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

// errors4Case is a wrong answer the rules errors/4 read otherwise than
// errors/3 did (or, for the negative cases, alike).
type errors4Case struct {
	name     string
	response string
	answer   string   // the final answer, extracted
	clause   []string // the clause's numbers
	want     string   // the kind with the clause's numbers
	without  string   // the kind without them
}

// classify4 checks each case with and without its clause's numbers.
func classify4(t *testing.T, cases []errors4Case) {
	t.Helper()
	if Version != "errors/4" {
		t.Errorf("Version %s, want errors/4", Version)
	}
	for _, c := range cases {
		tr := Trial{Response: c.response, Extracted: c.answer, Rule: "final_answer", StopReason: "eos", Expected: "1000", ClauseNumbers: c.clause}
		if got := Classify(tr); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		tr.ClauseNumbers = nil
		if got := Classify(tr); got != c.without {
			t.Errorf("%s, without the clause's numbers: %q, want %q", c.name, got, c.without)
		}
	}
}

// TestClassifyChains (errors/4): a chain of equations "A = B = C" is read
// link by link. An operation on the clause's number whose chain ends in
// the final answer, or whose exact value is the final answer, is
// clause_used (errors/3 read only the number right after the first "=" and
// called these other); a wrong step inside a chain is a slip, a link that
// writes the operation out is none, and a result rounded to the digits
// written is none either (errors/3 called those arithmetic).
func TestClassifyChains(t *testing.T) {
	classify4(t, []errors4Case{
		// The round-4 new-user test's form, from the demo (chaperones).
		{"the clause's 20 in a chain", "The school needs 18 * $10 = $180.\nAmong the pupils, 20 bring their own cameras.\nThe school needs 180 - 20 * $10 = $180 - $200 = -$20.\nFinal answer: -$20", "-20", []string{"20"}, ClauseUsed, Other},
		{"its value is the answer, no result stated", "The school needs 180 - 20 * $10 = $180 - $200.\nFinal answer: -20", "-20", []string{"20"}, ClauseUsed, Other},
		{"its value is the answer, the result stated wrongly", "Ann has 11 apples. 11 - 3 = 7, that is 8 apples.\nFinal answer: 8", "8", []string{"3"}, ClauseUsed, Other},
		{"a chain that goes on from its result", "20 - 5 = 15 + 3 = 18\nFinal answer: 18", "18", []string{"5"}, ClauseUsed, Other},
		{"a slip inside a chain", "3 × 4 + 2 = 12 + 2 = 15\nFinal answer: 15", "15", nil, Arithmetic, Arithmetic},
		{"a slip at a chain's end", "She pays $155 * (1 - 0.25) = $155 * 0.75 = $111.25.\nFinal answer: 111.25", "111.25", nil, Arithmetic, Arithmetic},
		{"a link written out is no result", "He spends $5.50 + $0.75 * 4 = $5.50 + $3 = $8.50.\nHe has $46 - $8.50 = $37.50.\nFinal answer: 37.50", "37.5", nil, Other, Other},
		{"a result rounded to the digits written", "She runs 50 / 6 = 8.33 minutes.\nFinal answer: 8.33", "8.33", nil, Other, Other},
		{"a wrong result with as many digits", "She runs 50 / 6 = 8.5 minutes.\nFinal answer: 8.5", "8.5", nil, Arithmetic, Arithmetic},
		{"an approximate result", "25 / 7 ≈ 3.5 hours.\nFinal answer: 3.5", "3.5", nil, Other, Other},
		// Negative cases: the clause's number in an operation whose result
		// neither is the answer nor is used again.
		{"a chain on the clause's number, not carried", "20 - 5 = 15 + 3 = 18, but the 5 do not count.\n20 * 2 = 40\nFinal answer: 40", "40", []string{"5"}, Other, Other},
		{"a link that writes the result out again", "4 * 2 = 8 = 3 + 5\nFinal answer: 8", "8", []string{"3"}, Other, Other},
		// The round-4 retry's forms, from the demo: LaTeX text between the
		// numbers (soup-recipe), and an equation in x whose tail is no
		// operation with a result (green-paint: 3 × 5 is not 140).
		{"units as LaTeX text", "\\[ \\text{Water} = 60 \\text{ grams (original)} + 290 \\text{ grams (rice)} = 350 \\text{ grams} \\]\n\\[ 530 \\text{ grams} + 350 \\text{ grams} = 880 \\text{ grams} \\]\nFinal answer: 880", "880", []string{"290"}, ClauseUsed, Other},
		{"an equation in x", "\\[ 4x + 3 \\cdot 5 = 140 \\]\n\\[ 4x + 15 = 140 \\]\n\\[ 4x = 125 \\]\n\\[ x = \\frac{125}{4} \\]\n\\[ x = 31.25 \\]\nFinal answer: 31.25", "31.25", []string{"5"}, ClauseUsed, Other},
		{"an equation in x, the clause's number not used", "\\[ 4x + 3 \\cdot 5 = 140 \\]\nFinal answer: 31.25", "31.25", []string{"5"}, Other, Other},
		{"a bullet is no operator", "- 45 + 34 = 89\n- 89 - 19 = 70\nFinal answer: 70", "70", nil, Arithmetic, Arithmetic},
	})
}

// TestClassifyFractions (errors/4): \frac{a}{b} (also \dfrac, \tfrac) is
// the operation a / b for both rules; errors/3 read no fraction.
func TestClassifyFractions(t *testing.T) {
	classify4(t, []errors4Case{
		// The round-4 new-user test's form, from the demo (bead-jar): 12
		// rounds 81/7 and is no slip; 12 + 4 = 16 carries it.
		{"the clause's 81 divided", "\\[\n\\text{Number of purple beads} = \\frac{81}{7} = 12\n\\]\n\\[\n\\text{Total} = 12 + 4 = 16\n\\]\nThe total is \\boxed{16}.", "16", []string{"81"}, ClauseUsed, Other},
		{"an approximate result carried on", "\\[ \\frac{81}{7} \\approx 11.57 \\]\nThen 11.57 + 4 = 15.57.\nFinal answer: 15.57", "15.57", []string{"81"}, ClauseUsed, Other},
		{"the clause's number as the denominator", "\\[ \\tfrac{72}{8} = 9 \\]\nFinal answer: 9", "9", []string{"8"}, ClauseUsed, Other},
		{"inside an operation", "\\[ 28 + \\dfrac{84}{7} = 40 \\]\nFinal answer: 40", "40", []string{"84"}, ClauseUsed, Other},
		{"a slip in a fraction", "\\[ \\frac{344}{4} = 88 \\]\nThus \\boxed{88}.", "88", nil, Arithmetic, Arithmetic},
		{"a slip comes before the clause", "\\[ 280 + 64 = 344 \\]\n\\[ \\frac{344}{4} = 88 \\]\nThus \\boxed{88}.", "88", []string{"64"}, Arithmetic, Arithmetic},
		{"a fraction's result written as a fraction, used again", "\\[ \\frac{160}{190} = \\frac{4}{7} \\]\n\\[ 19 \\times \\frac{4}{7} = \\frac{76}{7} \\]\nFinal answer: 10.86", "10.86", nil, Arithmetic, Arithmetic},
		// Negative cases: a right fraction, a slip not carried, and the
		// clause's number in a fraction whose result is not carried.
		{"a right fraction, a wrong relation", "\\[ \\frac{344}{4} = 86 \\]\nFinal answer: 86", "86", nil, Other, Other},
		{"a slip not carried", "\\[ \\frac{344}{4} = 88 \\] no, 86 boxes.\nFinal answer: 86", "86", nil, Other, Other},
		{"the clause's 81 divided, not carried", "\\frac{81}{7} = 12, but her friend's beads do not count.\n28 + 36 = 64 - 4 = 60.\nFinal answer: 60", "60", []string{"81"}, Other, Other},
	})
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
