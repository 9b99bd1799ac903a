package probe

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fragility/fragility/internal/jsonerr"
	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/templates"
)

// Trace is one line of traces.jsonl: the exact rendered prompt, its token
// ids, and every generated token with its entropy (bits) and natural
// log-probability. Floats are written in shortest round-trip form, so
// `fragility verify` can compare them bit for bit.
type Trace struct {
	ItemID         string       `json:"item_id"`
	Prompt         string       `json:"prompt"`
	PromptTokenIDs []llm.Token  `json:"prompt_token_ids"`
	BatchSize      int          `json:"batch_size,omitempty"` // sequences decoded together with this item
	StopReason     string       `json:"stop_reason,omitempty"`
	SkipReason     string       `json:"skip_reason,omitempty"`
	Tokens         []TraceToken `json:"tokens"`
	CalcCalls      []CalcCall   `json:"calc_calls,omitempty"` // calculator calls, in order (condition calculator)
	// AnswerScore is the answer-scoring pass (AnswerScoreVersion); nil
	// when the trial was not scored or the run predates it.
	AnswerScore *AnswerScoreTrace `json:"answer_score,omitempty"`
	// AnswerFirst is the answer-first forcing (AnswerScoreVersion step 4:
	// the expected answer in the final-answer form right after the prompt);
	// nil when the trial was not scored so or the run predates it.
	AnswerFirst *AnswerForced `json:"answer_first,omitempty"`
}

// ReadTraces reads traces.jsonl of a run directory. Errors name the file
// once (a caller adds no directory).
func ReadTraces(dir string) ([]Trace, error) {
	path := filepath.Join(dir, FileTraces)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, templates.BarePathError(err))
	}
	var out []Trace
	for i, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var t Trace
		if err := json.Unmarshal([]byte(line), &t); err != nil {
			return nil, fmt.Errorf("%s:%d: %s", path, i+1, jsonerr.Text([]byte(line), err))
		}
		out = append(out, t)
	}
	return out, nil
}
