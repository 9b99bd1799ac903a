package main

import (
	"strings"
	"testing"
)

// TestDidYouMean: an unknown flag, command, variant or model name one
// typo from a known one is told the known one, in the one error line.
func TestDidYouMean(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "--instnces", "3"}, exitUsage, "flag provided but not defined: --instnces; did you mean --instances? (see: fragility run --help)"},
		{[]string{"report", "--jsn", "x"}, exitUsage, "did you mean --json?"},
		{[]string{"run", "--zzzz"}, exitUsage, "flag provided but not defined: --zzzz (see: fragility run --help)"},
		{[]string{"reprot", "x"}, exitUsage, `unknown command "reprot" (did you mean report?; see: fragility help)`},
		{[]string{"rnu"}, exitUsage, `unknown command "rnu" (did you mean run?; see: fragility help)`},
		{[]string{"plan", "--variants", "base,noop-seming"}, exitUsage, `unknown variant "noop-seming" (did you mean noop-seeming? known: `},
		{[]string{"plan", "--model", "gemma-3-270m-q4_k"}, exitFailure, "did you mean gemma-3-270m-q4_k_m? known: "},
	} {
		r := fragility(t, []string{"OLLAMA_MODELS=" + t.TempDir()}, c.args...)
		line := strings.TrimSuffix(r.stderr, "\n")
		if r.code != c.code || strings.Contains(line, "\n") || !strings.Contains(line, c.want) {
			t.Errorf("%v: exit %d (want %d), stderr:\n%s\nwant one line containing %q", c.args, r.code, c.code, r.stderr, c.want)
		}
	}
}
