package templates

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gsm8kLines are rows in GSM8K's format (question, solution with <<...>>
// calculator annotations, "#### N"), written for this test.
const gsm8kLines = `{"question": "Mara buys 3 packs of 12 pencils and gives away 5. How many pencils does she keep?", "answer": "She buys 3*12=<<3*12=36>>36 pencils.\nShe keeps 36-5=<<36-5=31>>31.\n#### 31"}
{"question": "A shop sells 1,200 cups a week. How many in 2 weeks?", "answer": "1200*2=<<1200*2=2400>>2400\n#### 2,400"}
{"question": "The temperature was 4 degrees and fell 9 degrees. What is it now?", "answer": "4-9=<<4-9=-5>>-5\n#### \u22125"}

{"question": "Half of 7 is?", "answer": "7/2=<<7/2=3.5>>3.5\n#### 3.5"}
`

func writeGSM8K(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "mini.jsonl")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGSM8KOwnLines loads rows we wrote in GSM8K's format: ids by line
// number, answers with thousands commas removed, a Unicode minus read as a
// negative answer, decimal answers typed as decimal, steps from <<...>>.
func TestGSM8KOwnLines(t *testing.T) {
	ts, err := Load(writeGSM8K(t, gsm8kLines))
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 4 {
		t.Fatalf("%d rows, want 4", len(ts))
	}
	want := []struct {
		id, answer, typ string
		steps           int
	}{
		{"mini-0001", "31", "integer", 2},
		{"mini-0002", "2400", "integer", 1},
		{"mini-0003", "-5", "integer", 1},
		{"mini-0005", "3.5", "decimal", 1},
	}
	for i, w := range want {
		tp := ts[i]
		if tp.ID != w.id || tp.BaseAnswer() != w.answer || tp.AnswerType != w.typ || tp.Steps != w.steps {
			t.Errorf("row %d: id %s answer %s type %s steps %d, want %+v", i, tp.ID, tp.BaseAnswer(), tp.AnswerType, tp.Steps, w)
		}
	}
	if !strings.HasPrefix(ts[0].BaseQuestion(), "Mara buys 3 packs") {
		t.Errorf("question %q", ts[0].BaseQuestion())
	}
}

// TestGSM8KOwnLinesErrors: a bad row names the file and line.
func TestGSM8KOwnLinesErrors(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"question": "q", "answer": "a\n#### seven"}`, `mini.jsonl:1: answer: "seven" after #### is not a number`},
		{"{\"question\": \"q\", \"answer\": \"a\"}\n", "mini.jsonl:1: answer does not end with"},
		{"{\"question\": \"q\", \"answer\": \"#### 1\"}\n{\"question\": \"q\"}\n", `mini.jsonl:2: a GSM8K row needs "question" and "answer"`},
		{"{\"question\": \"q\", \"answer\": \"#### \u2212\u22125\"}\n", "mini.jsonl:1: answer:"},
	} {
		_, err := Load(writeGSM8K(t, c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.body, err, c.want)
		}
	}
}
