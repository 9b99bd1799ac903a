package answer

import (
	"strings"
	"testing"
)

// extractCases are responses shaped like real small-model outputs. span is
// the text the returned byte span must cover.
var extractCases = []struct {
	name     string
	response string
	value    string
	rule     string
	span     string
}{
	{"plain final line", "Step 1: 3 * 6 = 18.\nFinal answer: 18", "18", RuleFinalAnswer, "18"},
	{"final line trailing period", "She has 12 + 6 = 18 apples.\nFinal answer: 18.", "18", RuleFinalAnswer, "18"},
	{"markdown bold inside", "3 boxes of 6 make 18.\n\n**Final Answer: 18**", "18", RuleFinalAnswer, "18"},
	{"markdown bold label", "**Final Answer**: 18 apples", "18", RuleFinalAnswer, "18"},
	{"bold label then colon inside", "**Final answer:** $1,234.50", "1234.5", RuleFinalAnswer, "1,234.50"},
	{"final answer restates sum", "Final answer: 5 + 13 = 18", "18", RuleFinalAnswer, "18"},
	{"final answer with units and note", "Final answer: 18 apples (3 boxes of 6)", "18", RuleFinalAnswer, "18"},
	{"final answer on next line", "Total is 7 + 11.\n\nFinal Answer:\n\n**18**\n", "18", RuleFinalAnswer, "18"},
	{"final answer is boxed", "So 4 * 5 = 20.\nThe final answer is $\\boxed{20}$.", "20", RuleFinalAnswer, "20"},
	{"last final answer wins", "Final answer: 17\nWait, I forgot one. 17 + 1 = 18.\nFinal answer: 18", "18", RuleFinalAnswer, "18"},
	{"echoed instruction skipped", "I will end with `Final answer: <number>`.\n6 * 7 = 42\nFinal answer: 42", "42", RuleFinalAnswer, "42"},
	{"echo only, falls back", "Remember: `Final answer: <number>`. 6 * 7 = 42", "42", RuleLastNumber, "42"},
	{"lower case", "final answer: 7", "7", RuleFinalAnswer, "7"},
	{"decimal equal to integer", "Final answer: 45.0", "45", RuleFinalAnswer, "45.0"},
	{"trailing zeros", "Final answer: $12.50", "12.5", RuleFinalAnswer, "12.50"},
	{"negative", "The temperature falls 8 degrees from 5.\nFinal answer: -3", "-3", RuleFinalAnswer, "-3"},
	{"unicode minus", "Final answer: −3 degrees", "-3", RuleFinalAnswer, "−3"},
	{"negative currency", "Her balance is 20 - 25.\nFinal answer: -$5", "-5", RuleFinalAnswer, "-$5"},
	{"fraction", "Each gets 3 of 4 parts.\nFinal answer: 3/4", "0.75", RuleFinalAnswer, "3/4"},
	{"fraction to decimal", "Final answer: 1/2 of the cake", "0.5", RuleFinalAnswer, "1/2"},
	{"fraction not terminating", "Final answer: 1/3", "1/3", RuleFinalAnswer, "1/3"},
	{"mixed number", "Final answer: 2 1/2 cups", "2.5", RuleFinalAnswer, "2 1/2"},
	{"percent", "The discount is 25%.\nFinal answer: 25%", "25", RuleFinalAnswer, "25%"},
	{"latex percent", "Final answer: $25\\%$", "25", RuleFinalAnswer, "25\\%"},
	{"thousands", "Final answer: 1,250,000 dollars", "1250000", RuleFinalAnswer, "1,250,000"},
	{"latex thousands", "Final answer: $1{,}234$", "1234", RuleFinalAnswer, "1{,}234"},
	{"gsm8k hashes", "Natalia sold 48/2 = 24 clips in May.\n48 + 24 = 72\n#### 72", "72", RuleHashes, "72"},
	{"hashes with comma", "#### 1,000", "1000", RuleHashes, "1,000"},
	{"markdown heading is not hashes", "#### Step 1\nShe buys 5 pens.\n#### Step 2\nThen 5 * 3 = 15", "15", RuleLastNumber, "15"},
	{"answer is", "Adding them, 8 + 9 = 17. The answer is 17.", "17", RuleAnswerIs, "17"},
	{"answer is colon bold", "So the answer is: **$36**", "36", RuleAnswerIs, "36"},
	{"answer label", "**Answer:** 64 marbles", "64", RuleAnswerIs, "64"},
	{"answer is beats later number", "The answer is 12. (I checked it 2 times.)", "12", RuleAnswerIs, "12"},
	{"answer is without number", "The answer is not obvious. 3 + 4 = 7", "7", RuleLastNumber, "7"},
	{"boxed", "We get $x = 3 \\times 6$, so $\\boxed{18}$", "18", RuleBoxed, "18"},
	{"boxed with text", "\\[\\boxed{18 \\text{ apples}}\\]", "18", RuleBoxed, "18"},
	{"boxed latex frac", "\\[\\boxed{\\frac{3}{4}}\\]", "0.75", RuleBoxed, "\\frac{3}{4}"},
	{"boxed dollars", "Total: \\boxed{\\$1,234.50}", "1234.5", RuleBoxed, "1,234.50"},
	{"last boxed wins", "First try \\boxed{10}, corrected: \\boxed{12}", "12", RuleBoxed, "12"},
	{"no final line restated", "John has 5 apples and buys 3 more, so he has 5 + 3 = 8 apples.", "8", RuleLastNumber, "8"},
	{"several numbers, last is answer", "In 2023 she had 40. She gave 15 away, leaving 25", "25", RuleLastNumber, "25"},
	{"last number with trailing period", "So the total cost is $1,234.", "1234", RuleLastNumber, "1,234"},
	{"range hyphen is not a sign", "It takes 3-5 days", "5", RuleLastNumber, "5"},
	{"subtraction is not a sign", "20 - 8 = 12, then 12 - 4", "4", RuleLastNumber, "4"},
	{"sign after equals", "x = -7", "-7", RuleLastNumber, "-7"},
	{"digits glued to letters ignored", "Using model Q4 on GSM8K we got 30 items", "30", RuleLastNumber, "30"},
	{"leading dot decimal", "The probability is .25", "0.25", RuleLastNumber, ".25"},
	{"date is not a fraction", "On 3/4/2024 he paid 9", "9", RuleLastNumber, "9"},
	{"bad thousands grouping", "12,34", "34", RuleLastNumber, "34"},
	{"no number", "I cannot solve this problem.", "", RuleNone, ""},
	{"empty", "", "", RuleNone, ""},
	{"emoji and unicode", "Total = 42 🍎 — done ✅", "42", RuleLastNumber, "42"},
	{"final answer beats boxed", "\\boxed{7}\nFinal answer: 8", "8", RuleFinalAnswer, "8"},
	{"division by zero fraction", "Final answer: 5/0", "5", RuleFinalAnswer, "5"},
	// extract/2: run-on into a new made-up problem.
	{"run-on Q:", "3 * 6 = 18\nFinal answer: 18\nQ: Tom has 4 pens and buys 5. How many?\nA: 4 + 5 = 9\nFinal answer: 9", "18", RuleFinalAnswer, "18"},
	{"run-on Question:", "So she pays 12.\nFinal answer: 12\n\nQuestion: A farmer has 7 cows.\nFinal answer: 7", "12", RuleFinalAnswer, "12"},
	{"run-on Problem:", "The total is 40.\nProblem: A box holds 9 eggs; how many in 3 boxes?\nThe answer is 27.", "40", RuleLastNumber, "40"},
	{"run-on bold numbered", "Final answer: 15\n**Question 2:** What is 3 + 3? Final answer: 6", "15", RuleFinalAnswer, "15"},
	{"run-on heading", "18 apples in all.\n### Problem: A train leaves at 9.\n#### 9", "18", RuleLastNumber, "18"},
	{"run-on with indented Q", "Final answer: 21\n  Q: What is 2 * 2?\n  A: 4", "21", RuleFinalAnswer, "21"},
	{"restated question not cut", "Question: how many apples?\nShe has 3 + 4 = 7.\nFinal answer: 7", "7", RuleFinalAnswer, "7"},
	{"run-on without answer before keeps last number", "We know 5 and 6.\nQ: Another one: 8 + 1?\nFinal answer: 9", "6", RuleLastNumber, "6"},
	{"Q inside a word not cut", "FAQ: 5 + 5 = 10\nFinal answer: 10", "10", RuleFinalAnswer, "10"},
	{"quantity line not cut", "Total 12.\nQuantity: 3 boxes\nFinal answer: 36", "36", RuleFinalAnswer, "36"},
	// extract/2: reasoning blocks.
	{"think then answer", "<think>Maybe 17? No, 3 * 6 = 18.\nFinal answer: 17</think>\nShe has 18 apples.", "18", RuleLastNumber, "18"},
	{"think then final answer", "<think>Final answer: 20</think>\n\nFinal answer: 21", "21", RuleFinalAnswer, "21"},
	{"think opened in prompt", "Let me add 4 and 5, giving 9. Final answer: 8</think>\nThe answer is 9.", "9", RuleAnswerIs, "9"},
	{"think without answer after", "<think>3 * 6 = 18, so the answer is 18.</think>\nDone.", "18", RuleAnswerIs, "18"},
	{"unclosed think falls back", "<think>First 2 + 2 = 4, then 4 * 3 = 12", "12", RuleLastNumber, "12"},
	{"thinking tag", "<thinking>Guess 40.</thinking>Final answer: 42", "42", RuleFinalAnswer, "42"},
	{"gpt-oss channels", "<|channel|>analysis<|message|>Try 30. Final answer: 30<|end|><|start|>assistant<|channel|>final<|message|>It is 31.", "31", RuleLastNumber, "31"},
	{"run-on inside think is ignored", "<think>Check.\nQ: what if 5?\nThen 6.</think>\nFinal answer: 11\nQ: Next, 2 + 2?\nFinal answer: 4", "11", RuleFinalAnswer, "11"},
	{"calculator annotations", "He buys 3 * 4 = <<3*4=12>>12 pens.\nFinal answer: 12", "12", RuleFinalAnswer, "12"},
	// extract/4: an answer line written before its equation.
	{"answer before equation", "Final answer: 5 = 2 + 3", "5", RuleFinalAnswer, "5"},
	{"currency answer before equation", "Final answer: $18 = $6 * 3", "18", RuleFinalAnswer, "18"},
	{"bold answer before equation", "**Final answer:** **18** = 3 * 6", "18", RuleFinalAnswer, "18"},
	{"latex answer before equation", "Final answer: $18 = 6 \\times 3$", "18", RuleFinalAnswer, "18"},
	{"negative answer before equation", "Final answer: -3 = 5 - 8", "-3", RuleFinalAnswer, "-3"},
	{"percent answer before equation", "Final answer: 25% = 1/4", "25", RuleFinalAnswer, "25%"},
	{"answer before equation next line", "Final Answer:\n\n**5 = 2 + 3**", "5", RuleFinalAnswer, "5"},
	{"answer is before equation", "The answer is 12 = 4 * 3.", "12", RuleAnswerIs, "12"},
	{"boxed answer before equation", "\\boxed{20 = 4 \\times 5}", "20", RuleBoxed, "20"},
	{"equation first still after equals", "Final answer: 2 + 3 = 5", "5", RuleFinalAnswer, "5"},
	{"product first still after equals", "Final answer: $6 * 3 = $18", "18", RuleFinalAnswer, "18"},
	{"difference first still after equals", "Final answer: 12 - 4 = 8", "8", RuleFinalAnswer, "8"},
	{"words before equals still after equals", "Final answer: 2 boxes of 9 = 18", "18", RuleFinalAnswer, "18"},
}

func TestExtractTable(t *testing.T) {
	if len(extractCases) < 40 {
		t.Fatalf("extraction table has %d cases, want at least 40", len(extractCases))
	}
	for _, c := range extractCases {
		t.Run(c.name, func(t *testing.T) {
			e := Extract(c.response)
			if e.Value != c.value || e.Rule != c.rule {
				t.Fatalf("Extract(%q) = value %q rule %q, want %q %q", c.response, e.Value, e.Rule, c.value, c.rule)
			}
			if c.rule == RuleNone {
				if e.Start != -1 || e.End != -1 {
					t.Fatalf("span = [%d,%d), want [-1,-1)", e.Start, e.End)
				}
				return
			}
			if e.Start < 0 || e.End > len(c.response) || e.Start >= e.End {
				t.Fatalf("bad span [%d,%d) for %q", e.Start, e.End, c.response)
			}
			if got := c.response[e.Start:e.End]; got != c.span {
				t.Fatalf("span text %q, want %q", got, c.span)
			}
			// The value must match what AnswerMatches accepts as equal.
			if c.value != "" && !AnswerMatches(e.Value, c.value) {
				t.Fatalf("AnswerMatches(%q, %q) = false", e.Value, c.value)
			}
		})
	}
}

// TestExtractCutAndThink checks what extract/2 records about the cut and
// the reasoning block, not only the value.
func TestExtractCutAndThink(t *testing.T) {
	r := "Final answer: 18\nQ: Tom has 4 pens.\nFinal answer: 4"
	e := Extract(r)
	if e.Cut != strings.Index(r, "\nQ:") || e.CutMarker != "Q:" || e.ThinkEnd != -1 {
		t.Fatalf("cut %d %q think %d, want %d \"Q:\" -1", e.Cut, e.CutMarker, e.ThinkEnd, strings.Index(r, "\nQ:"))
	}
	r = "<think>Q: 7?</think>\nQuestion 3: 9 apples\n"
	// The only number after the block is inside the run-on: nothing is
	// before the marker, so it is not a run-on and the 9 is read.
	if e = Extract(r); e.Value != "9" || e.Cut != -1 || e.ThinkEnd != strings.Index(r, "\nQuestion") {
		t.Fatalf("got %+v", e)
	}
	if e = Extract("Final answer: 5"); e.Cut != -1 || e.CutMarker != "" || e.ThinkEnd != -1 {
		t.Fatalf("no cut or block, got %+v", e)
	}
	if e = Extract("nothing"); e.Cut != -1 || e.ThinkEnd != -1 {
		t.Fatalf("RuleNone: got %+v", e)
	}
	for _, c := range []struct {
		s          string
		start, end int
		closed     bool
	}{
		{"<think>ab</think>cd", 0, 17, true},
		{"x<think>ab</think>cd", 1, 18, true},
		{"ab</think>cd", 0, 10, true},
		{"x<think>ab", 1, 10, false},
		{"plain", 0, 0, false},
	} {
		s, e, ok := ReasoningSpan(c.s)
		if s != c.start || e != c.end || ok != c.closed {
			t.Errorf("ReasoningSpan(%q) = %d %d %v, want %d %d %v", c.s, s, e, ok, c.start, c.end, c.closed)
		}
	}
}

// TestExtractSpanIsLastOccurrence checks that the span points at the chosen
// occurrence, not at an earlier identical number.
func TestExtractSpanIsLastOccurrence(t *testing.T) {
	r := "Final answer: 18\nLet me re-check: 18.\nFinal answer: 18"
	e := Extract(r)
	if want := strings.LastIndex(r, "18"); e.Start != want {
		t.Fatalf("Start = %d, want %d", e.Start, want)
	}
}

func TestExtractPercentFlag(t *testing.T) {
	if e := Extract("Final answer: 40%"); !e.Percent || e.Value != "40" {
		t.Fatalf("got %+v, want 40 with Percent", e)
	}
	if e := Extract("Final answer: 40"); e.Percent {
		t.Fatalf("Percent set without a percent sign: %+v", e)
	}
}

func TestAnswerMatches(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"45", "45", true},
		{"45.0", "45", true},
		{"45.00", "45.0", true},
		{"90/2", "45", true},
		{"0.75", "3/4", true},
		{"1/3", "0.333333", false},
		{"12.5", "12.50", true},
		{"1,234", "1234", true},
		{"$18", "18", true},
		{"-3", "3", false},
		{"-0", "0", true},
		{"", "0", false},
		{"abc", "abc", false},
		{"18 apples", "18", false},
		{"0.1", "0.10000000000000001", false}, // exact, no float rounding
		{"100000000000000000001", "100000000000000000000", false},
	}
	for _, c := range cases {
		if got := AnswerMatches(c.a, c.b); got != c.want {
			t.Errorf("AnswerMatches(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestExpectedAnywhere(t *testing.T) {
	cases := []struct {
		response, expected string
		want               bool
	}{
		{"She has 145 apples", "45", false},
		{"She has 45.5 apples", "45", false},
		{"She has 1,450 apples", "450", false},
		{"She has 1,450 apples", "1450", true},
		{"The total was 45.0, wait no, 44", "45", true},
		{"x = -45", "45", false},
		{"x = -45", "-45", true},
		{"20 - 45 is negative", "45", true},
		{"Total $1,234.50 spent", "1234.5", true},
		{"Q45 model", "45", false},
		{"anything", "", false},
		{"it is 3/4 of it", "0.75", true},
	}
	for _, c := range cases {
		if got := ExpectedAnywhere(c.response, c.expected); got != c.want {
			t.Errorf("ExpectedAnywhere(%q, %q) = %v, want %v", c.response, c.expected, got, c.want)
		}
	}
}

func TestNormalizeNumber(t *testing.T) {
	cases := map[string]string{"45.0": "45", "0.750": "0.75", "2/6": "1/3", "-1,000": "-1000", "1/8": "0.125", "7/20": "0.35"}
	for in, want := range cases {
		got, ok := NormalizeNumber(in)
		if !ok || got != want {
			t.Errorf("NormalizeNumber(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if _, ok := NormalizeNumber("twelve"); ok {
		t.Error("NormalizeNumber accepted a word")
	}
}

func FuzzExtract(f *testing.F) {
	for _, c := range extractCases {
		f.Add(c.response, c.value)
	}
	f.Add("\\boxed{\\frac{1}{0}}", "1")
	f.Add("Final answer:\n\n\n", "0")
	f.Add("#####", "")
	f.Add("--−−$$\\$1{,}{,}", "-")
	f.Fuzz(func(t *testing.T, response, expected string) {
		e := Extract(response)
		if e.Rule == RuleNone {
			if e.Value != "" || e.Start != -1 || e.End != -1 {
				t.Fatalf("RuleNone with value %q span [%d,%d)", e.Value, e.Start, e.End)
			}
		} else {
			if e.Start < 0 || e.End > len(response) || e.Start >= e.End {
				t.Fatalf("bad span [%d,%d) in %d bytes", e.Start, e.End, len(response))
			}
			if _, ok := NormalizeNumber(e.Value); !ok {
				t.Fatalf("extracted value %q does not parse", e.Value)
			}
			if !ExpectedAnywhere(response, e.Value) && e.Rule == RuleLastNumber {
				t.Fatalf("last number %q not found anywhere", e.Value)
			}
		}
		_ = ExpectedAnywhere(response, expected)
		_ = AnswerMatches(e.Value, expected)
	})
}

// TestExtractPathological guards against super-linear behaviour on
// repetitive input (unbalanced boxes, labels without numbers); before the
// search regions were bounded the first case took minutes.
func TestExtractPathological(t *testing.T) {
	for _, s := range []string{
		strings.Repeat("\\boxed{", 5000),
		strings.Repeat("\\boxed{ = ", 5000),
		strings.Repeat("Final answer: x ", 5000),
		strings.Repeat("Final answer:\n\n", 5000),
		strings.Repeat("The answer is ", 5000),
		strings.Repeat("#### x\n", 5000),
		strings.Repeat("- ", 20000),
	} {
		if e := Extract(s); e.Rule != RuleNone {
			t.Fatalf("found %+v in a response without numbers", e)
		}
	}
}

// TestTruncated: extract/3 takes no answer from a cut response's last
// number and keeps one behind a marker.
func TestTruncated(t *testing.T) {
	cut := Truncated(Extract("Step 1: 3 + 4 = 7\n2. Then she"))
	if cut.Rule != RuleNone || cut.Value != "" {
		t.Errorf("cut reasoning: %+v", cut)
	}
	// No answer: no span, and no run-on cut or reasoning block that the
	// response did not have (effort counts the whole response).
	if cut.Start != -1 || cut.End != -1 || cut.Cut != -1 || cut.ThinkEnd != -1 {
		t.Errorf("cut reasoning offsets: %+v, want -1 everywhere", cut)
	}
	runOn := Truncated(Extract("3 + 4 = 7 so 7\nQ: another"))
	if runOn.Rule != RuleNone || runOn.Cut < 0 || runOn.CutMarker == "" {
		t.Errorf("cut reasoning with a run-on: %+v, want its cut kept", runOn)
	}
	kept := Truncated(Extract("3 + 4 = 7\nFinal answer: 7\nQ: next"))
	if kept.Rule != RuleFinalAnswer || kept.Value != "7" {
		t.Errorf("cut after the final line: %+v", kept)
	}
}

// TestTruncatedContextFull: from extract/4 on a response the context filled
// is read as one the budget cut (probe applies Truncated to both stop
// reasons): a long reasoning stopped mid-step has no answer, and one that
// reached its final line before the context ran out keeps it.
func TestTruncatedContextFull(t *testing.T) {
	long := strings.Repeat("Check again: 12 + 6 = 18, and 18 / 3 = 6. ", 200)
	cut := Truncated(Extract(long + "So the total is 6 * "))
	if cut.Rule != RuleNone || cut.Value != "" || cut.Start != -1 || cut.End != -1 {
		t.Errorf("context filled mid-reasoning: %+v, want no answer", cut)
	}
	if ex := Extract(long + "So the total is 6 * "); ex.Rule != RuleLastNumber || ex.Value != "6" {
		t.Errorf("the same response not cut: %+v, want its last number", ex)
	}
	kept := Truncated(Extract(long + "Final answer: 18\nLet me verify once more: 18 - "))
	if kept.Rule != RuleFinalAnswer || kept.Value != "18" {
		t.Errorf("context filled after the final line: %+v, want 18 kept", kept)
	}
	think := Truncated(Extract("<think>" + long + "maybe 7"))
	if think.Rule != RuleNone {
		t.Errorf("context filled inside an open reasoning block: %+v, want no answer", think)
	}
}
