package docqa

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/fragility/fragility/probe/answer"
)

// Passage is one passage of an item: its id (unique within the item, over
// passages and distractors together) and its text.
type Passage struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// Item is one document question as the user wrote it (one line of an items
// file).
type Item struct {
	ID          string    `json:"id"`          // unique in the file; no "/" or white space
	Passages    []Passage `json:"passages"`    // the context the question is answered from; at least one
	Question    string    `json:"question"`    // the question as written
	Paraphrases []string  `json:"paraphrases"` // rewordings of Question written by the user; may be empty
	// Accepted lists the accepted answers, the first being the canonical
	// one: a number in its normalised form (answer.NormalizeNumber), or
	// strings. It is read from the "answer" field: a number, a string or a
	// list of either.
	Accepted    []string  `json:"-"`
	Distractors []Passage `json:"distractors,omitempty"` // on-topic but irrelevant passages marked by the user
	Relation    string    `json:"relation,omitempty"`    // free label, e.g. "date" or "comparison"
	Difficulty  string    `json:"difficulty,omitempty"`  // free label, e.g. "lookup" or "two-hop"
	Source      string    `json:"-"`                     // "file:line" the item was read from
}

// Numeric reports whether every accepted answer is a number, in which case
// answers are compared as numbers (ScoreNumber).
func (it *Item) Numeric() bool { return numericAnswers(it.Accepted) }

func numericAnswers(acc []string) bool {
	if len(acc) == 0 {
		return false
	}
	for _, a := range acc {
		if _, ok := answer.NormalizeNumber(a); !ok {
			return false
		}
	}
	return true
}

// rawItem is one line as decoded, before validation.
type rawItem struct {
	ID          *string           `json:"id"`
	Passages    []json.RawMessage `json:"passages"`
	Question    *string           `json:"question"`
	Paraphrases []json.RawMessage `json:"paraphrases"`
	Answer      json.RawMessage   `json:"answer"`
	Distractors []json.RawMessage `json:"distractors"`
	Relation    string            `json:"relation"`
	Difficulty  string            `json:"difficulty"`
}

// Errors is the list of bad items of a file: one line per bad item, each
// "file:line: field: reason". Load returns it when any item is bad.
type Errors struct {
	File  string
	Lines []string
}

// MaxErrorLines is how many of the bad items' lines Errors.Error shows: a
// file that is not JSONL at all (a README given as --items) would
// otherwise print one line per line of the file.
const MaxErrorLines = 5

// Error is a first line naming the file and the count, then the lines, one
// per bad item, at most MaxErrorLines of them and a last line counting the
// rest.
func (e *Errors) Error() string {
	shown := e.Lines[:min(len(e.Lines), MaxErrorLines)]
	msg := fmt.Sprintf("%s: %d bad item(s), nothing was run:\n%s", e.File, len(e.Lines), strings.Join(shown, "\n"))
	if rest := len(e.Lines) - len(shown); rest > 0 {
		msg += fmt.Sprintf("\n%s: … and %d more bad item(s) not shown", e.File, rest)
	}
	return msg
}

// fieldError is the first problem found in one item.
type fieldError struct{ field, reason string }

func bad(field, format string, args ...any) *fieldError {
	return &fieldError{field, fmt.Sprintf(format, args...)}
}

// Load reads and validates the items file at path. Every item is checked
// before any is used; when some are bad the error is an *Errors with one
// line per bad item ("file:line: field: reason", the item's first problem).
// An unreadable or empty file is a plain error naming it; a file that is
// not there, or a folder, names the flag that gave it (--items).
func Load(path string) ([]Item, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("--items %s: %v (the JSONL file of document questions: docs/docqa.md)", path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fmt.Errorf("--items %s: a folder, not a JSONL file of document questions (docs/docqa.md)", path)
	}
	return Read(f, path)
}

// Read is Load on an open reader; name stands for the file in messages.
func Read(r io.Reader, name string) ([]Item, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<26)
	var items []Item
	errs := &Errors{File: name}
	firstLine := map[string]int{}
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		it, fe := parseItem(b)
		if fe == nil {
			if prev, ok := firstLine[it.ID]; ok {
				fe = bad("id", "%q is already the id of the item on line %d", it.ID, prev)
			}
		}
		if fe != nil {
			errs.Lines = append(errs.Lines, fmt.Sprintf("%s:%d: %s: %s", name, line, fe.field, fe.reason))
			continue
		}
		firstLine[it.ID] = line
		it.Source = fmt.Sprintf("%s:%d", name, line)
		items = append(items, *it)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("%s:%d: a line longer than 64 MiB: not a JSONL file of document questions (docs/docqa.md)", name, line+1)
	} else if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(errs.Lines) > 0 {
		return nil, errs
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%s: no items (one JSON object per line; see docs/docqa.md)", name)
	}
	return items, nil
}

// parseItem decodes and checks one line.
func parseItem(b []byte) (*Item, *fieldError) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var raw rawItem
	if err := dec.Decode(&raw); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te) && te.Field != "":
			return nil, bad(te.Field, "must be %s, not a JSON %s", typeWord(te.Field), te.Value)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			f := strings.TrimPrefix(err.Error(), "json: unknown field ")
			return nil, bad(strings.Trim(f, `"`), "unknown field (known: id, passages, question, paraphrases, answer, distractors, relation, difficulty)")
		}
		return nil, bad("line", "not one JSON object: %v", err)
	}
	if dec.More() {
		return nil, bad("line", "more than one JSON value on the line")
	}
	it := &Item{Relation: strings.TrimSpace(raw.Relation), Difficulty: strings.TrimSpace(raw.Difficulty)}
	if raw.ID == nil || strings.TrimSpace(*raw.ID) == "" {
		return nil, bad("id", "missing or empty")
	}
	it.ID = *raw.ID
	if strings.ContainsAny(it.ID, "/ \t\r\n") {
		return nil, bad("id", "%q contains \"/\" or white space (it becomes part of the instance ids)", it.ID)
	}
	ids := map[string]string{}
	if len(raw.Passages) == 0 {
		return nil, bad("passages", "missing or empty: an item needs at least one passage to be answered from")
	}
	var fe *fieldError
	if it.Passages, fe = passages("passages", raw.Passages, ids); fe != nil {
		return nil, fe
	}
	if raw.Question == nil || strings.TrimSpace(*raw.Question) == "" {
		return nil, bad("question", "missing or empty")
	}
	it.Question = strings.TrimSpace(*raw.Question)
	seenQ := map[string]string{normalizeText(it.Question): "the question"}
	for i, r := range raw.Paraphrases {
		var p string
		if err := json.Unmarshal(r, &p); err != nil {
			return nil, bad(fmt.Sprintf("paraphrases[%d]", i), "must be a string")
		}
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, bad(fmt.Sprintf("paraphrases[%d]", i), "empty")
		}
		if prev, ok := seenQ[normalizeText(p)]; ok {
			return nil, bad(fmt.Sprintf("paraphrases[%d]", i), "the same words as %s (a paraphrase must reword the question)", prev)
		}
		seenQ[normalizeText(p)] = fmt.Sprintf("paraphrases[%d]", i)
		it.Paraphrases = append(it.Paraphrases, p)
	}
	if it.Accepted, fe = parseAnswer(raw.Answer); fe != nil {
		return nil, fe
	}
	if it.Distractors, fe = passages("distractors", raw.Distractors, ids); fe != nil {
		return nil, fe
	}
	for i, d := range it.Distractors {
		for _, p := range it.Passages {
			if normalizeText(d.Text) == normalizeText(p.Text) {
				return nil, bad(fmt.Sprintf("distractors[%d]", i), "the same text as passage %q", p.ID)
			}
		}
	}
	return it, nil
}

// typeWord names the JSON type a field must have, for messages.
func typeWord(field string) string {
	switch field {
	case "passages", "distractors":
		return "a list of {\"id\", \"text\"} objects"
	case "paraphrases":
		return "a list of strings"
	}
	if strings.HasPrefix(field, "passages.") || strings.HasPrefix(field, "distractors.") {
		return "a string"
	}
	return "a string"
}

// passages decodes and checks a list of passages; ids collects the ids seen
// in the item so far (passages and distractors share one id space).
func passages(field string, raws []json.RawMessage, ids map[string]string) ([]Passage, *fieldError) {
	var out []Passage
	for i, r := range raws {
		name := fmt.Sprintf("%s[%d]", field, i)
		dec := json.NewDecoder(bytes.NewReader(r))
		dec.DisallowUnknownFields()
		var p struct {
			ID   *string `json:"id"`
			Text *string `json:"text"`
		}
		if err := dec.Decode(&p); err != nil {
			return nil, bad(name, "must be an object {\"id\": string, \"text\": string} (%v)", strings.TrimPrefix(err.Error(), "json: "))
		}
		if p.ID == nil || strings.TrimSpace(*p.ID) == "" {
			return nil, bad(name+".id", "missing or empty")
		}
		if p.Text == nil || strings.TrimSpace(*p.Text) == "" {
			return nil, bad(name+".text", "missing or empty")
		}
		id := strings.TrimSpace(*p.ID)
		if prev, ok := ids[id]; ok {
			return nil, bad(name+".id", "%q is already the id of %s", id, prev)
		}
		ids[id] = name
		out = append(out, Passage{ID: id, Text: strings.TrimSpace(*p.Text)})
	}
	return out, nil
}

// parseAnswer reads the "answer" field: a number, a string, or a non-empty
// list of numbers and strings.
func parseAnswer(raw json.RawMessage) ([]string, *fieldError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, bad("answer", "missing (a number, a short string, or a list of accepted strings)")
	}
	var list []json.RawMessage
	if raw[0] == '[' {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, bad("answer", "not a valid list: %v", err)
		}
		if len(list) == 0 {
			return nil, bad("answer", "an empty list: give at least one accepted answer")
		}
	} else {
		list = []json.RawMessage{raw}
	}
	var out []string
	seen := map[string]bool{}
	for i, r := range list {
		name := "answer"
		if raw[0] == '[' {
			name = fmt.Sprintf("answer[%d]", i)
		}
		r = bytes.TrimSpace(r)
		var a string
		switch {
		case len(r) > 0 && r[0] == '"':
			if err := json.Unmarshal(r, &a); err != nil {
				return nil, bad(name, "not a valid string: %v", err)
			}
			a = strings.TrimSpace(a)
			if a == "" {
				return nil, bad(name, "empty")
			}
			if normalizeText(a) == "" {
				return nil, bad(name, "%q is empty once case, punctuation and articles are removed: it cannot be matched", a)
			}
			if isNotStated(a) {
				return nil, bad(name, "%q: every item must be answerable from its passages (an answer of \"not stated\" is scored as wrong)", a)
			}
		case len(r) > 0 && (r[0] == '-' || (r[0] >= '0' && r[0] <= '9')):
			n, ok := answer.NormalizeNumber(string(r))
			if !ok {
				return nil, bad(name, "%s is not a number this tool can compare", r)
			}
			a = n
		default:
			return nil, bad(name, "must be a number or a string, not %s", r)
		}
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out, nil
}
