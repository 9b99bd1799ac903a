package rundir

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
	// AnswerScore is the answer-scoring pass (probe.AnswerScoreVersion); nil
	// when the trial was not scored or the run predates it.
	AnswerScore *AnswerScoreTrace `json:"answer_score,omitempty"`
	// AnswerFirst is the answer-first forcing (probe.AnswerScoreVersion step 4:
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

// AnswerForced is a trace's record of one forced answer: the rendered
// answer, the forced token ids, the first scored one, and the summed
// log-probability (nats) with its terms.
type AnswerForced struct {
	Answer        string      `json:"answer"`
	Tokens        []llm.Token `json:"tokens"`
	From          int         `json:"from"`
	LogProb       float64     `json:"logprob"`
	TokenLogProbs []float64   `json:"token_logprobs"`
	// FromGeneration: the model wrote these tokens itself after the kept
	// ones, and their log-probabilities are those generation recorded.
	FromGeneration bool `json:"from_generation,omitempty"`
}

// AnswerScoreTrace is a trace's record of the answer-scoring pass
// (probe.AnswerScoreVersion): the generated tokens kept, the text forced before
// the answer, and the forced answers (the expected one first, then the
// model's own when it was scored).
type AnswerScoreTrace struct {
	Keep    int            `json:"keep"`
	Prefix  string         `json:"prefix"`
	Answers []AnswerForced `json:"answers"`
}

// CalcCall is one calculator call, recorded in traces.jsonl.
type CalcCall struct {
	Expr   string `json:"expr"`             // the expression as the model wrote it
	Result string `json:"result,omitempty"` // the text fed back, ">>" excluded; "" when nothing was
	Error  string `json:"error,omitempty"`  // why the expression gave no value, or "call limit reached"
	// Token is the index, in the trace's tokens, of the generated token
	// that completed "<<EXPR="; the result's tokens follow it.
	Token int `json:"token"`
}

// TraceToken is one generated token in a Trace.
type TraceToken struct {
	ID          llm.Token `json:"id"`
	Piece       string    `json:"piece"`
	EntropyBits float64   `json:"entropy_bits"`
	LogProb     float64   `json:"logprob"`
	Injected    bool      `json:"injected,omitempty"` // fed by the calculator, not generated: no entropy
}
