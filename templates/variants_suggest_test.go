package templates

import (
	"strings"
	"testing"
)

// TestParseVariantsDidYouMean: an unknown variant near a known one is told
// the known one; one near none is not.
func TestParseVariantsDidYouMean(t *testing.T) {
	_, err := ParseVariants("base,noop-seming")
	if err == nil || !strings.Contains(err.Error(), `unknown variant "noop-seming" (did you mean noop-seeming? known: base,`) {
		t.Errorf("noop-seming: %v", err)
	}
	_, err = ParseVariants("symbolc")
	if err == nil || !strings.Contains(err.Error(), "did you mean symbolic?") {
		t.Errorf("symbolc: %v", err)
	}
	_, err = ParseVariants("zzzzzz")
	if err == nil || strings.Contains(err.Error(), "did you mean") || !strings.Contains(err.Error(), "known: base,") {
		t.Errorf("zzzzzz: %v", err)
	}
}
