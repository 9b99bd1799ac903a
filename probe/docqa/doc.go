// Package docqa reads a user's own document-question items and turns them
// into item sets for the fragility probe: the same question asked in its
// reworded forms (paraphrase-k), with on-topic but irrelevant passages added
// (distractor-k), with the passages in another order (shuffle), or both
// (distractor-shuffle), each compared with the item as written (base). It
// also scores a model's answer to such an item (Score).
//
// The item format is this project's own JSON Lines format, documented in
// docs/docqa.md. The package knows nothing about models: package probe
// renders the prompt (Body) and runs it.
//
// It must not load a model or compute a statistic.
package docqa
