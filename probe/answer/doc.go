// Package answer extracts the final answer from a model's response and
// compares numbers exactly. It is a leaf package (no cgo, no llama.cpp), so its
// fuzz target builds in seconds.
//
// It owns the extraction rules and their version (ExtractionRulesVersion).
// It must not know about models, runs or statistics.
package answer
