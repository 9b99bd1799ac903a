package templates

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// ParseGSM8K reads GSM8K-format JSON Lines (one object per line with
// "question" and "answer", the answer ending in "#### N", N possibly with
// thousands commas). Each row becomes a fixed template: only the base variant
// applies. IDs are "<file name without extension>-<line number, 4 digits>".
// Steps counts the calculator annotations <<...>> in the solution. Errors name
// the file and line.
func ParseGSM8K(path string, data []byte) ([]*Template, error) {
	stem := sanitizeID(strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)))
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	var out []*Template
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var row struct {
			Question *string `json:"question"`
			Answer   *string `json:"answer"`
			Format   string  `json:"format"`
			// A released GSM-Symbolic instance has question and answer
			// too: it is refused here, not read as a GSM8K row.
			Instance   json.RawMessage `json:"instance"`
			OriginalID json.RawMessage `json:"original_id"`
		}
		if err := json.Unmarshal(b, &row); err != nil {
			return nil, fileError(path, line, "bad JSON: %v", err)
		}
		if row.Format == SetFormat {
			return nil, fileError(path, line, "this is a generated item set, not GSM8K rows")
		}
		if row.Instance != nil && row.OriginalID != nil {
			return nil, fileError(path, line, "released GSM-Symbolic instances (instance, original_id), not GSM8K rows: read them with --dataset")
		}
		if row.Question == nil || row.Answer == nil {
			return nil, fileError(path, line, "a GSM8K row needs \"question\" and \"answer\"")
		}
		if strings.TrimSpace(*row.Question) == "" {
			return nil, fileError(path, line, "empty question")
		}
		m := finalAnswerRE.FindStringSubmatch(*row.Answer)
		if m == nil {
			return nil, fileError(path, line, "answer does not end with \"#### N\"")
		}
		// Some copies write a negative answer with U+2212 MINUS SIGN.
		n, ok := parseNumber(strings.Replace(m[1], "\u2212", "-", 1))
		if !ok {
			return nil, fileError(path, line, "answer: %q after #### is not a number", m[1])
		}
		ans, ok := formatRat(n)
		if !ok {
			return nil, fileError(path, line, "answer %q has no exact decimal form", m[1])
		}
		t := &Template{
			ID: fmt.Sprintf("%s-%04d", stem, line), Title: shorten(*row.Question, 60), Relation: "gsm8k",
			Steps: max(1, strings.Count(*row.Answer, "<<")), Source: path, Line: line, Format: "gsm8k",
			AnswerType: "decimal", fixed: true, fixedAnswer: ans,
			question: &text{parts: []textPart{{lit: *row.Question}}},
		}
		if n.IsInt() {
			t.AnswerType = "integer"
		}
		out = append(out, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fileError(path, line+1, "%v", err)
	}
	if len(out) == 0 {
		return nil, fileError(path, 0, "no rows")
	}
	return out, nil
}
