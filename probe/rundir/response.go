package rundir

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// A row's response is the generation's text (probe's fillFromGeneration:
// llm.Generation.Text): the pieces of its tokens in order, the calculator's
// injected ones included, an end-of-generation token contributing nothing,
// cut before the stop string that ended it (stop reason llm.StopString),
// and nothing else (no trim). Two writers change its bytes on the way to
// the files, and MatchResponse undoes exactly those:
//   - traces.jsonl is JSON (encoding/json), which writes each byte of a
//     piece that is not valid UTF-8 (a character split across tokens) as
//     U+FFFD; such a piece matches one byte >= 0x80 of the response, or a
//     U+FFFD the response really has;
//   - results.csv is read by encoding/csv, which turns the "\r\n" of a
//     quoted field into "\n" (CSVText).

// CSVText is s as results.csv gives it back: encoding/csv reads "\r\n"
// inside a quoted field as "\n".
func CSVText(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

// TraceText returns the text of a trace's tokens: their pieces in order.
func TraceText(tr *Trace) string {
	var b strings.Builder
	for _, t := range tr.Tokens {
		b.WriteString(t.Piece)
	}
	return b.String()
}

// MatchResponse reports whether resp, a response as results.csv gives it
// back, is the text pieces (the trace's pieces joined, as traces.jsonl
// gives them back) make: all of it, or, when cut, a part of it that the
// rest follows from one of stops. Otherwise at and pat are the furthest
// byte of resp that matched and the byte of pieces it matched with.
func MatchResponse(resp, pieces string, cut bool, stops []string) (ok bool, at, pat int) {
	end := func(i int) bool { // resp matched up to its end, against pieces[:i]
		if !cut {
			return i == len(pieces)
		}
		for _, s := range stops {
			if strings.HasPrefix(pieces[i:], s) {
				return true
			}
		}
		return false
	}
	if !strings.ContainsAny(pieces, "\r\uFFFD") {
		// Nothing that a file changes: the bytes are the generation's.
		n := CommonPrefix(resp, pieces)
		if n == len(resp) && end(n) {
			return true, 0, 0
		}
		return false, n, n
	}
	// Each U+FFFD of pieces is one byte of the generation or a U+FFFD it
	// had: a search over the positions (i in pieces, j in resp) both
	// readings reach.
	type pos struct{ i, j int }
	seen := map[pos]bool{}
	stack := []pos{{0, 0}}
	var far pos
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[p] {
			continue
		}
		seen[p] = true
		if p.j > far.j {
			far = p
		}
		i, j := p.i, p.j
		if j == len(resp) && end(i) {
			return true, 0, 0
		}
		if i >= len(pieces) || j >= len(resp) {
			continue
		}
		switch rest := pieces[i:]; {
		case strings.HasPrefix(rest, "\uFFFD"):
			if strings.HasPrefix(resp[j:], "\uFFFD") {
				stack = append(stack, pos{i + 3, j + 3})
			}
			if resp[j] >= utf8.RuneSelf {
				stack = append(stack, pos{i + 3, j + 1})
			}
		case strings.HasPrefix(rest, "\r\n"):
			if resp[j] == '\n' {
				stack = append(stack, pos{i + 2, j + 1})
			}
			if resp[j] == '\r' && j+1 == len(resp) {
				// The stop string began with the "\n": the response
				// ends in the "\r", which results.csv keeps.
				stack = append(stack, pos{i + 1, j + 1})
			}
		case rest[0] == resp[j]:
			stack = append(stack, pos{i + 1, j + 1})
		}
	}
	return false, far.j, far.i
}

// CommonPrefix returns the number of leading bytes a and b share.
func CommonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// Excerpt quotes s around byte at: up to 24 bytes either side, widened to
// whole characters, with "…" where s goes on.
func Excerpt(s string, at int) string {
	const w = 24
	from, to := max(0, at-w), min(len(s), at+w)
	for from > 0 && !utf8.RuneStart(s[from]) {
		from--
	}
	for to < len(s) && !utf8.RuneStart(s[to]) {
		to++
	}
	q := fmt.Sprintf("%q", s[from:to])
	if from > 0 {
		q = "…" + q
	}
	if to < len(s) {
		q += "…"
	}
	return q
}
