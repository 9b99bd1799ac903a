// Package llm is fragility's own thin cgo binding to llama.cpp: it loads a
// GGUF model in-process, reads its metadata, tokenizes, renders chats with the
// model's own template, and generates text while recording, for every
// generated token, the exact Shannon entropy of the next-token distribution
// over the full vocabulary.
//
// llama.cpp and ggml are compiled from the copy pinned inside the Go module
// github.com/ollama/ollama@v0.17.4 (llama.cpp commit ec98e2002), which this
// package blank-imports. Its headers are made visible to cgo by the Makefile
// (third_party/include, generated, git-ignored); build with `make build`.
//
// Types that own C memory (Model) have a Close method. No Go pointer is kept
// by C. Every C return code is checked and turned into an error. A Model is
// not safe for concurrent use: one goroutine at a time.
//
// It owns the binding and the exact per-token statistics (entropy, KL
// divergence, log-probabilities). It must not know about templates, runs or
// statistics across items (package probe and its subpackages do).
package llm
