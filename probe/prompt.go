package probe

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/probe/docqa"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

// PromptVersion names the instruction, its placebo wording and the
// exemplars below; it is recorded in every manifest and changes whenever
// any of them changes (fragility-prompt-1 had no placebo wording).
const PromptVersion = "fragility-prompt-2"

// Instruction is the fixed instruction put before every problem. It asks for
// step-by-step work and a last line "Final answer: <number>", which
// Extract's first rule reads.
const Instruction = "Solve the following math word problem. Work it out step by step, " +
	"then give the result on a last line of the form \"Final answer: <number>\" with the number alone."

// Exemplars are the few-shot examples, used in order: --shots k uses the
// first k.
var Exemplars = []rundir.Exemplar{
	{
		Question: "A gardener plants 4 rows of 9 tulips. A storm flattens 7 of them. How many tulips are still standing?",
		Solution: "The gardener plants 4 * 9 = 36 tulips.\nAfter the storm, 36 - 7 = 29 are still standing.\nFinal answer: 29",
	},
	{
		Question: "Mira buys 3 notebooks at $6 each and a pen for $4. She pays with a $50 bill. How much change does she get?",
		Solution: "The notebooks cost 3 * 6 = 18 dollars.\nWith the pen she spends 18 + 4 = 22 dollars.\nHer change is 50 - 22 = 28 dollars.\nFinal answer: 28",
	},
	{
		Question: "A cyclist rides at 15 kilometres per hour for 2 hours, then at 12 kilometres per hour for 3 hours. How far does she ride in total?",
		Solution: "In the first part she rides 15 * 2 = 30 km.\nIn the second part she rides 12 * 3 = 36 km.\nIn total she rides 30 + 36 = 66 km.\nFinal answer: 66",
	},
}

// MaxShots is the largest few-shot count.
var MaxShots = len(Exemplars)

// PlaceboInstruction is Instruction in other, equivalent words: the
// placebo variant's last user turn puts it where Instruction stands (the
// exemplars' turns keep Instruction), so that its prompt differs from the
// reference's in tokens and not in the problem, its numbers or what is
// asked.
const PlaceboInstruction = "Work through this math word problem one step at a time, " +
	"and end with a last line \"Final answer: <number>\" that holds the number alone."

// userTurn is the user message for one problem under instruction instr.
func userTurn(instr, question string) string {
	return instr + "\n\nProblem: " + question
}

// Messages returns the chat for one problem with the first shots exemplars
// as earlier user/assistant turns. shots must be in [0, MaxShots].
func Messages(question string, shots int) ([]llm.Message, error) {
	return messagesWith(Instruction, question, shots)
}

// messagesWith is Messages with instr as the last turn's instruction
// (Instruction, or PlaceboInstruction for the placebo variant).
func messagesWith(instr, question string, shots int) ([]llm.Message, error) {
	if shots < 0 || shots > MaxShots {
		return nil, fmt.Errorf("shots must be between 0 and %d, got %d", MaxShots, shots)
	}
	var msgs []llm.Message
	for _, ex := range Exemplars[:shots] {
		msgs = append(msgs, llm.Message{Role: "user", Content: userTurn(Instruction, ex.Question)},
			llm.Message{Role: "assistant", Content: ex.Solution})
	}
	return append(msgs, llm.Message{Role: "user", Content: userTurn(instr, question)}), nil
}

// Prompt presets: how an item's problem becomes the model's prompt.
const (
	// PromptFragility is this project's prompt: Instruction, up to MaxShots
	// of Exemplars as earlier chat turns, the problem as the last user turn,
	// rendered with the model's chat template.
	PromptFragility = "fragility"
	// PromptGSMSymbolic is the evaluation protocol of GSM-Symbolic
	// (Mirzadeh et al. 2025, §3 and appendix): the instruction line, then
	// 8 worked problems as "Q: ...\nA: Let's think step by step. ... The
	// final answer is N.", then "Q: <problem>\nA: Let's think step by
	// step." as one completion prompt (no chat template), greedy decoding,
	// generation stopped at the next "Q:". The authors used 8 GSM8K training
	// problems; GSMSymbolicExemplars are our own problems in the same shape,
	// so no benchmark item can leak into the prompt.
	PromptGSMSymbolic = "gsm-symbolic"
	// PromptDocQA is the reading preset of document items (run --items):
	// docqa.Instruction, then the passages numbered in the order shown and
	// the question (docqa.Body), as one user turn rendered with the chat
	// template; no exemplars.
	PromptDocQA = "docqa"
)

// GSMSymbolicPromptVersion names GSMSymbolicInstruction, its placebo
// wording and GSMSymbolicExemplars; it is recorded in the manifest
// (gsm-symbolic-8shot-2 had no placebo wording).
const GSMSymbolicPromptVersion = "gsm-symbolic-8shot-3"

// GSMSymbolicInstruction is the instruction line of the GSM-Symbolic
// protocol.
const GSMSymbolicInstruction = "As an expert problem solver, solve step by step the following mathematical questions."

// GSMSymbolicPlaceboInstruction is GSMSymbolicInstruction in other,
// equivalent words, the instruction line of the placebo variant under the
// gsm-symbolic preset. It opens the prompt, so a placebo item shares no
// kept prefix with the others under this preset and is decoded whole.
const GSMSymbolicPlaceboInstruction = "You are an expert problem solver: work step by step through each of the mathematical questions below."

// GSMSymbolicExemplars are the 8 shots of the gsm-symbolic preset: our own
// problems (not GSM8K's), written in the protocol's Q:/A: shape. Solution is
// the text after "A: " up to and including "The final answer is N.".
var GSMSymbolicExemplars = []rundir.Exemplar{
	{Question: "A library has 48 chairs. It buys 6 new tables that come with 4 chairs each. How many chairs does the library have now?",
		Solution: "Let's think step by step. The new tables come with 6 * 4 = 24 chairs. The library now has 48 + 24 = 72 chairs. The final answer is 72."},
	{Question: "Tomas saves $15 every week. How many weeks does he need to save to buy a bike that costs $120?",
		Solution: "Let's think step by step. Each week adds $15, so he needs 120 / 15 = 8 weeks. The final answer is 8."},
	{Question: "A baker makes 5 trays of 12 buns. She sells 38 buns in the morning. How many buns are left?",
		Solution: "Let's think step by step. She makes 5 * 12 = 60 buns. After selling 38, she has 60 - 38 = 22 buns left. The final answer is 22."},
	{Question: "A train travels at 80 kilometers per hour for 3 hours, then at 60 kilometers per hour for 2 hours. How far does it travel in total?",
		Solution: "Let's think step by step. In the first part it travels 80 * 3 = 240 km. In the second part it travels 60 * 2 = 120 km. In total it travels 240 + 120 = 360 km. The final answer is 360."},
	{Question: "Priya has 3 times as many stamps as Leo. Leo has 14 stamps. How many stamps do they have together?",
		Solution: "Let's think step by step. Priya has 3 * 14 = 42 stamps. Together they have 42 + 14 = 56 stamps. The final answer is 56."},
	{Question: "A farmer picks 84 apples and sets a quarter of them aside for juice. He packs the rest into bags of 9 apples. How many bags does he fill?",
		Solution: "Let's think step by step. A quarter of 84 is 84 / 4 = 21 apples for juice. That leaves 84 - 21 = 63 apples, which fill 63 / 9 = 7 bags. The final answer is 7."},
	{Question: "A phone plan costs $25 a month plus $0.10 for each text message. In May, Ana sent 130 text messages. How much did she pay for May?",
		Solution: "Let's think step by step. The texts cost 130 * 0.10 = $13. With the monthly fee she paid 25 + 13 = $38. The final answer is 38."},
	{Question: "Four friends share a $64 pizza order equally, and each of them also gives a $3 tip. How much does each friend pay?",
		Solution: "Let's think step by step. Each friend's share of the order is 64 / 4 = $16. With the tip each pays 16 + 3 = $19. The final answer is 19."},
}

// GSMSymbolicStop ends a gsm-symbolic generation where the model starts the
// next question (RunOnStops; the trial's stop reason is then StopRunOn).
// gsm-symbolic-8shot-1 stopped at "\nQ:" only.
var GSMSymbolicStop = RunOnStops

// ParsePrompt checks a --prompt value; "" is PromptFragility.
func ParsePrompt(s string) (string, error) {
	switch s {
	case "", PromptFragility:
		return PromptFragility, nil
	case PromptGSMSymbolic:
		return PromptGSMSymbolic, nil
	case PromptDocQA:
		return PromptDocQA, nil
	}
	return "", fmt.Errorf("unknown prompt %q (known: %s, %s, %s)", s, PromptFragility, PromptGSMSymbolic, PromptDocQA)
}

// MaxShotsFor is the largest --shots for a prompt preset.
func MaxShotsFor(preset string) int {
	if preset == PromptGSMSymbolic {
		return len(GSMSymbolicExemplars)
	}
	if preset == PromptDocQA {
		return 0
	}
	return MaxShots
}

// DefaultShotsFor is --shots when it is not given: 8 for gsm-symbolic (the
// protocol), 0 for this project's prompt.
func DefaultShotsFor(preset string) int {
	if preset == PromptGSMSymbolic {
		return len(GSMSymbolicExemplars)
	}
	return 0
}

// GSMSymbolicPrompt is the completion prompt of the gsm-symbolic preset for
// one problem with the first shots exemplars.
func GSMSymbolicPrompt(question string, shots int) (string, error) {
	return gsmSymbolicPromptWith(GSMSymbolicInstruction, question, shots)
}

// gsmSymbolicPromptWith is GSMSymbolicPrompt with instr as its instruction
// line.
func gsmSymbolicPromptWith(instr, question string, shots int) (string, error) {
	if shots < 0 || shots > len(GSMSymbolicExemplars) {
		return "", fmt.Errorf("shots must be between 0 and %d, got %d", len(GSMSymbolicExemplars), shots)
	}
	var b strings.Builder
	b.WriteString(instr)
	b.WriteString("\n\n")
	for _, ex := range GSMSymbolicExemplars[:shots] {
		fmt.Fprintf(&b, "Q: %s\nA: %s\n\n", ex.Question, ex.Solution)
	}
	fmt.Fprintf(&b, "Q: %s\nA: Let's think step by step.", question)
	return b.String(), nil
}

// ItemText is the text of an instance that RenderItem renders: the
// question, or for a document item its passages and question (docqa.Body).
func ItemText(in *templates.Instance) string {
	if len(in.Passages) > 0 {
		return docqa.Body(in)
	}
	return in.Question
}

// RenderItem renders one problem's prompt for model m under cfg's preset:
// PromptDocQA as one user turn (docqa.Instruction and question, which is
// then ItemText's passages and question); PromptFragility through the chat template (cfg.ChatTemplate, or the
// model's own); PromptGSMSymbolic as raw completion text (Template "raw"),
// or, when cfg.ChatTemplate names a template, as one user turn rendered with
// it. Stop strings the preset needs are in the result.
func RenderItem(m *llm.Model, cfg rundir.Config, question string) (llm.Rendered, error) {
	return renderItem(m, cfg, question, false)
}

// instructionOf is the instruction line of a numeric preset, its placebo
// wording when placebo is set.
func instructionOf(preset string, placebo bool) string {
	switch {
	case preset == PromptGSMSymbolic && placebo:
		return GSMSymbolicPlaceboInstruction
	case preset == PromptGSMSymbolic:
		return GSMSymbolicInstruction
	case placebo:
		return PlaceboInstruction
	}
	return Instruction
}

// renderItem is RenderItem with the placebo variant's instruction when
// placebo is set (templates.VariantPlacebo).
func renderItem(m *llm.Model, cfg rundir.Config, question string, placebo bool) (llm.Rendered, error) {
	preset, err := ParsePrompt(cfg.Prompt)
	if err != nil {
		return llm.Rendered{}, err
	}
	if preset == PromptDocQA {
		return m.RenderChatWith([]llm.Message{{Role: "user", Content: docqa.Instruction + "\n\n" + question}}, cfg.ChatTemplate)
	}
	if preset == PromptGSMSymbolic {
		text, err := gsmSymbolicPromptWith(instructionOf(preset, placebo), question, cfg.Shots)
		if err != nil {
			return llm.Rendered{}, err
		}
		return renderGSMSymbolicText(m, cfg, text)
	}
	msgs, err := messagesWith(instructionOf(preset, placebo), question, cfg.Shots)
	if err != nil {
		return llm.Rendered{}, err
	}
	return m.RenderChatWith(msgs, cfg.ChatTemplate)
}

// PromptRecord is the manifest's record of the frozen prompt of cfg: the
// prompt preset's version, instruction, placebo instruction, exemplars (as
// many as cfg.Shots) and stop strings.
func PromptRecord(cfg rundir.Config) rundir.PromptInfo {
	preset, _ := ParsePrompt(cfg.Prompt)
	if preset == PromptDocQA {
		return rundir.PromptInfo{Version: docqa.PromptVersion, Preset: preset, Instruction: docqa.Instruction, Exemplars: []rundir.Exemplar{}}
	}
	if preset == PromptGSMSymbolic {
		shots := min(max(cfg.Shots, 0), len(GSMSymbolicExemplars))
		return rundir.PromptInfo{Version: GSMSymbolicPromptVersion, Preset: preset, Instruction: GSMSymbolicInstruction,
			PlaceboInstruction: GSMSymbolicPlaceboInstruction, Exemplars: GSMSymbolicExemplars[:shots], Stop: GSMSymbolicStop}
	}
	shots := min(max(cfg.Shots, 0), MaxShots)
	return rundir.PromptInfo{Version: PromptVersion, Preset: preset, Instruction: Instruction, PlaceboInstruction: PlaceboInstruction, Exemplars: Exemplars[:shots]}
}

// keptPrefixProbes are the problem texts KeptPrefix renders: they start with
// a letter, a digit and a symbol, so that a tokenizer that merges a
// problem's first character with the text before it makes the common prefix
// stop before that text.
var keptPrefixProbes = []string{"Ab", "12", "(x"}

// KeptPrefix returns the token prefix that every prompt of model m shares
// under cfg and condition cond: the tokens common to the prompts of three
// probe problems (keptPrefixProbes), i.e. the rendering up to where the
// problem's text starts (the chat template's opening, the instruction, the
// worked examples); under DecodeKeepPrefix and the fragility preset also
// of the first probe in the placebo's wording (PlaceboInstruction), so
// that the prefix ends before the last turn's instruction and placebo
// items keep it too (DecodeKeepPrefixV1 did not). It depends on the configuration alone, never on which
// items a batch, a shard or a resumed run holds, so every part of a run
// keeps the same prefix (DecodeKeepPrefix); a prompt that does not start
// with it (a tokenizer that merges across the boundary) is decoded without
// it, by the rule of llm.GenerateOptions.KeepPrefix. Errors are those of
// rendering and tokenizing.
func KeptPrefix(m *llm.Model, cfg rundir.Config, cond string) ([]llm.Token, error) {
	var keep []llm.Token
	probes := len(keptPrefixProbes)
	if preset, _ := ParsePrompt(cfg.Prompt); cfg.Decode != DecodeKeepPrefixV1 && preset == PromptFragility {
		probes++ // the placebo's wording: its last turn shares the exemplars' turns
	}
	for i := range probes {
		q, placebo := keptPrefixProbes[i%len(keptPrefixProbes)], i >= len(keptPrefixProbes)
		r, err := RenderCondition(m, cfg, q, cond, placebo)
		if err != nil {
			return nil, err
		}
		toks, err := m.Tokenize(r.Text, true, true)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			keep = toks
			continue
		}
		n := 0
		for n < len(keep) && n < len(toks) && keep[n] == toks[n] {
			n++
		}
		keep = keep[:n]
	}
	return keep, nil
}

// KeptPrefixes caches KeptPrefix per condition for one model of a run
// whose Decode is DecodeKeepPrefix.
type KeptPrefixes map[string][]llm.Token

// Get returns the kept prefix of condition cond (nil when cfg does not keep
// one).
func (k *KeptPrefixes) Get(m *llm.Model, cfg rundir.Config, cond string) ([]llm.Token, error) {
	if cfg.Decode != DecodeKeepPrefix && cfg.Decode != DecodeKeepPrefixV1 {
		return nil, nil
	}
	if p, ok := (*k)[cond]; ok {
		return p, nil
	}
	p, err := KeptPrefix(m, cfg, cond)
	if err != nil {
		return nil, fmt.Errorf("the prompt prefix to keep: %w", err)
	}
	if *k == nil {
		*k = KeptPrefixes{}
	}
	(*k)[cond] = p
	return p, nil
}

// RenderCondition renders one problem's prompt as RenderItem does, with
// the calculator note after the instruction under the calculator
// condition (in the last user turn for the fragility preset).
func RenderCondition(m *llm.Model, cfg rundir.Config, question, cond string, placebo bool) (llm.Rendered, error) {
	if cond != results.ConditionCalculator {
		return renderItem(m, cfg, question, placebo)
	}
	note := CalcNote(max(cfg.CalcCalls, 1))
	preset, err := ParsePrompt(cfg.Prompt)
	if err != nil {
		return llm.Rendered{}, err
	}
	switch preset {
	case PromptGSMSymbolic:
		if cfg.Shots < 0 || cfg.Shots > len(GSMSymbolicExemplars) {
			return llm.Rendered{}, fmt.Errorf("shots must be between 0 and %d, got %d", len(GSMSymbolicExemplars), cfg.Shots)
		}
		var b strings.Builder
		b.WriteString(instructionOf(preset, placebo) + " " + note + "\n\n")
		for _, ex := range GSMSymbolicExemplars[:cfg.Shots] {
			fmt.Fprintf(&b, "Q: %s\nA: %s\n\n", ex.Question, CalcSolution(ex.Solution))
		}
		fmt.Fprintf(&b, "Q: %s\nA: Let's think step by step.", question)
		text := b.String()
		return renderGSMSymbolicText(m, cfg, text)
	case PromptFragility:
		msgs, err := messagesWith(instructionOf(preset, placebo), question, cfg.Shots)
		if err != nil {
			return llm.Rendered{}, err
		}
		for i := range msgs {
			if msgs[i].Role == "assistant" {
				msgs[i].Content = CalcSolution(msgs[i].Content)
			}
		}
		last := &msgs[len(msgs)-1]
		instr := instructionOf(preset, placebo)
		last.Content = strings.Replace(last.Content, instr, instr+" "+note, 1)
		return m.RenderChatWith(msgs, cfg.ChatTemplate)
	}
	return llm.Rendered{}, fmt.Errorf("the calculator condition has no prompt for --prompt %s", preset)
}

// renderGSMSymbolicText renders the gsm-symbolic preset's completion text:
// raw (no chat template) unless cfg names one, with the preset's stop
// strings.
func renderGSMSymbolicText(m *llm.Model, cfg rundir.Config, text string) (llm.Rendered, error) {
	if cfg.ChatTemplate == "" {
		return llm.Rendered{Text: text, Template: "raw", Stop: slices.Clone(GSMSymbolicStop)}, nil
	}
	r, err := m.RenderChatWith([]llm.Message{{Role: "user", Content: text}}, cfg.ChatTemplate)
	if err != nil {
		return r, err
	}
	r.Stop = append(r.Stop, GSMSymbolicStop...)
	return r, nil
}
