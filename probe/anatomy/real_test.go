package anatomy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// realCase is one line of testdata/responses.jsonl: a real model response
// (the default model, qwen2.5-coder-0.5b-instruct Q4_K_M, from the demo
// run; the fast model, gemma-3-270m Q4_K_M, from a short capture run for
// no_answer, which the demo lacks), the item fields the rules read, and the
// kind a reader gave it by hand.
type realCase struct {
	From           string `json:"from"`
	Kind           string `json:"kind"`
	Note           string `json:"note"`
	Response       string `json:"response"`
	Extracted      string `json:"extracted"`
	Rule           string `json:"rule"`
	StopReason     string `json:"stop_reason"`
	Expected       string `json:"expected"`
	AltAnswer      string `json:"alt_answer"`
	OriginalAnswer string `json:"original_answer"`
	Correct        bool   `json:"correct"`
	// ClauseNumbers are the item's clause numbers (Trial.ClauseNumbers),
	// given for the cases of the errors/4 review; absent elsewhere.
	ClauseNumbers []string `json:"clause_numbers"`
}

// TestClassifyRealResponses: each kind on real model outputs, against the
// hand label (the demo's hand check of 50 wrong answers, and hand-labelled
// clause and recall cases, and a captured response without a number; see
// each line's note). Every kind is covered at least once.
func TestClassifyRealResponses(t *testing.T) {
	f, err := os.Open("testdata/responses.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var c realCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		got := Classify(Trial{Correct: c.Correct, Response: c.Response, Extracted: c.Extracted, Rule: c.Rule, StopReason: c.StopReason,
			Expected: c.Expected, AltAnswer: c.AltAnswer, OriginalAnswer: c.OriginalAnswer, ClauseNumbers: c.ClauseNumbers})
		if got != c.Kind {
			t.Errorf("%s: %q, hand label %q (%s)", c.From, got, c.Kind, c.Note)
		}
		seen[c.Kind]++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, k := range Kinds {
		if seen[k] == 0 {
			t.Errorf("no real response of kind %s in testdata", k)
		}
	}
	// Without the reviewed alternative answer and the clause's numbers the
	// clause cases are other: the rule needs one of them, not a guess.
	if got := Classify(Trial{Response: "53 - 28 = 25 meters.\nFinal answer: 25", Extracted: "25", Rule: "final_answer", StopReason: "eos", Expected: "8"}); got != Other {
		t.Errorf("no alt answer: %q", got)
	}
}

// TestClassifyRealClauseNumbers (errors/3, errors/4): the hand-labelled
// clause cases of testdata, whose alt_answer a reader derived by hand (the
// built-in clauses carry none), are clause_used from the clause's own
// number alone: the bakery across the street's 67 baguettes, the park's
// tallest tree of 53 meters; and so are the two the round-4 new-user test
// found (errors/4; their lines give the clause's numbers): the 20 pupils
// with cameras in a chain, the friend's 81 beads in a fraction.
func TestClassifyRealClauseNumbers(t *testing.T) {
	data, err := os.ReadFile("testdata/responses.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	clause := map[string]string{"runs/demo m0/baker/noop-seeming/0": "67", "runs/demo m0/tree-heights/noop-seeming/0": "53"}
	n, given := 0, 0 // the cases of the map, and those whose line gives the number
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var c realCase
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatal(err)
		}
		num, ok := clause[c.From]
		switch {
		case ok:
			n++
		case c.Kind == ClauseUsed && len(c.ClauseNumbers) == 1:
			num = c.ClauseNumbers[0]
			given++
		default:
			continue
		}
		tr := Trial{Correct: c.Correct, Response: c.Response, Extracted: c.Extracted, Rule: c.Rule, StopReason: c.StopReason,
			Expected: c.Expected, OriginalAnswer: c.OriginalAnswer}
		if got := Classify(tr); got != Other {
			t.Errorf("%s without the clause's number: %q, want other", c.From, got)
		}
		tr.ClauseNumbers = []string{num}
		if got := Classify(tr); got != ClauseUsed || got != c.Kind {
			t.Errorf("%s with the clause's number %s: %q, hand label %q", c.From, num, got, c.Kind)
		}
	}
	if n != len(clause) || given != 2 {
		t.Errorf("found %d of the %d cases, and %d of the 2 with their clause's numbers", n, len(clause), given)
	}
}
