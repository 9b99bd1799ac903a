package templates

import (
	"strings"
)

// skeletonKeep are the words a question skeleton keeps: function words and
// the words that say how quantities relate (more, each, per, rest, times).
// Every other word is content and collapses to "w".
var skeletonKeep = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the of and or but to in on at for with by from into than as if then
		after before while when during until since how many much what which who is are was were be has have had
		do does did will would can could it he she they them his her their its this that these those there
		more less fewer most least each per every all both some any other another rest remaining left total
		together altogether same first second third last times twice half double triple each only still also
		not no`) {
		skeletonKeep[w] = true
	}
}

// Skeleton returns the question's skeleton: the structure that is left when
// the surface is abstracted away. The normalisation, in order:
//
//  1. every placeholder becomes N (a number) or X (a name or entity), and
//     every literal number (digits or a number word) becomes N;
//  2. words are lower-cased; function words and relation words (of, than,
//     more, each, per, rest, times, how, many, ...: skeletonKeep) stay;
//  3. every other word becomes w, and a run of w is one w;
//  4. sentence punctuation (. ! ? ; :) stays, commas, symbols and other
//     punctuation go.
//
// Two templates with the same skeleton ask the same problem with other
// nouns and verbs; the built-in library must not have two (a test checks
// it). A GSM8K row has the skeleton of its fixed text.
func (t *Template) Skeleton() string {
	if t.question == nil {
		return ""
	}
	var out []string
	push := func(s string) {
		if s == "w" && len(out) > 0 && out[len(out)-1] == "w" {
			return
		}
		out = append(out, s)
	}
	for _, p := range t.question.parts {
		if p.ph != "" {
			if t.isNumeric(p.ph) {
				push("N")
			} else {
				push("X")
			}
			continue
		}
		for _, m := range tokenRE.FindAllString(p.lit, -1) {
			lw := strings.ToLower(m)
			switch {
			case strings.ContainsAny(m[:1], ".!?;:"):
				push(m[:1])
			case m[0] >= '0' && m[0] <= '9', numberWords[lw]:
				push("N")
			case strings.ContainsAny(m, "$€£¥₹%"):
			case skeletonKeep[lw]:
				push(lw)
			default:
				push("w")
			}
		}
	}
	return strings.Join(out, " ")
}

// skeletonSimilarity is 1 − (token edit distance ÷ length of the longer
// skeleton): 1 for equal skeletons, near 0 for unrelated ones.
func skeletonSimilarity(a, b string) float64 {
	x, y := strings.Fields(a), strings.Fields(b)
	if len(x) == 0 && len(y) == 0 {
		return 1
	}
	prev := make([]int, len(y)+1)
	cur := make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			c := prev[j-1]
			if x[i-1] != y[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return 1 - float64(prev[len(y)])/float64(max(len(x), len(y)))
}
