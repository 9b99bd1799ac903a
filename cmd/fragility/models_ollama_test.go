package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/models"
)

// headerGGUF is a GGUF v3 header of the given architecture with no
// tensors, plus pad bytes: a file the stores' readers take, and that the
// loader refuses (no tensors) before llama.cpp reads it, so that a command
// shows which file it resolved without loading a model.
func headerGGUF(arch string, pad int) []byte {
	var b []byte
	u32 := func(v uint32) { b = binary.LittleEndian.AppendUint32(b, v) }
	u64 := func(v uint64) { b = binary.LittleEndian.AppendUint64(b, v) }
	str := func(s string) { u64(uint64(len(s))); b = append(b, s...) }
	b = append(b, "GGUF"...)
	u32(3)
	u64(0) // tensors
	u64(2) // key-value pairs
	str("general.architecture")
	u32(8) // string
	str(arch)
	str("general.file_type")
	u32(4) // uint32
	u32(7) // Q8_0
	return append(b, make([]byte, pad)...)
}

// ollamaStoreEnv lays out an Ollama store as Ollama v0.17 writes one
// (manifests/HOST/NS/NAME/TAG with the Docker media type, a config blob,
// the GGUF weights and a template layer, blobs/sha256-HEX), a Hugging Face
// hub cache and an empty fragility cache under a temporary folder, and
// returns the environment that points fragility at them, the Ollama root
// and the blob of each manifest (by its path under manifests/).
//
// The store holds tiny:latest; a copy of it on a registry with a port
// (localhost:5000/team/tiny:t1, as `ollama cp` writes it); MixedCase:q4
// (as `ollama create MixedCase:Q4` writes it); dup:x spelled twice,
// differing only in case; a model whose blob's bytes changed (same size);
// and one named like a model of fragility's manifest.
func ollamaStoreEnv(t *testing.T) (env []string, root string, blobs map[string]string) {
	t.Helper()
	dir := t.TempDir()
	root = filepath.Join(dir, "ollama")
	put := func(p string, data []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sum := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	blob := func(mt string, b []byte) map[string]any {
		put(filepath.Join(root, "blobs", "sha256-"+sum(b)), b)
		return map[string]any{"mediaType": mt, "digest": "sha256:" + sum(b), "size": len(b)}
	}
	blobs = map[string]string{}
	manifest := func(path string, weights []byte) {
		m, _ := json.Marshal(map[string]any{
			"schemaVersion": 2,
			"mediaType":     "application/vnd.docker.distribution.manifest.v2+json",
			"config":        blob("application/vnd.docker.container.image.v1+json", []byte(`{"model_format":"gguf","rootfs":{"type":"layers"}}`)),
			"layers": []map[string]any{
				blob("application/vnd.ollama.image.model", weights),
				blob("application/vnd.ollama.image.template", []byte("{{ .Prompt }}")),
			},
		})
		put(filepath.Join(root, "manifests", filepath.FromSlash(path)), m)
		blobs[path] = filepath.Join(root, "blobs", "sha256-"+sum(weights))
	}
	tiny := headerGGUF("llama", 100)
	manifest("registry.ollama.ai/library/tiny/latest", tiny)
	manifest("localhost:5000/team/tiny/t1", tiny)
	manifest("registry.ollama.ai/library/MixedCase/q4", headerGGUF("llama", 110))
	manifest("registry.ollama.ai/library/dup/x", headerGGUF("llama", 120))
	manifest("registry.ollama.ai/library/DUP/x", headerGGUF("llama", 130))
	changed := headerGGUF("llama", 140)
	manifest("registry.ollama.ai/library/changed/latest", changed)
	changed[len(changed)-1] ^= 0xff
	put(blobs["registry.ollama.ai/library/changed/latest"], changed)
	manifest("registry.ollama.ai/library/"+gemmaName+"/latest", headerGGUF("gemma3", 150))
	// The Hugging Face hub cache: a snapshot file linked to its blob.
	hf := headerGGUF("qwen3", 160)
	repo := filepath.Join(dir, "hf", "models--org--r-GGUF")
	put(filepath.Join(repo, "blobs", sum(hf)), hf)
	put(filepath.Join(repo, "refs", "main"), []byte("c0ffee"))
	os.MkdirAll(filepath.Join(repo, "snapshots", "c0ffee"), 0o755)
	if err := os.Symlink(filepath.Join("..", "..", "blobs", sum(hf)), filepath.Join(repo, "snapshots", "c0ffee", "r-Q8_0.gguf")); err != nil {
		t.Fatal(err)
	}
	blobs["hf"] = filepath.Join(repo, "blobs", sum(hf))
	// LM Studio: a plain file, named by no digest.
	put(filepath.Join(dir, "home", ".lmstudio", "models", "o", "r", "r-Q8_0.gguf"), hf)
	// A plain file and a folder, given as paths.
	put(filepath.Join(dir, "plain.gguf"), headerGGUF("llama", 170))
	os.MkdirAll(filepath.Join(dir, "folder"), 0o755)
	blobs["plain"], blobs["folder"] = filepath.Join(dir, "plain.gguf"), filepath.Join(dir, "folder")
	env = []string{"HOME=" + filepath.Join(dir, "home"), "OLLAMA_MODELS=" + root,
		"HF_HUB_CACHE=" + filepath.Join(dir, "hf"), "HF_HOME=", "FRAGILITY_MODELS=" + filepath.Join(dir, "cache")}
	return env, root, blobs
}

// TestModelsPathAgreesWithInspect: for every form of name (a store name,
// a bare Ollama name in any case, a registry host with a port, a path, a
// cached model that is not cached, a name in two stores, an ambiguous
// spelling, a changed blob, a file that is not there), `models path`
// resolves as inspect does. Where inspect resolves a file, models path
// prints it (exit 0) and inspect's loader refuses that same file (the
// store's files are headers without tensors: nothing loads); where inspect
// refuses the name, models path fails with the same one line, exit 1.
func TestModelsPathAgreesWithInspect(t *testing.T) {
	env, root, blobs := ollamaStoreEnv(t)
	tiny := blobs["registry.ollama.ai/library/tiny/latest"]
	mixed := blobs["registry.ollama.ai/library/MixedCase/q4"]
	for _, c := range []struct {
		name string
		want string   // the file both resolve, or "" for an error
		err  []string // what the error line says
	}{
		{"ollama:tiny", tiny, nil},
		{"ollama:tiny:latest", tiny, nil},
		{"tiny", tiny, nil},
		{"tiny:latest", tiny, nil},
		{"TINY:Latest", tiny, nil},
		{"ollama:registry.ollama.ai/library/tiny:latest", tiny, nil},
		{"ollama:MixedCase:Q4", mixed, nil},
		{"MixedCase:Q4", mixed, nil},
		{"mixedcase:q4", mixed, nil},
		{"MIXEDCASE", "", []string{"MIXEDCASE: no such file, and no model of that name", "nor in Ollama's store", "MixedCase:q4"}},
		{"localhost:5000/team/tiny:t1", tiny, nil},
		{"ollama:localhost:5000/team/tiny:t1", tiny, nil},
		{"ollama:LOCALHOST:5000/Team/Tiny:T1", tiny, nil},
		{"ollama:localhost:5000/team/tiny", "", []string{"no model localhost:5000/team/tiny:latest", "closest: localhost:5000/team/tiny:t1"}},
		{"hf:org/r-GGUF", blobs["hf"], nil},
		{"hf:org/r-GGUF:Q8_0", blobs["hf"], nil},
		{blobs["plain"], blobs["plain"], nil},
		{"ollama:dup:x", "", []string{"ollama:dup:x: ambiguous", "DUP:x and dup:x", "differ only in case"}},
		{"Dup:X", "", []string{"Dup:X: ambiguous", "DUP:x and dup:x"}},
		{"ollama:changed", "", []string{"ollama:changed", "the store names it sha256:"}},
		{"ollama:tiyn", "", []string{"ollama:tiyn: no model tiyn:latest", "closest: tiny:latest"}},
		{gemmaName, "", []string{gemmaName, "a name in two stores", "fragility's cache", "ollama:" + gemmaName}},
		{"qwen2.5-coder-1.5b", "", []string{"model qwen2.5-coder-1.5b is not in the cache", "fragility models fetch qwen2.5-coder-1.5b"}},
		{"no-such.gguf", "", []string{"no-such.gguf: no such file"}},
		{filepath.Join(root, "nothing", "here"), "", []string{filepath.Join(root, "nothing", "here") + ": no such file"}},
		{blobs["folder"], "", []string{blobs["folder"] + ": is a directory, not a GGUF file"}},
	} {
		path := fragility(t, env, "models", "path", c.name)
		inspect := fragility(t, env, append(append([]string{"inspect"}, cpu...), c.name)...)
		if c.want != "" {
			if path.code != 0 || path.stdout != c.want+"\n" || path.stderr != "" {
				t.Errorf("models path %s: exit %d, stdout %q, stderr %q; want %s", c.name, path.code, path.stdout, path.stderr, c.want)
			}
			// inspect resolved the same file: its loader names it.
			oneErrorLine(t, "inspect "+c.name, inspect, "fragility: "+c.want+": ")
			continue
		}
		oneErrorLine(t, "models path "+c.name, path, c.err...)
		if path.stderr != inspect.stderr || path.code != inspect.code {
			t.Errorf("%s: models path and inspect disagree:\nmodels path: exit %d, %s\ninspect:     exit %d, %s", c.name, path.code, path.stderr, inspect.code, inspect.stderr)
		}
	}
	// Wrong usage: exit 2.
	if r := fragility(t, env, "models", "path", "tiny", "tiny"); r.code != exitUsage || !strings.Contains(r.stderr, "at most one NAME") {
		t.Errorf("models path with two names: exit %d, %s", r.code, r.stderr)
	}
}

// TestModelsListAllOllama: `models list --all` lists a registry host with
// a port and a name spelled as Ollama stored it, marks two names that
// differ only in case as ambiguous, and says "not verified", not "yes",
// for every file its store names by a digest until it hashes it (the
// changed blob included); with --verify it hashes: "yes (sha256
// verified)", or "no" and both sums for the changed blob. LM Studio names
// no digest.
func TestModelsListAllOllama(t *testing.T) {
	env, _, _ := ollamaStoreEnv(t)
	r := fragility(t, env, "models", "list", "--all")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("models list --all: exit %d\n%s", r.code, r.stderr)
	}
	rows := storeRows(r.stdout)
	for name, want := range map[string][]string{
		"ollama:tiny:latest":                 {"not verified"},
		"ollama:localhost:5000/team/tiny:t1": {"not verified"},
		"ollama:MixedCase:q4":                {"not verified"},
		"ollama:changed:latest":              {"not verified"},
		"ollama:dup:x":                       {"no: ambiguous: DUP:x and dup:x differ only in case"},
		"ollama:DUP:x":                       {"no: ambiguous: DUP:x and dup:x differ only in case"},
		"hf:org/r-GGUF:r-Q8_0.gguf":          {"not verified"},
		"lmstudio:o/r/r-Q8_0.gguf":           {"yes (no digest)"},
	} {
		row, ok := rows[name]
		if !ok {
			t.Errorf("models list --all: no row %s in\n%s", name, r.stdout)
			continue
		}
		if want[0] == "not verified" && strings.Contains(row, "yes") {
			t.Errorf("models list --all: row %q says yes before it hashed", row)
		}
		for _, w := range want {
			if !strings.Contains(row, w) {
				t.Errorf("models list --all: row %q lacks %q", row, w)
			}
		}
	}
	if !strings.Contains(r.stdout, "models list --all --verify` hashes them") {
		t.Errorf("models list --all does not say how to hash the files:\n%s", r.stdout)
	}

	r = fragility(t, env, "models", "list", "--all", "--verify")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("models list --all --verify: exit %d\n%s", r.code, r.stderr)
	}
	rows = storeRows(r.stdout)
	for name, want := range map[string][]string{
		"ollama:tiny:latest":                 {"yes (sha256 verified)"},
		"ollama:localhost:5000/team/tiny:t1": {"yes (sha256 verified)"},
		"hf:org/r-GGUF:r-Q8_0.gguf":          {"yes (sha256 verified)"},
		"ollama:changed:latest":              {"no: the file's bytes changed since the store wrote them", "the store names it sha256:"},
		"lmstudio:o/r/r-Q8_0.gguf":           {"yes (no digest)"},
	} {
		if row := rows[name]; strings.Contains(row, "not verified") || !containsAll(row, want) {
			t.Errorf("models list --all --verify: row %q, want %q", row, want)
		}
	}
	r = fragility(t, env, "models", "list", "--all", "--verify", "--json")
	var list struct {
		Stores []models.Entry `json:"stores"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || r.code != 0 {
		t.Fatalf("models list --all --verify --json: exit %d, %v", r.code, err)
	}
	for _, e := range list.Stores {
		if e.Name == "ollama:changed:latest" && (e.DigestState != models.DigestChanged || e.Runnable || !strings.HasPrefix(e.Digest, "sha256:")) {
			t.Errorf("json: %+v, want changed, not runnable, with the digest", e)
		}
		if e.Name == "ollama:tiny:latest" && (e.DigestState != models.DigestVerified || !e.Runnable) {
			t.Errorf("json: %+v, want verified, runnable", e)
		}
	}
}

// storeRows maps the NAME of each row of the stores' table in the output
// of `models list --all` to its line.
func storeRows(out string) map[string]string {
	rows := map[string]string{}
	_, table, _ := strings.Cut(out, "\nother stores")
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) > 0 && models.IsStoreName(f[0]) {
			rows[f[0]] = line
		}
	}
	return rows
}

func containsAll(s string, want []string) bool {
	for _, w := range want {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}
