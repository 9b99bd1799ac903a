package probe

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
)

// roundTrip returns what the files give back of a generation made of
// pieces and cut before the byte cut (-1: not cut): the response as
// results.csv reads it and the pieces as traces.jsonl reads them, joined.
func roundTrip(t *testing.T, pieces []string, cut int) (resp, joined string) {
	t.Helper()
	text := strings.Join(pieces, "")
	if cut >= 0 {
		text = text[:cut]
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{text, "x"})
	w.Flush()
	rec, err := csv.NewReader(&b).Read()
	if err != nil {
		t.Fatal(err)
	}
	tr := rundir.Trace{ItemID: "m0/a"}
	for _, p := range pieces {
		tr.Tokens = append(tr.Tokens, rundir.TraceToken{Piece: p})
	}
	line, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	var back rundir.Trace
	if err := json.Unmarshal(line, &back); err != nil {
		t.Fatal(err)
	}
	return rec[0], rundir.TraceText(&back)
}

// TestMatchResponse: the response of a generation matches its trace's
// pieces after both files' round trips (a character split across tokens,
// which JSON writes as U+FFFD; a "\r\n", which CSV reads as "\n"; a cut
// at a stop string, one that begins with the "\n" of a "\r\n"), and an
// edited response does not.
func TestMatchResponse(t *testing.T) {
	stops := responseStops(&rundir.Manifest{})
	euro := "\u20ac" // 3 bytes, split over two tokens below
	cases := []struct {
		name   string
		pieces []string
		cut    int
	}{
		{"plain", []string{"The", " ratio", " is", " 4", "."}, -1},
		{"empty", nil, -1},
		{"eos piece", []string{"A", ":", " 3", ""}, -1},
		{"split character", []string{"costs ", euro[:1], euro[1:], "5"}, -1},
		{"split at both ends", []string{euro[:2], euro[2:] + euro[:1], euro[1:]}, -1},
		{"a real U+FFFD", []string{"x", "\uFFFD", "y"}, -1},
		{"U+FFFD then split", []string{"\uFFFD" + euro[:1], euro[1:]}, -1},
		{"crlf", []string{"a\r", "\nb", "\r\n"}, -1},
		{"cr cr lf", []string{"a\r\r\nb"}, -1},
		{"stop", []string{"So 4", ".", "\n", "User", ":"}, len("So 4.")},
		{"stop in the last piece", []string{"So 4", ".\nQ:"}, len("So 4.")},
		{"stop after cr", []string{"So 4.\r", "\nUser:"}, len("So 4.\r")},
		{"stop after a split character", []string{euro[:1], euro[1:], "\nSystem:"}, len(euro)},
	}
	for _, c := range cases {
		resp, joined := roundTrip(t, c.pieces, c.cut)
		if ok, at, pat := rundir.MatchResponse(resp, joined, c.cut >= 0, stops); !ok {
			t.Errorf("%s: untouched %q refused against %q (at %d, %d)", c.name, resp, joined, at, pat)
		}
		if c.cut < 0 {
			if ok, _, _ := rundir.MatchResponse(resp, joined, true, stops); ok {
				t.Errorf("%s: a whole response read as cut at a stop string", c.name)
			}
		}
		for _, e := range []struct{ what, resp string }{
			{"a byte added", resp + "."},
			{"the first byte changed", "#" + resp[min(1, len(resp)):]},
			{"the last byte dropped", resp[:max(0, len(resp)-1)]},
		} {
			if e.resp == resp {
				continue
			}
			if ok, _, _ := rundir.MatchResponse(e.resp, joined, c.cut >= 0, stops); ok {
				t.Errorf("%s: %s (%q) accepted against %q", c.name, e.what, e.resp, joined)
			}
		}
	}
	// The user's edit: one transposed pair of letters.
	resp, joined := roundTrip(t, []string{"Since", " the", " ratio", " is", " 3"}, -1)
	edited := strings.Replace(resp, "the ratio", "teh ratio", 1)
	ok, at, pat := rundir.MatchResponse(edited, joined, false, stops)
	if ok || at != len("Since t") || pat != at {
		t.Errorf("teh ratio: ok %v at %d/%d, want refused at byte %d", ok, at, pat, len("Since t"))
	}
	// A stop string that is not the run's does not explain a cut.
	resp, joined = roundTrip(t, []string{"So 4", ".", "\nAnswer:"}, len("So 4."))
	if ok, _, _ := rundir.MatchResponse(resp, joined, true, stops); ok {
		t.Errorf("a cut before %q, no stop of the run, accepted", "\nAnswer:")
	}
	if ok, _, _ := rundir.MatchResponse(resp, joined, true, responseStops(&rundir.Manifest{Prompt: rundir.PromptInfo{Stop: []string{"\nAnswer:"}}})); !ok {
		t.Errorf("a cut before the preset's recorded stop %q refused", "\nAnswer:")
	}
}

// TestCheckResponses: the rows of a run are checked against their traces
// by item (a skipped item has neither response nor tokens, a row without a
// trace is left to CheckRecords), and the first edited one is refused on
// one line naming results.csv, the row, the item and both texts.
func TestCheckResponses(t *testing.T) {
	traces := []rundir.Trace{
		{ItemID: "m0/a", StopReason: llm.StopEOS, Tokens: []rundir.TraceToken{{Piece: "Since"}, {Piece: " the"}, {Piece: " ratio"}, {Piece: ""}}},
		{ItemID: "m0/b", SkipReason: "prompt too long"},
		{ItemID: "m0/c", StopReason: llm.StopString, Tokens: []rundir.TraceToken{{Piece: "4"}, {Piece: "\nUser:"}}},
	}
	trials := []results.Trial{
		{ItemID: "m0/a", Response: "Since the ratio", StopReason: llm.StopEOS},
		{ItemID: "m0/b", StopReason: "skipped"},
		{ItemID: "m0/c", Response: "4", StopReason: llm.StopString},
		{ItemID: "m0/d", Response: "no trace"},
	}
	man := &rundir.Manifest{}
	if err := CheckResponses("results.csv", man, trials, traces); err != nil {
		t.Fatalf("untouched rows: %v", err)
	}
	trials[0].Response = "Since teh ratio"
	err := CheckResponses("results.csv", man, trials, traces)
	want := `results.csv: row 1 (item m0/a): its response differs from its trace in traces.jsonl at byte 7: results.csv has "Since teh ratio" where the trace's tokens give "Since the ratio": the file was edited after the run`
	if err == nil || err.Error() != want {
		t.Errorf("edited response:\n got %v\nwant %s", err, want)
	}
	trials[0].Response = "Since the ratio"
	trials[1].Response = "made up"
	if err := CheckResponses("results.csv", man, trials, traces); err == nil || !strings.Contains(err.Error(), "row 2 (item m0/b)") {
		t.Errorf("a response given to a skipped item: %v", err)
	}
	trials[1].Response = ""
	trials[2].Response = ""
	if err := CheckResponses("results.csv", man, trials, traces); err == nil || !strings.Contains(err.Error(), "row 3 (item m0/c)") {
		t.Errorf("a cut response emptied: %v", err)
	}
}
