package models

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ollamaLayout writes a model into an Ollama store at root as Ollama v0.17
// writes one: the manifest manifests/HOST/NS/NAME/TAG (path, spelled as on
// disk) with the Docker media type, a config blob and the layers (the GGUF
// weights, a template, parameters), each blob blobs/sha256-HEX. It returns
// the weights' blob.
func ollamaLayout(t *testing.T, root, path string, weights []byte) string {
	t.Helper()
	blob := func(mt string, b []byte) Layer {
		write(t, filepath.Join(root, "blobs", "sha256-"+sha(b)), b)
		return Layer{MediaType: mt, Digest: "sha256:" + sha(b), Size: int64(len(b))}
	}
	config := blob("application/vnd.docker.container.image.v1+json", []byte(`{"model_format":"gguf","model_family":"llama","file_type":"Q8_0","architecture":"amd64","os":"linux","rootfs":{"type":"layers"}}`))
	m, _ := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.docker.distribution.manifest.v2+json",
		"config":        config,
		"layers": []Layer{
			blob(ollamaModelLayer, weights),
			blob("application/vnd.ollama.image.template", []byte("{{ .Prompt }}")),
			blob("application/vnd.ollama.image.params", []byte(`{"stop":["<|eot|>"]}`)),
		},
	})
	write(t, filepath.Join(root, "manifests", filepath.FromSlash(path)), m)
	return filepath.Join(root, "blobs", "sha256-"+sha(weights))
}

// TestOllamaNameCase: names match without regard to case on host,
// namespace, model and tag, as Ollama matches them (`ollama create
// MixedCase:Q4` is stored as library/MixedCase/q4 and found as
// mixedcase:q4 and MIXEDCASE:Q4); the source carries the name as on disk.
// Two manifests that differ only in case are refused, naming both, and
// listed as not runnable.
func TestOllamaNameCase(t *testing.T) {
	dir := storeEnv(t)
	root := filepath.Join(dir, "ollama")
	blob := ollamaLayout(t, root, "registry.ollama.ai/library/MixedCase/q4", fakeGGUF("llama", 7, 10))
	ollamaLayout(t, root, "registry.ollama.ai/library/tinygemma/v3", fakeGGUF("gemma3", 2, 12))
	ollamaLayout(t, root, "registry.ollama.ai/Team/Tiny/latest", fakeGGUF("llama", 7, 14))
	for _, c := range []struct{ ref, name string }{
		{"ollama:MixedCase:Q4", "MixedCase:q4"},
		{"ollama:mixedcase:q4", "MixedCase:q4"},
		{"MixedCase:Q4", "MixedCase:q4"},
		{"MIXEDCASE:Q4", "MixedCase:q4"},
		{"ollama:REGISTRY.OLLAMA.AI/Library/mixedCASE:q4", "MixedCase:q4"},
		{"TINYGEMMA:V3", "tinygemma:v3"},
		{"ollama:TinyGemma:v3", "tinygemma:v3"},
		{"team/tiny:Latest", "Team/Tiny:latest"},
		{"ollama:TEAM/TINY:LATEST", "Team/Tiny:latest"},
	} {
		p, src, err := ResolveSource(c.ref, "llm")
		if err != nil {
			t.Errorf("%s: %v", c.ref, err)
			continue
		}
		if src == nil || src.Name != c.name || src.Ref != c.ref || p != src.Path {
			t.Errorf("%s: name %q ref %q path %s; want the name %s", c.ref, src.Name, src.Ref, p, c.name)
		}
	}
	if p, _ := Resolve("mixedcase:Q4", "llm"); p != blob {
		t.Errorf("path %s, want the blob %s", p, blob)
	}
	_, _, err := ResolveSource("ollama:mixedcase:q5", "llm")
	wantErr(t, "unknown tag", err, "ollama:mixedcase:q5", "no model mixedcase:q5", "closest: MixedCase:q4")

	// A second spelling of the same name: both are Ollama's, neither is chosen.
	ollamaLayout(t, root, "registry.ollama.ai/library/mixedcase/Q4", fakeGGUF("llama", 7, 16))
	for _, ref := range []string{"ollama:MixedCase:q4", "mixedcase:Q4", "MIXEDCASE:q4"} {
		_, _, err := ResolveSource(ref, "llm")
		wantErr(t, "two spellings", err, ref+": ambiguous", "MixedCase:q4 and mixedcase:Q4", "differ only in case", root)
	}
	entries, problems := ListStores()
	if len(problems) != 0 {
		t.Errorf("problems: %v", problems)
	}
	got := map[string]Entry{}
	for _, e := range entries {
		got[e.Name] = e
	}
	for _, n := range []string{"ollama:MixedCase:q4", "ollama:mixedcase:Q4"} {
		if e, ok := got[n]; !ok || e.Runnable || !strings.Contains(e.Why, "MixedCase:q4 and mixedcase:Q4 differ only in case") {
			t.Errorf("%s: listed %v as %+v; want not runnable, ambiguous", n, ok, e)
		}
	}
	for _, n := range []string{"ollama:tinygemma:v3", "ollama:Team/Tiny:latest"} {
		if e := got[n]; !e.Runnable {
			t.Errorf("%s: %+v, want runnable", n, e)
		}
	}
}

// TestOllamaHostPort: a model copied to a registry host with a port
// (`ollama cp tiny localhost:5000/team/tiny:t1`, stored under
// manifests/localhost:5000/team/tiny/t1) is listed and resolved by its
// name, with the ollama: prefix or bare, in any case.
func TestOllamaHostPort(t *testing.T) {
	dir := storeEnv(t)
	root := filepath.Join(dir, "ollama")
	weights := fakeGGUF("llama", 7, 10)
	blob := ollamaLayout(t, root, "registry.ollama.ai/library/tiny/latest", weights)
	ollamaLayout(t, root, "localhost:5000/team/tiny/t1", weights)
	ollamaLayout(t, root, "localhost:5000/team/tiny/latest", weights)
	for _, c := range []struct{ ref, name string }{
		{"ollama:localhost:5000/team/tiny:t1", "localhost:5000/team/tiny:t1"},
		{"localhost:5000/team/tiny:t1", "localhost:5000/team/tiny:t1"},
		{"ollama:LOCALHOST:5000/Team/TINY:T1", "localhost:5000/team/tiny:t1"},
		{"ollama:localhost:5000/team/tiny", "localhost:5000/team/tiny:latest"},
	} {
		p, src, err := ResolveSource(c.ref, "llm")
		if err != nil {
			t.Errorf("%s: %v", c.ref, err)
			continue
		}
		if src == nil || src.Name != c.name || p != blob {
			t.Errorf("%s: name %q path %s; want %s, %s", c.ref, src.Name, p, c.name, blob)
		}
	}
	_, _, err := ResolveSource("ollama:localhost:5000/team/tiny:t2", "llm")
	wantErr(t, "unknown tag", err, "no model localhost:5000/team/tiny:t2", "closest: localhost:5000/team/tiny:t1")
	_, _, err = ResolveSource("ollama:localhost:5000/te:am/tiny:t1", "llm")
	wantErr(t, "a colon in the namespace", err, "not an Ollama name")

	entries, problems := ListStores()
	if len(problems) != 0 {
		t.Errorf("problems: %v", problems)
	}
	listed := map[string]bool{}
	for _, e := range entries {
		listed[e.Name] = e.Runnable
	}
	for _, n := range []string{"ollama:localhost:5000/team/tiny:t1", "ollama:localhost:5000/team/tiny:latest", "ollama:tiny:latest"} {
		if !listed[n] {
			t.Errorf("%s not listed as runnable (listed: %v)", n, listed)
		}
	}
	// Every listed name resolves, to the file the list names.
	for _, e := range entries {
		if p, err := Resolve(e.Name, "llm"); err != nil || p != e.Path {
			t.Errorf("%s: listed with %s, resolves to %s, %v", e.Name, e.Path, p, err)
		}
	}
}

// TestParseOllamaName: the parts of a name as Ollama's ParseNameBare cuts
// them, a host with a port included.
func TestParseOllamaName(t *testing.T) {
	for _, c := range []struct {
		in   string
		want ollamaName
	}{
		{"tiny", ollamaName{"registry.ollama.ai", "library", "tiny", "latest"}},
		{"Tiny:Q4", ollamaName{"registry.ollama.ai", "library", "Tiny", "Q4"}},
		{"team/tiny:t1", ollamaName{"registry.ollama.ai", "team", "tiny", "t1"}},
		{"localhost:5000/team/tiny:t1", ollamaName{"localhost:5000", "team", "tiny", "t1"}},
		{"localhost:5000/team/tiny", ollamaName{"localhost:5000", "team", "tiny", "latest"}},
	} {
		if n, err := parseOllamaName(c.in); err != nil || n != c.want {
			t.Errorf("parseOllamaName(%q) = %+v, %v; want %+v", c.in, n, err, c.want)
		}
	}
	for _, bad := range []string{"a/b/c/d", "te:am/tiny:x", "tiny:", ":t", "a//b", "../tiny", "ti ny"} {
		if n, err := parseOllamaName(bad); err == nil {
			t.Errorf("parseOllamaName(%q) = %+v, want an error", bad, n)
		}
	}
}

// TestListStoresDigest: the list reads headers only and says "not
// verified" for a file its store names by a digest, even one whose bytes
// changed; Verify hashes it: "verified", or "changed" and not runnable.
// LM Studio names no digest.
func TestListStoresDigest(t *testing.T) {
	dir := storeEnv(t)
	root := filepath.Join(dir, "ollama")
	good, bad := fakeGGUF("llama", 7, 10), fakeGGUF("llama", 7, 20)
	ollamaLayout(t, root, "registry.ollama.ai/library/good/latest", good)
	badBlob := ollamaLayout(t, root, "registry.ollama.ai/library/bad/latest", bad)
	changed := append([]byte(nil), bad...)
	changed[len(changed)-1] ^= 0xff // same size: only a hash tells
	write(t, badBlob, changed)
	hfRepo(t, filepath.Join(dir, "hf"), "org/r", "c", map[string][]byte{"r-Q8_0.gguf": good})
	write(t, filepath.Join(dir, "home", ".lmstudio", "models", "o", "p", "p.gguf"), good)

	entries, _ := ListStores()
	if len(entries) != 4 {
		t.Fatalf("%d entries: %+v", len(entries), entries)
	}
	want := map[string][2]string{ // name -> digest state before and after Verify
		"ollama:good:latest":   {DigestNotVerified, DigestVerified},
		"ollama:bad:latest":    {DigestNotVerified, DigestChanged},
		"hf:org/r:r-Q8_0.gguf": {DigestNotVerified, DigestVerified},
		"lmstudio:o/p/p.gguf":  {DigestNone, DigestNone},
	}
	for i := range entries {
		e := &entries[i]
		w, ok := want[e.Name]
		if !ok {
			t.Errorf("unexpected entry %+v", e)
			continue
		}
		if e.DigestState != w[0] || !e.Runnable {
			t.Errorf("%s listed: state %q runnable %v; want %q, runnable", e.Name, e.DigestState, e.Runnable, w[0])
		}
		if w[0] == DigestNotVerified && e.Digest != "sha256:"+sha(map[bool][]byte{true: bad, false: good}[e.Name == "ollama:bad:latest"]) {
			t.Errorf("%s: digest %s", e.Name, e.Digest)
		}
		if err := e.Verify(); err != nil {
			t.Errorf("%s: verify: %v", e.Name, err)
		}
		if e.DigestState != w[1] {
			t.Errorf("%s verified: state %q, want %q", e.Name, e.DigestState, w[1])
		}
		if w[1] == DigestChanged && (e.Runnable || !strings.Contains(e.Why, "sha256 "+sha(changed)) || !strings.Contains(e.Why, "the store names it sha256:"+sha(bad))) {
			t.Errorf("%s changed: %+v; want not runnable, both sums named", e.Name, e)
		}
		if w[1] != DigestChanged && !e.Runnable {
			t.Errorf("%s: not runnable after verify: %s", e.Name, e.Why)
		}
	}
}

// TestResolveSourcesSameFile: two names of one file are refused, naming
// the two names as given (not the file twice): a bare and a prefixed
// Ollama name, two Ollama names of one blob (ollama cp), a case variant,
// a Hugging Face name and its blob's path.
func TestResolveSourcesSameFile(t *testing.T) {
	dir := storeEnv(t)
	root := filepath.Join(dir, "ollama")
	weights := fakeGGUF("llama", 7, 10)
	blob := ollamaLayout(t, root, "registry.ollama.ai/library/tiny/latest", weights)
	ollamaLayout(t, root, "registry.ollama.ai/library/tiny2/latest", weights)
	other := ollamaLayout(t, root, "registry.ollama.ai/library/other/latest", fakeGGUF("llama", 7, 11))
	hfRepo(t, filepath.Join(dir, "hf"), "org/r", "c", map[string][]byte{"r-Q8_0.gguf": fakeGGUF("qwen3", 7, 12)})
	hfBlob := filepath.Join(dir, "hf", "models--org--r", "blobs", sha(fakeGGUF("qwen3", 7, 12)))

	paths, srcs, err := ResolveSources([]string{"tiny", "ollama:other", "hf:org/r"}, "llm")
	if err != nil || len(paths) != 3 || paths[0] != blob || paths[1] != other || srcs[2] == nil || srcs[2].Store != StoreHF {
		t.Errorf("three models: %v %+v %v", paths, srcs, err)
	}
	for _, c := range [][2]string{
		{"tiny", "ollama:tiny:latest"},
		{"tiny:latest", "tiny2:latest"},
		{"ollama:tiny", "TINY:LATEST"},
		{"hf:org/r", hfBlob},
		{blob, "tiny"},
	} {
		_, _, err := ResolveSources([]string{"ollama:other", c[0], c[1]}, "llm")
		wantErr(t, c[0]+" and "+c[1], err, c[0]+" and "+c[1]+" name the same file", "give it once")
	}
	// A path given twice in two spellings.
	_, _, err = ResolveSources([]string{blob, filepath.Join(root, "blobs", ".", filepath.Base(blob))}, "llm")
	wantErr(t, "one path, two spellings", err, "name the same file")
	if _, err := os.Stat(blob); err != nil {
		t.Fatal(err)
	}
}
