package templates

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// A plainly irrelevant clause must not talk about what the question measures
// or counts: "a clock ran 5 minutes fast" in a problem asked in minutes, "a
// station 3 km away" in a distance problem or "opened 40 years ago" in an age
// problem invite the reader to use the number. unitClash finds such clauses
// with two rules, applied to the question and paraphrase as every draw can
// render them (entity placeholders stand for every value they can take):
//
//  1. unit dimension: a quantity of the clause is in a unit (minutes, km,
//     dollars, %, ...; see unitDims) whose dimension (time, distance, money,
//     ...) a unit word anywhere in the question has;
//  2. counted word: a word that a number of the clause counts ("3 stalls"),
//     or a value of the clause's own variables ("a neighbor's {pet}"), is a
//     word the question counts, compared singular to singular.
//
// A clause's quantity words are the words a number counts: the first two
// words after it that are not function words (countStop), within three
// tokens and the sentence, and a currency sign just before it. A unit word
// with no number ("the week before", "that day") is not a quantity and does
// not exclude the clause. The question's counted words are found the same
// way, plus the words after "how many".
//
// Noop-seeming clauses are exempt: sharing the quantity's kind is their
// point, and a person reviews each one.

// unitDims maps a unit word (singular, lower case) to its dimension.
var unitDims = map[string]string{}

func init() {
	for dim, words := range map[string][]string{
		"time":        {"second", "sec", "minute", "min", "hour", "hr", "day", "week", "fortnight", "month", "year", "decade", "century"},
		"distance":    {"meter", "metre", "kilometer", "kilometre", "km", "mile", "yard", "foot", "inch", "centimeter", "centimetre", "cm", "millimeter", "millimetre", "mm"},
		"weight":      {"gram", "kilogram", "kg", "pound", "lb", "ounce", "oz", "ton", "tonne"},
		"volume":      {"liter", "litre", "milliliter", "millilitre", "ml", "gallon", "quart", "pint"},
		"money":       {"dollar", "cent", "euro", "penny", "pence", "rupee", "yen", "buck", "$", "€", "£", "¥", "₹"},
		"percent":     {"percent", "percentage", "%"},
		"temperature": {"degree"},
		"area":        {"acre", "hectare"},
		"speed":       {"mph", "kph"},
	} {
		for _, w := range words {
			unitDims[w] = dim
		}
	}
}

// numberWords are words read as a number by the counted-word rule.
var numberWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`zero one two three four five six seven eight nine ten eleven twelve thirteen
		fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety
		hundred thousand dozen`) {
		numberWords[w] = true
	}
}

// countStop are words skipped when looking for the word a number counts.
var countStop = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the of and or but more other each per every in on at to for from by with
		than into onto about around over under after before is are was were be been being has have had this that
		these those it its his her their our my your some all any another same new old whole full about nearly
		almost just only exactly over still also very much many as`) {
		countStop[w] = true
	}
}

// irregular plurals read by singular.
var irregular = map[string]string{
	"feet": "foot", "children": "child", "people": "person", "men": "man", "women": "woman", "teeth": "tooth",
	"geese": "goose", "mice": "mouse", "knives": "knife", "wives": "wife", "lives": "life", "shoes": "shoe",
	"toes": "toe", "sheep": "sheep", "fish": "fish", "series": "series", "species": "species", "dice": "die",
	"leaves": "leaf", "loaves": "loaf", "halves": "half", "shelves": "shelf", "calves": "calf", "wolves": "wolf",
	"scarves": "scarf", "pence": "penny", "cookies": "cookie", "movies": "movie", "pies": "pie", "ties": "tie",
}

// singular returns a lower-case singular form of an English word, by a few
// suffix rules and a list of irregular plurals: enough to match "loaves"
// with "loaf" and "boxes" with "box"; both sides go through the same rules.
func singular(w string) string {
	w = strings.ToLower(w)
	w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
	if s, ok := irregular[w]; ok {
		return s
	}
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 4 && strings.HasSuffix(w, "oes"):
		return w[:n-2]
	case n > 5 && strings.HasSuffix(w, "uses") && strings.ContainsRune("aeiou", rune(w[n-5])):
		return w[:n-1] // houses, causes
	case n > 4 && (strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "xes") ||
		strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "zes") || strings.HasSuffix(w, "uses")):
		return w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") &&
		!strings.HasSuffix(w, "is"):
		return w[:n-1]
	}
	return w
}

// token is one word, number, symbol or placeholder of a text.
type token struct {
	word  string   // lower-case word or symbol; "" for a placeholder
	num   bool     // a number: digits, a number word or a numeric placeholder
	vals  []string // an entity placeholder: every value it can take
	punct bool     // sentence punctuation
}

var tokenRE = regexp.MustCompile(`[$€£¥₹%]|[0-9]+(?:[.,][0-9]+)*|[A-Za-z]+(?:['’][A-Za-z]+)?|[.!?;:]`)

// tokens splits a text into tokens; numeric(name) says whether a placeholder
// is a number and values(name) lists what an entity placeholder can render.
func tokens(tx *text, numeric func(string) bool, values func(string) []string) []token {
	var out []token
	for _, p := range tx.parts {
		if p.ph != "" {
			if numeric(p.ph) {
				out = append(out, token{num: true})
			} else {
				out = append(out, token{vals: values(p.ph)})
			}
			continue
		}
		for _, m := range tokenRE.FindAllString(p.lit, -1) {
			lw := strings.ToLower(m)
			switch {
			case strings.ContainsAny(m[:1], ".!?;:"):
				out = append(out, token{punct: true})
			case m[0] >= '0' && m[0] <= '9', numberWords[lw]:
				out = append(out, token{word: lw, num: true})
			default:
				out = append(out, token{word: lw})
			}
		}
	}
	return out
}

// words returns the singular words of a token: the word itself, or every word
// of every value of an entity placeholder.
func (tk token) words() []string {
	if tk.word != "" {
		return []string{singular(tk.word)}
	}
	var out []string
	for _, v := range tk.vals {
		for _, m := range tokenRE.FindAllString(v, -1) {
			out = append(out, singular(m))
		}
	}
	return out
}

// counted returns the words that numbers (and "how many") count in ts: the
// first two words that are not in countStop within three tokens after a
// number, stopping at sentence punctuation.
func counted(ts []token) map[string]bool {
	out := map[string]bool{}
	for i, tk := range ts {
		start := tk.num
		if !start && tk.word == "many" && i > 0 && ts[i-1].word == "how" {
			start = true
		}
		if !start {
			continue
		}
		if tk.num && i > 0 && ts[i-1].word != "" && strings.ContainsAny(ts[i-1].word, "$€£¥₹") {
			out[ts[i-1].word] = true
		}
		got := 0
		for j := i + 1; j < len(ts) && j <= i+3 && got < 2; j++ {
			if ts[j].punct {
				break
			}
			if ts[j].num || ts[j].word != "" && countStop[ts[j].word] {
				continue
			}
			for _, w := range ts[j].words() {
				out[w] = true
			}
			got++
		}
	}
	return out
}

// dims returns the unit dimensions of ts with the word that has each.
func dims(ts []token) map[string]string {
	out := map[string]string{}
	for _, tk := range ts {
		for _, w := range tk.words() {
			if d, ok := unitDims[w]; ok {
				if _, seen := out[d]; !seen {
					out[d] = w
				}
			}
		}
	}
	return out
}

// questionWords is what the clause check compares a clause with.
type questionWords struct {
	dims    map[string]string // dimension → a unit word of the question that has it
	counted map[string]bool
}

// questionProfile analyses the question and the paraphrase of t.
func (t *Template) questionProfile() questionWords {
	q := questionWords{dims: map[string]string{}, counted: map[string]bool{}}
	for _, tx := range []*text{t.question, t.paraphrase} {
		if tx == nil {
			continue
		}
		ts := tokens(tx, t.isNumeric, t.possibleValues)
		for d, w := range dims(ts) {
			if _, ok := q.dims[d]; !ok {
				q.dims[d] = w
			}
		}
		for w := range counted(ts) {
			q.counted[w] = true
		}
	}
	return q
}

// isNumeric reports whether a placeholder of the template's question stands
// for a number.
func (t *Template) isNumeric(name string) bool {
	if x := t.variable(name); x != nil {
		return x.numeric || x.derived != nil
	}
	return t.base[name].k == kNum
}

// possibleValues lists what an entity variable can render: its choices or
// pool when known, else what 200 seeded draws give, and its base values.
func (t *Template) possibleValues(name string) []string {
	x := t.variable(name)
	if x == nil {
		return nil
	}
	return variableValues(x, t.base)
}

func variableValues(x *variable, base map[string]value) []string {
	seen := map[string]bool{}
	add := func(v value) {
		if v.k == kStr {
			seen[v.s] = true
		}
	}
	for _, b := range x.base {
		add(b)
	}
	if x.choices != nil {
		for _, v := range x.choices {
			add(v)
		}
	} else if x.derived == nil && (x.sampler != nil || x.draw != nil) {
		vals := make(map[string]value, len(base))
		for k, v := range base {
			vals[k] = v
		}
		en := &env{vars: vals, rng: newRand(1)}
		for i := 0; i < 200; i++ {
			got, err := drawVar(x, en)
			if err != nil {
				break
			}
			for _, g := range got {
				add(g)
			}
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// unitClash says why an irrelevant clause c must not be used with a question
// of profile q; "" when it may.
func (q questionWords) unitClash(c *noopClause, numeric func(string) bool, values func(string) []string) string {
	if c.kind == NoopSeeming {
		return ""
	}
	ts := tokens(c.text, numeric, values)
	var words []string
	for w := range counted(ts) {
		words = append(words, w)
	}
	for _, x := range c.vars {
		if !x.numeric {
			for _, v := range variableValues(x, nil) {
				for _, m := range tokenRE.FindAllString(v, -1) {
					words = append(words, singular(m))
				}
			}
		}
	}
	sort.Strings(words)
	for _, w := range slices.Compact(words) {
		if d, ok := unitDims[w]; ok {
			if qw, shared := q.dims[d]; shared {
				return fmt.Sprintf("gives a quantity in a unit of %s, as the question does (%q in the clause, %q in the question)", d, w, qw)
			}
		}
		if q.counted[w] {
			return fmt.Sprintf("mentions %q, which the question counts", w)
		}
	}
	return ""
}

// checkNoopUnits marks the template's irrelevant clauses, and for imported
// templates the generic pool's, that share a unit or counted word with the
// question. Called once the base values are known.
func (t *Template) checkNoopUnits() {
	if t.fixed || t.question == nil {
		return
	}
	q := t.questionProfile()
	for _, c := range t.noops {
		own := map[string]*variable{}
		for _, x := range c.vars {
			for _, n := range x.names {
				own[n] = x
			}
		}
		numeric := func(n string) bool {
			if x, ok := own[n]; ok {
				return x.numeric
			}
			return t.isNumeric(n)
		}
		values := func(n string) []string {
			if x, ok := own[n]; ok {
				return variableValues(x, nil)
			}
			return t.possibleValues(n)
		}
		c.clash = q.unitClash(c, numeric, values)
	}
	if t.genericNoop {
		t.genericClash = map[int]string{}
		for _, c := range genericClauses() {
			numeric := func(n string) bool { return c.vars != nil && genericNumeric(c, n) }
			values := func(n string) []string {
				for _, x := range c.vars {
					if slices.Contains(x.names, n) {
						return variableValues(x, nil)
					}
				}
				return nil
			}
			if why := q.unitClash(c, numeric, values); why != "" {
				t.genericClash[c.line] = why
			}
		}
	}
}

func genericNumeric(c *noopClause, n string) bool {
	for _, x := range c.vars {
		if slices.Contains(x.names, n) {
			return x.numeric
		}
	}
	return false
}
