// Package protocol is the frozen test protocol (`fragility protocol
// freeze`, `run --protocol FILE`): FreezeProtocol records everything of a
// run's Config that shapes an answer or its score (the prompt as
// probe.PromptRecord gives it, the scoring rules, sampling and budget, the
// design and the templates' content hash) with its sha256, ReadProtocol
// reads one back and refuses one this binary would run otherwise, and
// Apply sets a Config to it.
package protocol
