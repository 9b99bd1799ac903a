package main

import (
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	gguf "github.com/gpustack/gguf-parser-go"
)

// cpu are the flags that keep a test on the CPU and quiet about GPUs.
var cpu = []string{"--gpu-layers", "0", "--threads", "2"}

// logLLM makes llama.cpp print its log: a model load would then add many
// lines to stderr, which oneErrorLine refuses.
var logLLM = []string{"FRAGILITY_LLAMA_LOG=1"}

// modelHeader returns the bytes of the Gemma model before its tensor data
// and the model's size.
func modelHeader(t *testing.T) ([]byte, int64) {
	t.Helper()
	src := gemmaLLM(t)
	f, err := gguf.ParseGGUFFile(src, gguf.SkipLargeMetadata(), gguf.UseMMap())
	if err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	st, _ := fh.Stat()
	h := make([]byte, f.TensorDataStartOffset)
	if _, err := fh.ReadAt(h, 0); err != nil {
		t.Fatal(err)
	}
	return h, st.Size()
}

// sparseModel writes header and extends the file with zeros to size.
func sparseModel(t *testing.T, path string, header []byte, size int64) string {
	t.Helper()
	if err := os.WriteFile(path, header, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
	return path
}

// valueAt returns the offset of the type field of a metadata key's value.
func valueAt(t *testing.T, header []byte, key string) int {
	t.Helper()
	var k bytes.Buffer
	binary.Write(&k, binary.LittleEndian, uint64(len(key)))
	k.WriteString(key)
	i := bytes.Index(header, k.Bytes())
	if i < 0 {
		t.Fatalf("no key %s", key)
	}
	return i + k.Len()
}

// TestBadModelFiles runs `fragility inspect` and `fragility run` on bad model
// files made here: each must fail with one error line naming the file and
// the problem, exit 1, load nothing and crash nowhere.
func TestBadModelFiles(t *testing.T) {
	header, size := modelHeader(t)
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }

	os.WriteFile(p("empty.gguf"), nil, 0o644)
	os.WriteFile(p("garbage.gguf"), bytes.Repeat([]byte("garbage!"), 1000), 0o644)
	os.Mkdir(p("dir.gguf"), 0o755)
	os.WriteFile(p("truncated.gguf"), append(bytes.Clone(header), make([]byte, 4096)...), 0o644)
	arch := valueAt(t, header, "general.architecture")
	h := bytes.Clone(header)
	binary.LittleEndian.PutUint32(h[arch:], 0x99) // a value type GGUF does not have
	sparseModel(t, p("corrupt-metadata.gguf"), h, size)
	h = bytes.Clone(header)
	binary.LittleEndian.PutUint32(h[valueAt(t, header, "gemma3.block_count")+4:], 0)
	sparseModel(t, p("zero-layers.gguf"), h, size)
	h = bytes.Clone(header)
	copy(h[arch+12:], "mamba9")
	sparseModel(t, p("unknown-arch.gguf"), h, size)

	cases := []struct {
		name, path string
		env        []string
		want       string
	}{
		{"missing", p("missing.gguf"), nil, "missing.gguf: no such file"},
		{"directory", p("dir.gguf"), nil, "dir.gguf: is a directory, not a GGUF file"},
		{"empty", p("empty.gguf"), nil, "empty.gguf: empty file: not a GGUF file"},
		{"not GGUF", p("garbage.gguf"), nil, `garbage.gguf: not a GGUF file (bad magic "garb")`},
		{"truncated", p("truncated.gguf"), nil, "truncated.gguf: truncated GGUF (or a corrupt tensor table): its tensors need 246587904 bytes after the header but only 4096 are there"},
		{"corrupt metadata", p("corrupt-metadata.gguf"), nil, "corrupt-metadata.gguf: corrupt GGUF metadata: key \"general.architecture\" has value type 153, not a GGUF value type"},
		{"zero layers", p("zero-layers.gguf"), nil, "zero-layers.gguf: corrupt GGUF metadata: gemma3.block_count is 0"},
		{"unknown architecture", p("unknown-arch.gguf"), nil, `unknown-arch.gguf: unknown model architecture "mamba9" (general.architecture): llama.cpp ec98e2002 does not support it`},
		{"too large", gemmaLLM(t), []string{"FRAGILITY_MEM_AVAILABLE=50000000"}, "gemma-3-270m-q4_k_m.gguf: too large for this machine: its tensors need 235.2 MiB but only 47.7 MiB of memory is available (FRAGILITY_MEM_AVAILABLE)"},
	}
	for _, c := range cases {
		env := append(append([]string(nil), logLLM...), c.env...)
		r := fragility(t, env, append(append([]string{"inspect"}, cpu...), c.path)...)
		oneErrorLine(t, "inspect "+c.name, r, "fragility: "+c.path+": ", c.want)
	}
	// The same through `run`: refused before the output directory exists.
	for _, c := range []int{4, 7, 8} {
		out := filepath.Join(dir, "run-"+strings.ReplaceAll(cases[c].name, " ", "-"))
		env := append(append([]string(nil), logLLM...), cases[c].env...)
		r := fragility(t, env, append([]string{"run", "--no-ddc", "--model", cases[c].path, "--out", out}, cpu...)...)
		oneErrorLine(t, "run "+cases[c].name, r, cases[c].want)
		if _, err := os.Stat(out); err == nil {
			t.Errorf("run %s: %s was created", cases[c].name, out)
		}
	}
	// Through `plan`, which calibrates on the model: refused before the
	// calibration says it starts.
	for _, c := range []int{1, 3} {
		r := fragility(t, logLLM, append([]string{"plan", "--model", cases[c].path}, cpu...)...)
		oneErrorLine(t, "plan "+cases[c].name, r, cases[c].want)
	}
	// And through `compare`, whose vocabulary check reads the files first.
	for _, c := range []int{4, 5} {
		out := filepath.Join(dir, "compare-"+strings.ReplaceAll(cases[c].name, " ", "-"))
		r := fragility(t, logLLM, append([]string{"compare", gemmaLLM(t), cases[c].path, "--out", out}, cpu...)...)
		oneErrorLine(t, "compare "+cases[c].name, r, cases[c].want)
	}
}

// TestUnreadableModel makes a mode-000 model file. Root reads any file, so
// when the tests run as root the command runs as user nobody (65534).
func TestUnreadableModel(t *testing.T) {
	bin := fragilityBin(t)
	dir, err := os.MkdirTemp("", "fragility-unreadable-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	p := filepath.Join(dir, "locked.gguf")
	if err := os.WriteFile(p, []byte("GGUF\x03\x00\x00\x00"), 0o000); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o000)
	cmd := exec.Command(bin, append(append([]string{"inspect"}, cpu...), p)...)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	r := wait(t, cmd, start(t, cmd))
	oneErrorLine(t, "unreadable", r, "fragility: "+p+": cannot read: permission denied")
}

// TestBadEmbedder points --embedder at directories that are not a sentence
// embedder: the run stops before any model loads and before its directory
// is made.
func TestBadEmbedder(t *testing.T) {
	dir := t.TempDir()
	notONNX := filepath.Join(dir, "not-onnx")
	os.Mkdir(notONNX, 0o755)
	os.WriteFile(filepath.Join(notONNX, "model.onnx"), []byte("this is not a protobuf message at all"), 0o644)
	os.WriteFile(filepath.Join(notONNX, "tokenizer.json"), []byte("{}"), 0o644)
	noTok := filepath.Join(dir, "no-tokenizer")
	os.Mkdir(noTok, 0o755)
	os.WriteFile(filepath.Join(noTok, "model.onnx"), []byte{0x08, 0x07}, 0o644)
	file := filepath.Join(dir, "model.onnx")
	os.WriteFile(file, []byte{0x08, 0x07}, 0o644)
	for _, c := range []struct{ name, path, prefix, want string }{
		{"not ONNX", notONNX, "fragility: embed: ", "not an ONNX model"},
		{"no tokenizer.json", noTok, "fragility: embed: ", "no-tokenizer: no tokenizer.json"},
		{"a file, not a directory", file, "fragility: embed: ", "model.onnx: not a directory"},
		// A path that does not exist is the flag's (round-4 retry).
		{"missing", filepath.Join(dir, "nowhere"), "fragility: --embedder ", "nowhere: no such file or directory"},
	} {
		out := filepath.Join(dir, "out")
		r := fragility(t, logLLM, append([]string{"run", "--embedder", c.path, "--out", out}, cpu...)...)
		oneErrorLine(t, c.name, r, c.prefix, c.path, c.want)
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: %s was created", c.name, out)
		}
	}
}

// shelf is a valid own-format template the template cases below break.
const shelf = `id: shelf
relation: add-subtract
steps: 2
variables:
  name: {pool: names_female, base: Mia}
  books: {min: 5, max: 40, base: 12}
  lent: {min: 1, max: 4, base: 3}
conditions:
  - lent < books
answer: (books - lent) * 2
question: "{name} has {books} books and lends {lent} to a friend. What is twice the number she keeps?"
`

// TestBadTemplates runs `fragility run --templates BAD`: a clear error with
// file and line, before any model loads (llama.cpp's log stays empty) and
// before the output directory is made.
func TestBadTemplates(t *testing.T) {
	// The control: with logLLM, a model load does write llama.cpp's log.
	if r := fragility(t, logLLM, append([]string{"inspect"}, cpu...)...); r.code != 0 || !strings.Contains(r.stderr, "llama_model_load") {
		t.Fatalf("inspect with %v: exit %d, no llama.cpp log on stderr:\n%s", logLLM, r.code, tail(r.stderr))
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(good, []byte(shelf), 0o644)
	if r := fragility(t, nil, "templates", "check", good); r.code != 0 {
		t.Fatalf("the good template fails its check: %s%s", r.stdout, r.stderr)
	}
	for _, c := range []struct{ name, old, new, variants, want string }{
		{"syntax error", "lent: {min: 1, max: 4, base: 3}", "lent: {min: 1, max: 4, base: 3", "base", "bad.yaml:7: syntax error: did not find expected ',' or '}'"},
		{"unknown variable", "answer: (books - lent) * 2", "answer: (books - lent) * shelves", "base", `bad.yaml:10: template shelf: answer: unknown variable "shelves"`},
		{"unknown helper", "answer: (books - lent) * 2", "answer: sqrt(books - lent)", "base", `unknown helper "sqrt"`},
		{"unknown pool", "pool: names_female", "pool: planets", "base", `bad.yaml:5: template shelf: variable name: unknown pool "planets"`},
		{"division by zero", "answer: (books - lent) * 2", "answer: books / (lent - 3)", "base", "division by zero"},
		{"non-integer answer", "answer: (books - lent) * 2", "answer: books / 5", "base", "answer 2.4 is not an integer"},
		{"unsatisfiable", "  - lent < books", "  - books * lent == 36\n  - books == 12", "base,numbers", "no valid numbers instance"},
	} {
		bad := filepath.Join(dir, "bad.yaml")
		src := strings.Replace(shelf, c.old, c.new, 1)
		if src == shelf {
			t.Fatalf("%s: %q not in the template", c.name, c.old)
		}
		os.WriteFile(bad, []byte(src), 0o644)
		out := filepath.Join(dir, "out")
		r := fragility(t, logLLM, append([]string{"run", "--no-ddc", "--templates", bad, "--variants", c.variants, "--out", out}, cpu...)...)
		oneErrorLine(t, c.name, r, bad, c.want)
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: %s was created", c.name, out)
		}
	}
}

// TestOutputDirChecks: an existing run directory is not overwritten without
// --force, and an unwritable or full one is refused before a model loads.
func TestOutputDirChecks(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing")
	os.Mkdir(existing, 0o755)
	keep := filepath.Join(existing, "results.csv")
	os.WriteFile(keep, []byte("precious\n"), 0o644)
	r := fragility(t, logLLM, append([]string{"run", "--no-ddc", "--out", existing}, cpu...)...)
	oneErrorLine(t, "existing directory", r, "output directory "+existing+" already exists and holds files but no manifest.json, so it is no run to resume: use another --out, or --force to write the run beside them (only fragility's run files are replaced)")
	if b, _ := os.ReadFile(keep); string(b) != "precious\n" {
		t.Errorf("existing results.csv changed to %q", b)
	}
	if _, err := os.Stat(filepath.Join(existing, "fragility.lock")); err == nil {
		t.Error("the refused run left its lock file in a folder that is not a run")
	}

	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	under := filepath.Join(file, "run")
	r = fragility(t, logLLM, append([]string{"run", "--no-ddc", "--out", under}, cpu...)...)
	oneErrorLine(t, "under a file", r, "output directory "+under+": mkdir "+file+": not a directory")

	r = fragility(t, logLLM, "run", "--resume", filepath.Join(dir, "never-ran"))
	oneErrorLine(t, "resume of nothing", r, "never-ran")

	full := filepath.Join(dir, "full")
	os.Mkdir(full, 0o755)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", full).CombinedOutput(); err != nil {
		t.Skipf("full disk: cannot mount a 16 KiB tmpfs to fill (%v: %s)", err, bytes.TrimSpace(out))
	}
	defer exec.Command("umount", full).Run()
	out := filepath.Join(full, "run")
	r = fragility(t, logLLM, append([]string{"run", "--no-ddc", "--out", out}, cpu...)...)
	oneErrorLine(t, "full disk", r, "output directory "+out+": cannot write (disk full?): ", "no space left on device")
}

// TestUsageExitCodes: wrong usage exits 2 with one line, flags named with
// two dashes, no GPU notice before it; a resumed run refuses a flag that
// would change its plan, naming it.
func TestUsageExitCodes(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"run", "--frobnicate"}, "flag provided but not defined: --frobnicate"},
		{[]string{"run", "--model", gemmaName, "--instances", "0", "--out", out, "--gpu-layers", "99"}, "--instances must be at least 1"},
		{[]string{"run", "--model", gemmaName, "--max-tokens", "0", "--out", out}, "--max-tokens must be at least 1"},
		{[]string{"run", "--model", gemmaName, "--shots", "9", "--out", out}, "--shots must be between 0 and"},
		{[]string{"run", "--resume", out, "--instances", "5"}, "--instances with --resume"},
		{[]string{"run", "--resume", out, "--seed", "3"}, "--seed with --resume"},
		{[]string{"run", "--resume", out, "--threads-batch", "2"}, "--threads-batch with --resume"},
		{[]string{"run", "--model", gemmaName, "--threads-batch", "1000000", "--out", out}, "--threads-batch must be between 0 (the default) and 512, got 1000000"},
		{[]string{"generate", "--prompt", "hi", "--threads", "-1"}, "--threads must be between 0 (the default) and 512, got -1"},
		{[]string{"generate", "--prompt", " "}, "--prompt was given an empty value"},
		{[]string{"bench", "--threads-batch", "513"}, "--threads-batch must be between 0 (the default) and 512"},
		{[]string{"plan", "--threads", "100000"}, "--threads must be between 0 (the default) and 512"},
		// 0 is not "no limit": the flag's default is the limit.
		{[]string{"plan", "--max-templates", "0"}, "--max-templates must be between 2 and 1000000, got 0"},
		{[]string{"plan", "--max-templates", "-5"}, "--max-templates must be between 2 and 1000000, got -5"},
		{[]string{"plan", "--max-templates", "2147483647", "--drop", "0.5"}, "--max-templates must be between 2 and 1000000, got 2147483647"},
		// A rate and variances no machine or 0/1 answers give.
		{[]string{"plan", "--tokens-per-second", "NaN"}, "--tokens-per-second must be between 0.001 and 10000000, got NaN"},
		{[]string{"plan", "--tokens-per-second", "1e-300"}, "--tokens-per-second must be between 0.001 and 10000000, got 1e-300"},
		{[]string{"plan", "--between", "1e300"}, "each must be in [0, 1], got 1e+300 and"},
		{[]string{"plan", "--within", "Inf"}, "each must be in [0, 1], got"},
		// A power below α/2 gave a negative minimum detectable drop.
		{[]string{"plan", "--power", "0.01"}, "--power must be in [0.5, 1), got 0.01"},
		{[]string{"plan", "--power", "1"}, "--power must be in [0.5, 1), got 1"},
		// llama.cpp takes a negative quantization thread count as "all".
		{[]string{"quantize", "--type", "Q8_0", "--threads", "-2", "in.gguf", "out.gguf"}, "--threads must be between 0 (the default) and 512, got -2"},
		// n_batch below the sequences of a batch aborted inside llama_decode
		// (GGML_ASSERT n_tokens_all <= n_batch); plan panicked in
		// gguf-parser-go.
		{[]string{"run", "--model", gemmaName, "--n-batch", "4", "--out", out}, "--n-batch must be at least --batch (8)"},
		{[]string{"plan", "--n-batch", "4"}, "--n-batch must be at least --batch (8)"},
		{[]string{"bench", "--n-batch", "1"}, "--n-batch must be at least --batch (8)"},
		{[]string{"bench", "--entropy-pool", "-2"}, "--entropy-pool must be -1 (off), 0 (default) or 1..64, got -2"},
		{[]string{"run", "--model", gemmaName, "--bootstrap", "1000000000000", "--out", out}, "--bootstrap must be between 1 and 100000"},
		{[]string{"run", "--model", gemmaName, "--bootstrap", "0", "--out", out}, "--bootstrap must be between 1 and 100000"},
		{[]string{"run", "--model", gemmaName, "--temperature", "inf", "--out", out}, "--temperature must be a finite number"},
		{[]string{"run", "--model", "", "--out", out}, "--model was given an empty value"},
		// An empty value was read as the flag left out (its default), an
		// empty argument as none (inspect loaded the default model).
		{[]string{"plan", "--from", ""}, "--from was given an empty value (see: fragility plan --help)"},
		{[]string{"plan", "--templates", ""}, "--templates was given an empty value"},
		{[]string{"plan", "--templates", "builtin,"}, "--templates was given an empty value"},
		{[]string{"run", "--protocol", "", "--out", out}, "--protocol was given an empty value"},
		{[]string{"templates", "list", "--templates", " "}, "--templates was given an empty value (see: fragility templates list --help)"},
		{[]string{"inspect", ""}, "an empty argument was given (see: fragility inspect --help)"},
		// A stray comma was read as no variant.
		{[]string{"plan", "--variants", "base,"}, `an empty variant name in "base," (a stray comma?)`},
		{[]string{"generate-set", "--instances", "0", "--out", filepath.Join(filepath.Dir(out), "set.jsonl")}, "--instances must be at least 1, got 0"},
		// A template ID named twice, or a stray comma, was accepted (--variants refuses both).
		{[]string{"plan", "--template-ids", "baker,baker"}, `--template-ids: template "baker" named twice in "baker,baker"`},
		{[]string{"plan", "--template-ids", "baker,"}, `--template-ids: an empty template ID in "baker," (a stray comma?)`},
		// strconv's "parse error" did not say what the flag takes.
		{[]string{"run", "--seed", "-1", "--out", out}, `invalid value "-1" for flag --seed: not a whole number from 0 to 18446744073709551615`},
		{[]string{"plan", "--instances", "2.5"}, `invalid value "2.5" for flag --instances: not a whole number`},
		{[]string{"plan", "--power", "high"}, `invalid value "high" for flag --power: not a number`},
		{[]string{"run", "--force=maybe", "--out", out}, `invalid boolean value "maybe" for --force: not true or false`},
		// A variant named twice was dropped without a word.
		{[]string{"plan", "--variants", "base,noop,base"}, `--variants: variant "base" named twice in "base,noop,base"`},
		{[]string{"generate-set", "--variants", "noop, noop", "--out", filepath.Join(filepath.Dir(out), "set.jsonl")}, `--variants: variant "noop" named twice in "noop, noop"`},
		// A 0 shape was read as the default; a shape out of range exited 1.
		{[]string{"tiny-model", "--layers", "0", filepath.Join(filepath.Dir(out), "t.gguf")}, "--layers must be at least 1, got 0"},
		{[]string{"tiny-model", "--kv-heads", "0", filepath.Join(filepath.Dir(out), "t.gguf")}, "--kv-heads must be at least 1, got 0"},
		{[]string{"tiny-model", "--heads", "3", filepath.Join(filepath.Dir(out), "t.gguf")}, "the attention heads (--heads) must divide the embedding width 64, got 3"},
		{[]string{"tiny-model", "--embd", "1000000000", filepath.Join(filepath.Dir(out), "t.gguf")}, "the embedding width (--embd) must be a multiple of 32 (the Q8_0 block) from 32 to 4096, got 1000000000"},
		{[]string{"tiny-model", "--heads", "1", "--kv-heads", "2", filepath.Join(filepath.Dir(out), "t.gguf")}, "the key/value heads (--kv-heads) must divide the attention heads (1), got 2"},
		// A budget the context window cannot hold was accepted.
		{[]string{"plan", "--max-tokens", "999999999"}, "--max-tokens 999999999 is not below the context length --n-ctx 2048"},
		{[]string{"generate", "--prompt", "hi", "--max-tokens", "5000", "--n-ctx", "4096"}, "--max-tokens 5000 is not below the context length --n-ctx 4096"},
		{[]string{"verify", " "}, "an empty argument was given"},
		{[]string{"plan", "--templates", "../../templates/builtin", "--templates", "../../templates/builtin/"}, "--templates: ../../templates/builtin/ is given twice"},
		// The help page went to stdout before the line (cli's Required).
		{[]string{"generate"}, "--prompt is required"},
		// A variant no item has was dropped: exit 0, base alone.
		{[]string{"plan", "--items", "../../examples/docqa.jsonl", "--variants", "paraphrase-9"}, "--variants paraphrase-9: no item in ../../examples/docqa.jsonl has a paraphrase-9 instance (the items have 2 paraphrases at most: paraphrase-1..2)"},
		{[]string{"plan", "--items", "../../examples/docqa.jsonl", "--variants", "base,paraphrase,paraphrase-3"}, "--variants paraphrase-3: no item in"},
		{[]string{"run", "--model", gemmaName, "--items", "../../examples/docqa.jsonl", "--variants", "paraphrase-9", "--no-ddc", "--out", out}, "--variants paraphrase-9: no item in ../../examples/docqa.jsonl has a paraphrase-9 instance (the items have 2 paraphrases at most: paraphrase-1..2)"},
	} {
		r := fragility(t, nil, c.args...)
		line := strings.TrimSuffix(r.stderr, "\n")
		if r.code != exitUsage || strings.Contains(line, "\n") || !strings.Contains(line, c.want) || r.stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, %d bytes on stdout; want exit 2, one line with %q and nothing on stdout", c.args, r.code, r.stderr, len(r.stdout), c.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a refused run made %s", out)
	}
}

// TestVariantsCovered: a variant that no item or template of the set has is
// refused, before a model loads; one some lack and others have runs, with
// the instances it cannot make left out (and said apart from the draws
// refused and drawn again).
func TestVariantsCovered(t *testing.T) {
	dir := t.TempDir()
	items := filepath.Join(dir, "items.jsonl")
	os.WriteFile(items, []byte(`{"id":"one","passages":[{"id":"p","text":"The bell weighs 40 kg."}],"question":"How heavy is the bell?","paraphrases":["What does the bell weigh?"],"answer":40}
{"id":"two","passages":[{"id":"p","text":"The mill is 12 m tall."}],"question":"How tall is the mill?","paraphrases":["What is the mill's height?","How high is the mill?"],"answer":12}
`), 0o644)
	if r := fragility(t, nil, "plan", "--items", items, "--variants", "base,paraphrase-2"); r.code != 0 || !strings.Contains(r.stdout, "items.jsonl, 1 variant instance left out)") {
		t.Errorf("paraphrase-2, which one item has: exit %d, stderr %q, stdout:\n%s", r.code, r.stderr, r.stdout)
	}
	shelfFile := filepath.Join(dir, "shelf.yaml")
	os.WriteFile(shelfFile, []byte(shelf), 0o644)
	two := filepath.Join(dir, "two")
	os.Mkdir(two, 0o755)
	os.WriteFile(filepath.Join(two, "shelf.yaml"), []byte(shelf), 0o644)
	b, err := os.ReadFile("../../templates/builtin/allowance.yaml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(two, "allowance.yaml"), b, 0o644)
	if r := fragility(t, nil, "plan", "--templates", two, "--variants", "noop-seeming"); r.code != 0 || !regexp.MustCompile(`[0-9]+ draws refused and drawn again, [0-9]+ variant instances left out`).MatchString(r.stdout) {
		t.Errorf("noop-seeming, which one template has: exit %d, stderr %q, stdout:\n%s", r.code, r.stderr, r.stdout)
	}
	out := filepath.Join(dir, "run")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "--items", items, "--variants", "paraphrase-3"}, "--variants paraphrase-3: no item in " + items + " has a paraphrase-3 instance (the items have 2 paraphrases at most: paraphrase-1..2)"},
		{[]string{"run", "--no-ddc", "--items", items, "--variants", "paraphrase-3", "--out", out}, "--variants paraphrase-3: no item in " + items + " has a paraphrase-3 instance (the items have 2 paraphrases at most: paraphrase-1..2)"},
		{[]string{"run", "--no-ddc", "--items", items, "--variants", "shuffle", "--out", out}, "--variants shuffle: no item in " + items + " has a shuffle instance (item one: the item has one passage: nothing to shuffle)"},
		{[]string{"plan", "--templates", shelfFile, "--variants", "noop-seeming"}, "--variants noop-seeming: no template in " + shelfFile + " has a noop-seeming instance"},
		{[]string{"run", "--no-ddc", "--templates", shelfFile, "--variants", "noop-seeming", "--out", out}, "--variants noop-seeming: no template in " + shelfFile + " has a noop-seeming instance"},
	} {
		r := fragility(t, logLLM, append(c.args, cpu...)...)
		line := strings.TrimSuffix(r.stderr, "\n")
		if r.code != exitUsage || strings.Contains(line, "\n") || !strings.Contains(line, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", c.args, r.code, r.stderr, c.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a refused run made %s", out)
	}
}

// TestBadInputLines: bad input a new user gave, each refused with a short
// message naming the file and exit 1, writing and deleting nothing.
func TestBadInputLines(t *testing.T) {
	dir := t.TempDir()
	// An existing directory as an output file, with and without --force.
	outDir := filepath.Join(dir, "outdir")
	os.Mkdir(outDir, 0o755)
	keep := filepath.Join(outDir, "keep.txt")
	os.WriteFile(keep, []byte("precious\n"), 0o644)
	for _, force := range [][]string{nil, {"--force"}} {
		for _, args := range [][]string{
			append([]string{"generate-set", "--out", outDir}, force...),
			append([]string{"protocol", "freeze", "--out", outDir}, force...),
			append(append([]string{"tiny-model"}, force...), outDir),
		} {
			oneErrorLine(t, strings.Join(args, " "), fragility(t, nil, args...), outDir+" is a directory (give a file path)")
		}
	}
	if b, _ := os.ReadFile(keep); string(b) != "precious\n" {
		t.Errorf("%s changed to %q", keep, b)
	}

	// A file that is not JSONL as --items: a bounded message, not a line
	// per line of the file.
	readme := filepath.Join("..", "..", "README.md")
	out := filepath.Join(dir, "run")
	for _, args := range [][]string{
		{"plan", "--items", readme},
		{"run", "--no-ddc", "--items", readme, "--out", out},
	} {
		r := fragility(t, logLLM, append(args, cpu...)...)
		lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
		if r.code != exitFailure || len(lines) > 7 || !strings.HasPrefix(lines[0], "fragility: "+readme+": ") ||
			!strings.Contains(lines[len(lines)-1], "more bad item(s) not shown") {
			t.Errorf("%v: exit %d, %d stderr lines:\n%s", args, r.code, len(lines), tail(r.stderr))
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("run on a README made %s", out)
	}

	// An empty --file for classify is bad input, not wrong usage.
	empty := filepath.Join(dir, "empty.txt")
	os.WriteFile(empty, nil, 0o644)
	oneErrorLine(t, "classify an empty file", fragility(t, nil, "classify", "--file", empty), empty+" has no text")

	// --limit above the templates there are: the real count, not the limit.
	r := fragility(t, nil, "plan", "--limit", "100000")
	if r.code != 0 || strings.Contains(r.stdout, "100000") || !strings.Contains(r.stdout, "68 templates (builtin)") {
		t.Errorf("plan --limit 100000: exit %d, stderr %q, stdout:\n%s", r.code, r.stderr, r.stdout)
	}
	if r := fragility(t, nil, "plan", "--limit", "3"); r.code != 0 || !strings.Contains(r.stdout, "3 templates (builtin (the first 3))") {
		t.Errorf("plan --limit 3: exit %d, stderr %q, stdout:\n%s", r.code, r.stderr, r.stdout)
	}
}

// TestUnknownChatTemplate: an unknown --chat-template is wrong usage, refused
// before the run directory exists.
func TestUnknownChatTemplate(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	r := fragility(t, nil, "run", "--model", gemmaName, "--chat-template", "nosuch", "--no-ddc", "--out", out)
	if r.code != exitUsage || !strings.Contains(r.stderr, `--chat-template "nosuch" is not a llama.cpp built-in template`) {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the run directory was created")
	}
}

// TestBadRunFiles: report on a copy of a checked-in run directory whose
// results.csv or summary.json a new user damaged. Each is refused with one
// short line naming the file and what is wrong (the line, column and value
// of a bad number; the missing column; a directory in the place of a file
// report writes, summary.json, narrative.md or report.html; a missing file
// named once), exit 1, and summary.json and narrative.md are left as they
// were.
// verify of a directory without set.jsonl names that file once.
func TestBadRunFiles(t *testing.T) {
	src := filepath.Join("..", "..", "probe", "report", "testdata", "runs", "arith")
	good, err := os.ReadFile(filepath.Join(src, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(good)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// edited returns results.csv with the first row's column set to value,
	// or without the column when drop.
	edited := func(column, value string, drop bool) []byte {
		i := slices.Index(recs[0], column)
		if i < 0 {
			t.Fatalf("no column %s", column)
		}
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		for k, r := range recs {
			r = slices.Clone(r)
			if drop {
				r = slices.Delete(r, i, i+1)
			} else if k == 1 {
				r[i] = value
			}
			w.Write(r)
		}
		w.Flush()
		return b.Bytes()
	}
	// Random bytes without a comma, quote or line break: one header
	// field of 3000 bytes.
	random := make([]byte, 3000)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		if random[i] = byte(rng.IntN(256)); strings.IndexByte(",\"\r\n", random[i]) >= 0 {
			random[i] = 'x'
		}
	}
	for _, c := range []struct {
		name    string
		results []byte // nil: removed
		asDir   string // a file report writes, made a directory
		want    string // after "fragility: DIR/"
	}{
		{"ddc-nan", edited("ddc_margin", "NaN", false), "", "results.csv: line 2 (item m0/t00/base/0): ddc_margin is NaN, not a finite number: the file was edited"},
		{"seconds-negative", edited("seconds", "-1", false), "", "results.csv: line 2 (item m0/t00/base/0): seconds is -1, not a duration (at least 0): the file was edited"},
		{"entropy-inf", edited("entropy_mean_bits", "Inf", false), "", "results.csv: line 2 (item m0/t00/base/0): entropy_mean_bits is +Inf, not a finite number: the file was edited"},
		{"ddc-above-2", edited("ddc_margin", "2.5", false), "", "results.csv: line 2 (item m0/t00/base/0): ddc_margin is 2.5, not a margin between two cosine similarities (in [0, 2]): the file was edited"},
		{"entropy-above-vocab", edited("entropy_mean_bits", "40", false), "", "results.csv: line 2 (item m0/t00/base/0): entropy_mean_bits is 40, above the 31 bits of any vocabulary"},
		{"no-correct", edited("correct", "", true), "", "results.csv: lacks the column(s) correct, which every results.csv has: the file was edited"},
		{"random", random, "", `results.csv: line 1: column 1 is "`},
		{"summary-dir", good, "summary.json", "summary.json: is a directory, not a file"},
		{"narrative-dir", good, "narrative.md", "narrative.md: is a directory, not a file"},
		{"html-dir", good, "report.html", "report.html: is a directory, not a file"},
		{"no-results", nil, "", "results.csv: no such file or directory"},
	} {
		dir := filepath.Join(t.TempDir(), c.name)
		copyFlat(t, src, dir)
		res, sum := filepath.Join(dir, "results.csv"), filepath.Join(dir, "summary.json")
		if c.results == nil {
			os.Remove(res)
		} else {
			os.WriteFile(res, c.results, 0o644)
		}
		if c.asDir != "" {
			os.Remove(filepath.Join(dir, c.asDir))
			os.Mkdir(filepath.Join(dir, c.asDir), 0o755)
		}
		narr := filepath.Join(dir, "narrative.md")
		// Stale files, so that a rewrite would show.
		for _, f := range []string{sum, narr} {
			if st, err := os.Stat(f); err == nil && !st.IsDir() {
				os.WriteFile(f, []byte("stale\n"), 0o644)
			}
		}
		before, _ := os.ReadFile(sum)
		narrBefore, _ := os.ReadFile(narr)
		r := fragility(t, nil, "report", dir)
		oneErrorLine(t, c.name, r, "fragility: "+dir+"/"+c.want)
		if len(r.stderr) > 300 || strings.Count(r.stderr, dir) != 1 || strings.ContainsRune(r.stderr, '\uFFFD') {
			t.Errorf("%s: %d characters, the folder named %d times (bytes not UTF-8 are quoted as \\xNN): %s", c.name, len(r.stderr), strings.Count(r.stderr, dir), r.stderr)
		}
		if after, _ := os.ReadFile(sum); !bytes.Equal(before, after) {
			t.Errorf("%s: summary.json changed", c.name)
		}
		if after, _ := os.ReadFile(narr); !bytes.Equal(narrBefore, after) {
			t.Errorf("%s: narrative.md changed", c.name)
		}
	}
	// verify of a directory without its set.jsonl names the file once.
	dir := filepath.Join(t.TempDir(), "no-set")
	copyFlat(t, src, dir)
	r := fragility(t, nil, "verify", "--force", dir)
	oneErrorLine(t, "verify without set.jsonl", r, "fragility: "+dir+"/set.jsonl: no such file or directory")
	if strings.Count(r.stderr, dir) != 1 {
		t.Errorf("verify without set.jsonl: the folder named %d times: %s", strings.Count(r.stderr, dir), r.stderr)
	}
}

// copyFlat copies the files of the directory src into a new directory dst.
func copyFlat(t *testing.T, src, dst string) {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEndlessInputs: a device without end (/dev/zero) given as an input
// file is refused with one line naming it and exit 1, after reading at
// most the input's bound; the binary runs under a 3 GB address-space cap,
// so that reading without a bound fails the test (Go's out-of-memory
// crash, exit 2) instead of filling the machine's memory.
func TestEndlessInputs(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	out := t.TempDir()
	for _, args := range [][]string{
		{"plan", "--bench", "/dev/zero"},
		{"plan", "--templates", "/dev/zero"},
		{"plan", "--dataset", "/dev/zero"},
		{"templates", "check", "/dev/zero"},
		{"run", "--overrides", "/dev/zero", "--out", filepath.Join(out, "o")},
	} {
		cmd := exec.Command("sh", append([]string{"-c", `ulimit -v 3000000 && exec "$0" "$@"`, fragilityBin(t)}, args...)...)
		cmd.Env = append(os.Environ(), noModels(t)...)
		r := wait(t, cmd, start(t, cmd))
		said := r.stdout + r.stderr // templates check reports each file on stdout
		if r.code != 1 || !strings.Contains(said, "/dev/zero: larger than") || strings.Contains(said, "goroutine") {
			t.Errorf("%v: exit %d, stderr %.600s", args, r.code, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "o")); err == nil {
		t.Error("run --overrides /dev/zero left its output folder")
	}
}

// TestDDCFlagsChecked (round-4 retry): --ddc-level or --embedder with
// --no-ddc is a usage error naming both flags, not ignored; a missing
// --embedder names the flag. Nothing is left behind.
func TestDDCFlagsChecked(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--no-ddc", "--ddc-level", "galaxy"}, exitUsage, "--no-ddc with --ddc-level: "},
		{[]string{"--no-ddc", "--embedder", "/nonexistent"}, exitUsage, "--no-ddc with --embedder: "},
		{[]string{"--embedder", "/nonexistent"}, 1, "--embedder /nonexistent: no such file or directory"},
	} {
		args := append([]string{"run", "--model", "gemma-3-270m-q4_k_m", "--out", out}, c.args...)
		r := fragility(t, nil, args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, want %d and %q:\n%s", c.args, r.code, c.code, c.want, r.stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v left %s", c.args, out)
		}
	}
}
