package templates

import (
	"math/big"
	"strings"
)

// Numbers written in words. GSM8K questions (and so the base values of
// GSM-Symbolic annotations) write quantities as "two", "Twenty",
// "forty-two", "half", "two-thirds", "twice", "three times", "1/4" or "25%";
// parseQuantity reads all of these as exact values.

var unitWords = map[string]int64{
	"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
	"nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
	"sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
	"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}

var scaleWords = map[string]int64{"hundred": 100, "thousand": 1000, "million": 1000000, "dozen": 12}

// ordinalWords are the denominators of fractions in words ("a third",
// "three quarters"); "half" is handled apart.
var ordinalWords = map[string]int64{
	"half": 2, "halves": 2, "third": 3, "fourth": 4, "quarter": 4, "fifth": 5, "sixth": 6, "seventh": 7,
	"eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "sixteenth": 16,
	"twentieth": 20, "hundredth": 100,
}

// multiplierWords are the one-word multipliers.
var multiplierWords = map[string]int64{
	"once": 1, "twice": 2, "thrice": 3, "double": 2, "triple": 3, "quadruple": 4, "quintuple": 5,
}

// parseQuantity reads a number written in digits ("12", "1,200", "0.25"),
// as a fraction ("1/4") or a percentage ("25%"), or in words: cardinals up to
// the millions ("two", "Twenty", "forty-two", "one hundred and five", "a
// dozen"), fractions ("half", "a third", "two-thirds", "three quarters"),
// multipliers ("twice", "thrice", "triple", "three times", "4 times").
// Case does not matter.
func parseQuantity(s string) (*big.Rat, bool) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "" || len(t) > 80 {
		return nil, false
	}
	if r, ok := parseFraction(t); ok {
		return r, true
	}
	if m, ok := multiplierWords[t]; ok {
		return big.NewRat(m, 1), true
	}
	if head, ok := strings.CutSuffix(t, " times"); ok {
		if r, ok := parseQuantity(head); ok {
			return r, true
		}
		return nil, false
	}
	words := strings.FieldsFunc(t, func(c rune) bool { return c == ' ' || c == '-' })
	if len(words) == 0 {
		return nil, false
	}
	// A fraction in words: [numerator] ordinal[s].
	last := words[len(words)-1]
	den, isOrd := ordinalWords[last]
	if !isOrd && strings.HasSuffix(last, "s") {
		den, isOrd = ordinalWords[strings.TrimSuffix(last, "s")]
	}
	if isOrd {
		num := int64(1)
		head := words[:len(words)-1]
		switch {
		case len(head) == 0:
			if den != 2 { // "half" alone; "third" alone is not a quantity
				return nil, false
			}
		case len(head) == 1 && (head[0] == "a" || head[0] == "an"):
		default:
			n, ok := cardinal(head)
			if !ok || !n.IsInt64() || n.Int64() < 1 {
				return nil, false
			}
			num = n.Int64()
		}
		return big.NewRat(num, den), true
	}
	if n, ok := cardinal(words); ok {
		return new(big.Rat).SetInt(n), true
	}
	return nil, false
}

// cardinal reads a cardinal number in words, split into words ("forty",
// "two"; "one", "hundred", "and", "five"; "a", "dozen").
func cardinal(words []string) (*big.Int, bool) {
	total, group := int64(0), int64(0)
	seen := false
	for i, w := range words {
		switch {
		case w == "and" && seen:
			continue
		case (w == "a" || w == "an") && i == 0 && len(words) > 1:
			group = 1
		default:
			if u, ok := unitWords[w]; ok {
				group += u
			} else if sc, ok := scaleWords[w]; ok {
				if group == 0 {
					group = 1
				}
				if sc >= 1000 {
					total += group * sc
					group = 0
				} else {
					group *= sc
				}
			} else if r, ok := parseNumber(w); ok && r.IsInt() && i == 0 && len(words) > 1 {
				group = r.Num().Int64() // "2 dozen"
			} else {
				return nil, false
			}
			seen = true
		}
		if total > 1e12 || group > 1e12 {
			return nil, false
		}
	}
	if !seen {
		return nil, false
	}
	return big.NewInt(total + group), true
}

// parseFraction reads a number in digits, "a/b" or "p%".
func parseFraction(s string) (*big.Rat, bool) {
	t := strings.TrimSpace(s)
	if r, ok := parseNumber(t); ok {
		return r, true
	}
	if p, ok := strings.CutSuffix(t, "%"); ok {
		r, ok := parseNumber(strings.TrimSpace(p))
		if !ok {
			return nil, false
		}
		return r.Quo(r, big.NewRat(100, 1)), true
	}
	if a, b, ok := strings.Cut(t, "/"); ok {
		x, ok1 := parseNumber(strings.TrimSpace(a))
		y, ok2 := parseNumber(strings.TrimSpace(b))
		if !ok1 || !ok2 || y.Sign() == 0 {
			return nil, false
		}
		return x.Quo(x, y), true
	}
	return nil, false
}
