package answer

import (
	"math/big"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ExtractionRulesVersion identifies the extraction rules below (their order,
// patterns and normalisation). It is recorded in the manifest; change it
// whenever a change to this file can change an extracted value or the rule
// that fired for some response.
//
// extract/2 adds two steps before the rules, in this order:
//  1. the reasoning block: when the response holds a closed reasoning block
//     (ReasoningSpan) and a number follows it, only the text after the block
//     is read, because a model's thinking tries out numbers it later drops;
//     when nothing with a number follows (the budget ran out inside the
//     block), the whole response is read as before;
//  2. the run-on cut: in what is read, a line that starts a new made-up
//     problem ("Question:", "Q:", "Problem:"; RunOnCut) after a number ends the
//     response, because the made-up problem's own "Final answer:" would
//     otherwise win under the last-occurrence policy of every rule.
//
// The block comes first so that a "Q:" the model writes inside its thinking
// does not cut away the answer after the block.
//
// extract/3 adds one rule for a response the output budget cut
// (Truncated): without a final-answer marker, the last number of its
// unfinished reasoning is not taken as its answer; it has none.
//
// extract/4 (this version) reads an answer line written before its
// equation ("Final answer: 5 = 2 + 3", "Final answer: $18 = $6 * 3") as
// the number right after the marker (5, 18), where extract/3 took the first
// number after the last "=" (2, 6); a line with the equation first
// ("Final answer: 2 + 3 = 5") still gives the number after the "=". And a
// response that filled the context (not the output budget) is read by
// Truncated too, as one the budget cut: the caller applies it to both
// stop reasons from extract/4 on (probe's extraction; under extract/3 only
// to the budget's).
const ExtractionRulesVersion = "extract/4"

// Names of the extraction rules, recorded in Trial.Rule. They are stable:
// results files from different versions of the tool can be compared by them.
// Extract tries them in this order, most explicit first.
const (
	// RuleFinalAnswer: a "Final answer:" label (any case, optional markdown
	// bold, ":" / "is" / "=" or nothing after it), the last such label in
	// the response that is followed by a number in the rest of its sentence,
	// or on the next non-empty line when nothing else follows the label.
	RuleFinalAnswer = "final_answer"
	// RuleHashes: the GSM8K convention "#### N"; the number must follow the
	// hashes directly (markup and currency signs aside), so a markdown
	// heading "#### Step 1" does not fire.
	RuleHashes = "hashes"
	// RuleAnswerIs: "The answer is N", "answer is: N" or "Answer: N", the
	// number found in the rest of that sentence.
	RuleAnswerIs = "answer_is"
	// RuleBoxed: the LaTeX \boxed{N}; the last box holding a number.
	RuleBoxed = "boxed"
	// RuleLastNumber: the last number anywhere in the response.
	RuleLastNumber = "last_number"
	// RuleNone: no number in the response.
	RuleNone = "none"
)

// Truncated applies extract/3's rule for a response that the output budget
// ended, and from extract/4 on for one that the context ended too (a run
// records them with the stop reasons max_tokens and context_full): an
// answer found by RuleLastNumber, the last number of reasoning that never
// reached its final line, is no answer (RuleNone); an answer behind a
// marker (final answer, "####", "the answer is", \boxed) is kept.
func Truncated(ex Extraction) Extraction {
	if ex.Rule == RuleLastNumber {
		return Extraction{Rule: RuleNone, Start: -1, End: -1, Cut: ex.Cut, CutMarker: ex.CutMarker, ThinkEnd: ex.ThinkEnd}
	}
	return ex
}

// Extraction is the answer Extract found in a response.
//
// Value is the normalised number: an integer ("45", "-3"), an exact decimal
// without trailing zeros ("12.5", "0.75"), or a reduced fraction ("1/3") when
// the value has no finite decimal form; "" when Rule is RuleNone.
// Start and End are byte offsets into the response such that
// response[Start:End] is the number as written ("1,234.50", "-$5", "3/4",
// "\frac{3}{4}", "25%"); both are -1 when Rule is RuleNone. Currency signs
// before an unsigned number and units after it lie outside the span.
type Extraction struct {
	Value   string `json:"value"`
	Rule    string `json:"rule"`
	Start   int    `json:"start"`
	End     int    `json:"end"`
	Percent bool   `json:"percent"` // the number carried a percent sign (Value is in percent: "25%" gives "25")
	// Cut is the byte offset at which a run-on into a new made-up problem
	// was cut off before the rules ran (RunOnCut), -1 when none was;
	// CutMarker is the marker found there ("Q:", "Question:", "Problem:").
	Cut       int    `json:"cut"`
	CutMarker string `json:"cut_marker,omitempty"`
	// ThinkEnd is the byte offset just after the reasoning block that was
	// skipped (the answer was read after it), -1 when none was skipped.
	ThinkEnd int `json:"think_end"`
}

// numTok is one number found in a text: its byte span and exact value.
type numTok struct {
	start, end int
	val        *big.Rat
	percent    bool
}

var (
	reFinalAnswer = regexp.MustCompile(`(?i)final\s+answer\s*(?:\*\*|__)?\s*(?::|\bis\b|=)?`)
	reHashes      = regexp.MustCompile(`####`)
	reAnswerIs    = regexp.MustCompile(`(?i)\banswer\s*(?:\*\*|__)?\s*(?:\bis\b|:)`)
	reBoxed       = regexp.MustCompile(`\\boxed\s*\{`)
)

// Extract finds the model's final answer in a response. The rules are tried
// most explicit first (RuleFinalAnswer, RuleHashes, RuleAnswerIs, RuleBoxed,
// RuleLastNumber); the first that finds a number wins, and when a rule's
// marker occurs several times its last occurrence holding a number is used
// (a model that corrects itself corrects towards the end).
//
// Numbers are recognised with thousands separators ("1,234", LaTeX "1{,}234"),
// currency signs ("$", "\$", "£", "€"), a sign ("-", "−"; a minus that
// follows a digit or ")" is read as subtraction, not a sign), decimals ("45.0"
// is 45, ".5" is 0.5), simple and mixed fractions ("3/4", "1 1/2",
// "\frac{3}{4}") and percent signs ("25%" and "25\%" are 25, with
// Extraction.Percent set). A trailing sentence period and units after the
// number are not part of it. Digits glued to a preceding letter ("Q4",
// "GSM8K") are not numbers. Number words ("eighteen") and decimal commas
// ("3,5") are not recognised. Extract never panics.
//
// Before the rules, a closed reasoning block followed by a number is skipped
// and a run-on into a new made-up problem is cut off (see
// ExtractionRulesVersion for the order and why); Start and End are still
// offsets into the whole response.
func Extract(response string) Extraction {
	lo, thinkEnd := 0, -1
	if _, end, closed := ReasoningSpan(response); closed && len(scanNumbers(response, end, len(response))) > 0 {
		lo, thinkEnd = end, end
	}
	hi, marker := len(response), ""
	cut := -1
	if k, m := RunOnCut(response[lo:]); k >= 0 {
		hi, marker, cut = lo+k, m, lo+k
	}
	e := extractRules(response[lo:hi])
	if e.Rule != RuleNone {
		e.Start += lo
		e.End += lo
	}
	e.Cut, e.CutMarker, e.ThinkEnd = cut, marker, thinkEnd
	return e
}

// reRunOn matches a line that opens a new problem: "Question:", "Q:",
// "Problem:" (optionally numbered, bold or a markdown heading).
var reRunOn = regexp.MustCompile(`\n[ \t]*(?:#+[ \t]*)?(?:\*\*|__)?((?:Question|Problem|Q)(?:[ \t]*\d+)?)[ \t]*(?:\*\*|__)?[ \t]*:`)

// RunOnCut returns the byte offset of the first line of s that starts a new
// made-up problem ("Question:", "Q:", "Problem:", optionally numbered, in
// bold or as a heading) after at least one number, and the marker found
// ("Q:"); -1 and "" when there is none. A marker before any number is a
// restatement of the problem, not a run-on, and is not cut.
func RunOnCut(s string) (int, string) {
	for _, loc := range reRunOn.FindAllStringSubmatchIndex(s, -1) {
		if len(scanNumbers(s, 0, loc[0])) == 0 {
			continue
		}
		return loc[0], s[loc[2]:loc[3]] + ":"
	}
	return -1, ""
}

// reasoningMarkers are the delimiters of reasoning blocks that current
// reasoning models' chat templates use: <think> (Qwen3, QwQ, DeepSeek-R1),
// <thinking>, <reasoning>, <seed:think> (Seed-OSS), the "thought" markers
// of OpenThoughts-style models, and gpt-oss's analysis channel, which ends
// where the final channel starts.
var reasoningMarkers = []struct{ open, close string }{
	{"<think>", "</think>"},
	{"<thinking>", "</thinking>"},
	{"<reasoning>", "</reasoning>"},
	{"<seed:think>", "</seed:think>"},
	{"<|begin_of_thought|>", "<|end_of_thought|>"},
	{"<|channel|>analysis<|message|>", "<|channel|>final<|message|>"},
}

// ReasoningSpan returns the byte span [start, end) of the reasoning block in
// a response and whether the block is closed. A closed block runs from its
// opening delimiter (or from 0 when the chat template put the opening one in
// the prompt, as DeepSeek-R1's does) to the end of the last closing
// delimiter; an open one (the budget ran out while thinking) from its
// opening delimiter to the end. It returns 0, 0, false when the response
// holds no reasoning delimiter.
func ReasoningSpan(s string) (start, end int, closed bool) {
	for _, m := range reasoningMarkers {
		if c := strings.LastIndex(s, m.close); c >= 0 {
			start = 0
			if o := strings.Index(s, m.open); o >= 0 && o < c {
				start = o
			}
			return start, c + len(m.close), true
		}
		if o := strings.Index(s, m.open); o >= 0 {
			return o, len(s), false
		}
	}
	return 0, 0, false
}

// extractRules runs the rules on a response (or the part of it Extract reads).
func extractRules(response string) Extraction {
	if e, ok := extractFinalAnswer(response); ok {
		return e
	}
	if e, ok := extractHashes(response); ok {
		return e
	}
	if e, ok := extractAnswerIs(response); ok {
		return e
	}
	if e, ok := extractBoxed(response); ok {
		return e
	}
	toks := scanNumbers(response, 0, len(response))
	if len(toks) > 0 {
		return toks[len(toks)-1].extraction(RuleLastNumber)
	}
	return Extraction{Rule: RuleNone, Start: -1, End: -1, Cut: -1, ThinkEnd: -1}
}

// ExpectedAnywhere reports whether the expected value appears as a whole
// number anywhere in the response, after the same normalisation as Extract:
// "1,234" matches 1234 and "45.0" matches 45, but "145" or "45.5" do not
// match 45 (a number is never matched inside a larger one). It is false when
// expected is not a number.
func ExpectedAnywhere(response, expected string) bool {
	want, ok := parseNumber(expected)
	if !ok {
		return false
	}
	for _, t := range scanNumbers(response, 0, len(response)) {
		if t.val.Cmp(want) == 0 {
			return true
		}
	}
	return false
}

// AnswerMatches reports whether an extracted answer equals the expected one
// exactly, compared as rational numbers (math/big.Rat), so "45", "45.0",
// "45.00" and "90/2" are all equal and no floating-point rounding enters.
// Each side must be one number, optionally with thousands separators, a
// currency sign or a percent sign and surrounding spaces; it is false when
// either side is empty or not a number.
func AnswerMatches(extracted, expected string) bool {
	a, ok := parseNumber(extracted)
	if !ok {
		return false
	}
	b, ok := parseNumber(expected)
	if !ok {
		return false
	}
	return a.Cmp(b) == 0
}

// NormalizeNumber returns the canonical form of a number written as
// AnswerMatches accepts it (see Extraction.Value for the form), and false when
// s is not a single number.
func NormalizeNumber(s string) (string, bool) {
	v, ok := parseNumber(s)
	if !ok {
		return "", false
	}
	return canonical(v), true
}

func (t numTok) extraction(rule string) Extraction {
	return Extraction{Value: canonical(t.val), Rule: rule, Start: t.start, End: t.end, Percent: t.percent, Cut: -1, ThinkEnd: -1}
}

// parseNumber parses a string holding exactly one number (with optional
// surrounding space, a leading currency sign and a trailing percent sign).
func parseNumber(s string) (*big.Rat, bool) {
	s = strings.TrimSpace(s)
	for _, c := range []string{`\$`, "$", "£", "€"} {
		if strings.HasPrefix(s, c) {
			s = strings.TrimSpace(s[len(c):])
			break
		}
	}
	if s == "" {
		return nil, false
	}
	t, ok := parseNumberAt(s, 0, len(s))
	if !ok || t.end != len(s) {
		return nil, false
	}
	return t.val, true
}

// canonical writes v as an integer, a finite decimal, or a reduced fraction.
func canonical(v *big.Rat) string {
	if v.IsInt() {
		return v.Num().String()
	}
	// v = a/b in lowest terms has a finite decimal form iff b = 2^i 5^j;
	// it then needs max(i, j) digits after the point.
	d := new(big.Int).Set(v.Denom())
	two, five := big.NewInt(2), big.NewInt(5)
	var m big.Int
	i, j := 0, 0
	for {
		q, r := new(big.Int).QuoRem(d, two, &m)
		if r.Sign() != 0 {
			break
		}
		d, i = q, i+1
	}
	for {
		q, r := new(big.Int).QuoRem(d, five, &m)
		if r.Sign() != 0 {
			break
		}
		d, j = q, j+1
	}
	if d.Cmp(big.NewInt(1)) != 0 {
		return v.String() // "a/b"
	}
	return v.FloatString(max(i, j))
}

// extractFinalAnswer implements RuleFinalAnswer.
func extractFinalAnswer(s string) (Extraction, bool) {
	locs := reFinalAnswer.FindAllStringIndex(s, -1)
	for i := len(locs) - 1; i >= 0; i-- {
		from := locs[i][1]
		to := sentenceEnd(s, from)
		if t, ok := answerIn(s, from, to, true); ok {
			return t.extraction(RuleFinalAnswer), true
		}
		if to = lineEnd(s, from); onlyMarkup(s[from:to]) {
			// "Final Answer:\n\n**18**": the value is on the next non-empty line.
			ns, ne := nextNonEmptyLine(s, to)
			if t, ok := answerIn(s, ns, ne, true); ok {
				return t.extraction(RuleFinalAnswer), true
			}
		}
	}
	return Extraction{}, false
}

// extractHashes implements RuleHashes.
func extractHashes(s string) (Extraction, bool) {
	locs := reHashes.FindAllStringIndex(s, -1)
	for i := len(locs) - 1; i >= 0; i-- {
		from := locs[i][1]
		if from < len(s) && s[from] == '#' {
			continue // five or more hashes: part of a longer run
		}
		to := lineEnd(s, from)
		p := skipMarkup(s, from, to)
		if t, ok := parseNumberAt(s, p, to); ok && boundaryBefore(s, t.start) {
			return t.extraction(RuleHashes), true
		}
	}
	return Extraction{}, false
}

// extractAnswerIs implements RuleAnswerIs.
func extractAnswerIs(s string) (Extraction, bool) {
	locs := reAnswerIs.FindAllStringIndex(s, -1)
	for i := len(locs) - 1; i >= 0; i-- {
		from := locs[i][1]
		to := sentenceEnd(s, from)
		if t, ok := answerIn(s, from, to, true); ok {
			return t.extraction(RuleAnswerIs), true
		}
	}
	return Extraction{}, false
}

// extractBoxed implements RuleBoxed.
func extractBoxed(s string) (Extraction, bool) {
	locs := reBoxed.FindAllStringIndex(s, -1)
	for i := len(locs) - 1; i >= 0; i-- {
		from := locs[i][1]
		to := closingBrace(s, from)
		if t, ok := answerIn(s, from, to, false); ok {
			return t.extraction(RuleBoxed), true
		}
	}
	return Extraction{}, false
}

// maxRegion bounds, in bytes, how far after a marker (a label, "####",
// "\boxed{") an answer is looked for, so that no response, however long or
// repetitive, makes extraction slower than linear times this constant.
const maxRegion = 512

// answerIn picks the answer inside s[from:to]: the content of a \boxed{} if
// there is one (and boxed is true), else the number at its start when "="
// follows it directly ("5 = 2 + 3", extract/4), else the text after the
// last "=" if that holds a number ("3 + 15 = 18 apples"), else the first
// number.
func answerIn(s string, from, to int, boxed bool) (numTok, bool) {
	to = min(to, from+maxRegion)
	if from >= to {
		return numTok{}, false
	}
	if loc := reBoxed.FindStringIndex(s[from:to]); boxed && loc != nil {
		bf := from + loc[1]
		bt := min(closingBrace(s, bf), to)
		if t, ok := answerIn(s, bf, bt, false); ok {
			return t, true
		}
	}
	// "Final answer: 5 = 2 + 3": the number right after the marker (markup
	// and currency signs aside), directly followed by "=", is the answer,
	// and the equation after it is its working (extract/4).
	if p := skipMarkup(s, from, to); boundaryBefore(s, p) {
		if t, ok := parseNumberAt(s, p, to); ok && equalsAfter(s, t.end, to) {
			return t, true
		}
	}
	if eq := strings.LastIndexByte(s[from:to], '='); eq >= 0 {
		if toks := scanNumbers(s, from+eq+1, to); len(toks) > 0 {
			return toks[0], true
		}
	}
	toks := scanNumbers(s, from, to)
	if len(toks) == 0 {
		return numTok{}, false
	}
	return toks[0], true
}

// equalsAfter reports whether s[i:to] starts with "=" (not "=="), after
// spaces and closing markup ("**", "__", a closing "$").
func equalsAfter(s string, i, to int) bool {
	for i < to && strings.IndexByte(" \t*_$", s[i]) >= 0 {
		i++
	}
	return i < to && s[i] == '=' && (i+1 == to || s[i+1] != '=')
}

// lineEnd returns the index of the newline ending the line that holds i, or
// len(s), looking no further than maxRegion bytes.
func lineEnd(s string, i int) int {
	lim := min(len(s), i+maxRegion)
	if j := strings.IndexByte(s[i:lim], '\n'); j >= 0 {
		return i + j
	}
	return lim
}

// sentenceEnd returns the end of the sentence starting at i: the first
// newline, or the first '.', '!' or '?' followed by a space or the end.
func sentenceEnd(s string, i int) int {
	end := lineEnd(s, i)
	for j := i; j < end; j++ {
		switch s[j] {
		case '.', '!', '?':
			if j+1 == len(s) || s[j+1] == ' ' || s[j+1] == '\t' || s[j+1] == '\n' || s[j+1] == '\r' {
				return j
			}
		}
	}
	return end
}

// nextNonEmptyLine returns the span of the first of the next three lines
// after position i (a newline or len(s)) holding anything but markup.
func nextNonEmptyLine(s string, i int) (int, int) {
	for n := 0; n < 3 && i < len(s); n++ {
		start := i + 1
		end := lineEnd(s, start)
		if !onlyMarkup(s[start:end]) {
			return start, end
		}
		i = end
	}
	return len(s), len(s)
}

// onlyMarkup reports whether t holds nothing but spaces and markdown/LaTeX
// punctuation.
func onlyMarkup(t string) bool {
	for _, r := range t {
		if !unicode.IsSpace(r) && !strings.ContainsRune("*_:#$\\()[]`>-", r) {
			return false
		}
	}
	return true
}

// skipMarkup skips spaces, emphasis, colons and currency signs from i.
func skipMarkup(s string, i, to int) int {
	for i < to {
		switch {
		case s[i] == ' ' || s[i] == '\t' || s[i] == '*' || s[i] == '_' || s[i] == ':' || s[i] == '$':
			i++
		case strings.HasPrefix(s[i:to], `\$`):
			i += 2
		case strings.HasPrefix(s[i:to], "£"):
			i += len("£")
		case strings.HasPrefix(s[i:to], "€"):
			i += len("€")
		default:
			return i
		}
	}
	return i
}

// closingBrace returns the index of the '}' matching an opening brace just
// before i, or the end of the region searched (maxRegion bytes) when none does.
func closingBrace(s string, i int) int {
	depth := 1
	lim := min(len(s), i+maxRegion)
	for j := i; j < lim; j++ {
		switch s[j] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return lim
}

// scanNumbers returns the numbers in s[from:to], left to right, without overlaps.
func scanNumbers(s string, from, to int) []numTok {
	var toks []numTok
	for i := from; i < to; {
		if boundaryBefore(s, i) {
			if t, ok := parseNumberAt(s, i, to); ok {
				toks = append(toks, t)
				i = t.end
				continue
			}
		}
		_, w := utf8.DecodeRuneInString(s[i:to])
		i += w
	}
	return toks
}

// boundaryBefore reports whether a number may start at i: it must not
// continue a word ("Q4"), a number ("12" inside "112") or a dotted sequence
// ("1.2.3").
func boundaryBefore(s string, i int) bool {
	if i == 0 {
		return true
	}
	r, w := utf8.DecodeLastRuneInString(s[:i])
	if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' {
		return false
	}
	if r == '.' && i-w > 0 {
		p, _ := utf8.DecodeLastRuneInString(s[:i-w])
		if unicode.IsDigit(p) {
			return false
		}
	}
	return true
}

// signAllowed reports whether a minus at i is a sign rather than a binary
// minus: the previous non-space character on the line must not end an
// operand (a digit, a closing bracket or a percent sign).
func signAllowed(s string, i int) bool {
	j := i
	for j > 0 {
		r, w := utf8.DecodeLastRuneInString(s[:j])
		if r == ' ' || r == '\t' {
			j -= w
			continue
		}
		if r == '\n' {
			return true
		}
		return !(unicode.IsDigit(r) || strings.ContainsRune(")]}%", r))
	}
	return true
}

var (
	minusSigns = []string{"-", "−"}
	currencies = []string{`\$`, "$", "£", "€"}
	fracCmds   = []string{`\frac`, `\dfrac`, `\tfrac`}
)

// parseNumberAt parses one number starting exactly at i and ending at or
// before to. The caller checks the boundary before i.
func parseNumberAt(s string, i, to int) (numTok, bool) {
	j := i
	neg := false
	for _, m := range minusSigns {
		if strings.HasPrefix(s[j:to], m) && signAllowed(s, i) {
			neg = true
			j += len(m)
			// "-$5": a currency sign between the sign and the digits.
			for _, c := range currencies {
				if strings.HasPrefix(s[j:to], c) {
					j += len(c)
					break
				}
			}
			break
		}
	}
	v, end, ok := parseUnsigned(s, j, to)
	if !ok {
		return numTok{}, false
	}
	t := numTok{start: i, end: end, val: v}
	// Percent sign: "25%", "25 %", "25\%".
	switch {
	case strings.HasPrefix(s[end:to], "%"):
		t.end, t.percent = end+1, true
	case strings.HasPrefix(s[end:to], " %"):
		t.end, t.percent = end+2, true
	case strings.HasPrefix(s[end:to], `\%`):
		t.end, t.percent = end+2, true
	}
	if neg {
		t.val.Neg(t.val)
	}
	return t, true
}

// parseUnsigned parses an unsigned number at i: a LaTeX fraction, a mixed
// number, a simple fraction, or a decimal with optional thousands separators.
func parseUnsigned(s string, i, to int) (*big.Rat, int, bool) {
	for _, cmd := range fracCmds {
		if strings.HasPrefix(s[i:to], cmd) {
			return parseLatexFrac(s, i+len(cmd), to)
		}
	}
	if i >= to {
		return nil, 0, false
	}
	if s[i] == '.' {
		// ".5"
		d := digitsEnd(s, i+1, to)
		if d == i+1 {
			return nil, 0, false
		}
		v, _ := new(big.Rat).SetString("0" + s[i:d])
		return v, d, true
	}
	d := digitsEnd(s, i, to)
	if d == i {
		return nil, 0, false
	}
	intDigits := s[i:d]
	end := d
	grouped := false
	// Thousands groups: "1,234,567" or LaTeX "1{,}234"; a group is exactly
	// three digits, and the first part at most three.
	if d-i <= 3 {
		for {
			sep := 0
			switch {
			case strings.HasPrefix(s[end:to], ","):
				sep = 1
			case strings.HasPrefix(s[end:to], "{,}"):
				sep = 3
			}
			if sep == 0 {
				break
			}
			g := digitsEnd(s, end+sep, to)
			if g-(end+sep) != 3 {
				break
			}
			intDigits += s[end+sep : g]
			end, grouped = g, true
		}
	}
	// Decimal part: a point followed by at least one digit ("45." is 45
	// followed by a sentence period).
	if end+1 < to && s[end] == '.' && isDigit(s[end+1]) {
		f := digitsEnd(s, end+1, to)
		v, _ := new(big.Rat).SetString(intDigits + s[end:f])
		return v, f, true
	}
	n, _ := new(big.Int).SetString(intDigits, 10)
	if !grouped {
		// Simple fraction "3/4" (no spaces; not a date "3/4/2024").
		if num, den, fend, ok := fractionAt(s, i, end, to); ok {
			return new(big.Rat).SetFrac(num, den), fend, true
		}
		// Mixed number "1 1/2": whole, one space, proper fraction.
		if end+1 < to && s[end] == ' ' && isDigit(s[end+1]) {
			ne := digitsEnd(s, end+1, to)
			if num, den, fend, ok := fractionAt(s, end+1, ne, to); ok && num.Cmp(den) < 0 {
				v := new(big.Rat).SetFrac(num, den)
				return v.Add(v, new(big.Rat).SetInt(n)), fend, true
			}
		}
	}
	return new(big.Rat).SetInt(n), end, true
}

// fractionAt reads "/den" after the integer s[i:end] and returns numerator,
// denominator and the end of the fraction; den must be non-zero and the
// fraction must not continue with another "/digit" (a date).
func fractionAt(s string, i, end, to int) (*big.Int, *big.Int, int, bool) {
	if end+1 >= to || s[end] != '/' || !isDigit(s[end+1]) {
		return nil, nil, 0, false
	}
	de := digitsEnd(s, end+1, to)
	if de+1 < to && s[de] == '/' && isDigit(s[de+1]) {
		return nil, nil, 0, false
	}
	if de < to && s[de] == '.' && de+1 < to && isDigit(s[de+1]) {
		return nil, nil, 0, false // "1/2.5": not a simple fraction
	}
	num, _ := new(big.Int).SetString(s[i:end], 10)
	den, _ := new(big.Int).SetString(s[end+1:de], 10)
	if den.Sign() == 0 {
		return nil, nil, 0, false
	}
	return num, den, de, true
}

// parseLatexFrac reads "{a}{b}" (spaces allowed inside the braces) after a
// \frac command; a and b are unsigned integers or decimals, b non-zero.
func parseLatexFrac(s string, i, to int) (*big.Rat, int, bool) {
	a, i, ok := bracedNumber(s, i, to)
	if !ok {
		return nil, 0, false
	}
	b, i, ok := bracedNumber(s, i, to)
	if !ok || b.Sign() == 0 {
		return nil, 0, false
	}
	return a.Quo(a, b), i, true
}

func bracedNumber(s string, i, to int) (*big.Rat, int, bool) {
	if i >= to || s[i] != '{' {
		return nil, 0, false
	}
	i = skipSpaces(s, i+1, to)
	d := digitsEnd(s, i, to)
	if d == i {
		return nil, 0, false
	}
	if d+1 < to && s[d] == '.' && isDigit(s[d+1]) {
		d = digitsEnd(s, d+1, to)
	}
	v, ok := new(big.Rat).SetString(s[i:d])
	if !ok {
		return nil, 0, false
	}
	e := skipSpaces(s, d, to)
	if e >= to || s[e] != '}' {
		return nil, 0, false
	}
	return v, e + 1, true
}

func skipSpaces(s string, i, to int) int {
	for i < to && s[i] == ' ' {
		i++
	}
	return i
}

func digitsEnd(s string, i, to int) int {
	for i < to && isDigit(s[i]) {
		i++
	}
	return i
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }
