package docqa

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/fragility/fragility/probe/answer"
)

// Scoring rules (Score.ScoreRule), recorded per trial in results.csv.
const (
	// ScoreNumber: every accepted answer is a number; the response's answer
	// is extracted and compared exactly as for arithmetic items
	// (answer.Extract, answer.AnswerMatches).
	ScoreNumber = "number"
	// ScoreExactMatch: the answer text is compared with each accepted answer
	// after NormalizeAnswer; token F1 is the secondary measure.
	ScoreExactMatch = "exact_match"
)

// Extraction rules for text answers (Score.Rule). Numeric items use the
// rules of package answer.
const (
	// RuleAnswerLine: the rest of the last line that holds an "Answer:"
	// label (any case, optional markdown bold), as the prompt asks.
	RuleAnswerLine = "answer_line"
	// RuleFirstLine: no label; the first non-empty line of the response.
	RuleFirstLine = "first_line"
)

// NotStated is the phrase the docqa prompt asks for when the passages do not
// contain the answer.
const NotStated = "not stated"

// Score is how one response to a document item was scored.
type Score struct {
	ScoreRule string // ScoreNumber or ScoreExactMatch
	// Rule is the extraction rule that fired: RuleAnswerLine or
	// RuleFirstLine for text, a rule of package answer for numbers,
	// answer.RuleNone when nothing was found.
	Rule string
	// Value is the extracted answer: the normalised number (ScoreNumber),
	// or the answer text as written, without surrounding markup
	// (ScoreExactMatch); "" when Rule is answer.RuleNone.
	Value string
	// Start and End are the byte span of Value in the response, -1 when
	// none.
	Start, End int
	// Correct: the answer equals an accepted answer (numbers exactly, text
	// after NormalizeAnswer). Never true when NotStated.
	Correct bool
	// F1 is the best token F1 against the accepted answers (TokenF1), in
	// [0, 1]; for ScoreNumber it is 1 when Correct and 0 otherwise.
	F1 float64
	// NotStated: the model answered that the passages do not state the
	// answer. It is scored as wrong and counted separately.
	NotStated bool
	// Anywhere: an accepted answer occurs anywhere in the response (as a
	// whole number, or as a run of whole normalised words), whatever was
	// extracted.
	Anywhere bool
}

var reAnswerLabel = regexp.MustCompile(`(?i)(?:^|[^a-z])answer\s*(?:\*\*|__)?\s*:\s*(?:\*\*|__)?`)

// answerText finds the answer text of a response: the rest of the line of
// the last "Answer:" label that is followed by text, else the first
// non-empty line. It returns the trimmed text, its byte span and the rule.
func answerText(resp string) (string, int, int, string) {
	locs := reAnswerLabel.FindAllStringIndex(resp, -1)
	for i := len(locs) - 1; i >= 0; i-- {
		from := locs[i][1]
		to := strings.IndexByte(resp[from:], '\n')
		if to < 0 {
			to = len(resp)
		} else {
			to += from
		}
		if s, e := trimMarkup(resp, from, to); s < e {
			return resp[s:e], s, e, RuleAnswerLine
		}
	}
	off := 0
	for _, line := range strings.SplitAfter(resp, "\n") {
		if s, e := trimMarkup(resp, off, off+len(strings.TrimRight(line, "\n"))); s < e {
			return resp[s:e], s, e, RuleFirstLine
		}
		off += len(line)
	}
	return "", -1, -1, answer.RuleNone
}

// trimMarkup narrows resp[s:e] past white space, markdown emphasis, quotes
// and a final period.
func trimMarkup(resp string, s, e int) (int, int) {
	const cut = " \t\r*_`\"'“”‘’"
	for s < e && strings.ContainsRune(cut, rune(resp[s])) {
		s++
	}
	for e > s {
		c := resp[e-1]
		if strings.ContainsRune(cut, rune(c)) || c == '.' {
			e--
			continue
		}
		break
	}
	return s, e
}

// ScoreResponse scores a response against the accepted answers (Item.Accepted:
// canonical first). When every accepted answer is a number the rule is
// ScoreNumber: the number of the answer text (the "Answer:" line, else the
// first non-empty line; Rule says which) is compared, or when that text
// holds none, the number answer.Extract finds in the whole response (Rule
// is then its rule). Else the rule is ScoreExactMatch on the answer text. An answer text saying "not stated"
// sets NotStated and is wrong.
func ScoreResponse(resp string, accepted []string) Score {
	text, s, e, rule := answerText(resp)
	var sc Score
	if numericAnswers(accepted) {
		sc.ScoreRule = ScoreNumber
		for _, a := range accepted {
			sc.Anywhere = sc.Anywhere || answer.ExpectedAnywhere(resp, a)
		}
		if rule != answer.RuleNone && isNotStated(text) {
			sc.Rule, sc.Value, sc.Start, sc.End, sc.NotStated = rule, NotStated, s, e, true
			return sc
		}
		// The number of the answer text first (its docqa rule is kept),
		// else answer.Extract over the whole response.
		ex := answer.Extract(text)
		if ex.Rule != answer.RuleNone {
			ex.Rule, ex.Start, ex.End = rule, ex.Start+s, ex.End+s
		} else {
			ex = answer.Extract(resp)
		}
		sc.Rule, sc.Value, sc.Start, sc.End = ex.Rule, ex.Value, ex.Start, ex.End
		if ex.Rule != answer.RuleNone {
			for _, a := range accepted {
				sc.Correct = sc.Correct || answer.AnswerMatches(ex.Value, a)
			}
		}
		if sc.Correct {
			sc.F1 = 1
		}
		return sc
	}
	sc.ScoreRule, sc.Rule, sc.Value, sc.Start, sc.End = ScoreExactMatch, rule, text, s, e
	nr := " " + normalizeText(resp) + " "
	for _, a := range accepted {
		if na := normalizeText(a); na != "" && strings.Contains(nr, " "+na+" ") {
			sc.Anywhere = true
		}
	}
	if rule == answer.RuleNone {
		return sc
	}
	if isNotStated(text) {
		sc.NotStated = true
		return sc
	}
	got := normalizeText(text)
	for _, a := range accepted {
		if got != "" && got == normalizeText(a) {
			sc.Correct = true
		}
		sc.F1 = max(sc.F1, TokenF1(text, a))
	}
	return sc
}

// isNotStated reports whether an answer text says the passages do not state
// the answer: its normalised words contain "not stated".
func isNotStated(text string) bool {
	return strings.Contains(" "+normalizeText(text)+" ", " "+NotStated+" ")
}

// NormalizeAnswer is the normalisation of exact match: lower case, every
// punctuation or symbol character replaced by a space, the articles "a",
// "an" and "the" dropped, white space collapsed to single spaces. It
// follows the normalisation of the SQuAD v1.1 evaluation (Rajpurkar et al.
// 2016, "SQuAD: 100,000+ Questions for Machine Comprehension of Text",
// arXiv:1606.05250), except that punctuation separates words instead of
// being deleted, so "well-known" and "well known" match.
func NormalizeAnswer(s string) string { return normalizeText(s) }

func normalizeText(s string) string {
	return strings.Join(tokens(s), " ")
}

// tokens returns the words of s after NormalizeAnswer's rules.
func tokens(s string) []string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsPunct(r) || unicode.IsSymbol(r) {
			return ' '
		}
		return unicode.ToLower(r)
	}, s)
	var out []string
	for _, w := range strings.Fields(s) {
		if w == "a" || w == "an" || w == "the" {
			continue
		}
		out = append(out, w)
	}
	return out
}

// TokenF1 is the token-level F1 between a predicted and a gold answer, over
// the words of NormalizeAnswer: with c the size of the multiset
// intersection of the two word lists, precision p = c/|pred|, recall
// r = c/|gold| and F1 = 2pr/(p + r); 0 when c = 0, and 1 when both lists
// are empty (the SQuAD v1.1 evaluation's definition, Rajpurkar et al. 2016).
func TokenF1(pred, gold string) float64 {
	p, g := tokens(pred), tokens(gold)
	if len(p) == 0 && len(g) == 0 {
		return 1
	}
	count := map[string]int{}
	for _, w := range g {
		count[w]++
	}
	common := 0
	for _, w := range p {
		if count[w] > 0 {
			count[w]--
			common++
		}
	}
	if common == 0 {
		return 0
	}
	prec, rec := float64(common)/float64(len(p)), float64(common)/float64(len(g))
	return 2 * prec * rec / (prec + rec)
}
