package results

// Trial is the result row of one item: one instance of a template in one
// variant, prompted to one model. It is written as one row of results.csv and
// is the unit every statistic is computed from.
//
// Entropies are in bits over the full vocabulary (H = -Σ p log2 p of the
// softmax of the raw logits); branching factors are 2^H. "Answer tokens" are
// the generated tokens of the line from which the answer was extracted (all
// generated tokens when no rule fired).
type Trial struct {
	ItemID string `json:"item_id"` // unique within a run: model index + instance ID

	ModelPath    string `json:"model_path"`
	ModelName    string `json:"model_name"`   // general.name or file stem
	ModelFamily  string `json:"model_family"` // family key (quantization suffix stripped)
	Quantization string `json:"quantization"` // llama.cpp file type name, e.g. Q4_K_M

	TemplateID string `json:"template"`
	Relation   string `json:"relation"`
	Steps      int    `json:"steps"`
	Level      string `json:"level"` // difficulty level ("symbolic", "p1", "p2"); "" when the template has none
	Variant    string `json:"variant"`
	Instance   int    `json:"instance"`
	Seed       int64  `json:"seed"`

	Question string `json:"question"`
	Expected string `json:"expected"` // exact decimal string, e.g. "39" or "12.5"
	Response string `json:"response"`

	Extracted        string `json:"extracted"` // normalised number, "" when none
	Correct          bool   `json:"correct"`
	Rule             string `json:"rule"` // extraction rule that fired, "none" when none
	ExpectedAnywhere bool   `json:"expected_anywhere"`

	Tokens       int    `json:"tokens"`        // generated tokens
	StopReason   string `json:"stop_reason"`   // "eos", "stop", "max_tokens", "skipped"
	SkipReason   string `json:"skip_reason"`   // non-empty when the item was not run
	PromptTokens int    `json:"prompt_tokens"` // tokens of the rendered prompt

	EntropyMean       float64 `json:"entropy_mean_bits"`        // mean H over all generated tokens
	EntropyP95        float64 `json:"entropy_p95_bits"`         // 95th percentile of H over all generated tokens
	BranchingMedian   float64 `json:"branching_median"`         // median 2^H over all generated tokens
	AnswerEntropyMean float64 `json:"answer_entropy_mean_bits"` // mean H over answer tokens
	AnswerEntropyP95  float64 `json:"answer_entropy_p95_bits"`  // 95th percentile H over answer tokens
	AnswerBranching   float64 `json:"answer_branching_median"`  // median 2^H over answer tokens

	DDCTop      string  `json:"ddc_top"`       // top DDC class code, e.g. "500"
	DDCTopName  string  `json:"ddc_top_name"`  // its class name, e.g. "Science" ("" in older runs)
	DDCRunnerUp string  `json:"ddc_runner_up"` // second class code
	DDCMargin   float64 `json:"ddc_margin"`    // cosine(top) − cosine(runner-up)

	Seconds float64 `json:"seconds"` // wall time of generation for this item

	// Document items (run --items; package docqa). ScoreRule is also set
	// for arithmetic items ("number").
	ScoreRule string  `json:"score_rule"` // "number" or "exact_match" (docqa.ScoreNumber, docqa.ScoreExactMatch)
	F1        float64 `json:"f1"`         // token F1 against the best accepted answer, in [0, 1] (docqa.TokenF1); 1 or 0 for numbers
	NotStated bool    `json:"not_stated"` // the model answered that the passages do not state it (scored as wrong)
	Passages  string  `json:"passages"`   // the passages shown, in order (docqa.PassageList); "" for arithmetic items

	// Condition is what the model could use besides itself: ConditionNone
	// or ConditionCalculator; CalcCalls the calculator calls it made (those
	// past the call limit included), 0 without the calculator.
	Condition string `json:"condition"`
	CalcCalls int    `json:"calc_calls"`
	// CutMarker is the run-on marker at which the response was cut before
	// extraction ("Q:"; answer.RunOnCut), "" when it was not cut.
	CutMarker string `json:"cut_marker"`
	// Reasoning effort (see fillEffort): EffortTokens are the model's
	// thinking tokens when the response has a reasoning block
	// (EffortSource "think"), else its generated tokens up to the answer
	// region's end, a run-on cut excluded (EffortSource "all").
	// ThinkTokens and ThinkEntropyMean are of the block (0 without one);
	// ReplyTokens and ReplyEntropyMean of the generated tokens after it.
	// Injected tokens (calculator results) are in none of these.
	EffortTokens     int     `json:"effort_tokens"`
	EffortSource     string  `json:"effort_source"`
	ThinkTokens      int     `json:"think_tokens"`
	ThinkEntropyMean float64 `json:"think_entropy_mean_bits"`
	ReplyTokens      int     `json:"reply_tokens"`
	ReplyEntropyMean float64 `json:"reply_entropy_mean_bits"`

	// Reference is the variant this trial is paired with, at the same
	// model, template and instance index: "symbolic" for a variant drawn on
	// the symbolic instance (run --reference drawn); "" for base.
	Reference string `json:"reference"`
	// IDOrig is, for a GSM-Symbolic template, the id of the GSM8K question
	// it restates (its templates at levels symbolic, p1 and p2 share it);
	// "" otherwise.
	IDOrig string `json:"id_orig"`

	// Error anatomy (package anatomy, rules anatomy.Version): ErrorKind is
	// the kind of a wrong answer ("" for a right one, a document item, or a
	// run recorded before the rules existed); AltAnswer the answer the
	// noop-seeming clause's quantity would give (templates.Instance
	// AltAnswer); OriginalAnswer the template's answer at its own values.
	ErrorKind      string `json:"error_kind"`
	AltAnswer      string `json:"alt_answer"`
	OriginalAnswer string `json:"original_answer"`

	// The right answer after the model's own reasoning, a soft accuracy
	// (probe.AnswerScoreVersion, steps 1–3): after generation, the
	// expected answer is teacher-forced in the preset's final-answer form
	// after the model's text up to its final-answer marker (or after the
	// cut when the budget ended it). It follows whether the text reached
	// that answer (near 0 nats when it did), so it is accuracy with a
	// truncation artefact, not belief. AnswerScored is
	// false for a trial that was not scored (a document item, an answer
	// with no finite decimal form, a run recorded before the procedure);
	// the other columns are then 0. AnswerLogProb is the natural
	// log-probability (nats, ≤ 0) of the expected answer's tokens, summed
	// over its AnswerLogProbTokens tokens. OwnAnswerLogProb is the same
	// for the answer the model extracted (equal to AnswerLogProb when that
	// answer is right; 0 with OwnAnswerLogProbTokens 0 when it gave none
	// that renders as a number), and AnswerLogProbMargin is AnswerLogProb −
	// OwnAnswerLogProb when both were scored (0 otherwise): negative when
	// the model put more probability on its own wrong answer.
	AnswerScored           bool    `json:"answer_scored"`
	AnswerLogProb          float64 `json:"answer_logprob"`
	AnswerLogProbTokens    int     `json:"answer_logprob_tokens"`
	OwnAnswerLogProb       float64 `json:"own_answer_logprob"`
	OwnAnswerLogProbTokens int     `json:"own_answer_logprob_tokens"`
	AnswerLogProbMargin    float64 `json:"answer_logprob_margin"`

	// The answer first (probe.AnswerScoreVersion answer-score/2, step 4):
	// the expected answer in the preset's final-answer form ("Final
	// answer: 39") teacher-forced right after the prompt, before any
	// generated text, so that the two sides of a pair differ only in their
	// prompts. AnswerFirstLogProb is the natural log-probability (nats,
	// ≤ 0) of the number's tokens, summed over AnswerFirstLogProbTokens
	// tokens; both are 0 for a trial not scored so (a document item, an
	// answer with no finite decimal form, a skipped item, a run recorded
	// before answer-score/2).
	AnswerFirstLogProb       float64 `json:"answer_first_logprob"`
	AnswerFirstLogProbTokens int     `json:"answer_first_logprob_tokens"`
}

// ReferenceVariant is the variant t is paired with: t.Reference, or
// "base" when it names none.
func (t *Trial) ReferenceVariant() string {
	if t.Reference == "" {
		return "base"
	}
	return t.Reference
}

// Skipped reports whether the item was recorded without being run.
func (t *Trial) Skipped() bool { return t.SkipReason != "" }
