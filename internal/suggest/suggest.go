// Package suggest finds the name a user most likely meant when a name was
// not known ("did you mean --instances?"): a flag, a command, a model or a
// variant. It is a leaf any package may import.
package suggest

import "strings"

// MaxDistance is the largest edit distance at which a name is suggested.
const MaxDistance = 2

// minPrefix is the fewest bytes a shared prefix must have to suggest a
// name by it.
const minPrefix = 3

// Closest returns the name of names that want most likely meant, "" when
// none is close: the nearest by edit distance (Distance, case-insensitive)
// when that is at most MaxDistance and less than half of want's length
// (a one-letter typo in a two-letter word is not a suggestion); otherwise
// the nearest name that want is a prefix of or that is a prefix of want,
// the shorter of the two at least 3 bytes long ("--temp" for
// "--temperature"). Ties go to the earlier name of names. A name equal to
// want is returned as it is.
func Closest(want string, names []string) string {
	w := strings.ToLower(want)
	best, bestD := "", -1
	prefix, prefixD := "", -1
	for _, n := range names {
		l := strings.ToLower(n)
		d := Distance(w, l)
		if d <= MaxDistance && 2*d < len(w) && (bestD < 0 || d < bestD) {
			best, bestD = n, d
		}
		if short := min(len(w), len(l)); short >= minPrefix && (strings.HasPrefix(l, w) || strings.HasPrefix(w, l)) && (prefixD < 0 || d < prefixD) {
			prefix, prefixD = n, d
		}
	}
	if best != "" {
		return best
	}
	return prefix
}

// DidYouMean is "did you mean NAME?" for Closest(want, names), NAME
// written after prefix ("--" for a flag), "" when no name is close.
func DidYouMean(want, prefix string, names []string) string {
	if c := Closest(want, names); c != "" {
		return "did you mean " + prefix + c + "?"
	}
	return ""
}

// Distance is the edit distance between a and b, in bytes, counting a
// swap of two adjacent bytes as one edit ("rnu" is one from "run"): the
// optimal string alignment distance, Levenshtein's insertions, deletions
// and substitutions plus Damerau's adjacent transpositions, no substring
// edited twice (Damerau 1964; Boytsov 2011, ACM JEA 16, §2.2).
func Distance(a, b string) int {
	// d[i][j] is the distance between a[:i] and b[:j].
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
