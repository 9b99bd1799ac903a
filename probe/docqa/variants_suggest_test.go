package docqa

import (
	"strings"
	"testing"
)

// TestParseVariantsDidYouMean: an unknown document variant near a known
// one is told the known one.
func TestParseVariantsDidYouMean(t *testing.T) {
	_, err := ParseVariants("base,shufle")
	if err == nil || !strings.Contains(err.Error(), "did you mean shuffle?") {
		t.Errorf("shufle: %v", err)
	}
	_, err = ParseVariants("zzzzzz")
	if err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("zzzzzz: %v", err)
	}
}
