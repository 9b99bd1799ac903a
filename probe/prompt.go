package probe

import (
	"fmt"

	"github.com/fragility/fragility/llm"
)

// PromptVersion names the instruction and exemplars below; it is recorded in
// every manifest and changes whenever either changes.
const PromptVersion = "fragility-prompt-1"

// Instruction is the fixed instruction put before every problem. It asks for
// step-by-step work and a last line "Final answer: <number>", which
// Extract's first rule reads.
const Instruction = "Solve the following math word problem. Work it out step by step, " +
	"then give the result on a last line of the form \"Final answer: <number>\" with the number alone."

// Exemplar is one worked problem of the few-shot mode. The exemplars are our
// own problems (not from GSM8K or GSM-Symbolic), so they cannot leak an
// evaluation item.
type Exemplar struct {
	Question string `json:"question"`
	Solution string `json:"solution"`
}

// Exemplars are the few-shot examples, used in order: --shots k uses the
// first k.
var Exemplars = []Exemplar{
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

// userTurn is the user message for one problem.
func userTurn(question string) string {
	return Instruction + "\n\nProblem: " + question
}

// Messages returns the chat for one problem with the first shots exemplars
// as earlier user/assistant turns. shots must be in [0, MaxShots].
func Messages(question string, shots int) ([]llm.Message, error) {
	if shots < 0 || shots > MaxShots {
		return nil, fmt.Errorf("shots must be between 0 and %d, got %d", MaxShots, shots)
	}
	var msgs []llm.Message
	for _, ex := range Exemplars[:shots] {
		msgs = append(msgs, llm.Message{Role: "user", Content: userTurn(ex.Question)},
			llm.Message{Role: "assistant", Content: ex.Solution})
	}
	return append(msgs, llm.Message{Role: "user", Content: userTurn(question)}), nil
}
