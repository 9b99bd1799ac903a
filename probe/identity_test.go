package probe

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
