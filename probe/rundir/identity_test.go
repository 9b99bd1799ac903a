package rundir

import "testing"

func TestIdentifyModelFamilies(t *testing.T) {
	cases := []struct {
		a, b string
		same bool
	}{
		{"gemma-3-270m-it-Q4_K_M.gguf", "gemma-3-270m-it-Q8_0.gguf", true},
		{"/models/gemma-3-270m-it-Q4_K_M.gguf", "other/dir/gemma-3-270m-it-F16.gguf", true},
		{"qwen3", "qwen3.5", false},
		{"qwen3-4b-Q4_K_M.gguf", "qwen3.5-4b-Q4_K_M.gguf", false},
		{"gpt-oss:20B", "gpt-oss:20B-UD-Q6_K_XL", true},
		{"hf.co/unsloth/gpt-oss:20B-UD-Q6_K_XL", "gpt-oss:20B", true},
		{"gemma-3-270m-q4_k_m.gguf", "gemma-3-270m-Q4_0.gguf", true},
		{"gemma-3-270m-q4_k_m.gguf", "gemma-3-1b-q4_k_m.gguf", false},
		{"llama-3.2-1b-instruct-IQ2_XXS.gguf", "llama-3.2-1b-instruct-bf16.gguf", true},
	}
	for _, c := range cases {
		a, b := IdentifyModel(c.a, "", ""), IdentifyModel(c.b, "", "")
		if got := SameFamily(a, b); got != c.same {
			t.Errorf("SameFamily(%q [%s], %q [%s]) = %v, want %v", c.a, a.Family, c.b, b.Family, got, c.same)
		}
	}
	id := IdentifyModel("hf.co/unsloth/gpt-oss:20B-UD-Q6_K_XL", "", "")
	if id.Name != "hf.co/unsloth/gpt-oss:20B-UD-Q6_K_XL" || id.BaseName != "gpt-oss:20B-UD-Q6_K_XL" || id.Family != "gpt-oss:20b" {
		t.Errorf("levels: %+v", id)
	}
	// Metadata identity survives renaming.
	a := Identity{Family: "x", GeneralName: "Gemma 3 270m", Architecture: "gemma3", SizeLabel: "270M"}
	b := Identity{Family: "y", GeneralName: "Gemma 3 270m", Architecture: "gemma3", SizeLabel: "270M"}
	if !SameFamily(a, b) {
		t.Error("same GGUF metadata: not one family")
	}
}

// TestIdentifyStoreNames: the three levels on the names of Ollama's store
// and of the Hugging Face cache (models.Source.Name).
func TestIdentifyStoreNames(t *testing.T) {
	full, short := IdentifyModel("registry.ollama.ai/library/qwen3:8b", "", ""), IdentifyModel("qwen3:8b", "", "")
	if full.BaseName != "qwen3:8b" || full.BaseName != short.BaseName || !SameFamily(full, short) {
		t.Errorf("registry/ns/qwen3:8b %+v and qwen3:8b %+v are not one base name", full, short)
	}
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"qwen3:8b-q4_K_M", "qwen3:8b", true},
		{"llama3:Q8_0", "llama3:q4_0", true},
		{"qwen3:8b", "qwen3.5:8b", false},
		{"unsloth/gpt-oss-20b-GGUF/gpt-oss-20b-UD-Q6_K_XL", "gpt-oss-20b-F16.gguf", true},
	} {
		a, b := IdentifyModel(c.a, "", ""), IdentifyModel(c.b, "", "")
		if got := SameFamily(a, b); got != c.same {
			t.Errorf("SameFamily(%q [%s], %q [%s]) = %v, want %v", c.a, a.Family, c.b, b.Family, got, c.same)
		}
	}
	// A blob named by its digest takes the store's name; its metadata stays.
	blob := Identity{Name: "sha256-0123", BaseName: "sha256-0123", Family: "sha256-0123", GeneralName: "Tiny", FileType: "Q8_0"}
	id := IdentifyNamed("tiny:latest", blob)
	if id.Name != "tiny:latest" || id.Family != "tiny:latest" || id.GeneralName != "Tiny" || id.FileType != "Q8_0" {
		t.Errorf("IdentifyNamed: %+v", id)
	}
}
