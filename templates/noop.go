package templates

import (
	"regexp"
	"strings"
)

// noopClause is an irrelevant sentence inserted by the noop variant. Its own
// variables are drawn per instance; it may also read the template's name and
// entity variables, never its numbers.
type noopClause struct {
	text     *text
	vars     []*variable
	reviewed bool   // a person checked it; a flagged clause is then used
	flag     string // the word that flagged it; "" when none
	line     int
}

// flagRE matches words that can plausibly change the asked quantity when they
// appear in a supposedly irrelevant clause ("two boxes are reserved"). A
// clause containing one is flagged for review and not used unless the
// template marks it reviewed.
var flagRE = regexp.MustCompile(`(?i)\b(reserved?|reserves|lost|loses?|losing|returned|returns?|gave|gives?|giving|given|broke|broken|breaks?|ate|eaten|eats?|spent|spends?|spend|sold|sells?|used|uses?|donated|donates?|stolen|stole|steals?|dropped|drops?|damaged|spoiled|spoilt|rotten|expired|discarded|threw|thrown|throws?|borrowed|borrows?|lent|lends?|removed|removes?|missing|took|takes?|taken|kept|keeps?|saved|saves?|paid|pays?|owes?|owed|refund(ed)?|discount(ed)?|extra|fewer|less|smaller|larger|half|twice|double|doubled|defective|excluded?|minus|subtract(ed)?)\b`)

// flagWord returns the first flagged word in s, or "".
func flagWord(s string) string {
	return strings.ToLower(flagRE.FindString(s))
}

func (t *Template) usableNoops() []*noopClause {
	var out []*noopClause
	for _, c := range t.noops {
		if c.flag == "" || c.reviewed {
			out = append(out, c)
		}
	}
	return out
}

// genericNoops is the reviewed pool of generic irrelevant clauses used by the
// noop variant of templates that have no clause of their own (GSM-Symbolic
// imports). None mentions a quantity, an object or a person of any problem;
// the numbers they carry count nothing a problem asks about. Each was checked
// by hand against flagRE and against the question forms of the built-ins and
// the GSM-Symbolic samples.
var genericNoops = []string{
	"The weather that day was mild and sunny.",
	"A radio was playing softly in the background.",
	"The building on the corner was painted {color} last spring.",
	"The nearest train station is {km} kilometers away.",
	"It was a {weekday} in late autumn.",
	"A neighbor's {pet} slept by the window all afternoon.",
	"The town library opened {years} years ago.",
	"The street outside had been repaved the week before.",
	"A clock on the wall ran {minutes} minutes fast.",
	"Someone nearby was humming a song from an old film.",
}

// genericNoopVars are the variables of the generic clauses: each is drawn
// per instance and reads nothing of the problem.
var genericNoopVars = map[string]string{
	"color":   "sample(colors)",
	"km":      "range(2, 30)",
	"weekday": "sample(weekdays)",
	"pet":     `sample(["cat", "dog", "parrot"])`,
	"years":   "range(3, 90)",
	"minutes": "range(2, 15)",
}

// insertNoop puts clause before the final sentence (the question) of q; a
// one-sentence question gets the clause in front.
func insertNoop(q, clause string) string {
	end := len(strings.TrimRight(q, " \n"))
	cut := -1
	for i := 0; i < end-1; i++ {
		c := q[i]
		if (c == '.' || c == '!' || c == '?') && (q[i+1] == ' ' || q[i+1] == '\n') {
			cut = i + 1
		}
	}
	if cut < 0 {
		return clause + " " + q
	}
	rest := strings.TrimLeft(q[cut:], " ")
	sep := q[cut : len(q)-len(rest)]
	if sep == "" {
		sep = " "
	}
	return q[:cut] + " " + clause + sep + rest
}
