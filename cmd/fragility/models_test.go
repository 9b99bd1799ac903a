package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/models"
)

// TestModelsListAndPath: `models list` names every model of the manifest
// with its set and cache state, `models path` prints a cached model's file,
// and inspect takes a model's name as well as a path.
func TestModelsListAndPath(t *testing.T) {
	man, err := models.Load()
	if err != nil {
		t.Fatal(err)
	}
	r := fragility(t, nil, "models", "list")
	if r.code != 0 {
		t.Fatalf("models list: exit %d\n%s", r.code, r.stderr)
	}
	cache, _ := models.CacheDir()
	if !strings.Contains(r.stdout, "cache: "+cache) {
		t.Errorf("models list does not name the cache %s:\n%s", cache, r.stdout)
	}
	for _, md := range man.Models {
		if !strings.Contains(r.stdout, md.Name) {
			t.Errorf("models list lacks %s:\n%s", md.Name, r.stdout)
		}
	}
	r = fragility(t, nil, "models", "list", "--json")
	var list struct {
		Cache  string     `json:"cache"`
		Models []modelRow `json:"models"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || r.code != 0 || list.Cache != cache || len(list.Models) != len(man.Models) {
		t.Fatalf("models list --json: exit %d, %v: %s", r.code, err, r.stdout)
	}
	for _, row := range list.Models {
		md, _ := man.Find(row.Name)
		if row.Set != md.Set || row.Default != md.Default || row.Size != md.Size() {
			t.Errorf("%s: row %+v", row.Name, row)
		}
		// make test fetches the default set, which leaves it verified.
		if row.Set == models.SetDefault && (!row.Cached || row.SHA256 != models.HashVerified) {
			t.Errorf("%s: cached %v, sha256 %s; want a verified cached default model", row.Name, row.Cached, row.SHA256)
		}
	}

	gemma := gemmaLLM(t)
	if r := fragility(t, nil, "models", "path", gemmaName); r.code != 0 || strings.TrimSpace(r.stdout) != gemma {
		t.Errorf("models path %s: exit %d, %q; want %s", gemmaName, r.code, r.stdout, gemma)
	}
	def, err := models.DefaultPath("llm")
	if err != nil {
		t.Fatal(err)
	}
	if r := fragility(t, nil, "models", "path"); r.code != 0 || strings.TrimSpace(r.stdout) != def {
		t.Errorf("models path: exit %d, %q; want the default LLM %s", r.code, r.stdout, def)
	}
	r = fragility(t, nil, append([]string{"inspect", "--json", gemmaName}, cpu...)...)
	var info struct {
		Path string `json:"path"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &info); err != nil || r.code != 0 || info.Path != gemma {
		t.Errorf("inspect %s: exit %d, path %q (%v); want %s", gemmaName, r.code, info.Path, err, gemma)
	}
}

// TestModelNameErrors: a model name that is not cached, or a word that is
// neither a file nor a model name, fails with one line that names it (and
// how to fetch a known model) wherever a model is taken, before anything
// loads or any run directory is made.
func TestModelNameErrors(t *testing.T) {
	empty := []string{"FRAGILITY_MODELS=" + t.TempDir()}
	out := filepath.Join(t.TempDir(), "run")
	fetch := "fetch it with `fragility models fetch qwen2.5-coder-1.5b` (or `make models-extra`)"
	r := fragility(t, empty, "models", "path", "qwen2.5-coder-1.5b")
	oneErrorLine(t, "models path", r, "model qwen2.5-coder-1.5b is not in the cache", fetch)
	for _, args := range [][]string{
		{"generate", "--model", "qwen2.5-coder-1.5b", "--prompt", "hi"},
		{"run", "--no-ddc", "--model", "qwen2.5-coder-1.5b", "--out", out},
		{"bench", "--no-ddc", "--model", "qwen2.5-coder-1.5b"},
		{"inspect", "qwen2.5-coder-1.5b"},
		{"compare", "--out", out, "qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b"},
	} {
		r := fragility(t, empty, append(args, cpu...)...)
		oneErrorLine(t, strings.Join(args, " "), r, "model qwen2.5-coder-1.5b is not in the cache", fetch)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was created", out)
	}
	r = fragility(t, empty, "plan", "--model", "qwen2.5-coder-1.5b")
	oneErrorLine(t, "plan", r, "model qwen2.5-coder-1.5b is not in the cache", fetch)
	// The default LLM, not cached: the same kind of line.
	r = fragility(t, empty, append([]string{"generate", "--prompt", "hi"}, cpu...)...)
	oneErrorLine(t, "generate with an empty cache", r, "model qwen2.5-coder-0.5b is not in the cache", "`make models`")

	r = fragility(t, nil, append([]string{"generate", "--model", "qwen", "--prompt", "hi"}, cpu...)...)
	oneErrorLine(t, "unknown name", r, "qwen: no such file, and no model of that name", "qwen2.5-coder-0.5b")
	r = fragility(t, nil, append([]string{"run", "--embedder", gemmaName, "--out", out}, cpu...)...)
	oneErrorLine(t, "an LLM as embedder", r, "model "+gemmaName+" is an llm, not an embedder")
	// An unknown name is bad input (exit 1) in models fetch and path as in
	// run, one line naming the known names; models path says what inspect
	// says (it resolves as inspect does: TestModelsPathAgreesWithInspect).
	r = fragility(t, nil, "models", "fetch", "no-such-model")
	oneErrorLine(t, "models fetch no-such-model", r, `no model named "no-such-model"`, "qwen2.5-coder-0.5b")
	r = fragility(t, nil, "models", "path", "no-such-model")
	oneErrorLine(t, "models path no-such-model", r, "no-such-model: no such file, and no model of that name", "qwen2.5-coder-0.5b")
}
