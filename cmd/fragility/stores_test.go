package main

import (
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fragility/fragility/models"
	"github.com/fragility/fragility/probe/rundir"
)

// storeLayout lays the tiny model out as Ollama's store (tiny:latest, with
// a template layer), the Hugging Face hub cache (fragility/tiny-GGUF) and
// LM Studio's folder (lmstudio-community/tiny-GGUF) under a temporary
// folder, and returns the environment that points fragility at them, the
// folder, and the Ollama blob.
func storeLayout(t *testing.T) (env []string, dir, blob string) {
	t.Helper()
	tiny := tinyModelFiles(t)[0]
	b, err := os.ReadFile(tiny)
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	put := func(p string, data []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sum := func(data []byte) string { s := sha256.Sum256(data); return hex.EncodeToString(s[:]) }
	layer := func(mt string, data []byte) map[string]any {
		return map[string]any{"mediaType": mt, "digest": "sha256:" + sum(data), "size": len(data)}
	}
	manifest := func(name string, layers ...map[string]any) {
		m, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json", "layers": layers})
		put(filepath.Join(dir, "ollama", "manifests", "registry.ollama.ai", "library", name, "latest"), m)
	}
	// Ollama: the weights and a chat template, each a blob named by its digest.
	tmpl := []byte("{{ .System }} {{ .Prompt }}")
	blob = filepath.Join(dir, "ollama", "blobs", "sha256-"+sum(b))
	put(blob, b)
	put(filepath.Join(dir, "ollama", "blobs", "sha256-"+sum(tmpl)), tmpl)
	manifest("tiny", layer("application/vnd.ollama.image.model", b), layer("application/vnd.ollama.image.template", tmpl))
	// A model whose blob is gone, one whose weights are not GGUF, and one
	// named like a model of fragility's cache.
	gone := append([]byte("GGUF"), make([]byte, 40)...)
	manifest("gone", layer("application/vnd.ollama.image.model", gone))
	zip := []byte("PK\x03\x04 not a GGUF file")
	put(filepath.Join(dir, "ollama", "blobs", "sha256-"+sum(zip)), zip)
	manifest("zipped", layer("application/vnd.ollama.image.model", zip))
	manifest(gemmaName, layer("application/vnd.ollama.image.model", b))
	// The Hugging Face hub cache: a snapshot file linked to its blob.
	repo := filepath.Join(dir, "hf", "models--fragility--tiny-GGUF")
	put(filepath.Join(repo, "blobs", sum(b)), b)
	put(filepath.Join(repo, "refs", "main"), []byte("0123abcd"))
	snap := filepath.Join(repo, "snapshots", "0123abcd")
	os.MkdirAll(snap, 0o755)
	if err := os.Symlink(filepath.Join("..", "..", "blobs", sum(b)), filepath.Join(snap, "tiny-F16.gguf")); err != nil {
		t.Fatal(err)
	}
	// LM Studio: a plain file.
	put(filepath.Join(dir, "home", ".lmstudio", "models", "lmstudio-community", "tiny-GGUF", "tiny-F16.gguf"), b)
	cache, err := models.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	env = []string{"HOME=" + filepath.Join(dir, "home"), "OLLAMA_MODELS=" + filepath.Join(dir, "ollama"),
		"HF_HUB_CACHE=" + filepath.Join(dir, "hf"), "HF_HOME=", "FRAGILITY_MODELS=" + cache}
	return env, dir, blob
}

// TestStoreModels runs a short probe on the tiny model named from each
// store (ollama:tiny, hf:..., lmstudio:...): results and the narrative name
// the models as the stores do, the manifest records store, digest, file and
// the unused template layer, nothing is copied; then every bad case is one
// line, exit 1, with nothing run.
func TestStoreModels(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	env, dir, blob := storeLayout(t)
	out := filepath.Join(dir, "run")
	flags := []string{"--templates", templateDir(t), "--variants", "base,noop", "--instances", "1", "--seed", "5",
		"--batch", "3", "--max-tokens", "4", "--n-ctx", "512", "--gpu-layers", "0", "--threads", "1", "--bootstrap", "50", "--no-ddc", "--no-html", "--quiet"}
	names := []string{"ollama:tiny", "hf:fragility/tiny-GGUF", "lmstudio:lmstudio-community/tiny-GGUF/tiny-F16.gguf"}
	args := []string{"run", "--out", out}
	for _, n := range names {
		args = append(args, "--model", n)
	}
	r := fragility(t, env, append(args, flags...)...)
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, tail(r.stderr))
	}
	// results.csv names each model as its store does.
	f, err := os.Open(filepath.Join(out, rundir.FileResults))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) < 2 {
		t.Fatalf("results.csv: %d rows, %v", len(rows), err)
	}
	col := slices.Index(rows[0], "model_name")
	var got []string
	for _, row := range rows[1:] {
		if !slices.Contains(got, row[col]) {
			got = append(got, row[col])
		}
	}
	slices.Sort(got)
	want := []string{"fragility/tiny-GGUF/tiny-F16", "lmstudio-community/tiny-GGUF/tiny-F16", "tiny:latest"}
	if !slices.Equal(got, want) {
		t.Errorf("model_name column %v, want %v", got, want)
	}
	narr, _ := os.ReadFile(filepath.Join(out, rundir.FileNarrative))
	if !strings.Contains(string(narr), "## tiny:latest") {
		t.Errorf("the narrative has no section on tiny:latest:\n%s", narr)
	}
	// The manifest records the store, the digest and the file.
	man, err := rundir.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(man.Models) != 3 {
		t.Fatalf("%d models in the manifest", len(man.Models))
	}
	ol, hf, lm := man.Models[0], man.Models[1], man.Models[2]
	switch {
	case ol.Source == nil || ol.Source.Store != models.StoreOllama || ol.Source.Name != "tiny:latest" || ol.Path != blob || ol.Source.Digest != "sha256:"+ol.SHA256:
		t.Errorf("ollama model: %+v source %+v", ol, ol.Source)
	case len(ol.Source.Unused) != 1 || ol.Source.Unused[0].MediaType != "application/vnd.ollama.image.template":
		t.Errorf("ollama model: unused layers %+v, want the template layer", ol.Source.Unused)
	case ol.Identity.Name != "tiny:latest" || ol.Identity.Architecture != "llama":
		t.Errorf("ollama model identity %+v", ol.Identity)
	case hf.Source == nil || hf.Source.Store != models.StoreHF || hf.Source.Revision != "0123abcd" || hf.Source.Digest != "sha256:"+hf.SHA256 || filepath.Base(hf.Path) != hf.SHA256:
		t.Errorf("hf model: %+v source %+v", hf, hf.Source)
	case lm.Source == nil || lm.Source.Store != models.StoreLMStudio || lm.Source.Digest != "":
		t.Errorf("lmstudio model: %+v source %+v", lm, lm.Source)
	}
	// Read in place: no model-sized file in the run directory.
	filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && info.Size() >= ol.Size {
			t.Errorf("%s: %d bytes, as large as the model: copied?", p, info.Size())
		}
		return nil
	})

	// `models list --all` lists the three stores' models.
	r = fragility(t, env, "models", "list", "--all")
	for _, w := range []string{"ollama:tiny:latest", "hf:fragility/tiny-GGUF:tiny-F16.gguf", "lmstudio:lmstudio-community/tiny-GGUF/tiny-F16.gguf", "llama", "ollama:zipped:latest", "not a GGUF file"} {
		if r.code != 0 || !strings.Contains(r.stdout, w) {
			t.Errorf("models list --all: exit %d, no %q in\n%s%s", r.code, w, r.stdout, r.stderr)
		}
	}

	// Bad input: one line, exit 1, no run directory.
	bad := filepath.Join(dir, "bad")
	b, _ := os.ReadFile(blob)
	changed := append([]byte(nil), b...)
	changed[len(changed)/2] ^= 0x55
	if err := os.WriteFile(blob, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		model string
		env   []string
		want  []string
	}{
		{"changed blob", "ollama:tiny", nil, []string{"ollama:tiny", blob, "the store names it sha256:"}},
		{"unknown name", "ollama:tiyn", nil, []string{"ollama:tiyn", "no model tiyn:latest", "closest: tiny:latest"}},
		{"unknown bare tag", "tiny:8b", nil, []string{"no model tiny:8b", "closest: tiny:latest"}},
		{"missing blob", "ollama:gone", nil, []string{"ollama:gone", "missing blob"}},
		{"not GGUF", "ollama:zipped", nil, []string{"ollama:zipped", "not a GGUF file"}},
		{"two stores", gemmaName, nil, []string{gemmaName, "a name in two stores", "fragility's cache", "Ollama's", "ollama:" + gemmaName}},
		{"unknown repo", "hf:fragility/tiny-GUF", nil, []string{"no model fragility/tiny-GUF", "closest: fragility/tiny-GGUF"}},
		{"unreadable store", "ollama:tiny", []string{"OLLAMA_MODELS=" + filepath.Join(dir, "home", ".lmstudio", "models", "lmstudio-community", "tiny-GGUF", "tiny-F16.gguf")}, []string{"cannot read Ollama's store"}},
	} {
		r := fragility(t, append(slices.Clone(env), c.env...), append([]string{"run", "--out", bad, "--model", c.model}, flags...)...)
		oneErrorLine(t, c.name, r, c.want...)
		if _, err := os.Stat(bad); err == nil {
			t.Fatalf("%s: %s was created", c.name, bad)
		}
	}
	// --help says which template and sampling are used.
	r = fragility(t, env, "run", "--help")
	if !strings.Contains(r.stdout, "GGUF's own chat template") || !strings.Contains(r.stdout, "unused_layers") {
		t.Errorf("run --help does not say that Ollama's template and parameters are not used:\n%s", r.stdout)
	}
}
