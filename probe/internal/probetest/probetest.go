// Package probetest holds the helpers the tests of package probe and of
// the packages beside it share: the cached models they run, tiny
// random-weight models, small template folders, and writers and readers of
// run files for tests that edit a run directory. It is imported by tests
// only, and imports neither probe nor any package that does, so that
// probe's own tests can use it too.
package probetest

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/fragility/fragility/llm"
	"github.com/fragility/fragility/models"
	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

// GemmaName is the manifest name of the fast pretrained model these tests
// run (Gemma 3 270M, no chat template); ChatName the instruction-tuned chat
// model (the default LLM).
const (
	GemmaName = "gemma-3-270m-q4_k_m"
	ChatName  = "qwen2.5-coder-0.5b"
)

// GemmaModel returns the path of the cached Gemma 3 270M model, or fails
// the test saying how to fetch it.
func GemmaModel(t *testing.T) string {
	t.Helper()
	p, err := models.PathOf(GemmaName)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TinyModels writes n tiny random-weight models (seeds 1..n) and returns
// their paths. They need the default embedder's tokenizer.json.
func TinyModels(t *testing.T, n int) []string {
	t.Helper()
	tok := TinyTokenizer(t)
	out := t.TempDir()
	var paths []string
	for i := 1; i <= n; i++ {
		p := filepath.Join(out, "tiny-"+string(rune('a'+i-1))+".gguf")
		if _, err := llm.WriteTinyModel(p, llm.TinyOptions{Tokenizer: tok, Seed: uint64(i)}); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// TinyTokenizer returns the default embedder's tokenizer.json, the
// vocabulary of the tiny models.
func TinyTokenizer(t *testing.T) string {
	t.Helper()
	man, err := models.Load()
	if err != nil {
		t.Fatal(err)
	}
	md, err := man.Default("embedder")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := md.Path()
	if err != nil {
		t.Fatal(err)
	}
	tok := filepath.Join(dir, "tokenizer.json")
	if _, err := os.Stat(tok); err != nil {
		t.Fatalf("tiny model: %v (run `make models`)", err)
	}
	return tok
}

// builtinDir is the repository's folder of built-in templates
// (templates/builtin), found from this file's place in the source tree.
func builtinDir(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("probetest: no source path for the built-in templates")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "templates", "builtin")
}

// copyTemplates copies the built-in templates named (file names without
// ".yaml") into a fresh directory of the test and returns it.
func copyTemplates(t *testing.T, names ...string) string {
	t.Helper()
	src, dir := builtinDir(t), t.TempDir()
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(src, name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TinyTemplates copies two built-in templates into a fresh directory.
func TinyTemplates(t *testing.T) string {
	t.Helper()
	return copyTemplates(t, "baker", "stickers")
}

// ShardTemplates copies six built-in templates into a directory of the
// test, so that the shard tests' cost does not grow with the library.
func ShardTemplates(t *testing.T) string {
	t.Helper()
	return copyTemplates(t, "baker", "cycling", "discount", "fruit-stand", "packing", "stickers")
}

// TinyConfig is the config of a tiny run of the two tiny templates
// (TinyTemplates) on the models modelPaths in variants: one instance, 16
// tokens, nseq items per batch, written to a fresh directory of the test.
func TinyConfig(t *testing.T, modelPaths []string, variants []templates.Variant, nseq int) rundir.Config {
	t.Helper()
	return rundir.Config{Models: modelPaths, Templates: TinyTemplates(t), Variants: variants,
		Instances: 1, Seed: 7, MaxTokens: 16, BootstrapB: 50,
		Params: llm.Params{Threads: 1, NCtx: 512, NSeq: nseq}, OutDir: filepath.Join(t.TempDir(), "run")}
}

// ShardTestNCtx is chosen so that the tiny models' tokenizer leaves a few
// prompts longer than the context (checked by the test).
const ShardTestNCtx = 96

// ShardConfig is the plan of the shard tests: the models modelPaths (tiny
// ones: TinyModels), the templates in tdir (ShardTemplates) in base and
// noop, one instance, 3 items per batch, 4 tokens, and a context that some
// prompts do not fit (skipped items inside batches), written to out.
func ShardConfig(tdir string, modelPaths []string, out string) rundir.Config {
	return rundir.Config{Models: modelPaths, Templates: tdir,
		Variants:  []templates.Variant{templates.VariantBase, templates.VariantNoop},
		Instances: 1, Seed: 11, MaxTokens: 4, BootstrapB: 200,
		Params: llm.Params{Threads: 1, NCtx: ShardTestNCtx, NSeq: 3}, OutDir: out}
}

// WriteTrials writes trials as a results.csv file at path.
func WriteTrials(t *testing.T, path string, trials []results.Trial) {
	t.Helper()
	var buf bytes.Buffer
	if err := results.WriteCSV(&buf, trials); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// WriteTraces writes traces as the traces.jsonl of the run directory dir.
func WriteTraces(t *testing.T, dir string, traces []rundir.Trace) {
	t.Helper()
	var b strings.Builder
	for _, tr := range traces {
		line, err := json.Marshal(tr)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.FileTraces), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// CSVRows reads results.csv of the run directory dir as records, header
// first.
func CSVRows(t *testing.T, dir string) [][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, rundir.FileResults))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	return recs
}

// CopyDir copies the directory src to dst and returns dst.
func CopyDir(t *testing.T, src, dst string) string {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// EditManifest rewrites the manifest.json of the run directory dir after
// edit has changed it.
func EditManifest(t *testing.T, dir string, edit func(m *rundir.Manifest)) {
	t.Helper()
	m, err := rundir.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	edit(m)
	if err := rundir.WriteJSONAtomic(filepath.Join(dir, rundir.FileManifest), m); err != nil {
		t.Fatal(err)
	}
}
