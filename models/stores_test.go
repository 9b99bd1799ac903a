package models

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/internal/suggest"
)

// fakeGGUF returns a GGUF v3 header with no tensors and the given
// architecture and file type (7 = Q8_0), plus pad bytes: enough for the
// header readers, not a model a loader can run (the command's tests run the
// tiny model).
func fakeGGUF(arch string, fileType uint32, pad int) []byte {
	var b []byte
	u32 := func(v uint32) { b = binary.LittleEndian.AppendUint32(b, v) }
	u64 := func(v uint64) { b = binary.LittleEndian.AppendUint64(b, v) }
	str := func(s string) { u64(uint64(len(s))); b = append(b, s...) }
	b = append(b, "GGUF"...)
	u32(3)
	u64(0) // tensors
	if arch == "clip" {
		u64(3) // key-value pairs
		str("clip.projector_type")
		u32(8)
		str("mlp")
	} else {
		u64(2)
	}
	str("general.architecture")
	u32(8) // string
	str(arch)
	str("general.file_type")
	u32(4) // uint32
	u32(fileType)
	return append(b, make([]byte, pad)...)
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func write(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// ollamaStore writes a model NAME:TAG (a manifest path under
// manifests/registry.ollama.ai/) into an Ollama store at root with the
// given weights and a template layer, and returns the weights' digest.
func ollamaStore(t *testing.T, root, manifest string, weights []byte, extra ...Layer) string {
	t.Helper()
	tmpl := []byte("{{ .Prompt }}")
	write(t, filepath.Join(root, "blobs", "sha256-"+sha(weights)), weights)
	write(t, filepath.Join(root, "blobs", "sha256-"+sha(tmpl)), tmpl)
	layers := append([]Layer{
		{MediaType: ollamaModelLayer, Digest: "sha256:" + sha(weights), Size: int64(len(weights))},
		{MediaType: "application/vnd.ollama.image.template", Digest: "sha256:" + sha(tmpl), Size: int64(len(tmpl))},
	}, extra...)
	m, _ := json.Marshal(map[string]any{"schemaVersion": 2, "layers": layers})
	write(t, filepath.Join(root, "manifests", "registry.ollama.ai", filepath.FromSlash(manifest)), m)
	return "sha256:" + sha(weights)
}

// storeEnv points every store at folders under a fresh temporary
// directory (HOME included) and returns it.
func storeEnv(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", filepath.Join(dir, "home"))
	t.Setenv("OLLAMA_MODELS", filepath.Join(dir, "ollama"))
	t.Setenv("HF_HUB_CACHE", filepath.Join(dir, "hf"))
	t.Setenv("HF_HOME", "")
	t.Setenv("FRAGILITY_MODELS", filepath.Join(dir, "cache"))
	return dir
}

func wantErr(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want one containing %q", what, want)
		return
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("%s: error is not one line: %q", what, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not contain %q", what, err, w)
			return
		}
	}
}

// TestOllamaStore resolves ollama:NAME, a bare NAME:TAG and a namespaced
// name to the blob, in place, and checks the digest.
func TestOllamaStore(t *testing.T) {
	dir := storeEnv(t)
	root := filepath.Join(dir, "ollama")
	weights := fakeGGUF("llama", 7, 100)
	digest := ollamaStore(t, root, "library/tiny/latest", weights)
	ollamaStore(t, root, "someone/tiny/7b", fakeGGUF("qwen3", 15, 50))
	for _, c := range []struct{ ref, name string }{
		{"ollama:tiny", "tiny:latest"},
		{"ollama:tiny:latest", "tiny:latest"},
		{"tiny:latest", "tiny:latest"},
		{"ollama:library/tiny", "tiny:latest"},
		{"ollama:registry.ollama.ai/library/tiny:latest", "tiny:latest"},
		{"someone/tiny:7b", "someone/tiny:7b"},
	} {
		p, src, err := ResolveSource(c.ref, "llm")
		if err != nil {
			t.Errorf("%s: %v", c.ref, err)
			continue
		}
		if src == nil || src.Name != c.name || src.Store != StoreOllama || src.Ref != c.ref || p != src.Path {
			t.Errorf("%s: path %s, source %+v; want the name %s", c.ref, p, src, c.name)
		}
	}
	p, src, _ := ResolveSource("ollama:tiny", "llm")
	if want := filepath.Join(root, "blobs", "sha256-"+strings.TrimPrefix(digest, "sha256:")); p != want || src.Digest != digest {
		t.Errorf("path %s digest %s, want the blob %s, %s", p, src.Digest, want, digest)
	}
	if len(src.Unused) != 1 || !strings.HasSuffix(src.Unused[0].MediaType, ".template") {
		t.Errorf("unused layers %+v, want the template layer", src.Unused)
	}
	// Read in place: nothing was copied into fragility's cache.
	if _, err := os.Stat(filepath.Join(dir, "cache")); !os.IsNotExist(err) {
		t.Errorf("fragility's cache was created: %v", err)
	}
	// A bare name without a tag is Ollama's NAME:latest when it is not in
	// fragility's cache.
	if _, src, err := ResolveSource("tiny", "llm"); err != nil || src == nil || src.Name != "tiny:latest" {
		t.Errorf("bare tiny: %+v %v", src, err)
	}
	// Resolve (the path only) takes store names too.
	if p2, err := Resolve("ollama:tiny", "llm"); err != nil || p2 != p {
		t.Errorf("Resolve: %s %v", p2, err)
	}
	// Changed bytes of the same size are refused before a run.
	blob := src.Path
	b := append([]byte(nil), weights...)
	b[len(b)-1] ^= 0xff
	write(t, blob, b)
	_, _, err := ResolveSource("ollama:tiny", "llm")
	wantErr(t, "changed blob", err, "ollama:tiny", blob, "the store names it "+digest)
	write(t, blob, weights)
	if _, _, err := ResolveSource("ollama:tiny", "llm"); err != nil {
		t.Errorf("restored blob: %v", err)
	}
}

// TestOllamaBadInput: one line for each way an Ollama name can fail.
func TestOllamaBadInput(t *testing.T) {
	dir := storeEnv(t)
	root := filepath.Join(dir, "ollama")
	ollamaStore(t, root, "library/tiny/latest", fakeGGUF("llama", 7, 10))
	ollamaStore(t, root, "library/tinyllama/latest", fakeGGUF("llama", 7, 20))

	_, _, err := ResolveSource("ollama:tine", "llm")
	wantErr(t, "unknown name", err, "ollama:tine", "no model tine:latest", "closest: tiny:latest, tinyllama:latest")
	_, _, err = ResolveSource("tiny:8b", "llm")
	wantErr(t, "unknown tag", err, "tiny:8b", "no model tiny:8b", "closest: tiny:latest")
	_, _, err = ResolveSource("nothing-here", "llm")
	wantErr(t, "bare unknown", err, "nothing-here: no such file, and no model of that name", "nor in Ollama's store", "closest: tiny:latest")

	// A missing blob.
	noBlob := fakeGGUF("llama", 7, 30)
	ollamaStore(t, root, "library/noblob/latest", noBlob)
	os.Remove(filepath.Join(root, "blobs", "sha256-"+sha(noBlob)))
	_, _, err = ResolveSource("ollama:noblob", "llm")
	wantErr(t, "missing blob", err, "ollama:noblob", "missing blob", "sha256-"+sha(noBlob))

	// A model layer that is not GGUF.
	notGGUF := []byte("PK\x03\x04 this is a zip, not a GGUF file")
	ollamaStore(t, root, "library/zip/latest", notGGUF)
	_, _, err = ResolveSource("ollama:zip", "llm")
	wantErr(t, "not GGUF", err, "ollama:zip", "not a GGUF file")

	// A safetensors import: tensor layers, no GGUF model layer.
	tensors, _ := json.Marshal(map[string]any{"schemaVersion": 2, "layers": []Layer{
		{MediaType: ollamaTensorLayer + "; name=a; dtype=BF16; shape=2", Digest: "sha256:" + strings.Repeat("a", 64), Size: 4},
		{MediaType: ollamaTensorLayer + "; name=b; dtype=BF16; shape=2", Digest: "sha256:" + strings.Repeat("b", 64), Size: 4},
	}})
	write(t, filepath.Join(root, "manifests", "registry.ollama.ai", "library", "st", "latest"), tensors)
	_, _, err = ResolveSource("ollama:st", "llm")
	wantErr(t, "safetensors", err, "ollama:st", "not runnable", "2 tensor layers")

	// A manifest that is not JSON.
	write(t, filepath.Join(root, "manifests", "registry.ollama.ai", "library", "broken", "latest"), []byte("{not json"))
	_, _, err = ResolveSource("ollama:broken", "llm")
	wantErr(t, "broken manifest", err, "ollama:broken", "not an Ollama manifest")

	// The same name in two stores with different weights.
	t.Setenv("OLLAMA_MODELS", "")
	home := filepath.Join(dir, "home", ".ollama", "models")
	ollamaStore(t, home, "library/tiny/latest", fakeGGUF("llama", 7, 11))
	old := OllamaServiceDir
	OllamaServiceDir = root
	defer func() { OllamaServiceDir = old }()
	_, _, err = ResolveSource("ollama:tiny", "llm")
	wantErr(t, "two stores", err, "a name in two stores", filepath.Join(home, "manifests"), filepath.Join(root, "manifests"))

	// An unreadable store: a file where the folder should be.
	t.Setenv("OLLAMA_MODELS", filepath.Join(dir, "a-file"))
	write(t, filepath.Join(dir, "a-file"), []byte("x"))
	_, _, err = ResolveSource("ollama:tiny", "llm")
	wantErr(t, "unreadable store", err, "ollama:tiny", filepath.Join(dir, "a-file"), "cannot read Ollama's store")
}

// TestNameInTwoStores: a bare name of fragility's cache that Ollama also
// holds is refused, naming both.
func TestNameInTwoStores(t *testing.T) {
	dir := storeEnv(t)
	man, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	md, _ := man.Default("llm")
	ollamaStore(t, filepath.Join(dir, "ollama"), "library/"+md.Name+"/latest", fakeGGUF("llama", 7, 10))
	_, _, err = ResolveSource(md.Name, "llm")
	wantErr(t, "two stores", err, md.Name, "a name in two stores", "fragility's cache", "Ollama's", "ollama:"+md.Name)
}

// hfRepo writes repository repo into the hub cache at root: files (name ->
// bytes) as blobs named by their sha256, linked from the snapshot of
// commit, with refs/main pointing to it.
func hfRepo(t *testing.T, root, repo, commit string, files map[string][]byte) string {
	t.Helper()
	dir := filepath.Join(root, "models--"+strings.ReplaceAll(repo, "/", "--"))
	for name, b := range files {
		blob := filepath.Join(dir, "blobs", sha(b))
		write(t, blob, b)
		link := filepath.Join(dir, "snapshots", commit, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(link), 0o755)
		rel, _ := filepath.Rel(filepath.Dir(link), blob)
		if err := os.Symlink(rel, link); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(dir, "refs", "main"), []byte(commit))
	return dir
}

// TestHFStore: hf:ORG/REPO finds the one GGUF (a vision projector aside),
// :FILE chooses by name or by a quantization in the name, @REV a revision;
// the blob is checked against its sha256 name.
func TestHFStore(t *testing.T) {
	dir := storeEnv(t)
	root := filepath.Join(dir, "hf")
	one := fakeGGUF("llama", 7, 10)
	hfRepo(t, root, "org/one-GGUF", "c1", map[string][]byte{"one-Q8_0.gguf": one, "mmproj-F16.gguf": fakeGGUF("clip", 1, 5), "README.md": []byte("hi")})
	q4, q8 := fakeGGUF("qwen3", 15, 20), fakeGGUF("qwen3", 7, 30)
	hfRepo(t, root, "org/two-GGUF", "c2", map[string][]byte{"two-Q4_K_M.gguf": q4, "sub/two-Q8_0.gguf": q8})
	hfRepo(t, root, "org/two-GGUF", "c3", map[string][]byte{"two-Q4_K_M.gguf": fakeGGUF("qwen3", 15, 21)})
	write(t, filepath.Join(root, "models--org--two-GGUF", "refs", "main"), []byte("c2"))

	for _, c := range []struct{ ref, name, digest string }{
		{"hf:org/one-GGUF", "org/one-GGUF/one-Q8_0", sha(one)},
		{"hf:org/two-GGUF:two-Q4_K_M.gguf", "org/two-GGUF/two-Q4_K_M", sha(q4)},
		{"hf:org/two-GGUF:q8_0", "org/two-GGUF/sub/two-Q8_0", sha(q8)},
		{"hf:org/two-GGUF:sub/two-Q8_0", "org/two-GGUF/sub/two-Q8_0", sha(q8)},
		{"hf:org/two-GGUF/sub/two-Q8_0.gguf", "org/two-GGUF/sub/two-Q8_0", sha(q8)},
		{"hf:org/two-GGUF@c3", "org/two-GGUF/two-Q4_K_M", sha(fakeGGUF("qwen3", 15, 21))},
	} {
		p, src, err := ResolveSource(c.ref, "llm")
		if err != nil {
			t.Errorf("%s: %v", c.ref, err)
			continue
		}
		if src.Name != c.name || src.Digest != "sha256:"+c.digest || filepath.Base(p) != c.digest || src.Store != StoreHF {
			t.Errorf("%s: %s %+v; want name %s, blob %s", c.ref, p, src, c.name, c.digest)
		}
	}
	_, _, err := ResolveSource("hf:org/two-GGUF", "llm")
	wantErr(t, "two GGUFs", err, "holds 2 GGUF files", "two-Q4_K_M.gguf", "sub/two-Q8_0.gguf", "hf:org/two-GGUF:FILE")
	_, _, err = ResolveSource("hf:org/tow-GGUF", "llm")
	wantErr(t, "unknown repo", err, "no model org/tow-GGUF", "closest: org/two-GGUF")
	_, _, err = ResolveSource("hf:org/two-GGUF:Q2_K", "llm")
	wantErr(t, "unknown file", err, "holds no GGUF file Q2_K")
	_, _, err = ResolveSource("hf:org/two-GGUF@v9", "llm")
	wantErr(t, "unknown revision", err, "missing snapshot", "revision v9", "refs: main")
	// A changed blob, and a missing one.
	blob := filepath.Join(root, "models--org--one-GGUF", "blobs", sha(one))
	write(t, blob, append(one[:len(one):len(one)], 0))
	_, _, err = ResolveSource("hf:org/one-GGUF", "llm")
	wantErr(t, "changed blob", err, "hf:org/one-GGUF", "the store names it sha256:"+sha(one))
	os.Remove(blob)
	_, _, err = ResolveSource("hf:org/one-GGUF:one-Q8_0", "llm")
	wantErr(t, "missing blob", err, "missing blob")
}

// TestLMStudioStore: lmstudio:ORG/REPO[/FILE] in ~/.lmstudio/models, and a
// name in both of LM Studio's folders refused.
func TestLMStudioStore(t *testing.T) {
	dir := storeEnv(t)
	root := filepath.Join(dir, "home", ".lmstudio", "models")
	a := fakeGGUF("llama", 7, 10)
	write(t, filepath.Join(root, "org", "m-GGUF", "m-Q8_0.gguf"), a)
	write(t, filepath.Join(root, "org", "m-GGUF", "m-Q4_0.gguf"), fakeGGUF("llama", 2, 10))
	write(t, filepath.Join(root, "org", "solo", "solo.gguf"), a)
	p, src, err := ResolveSource("lmstudio:org/m-GGUF/m-Q8_0.gguf", "llm")
	if err != nil || src.Name != "org/m-GGUF/m-Q8_0" || p != filepath.Join(root, "org", "m-GGUF", "m-Q8_0.gguf") || src.Digest != "" {
		t.Errorf("lmstudio file: %s %+v %v", p, src, err)
	}
	if _, src, err := ResolveSource("lmstudio:org/solo", "llm"); err != nil || src.Name != "org/solo/solo" {
		t.Errorf("lmstudio one file: %+v %v", src, err)
	}
	_, _, err = ResolveSource("lmstudio:org/m-GGUF", "llm")
	wantErr(t, "two files", err, "holds 2 GGUF files", "lmstudio:org/m-GGUF/FILE")
	_, _, err = ResolveSource("lmstudio:org/nope", "llm")
	wantErr(t, "unknown", err, "no model org/nope", "closest: ")
	write(t, filepath.Join(dir, "home", ".cache", "lm-studio", "models", "org", "solo", "solo.gguf"), a)
	_, _, err = ResolveSource("lmstudio:org/solo", "llm")
	wantErr(t, "two folders", err, "a name in two stores")
}

// TestListStores lists every store's models with the header's
// quantization type and architecture, and says why one cannot run.
func TestListStores(t *testing.T) {
	dir := storeEnv(t)
	ollamaStore(t, filepath.Join(dir, "ollama"), "library/tiny/latest", fakeGGUF("llama", 7, 10))
	tensors, _ := json.Marshal(map[string]any{"layers": []Layer{{MediaType: ollamaTensorLayer, Digest: "sha256:" + strings.Repeat("a", 64), Size: 4}}})
	write(t, filepath.Join(dir, "ollama", "manifests", "registry.ollama.ai", "library", "st", "latest"), tensors)
	hfRepo(t, filepath.Join(dir, "hf"), "org/r", "c", map[string][]byte{"r-Q4_K_M.gguf": fakeGGUF("qwen3", 15, 10)})
	write(t, filepath.Join(dir, "home", ".lmstudio", "models", "o", "p", "p.gguf"), fakeGGUF("gemma3", 2, 10))
	entries, problems := ListStores()
	if len(problems) != 0 {
		t.Errorf("problems: %v", problems)
	}
	got := map[string]Entry{}
	for _, e := range entries {
		got[e.Name] = e
	}
	for name, want := range map[string]string{
		"ollama:st:latest":       "not runnable",
		"ollama:tiny:latest":     "llama Q8_0",
		"hf:org/r:r-Q4_K_M.gguf": "qwen3 Q4_K_M",
		"lmstudio:o/p/p.gguf":    "gemma3 Q4_0",
	} {
		e, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s not listed (got %v)", name, entries)
		case want == "not runnable" && (e.Runnable || !strings.Contains(e.Why, "tensor layers")):
			t.Errorf("%s: %+v, want not runnable with the reason", name, e)
		case want != "not runnable" && (!e.Runnable || e.Architecture+" "+e.Quantization != want || e.Size == 0):
			t.Errorf("%s: %+v, want runnable %s", name, e, want)
		}
	}
	t.Setenv("OLLAMA_MODELS", filepath.Join(dir, "hf", "models--org--r", "refs", "main"))
	if _, problems := ListStores(); len(problems) != 1 || !strings.Contains(problems[0], "cannot read Ollama's store") {
		t.Errorf("unreadable store: problems %v", problems)
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"tiny", "tine", 1}, {"kitten", "sitting", 3}, {"qwen3:8b", "qwen3:latest", 6}} {
		if got := suggest.Distance(c.a, c.b); got != c.d {
			t.Errorf("suggest.Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}
