package report

import (
	"strings"
	"unicode"
)

// maxDiffWords bounds the words of either text wordDiff aligns (the
// alignment costs their product); longer texts are shown as replaced whole.
const maxDiffWords = 1500

// wordDiff returns the word-level difference from a to b as runs of words,
// each prefixed with its operation: "=" kept, "-" only in a, "+" only in b.
// Words keep the whitespace that follows them, so the kept and added runs
// join to b and the kept and removed runs join to a. Words are aligned by a
// longest common subsequence (Hunt & McIlroy 1976 compute the same
// alignment faster; this is the plain dynamic programme). nil when a = b.
func wordDiff(a, b string) []string {
	if a == b {
		return nil
	}
	wa, wb := splitWords(a), splitWords(b)
	if len(wa) > maxDiffWords || len(wb) > maxDiffWords {
		return []string{"-" + a, "+" + b}
	}
	// lcs[i][j]: length of the longest common subsequence of wa[i:], wb[j:].
	n, m := len(wa), len(wb)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if sameWord(wa[i], wb[j]) {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	emit := func(op byte, w string) {
		if k := len(out) - 1; k >= 0 && out[k][0] == op {
			out[k] += w
			return
		}
		out = append(out, string(op)+w)
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && sameWord(wa[i], wb[j]):
			emit('=', wb[j])
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			emit('+', wb[j])
			j++
		default:
			emit('-', wa[i])
			i++
		}
	}
	return out
}

// sameWord compares two words without the whitespace after them.
func sameWord(x, y string) bool {
	return strings.TrimRightFunc(x, unicode.IsSpace) == strings.TrimRightFunc(y, unicode.IsSpace)
}

// splitWords splits s into words, each with the whitespace that follows it;
// leading whitespace is a word of its own.
func splitWords(s string) []string {
	var out []string
	start := 0
	inSpace := false
	for i, r := range s {
		sp := unicode.IsSpace(r)
		if !sp && inSpace && i > start {
			out = append(out, s[start:i])
			start = i
		}
		inSpace = sp
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
