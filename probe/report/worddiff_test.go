package report

import (
	"slices"
	"strings"
	"testing"
)

// TestWordDiff checks that the runs of a word diff rebuild both texts and
// mark what changed, on a noop-style added clause and a re-drawn number.
func TestWordDiff(t *testing.T) {
	a := "Ana buys 3 apples at 2 dollars each. How much does she pay?"
	b := "Ana buys 5 apples at 2 dollars each, and 2 of them are smaller. How much does she pay?"
	d := wordDiff(a, b)
	var ra, rb strings.Builder
	for _, run := range d {
		switch run[0] {
		case '=':
			ra.WriteString(run[1:])
			rb.WriteString(run[1:])
		case '-':
			ra.WriteString(run[1:])
		case '+':
			rb.WriteString(run[1:])
		default:
			t.Fatalf("run %q has no operation", run)
		}
	}
	if ra.String() != a || rb.String() != b {
		t.Fatalf("runs do not rebuild the texts:\n%q\n%q", ra.String(), rb.String())
	}
	if !slices.Contains(d, "-3 ") || !slices.Contains(d, "+5 ") {
		t.Errorf("the re-drawn number is not marked: %q", d)
	}
	if !slices.ContainsFunc(d, func(r string) bool { return strings.HasPrefix(r, "+") && strings.Contains(r, "are smaller.") }) {
		t.Errorf("the added clause is not marked: %q", d)
	}
	if wordDiff(a, a) != nil {
		t.Error("equal texts have a diff")
	}
}
