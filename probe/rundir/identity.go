package rundir

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	gguf "github.com/gpustack/gguf-parser-go"
)

// Identity names a model at three levels, so that files of one model in
// different quantizations can be grouped:
//
//   - Name: the exact name, the file name without ".gguf" (or a registry
//     reference such as "hf.co/org/gpt-oss:20B-UD-Q6_K_XL" as given);
//   - BaseName: Name with any directory, registry host, organisation or
//     node prefix stripped ("gpt-oss:20B-UD-Q6_K_XL");
//   - Family: BaseName with a trailing quantization suffix stripped
//     ("gpt-oss:20B"), lower-cased for comparison.
//
// The GGUF metadata (general.name, general.architecture, general.size_label,
// general.file_type; read with github.com/gpustack/gguf-parser-go) is kept
// beside it; SameFamily uses both.
type Identity struct {
	Name         string `json:"name"`
	BaseName     string `json:"base_name"`
	Family       string `json:"family"`
	GeneralName  string `json:"general_name,omitempty"`
	Architecture string `json:"architecture,omitempty"`
	SizeLabel    string `json:"size_label,omitempty"`
	FileType     string `json:"file_type,omitempty"` // quantization type as gguf-parser-go names it
}

// quantSuffix matches a quantization type at the end of a model name, with
// an optional "UD-" (dynamic quant) marker and separator: "-Q4_K_M",
// "_q8_0", ".F16", "-UD-Q6_K_XL", "-IQ2_XXS", "-BF16", "-MXFP4".
var quantSuffix = regexp.MustCompile(`(?i)[-_.:](?:ud[-_])?(?:i?q\d(?:_[a-z0-9]+)*|bf16|f16|f32|fp16|fp32|mxfp4(?:_moe)?|tq\d_0)$`)

// IdentifyModel identifies a model from its path or reference and, when
// known, its general.name and quantization type.
func IdentifyModel(ref, generalName, quant string) Identity {
	name := ref
	if strings.HasSuffix(strings.ToLower(name), ".gguf") {
		name = filepath.Base(name)
		name = name[:len(name)-len(".gguf")]
	}
	base := name
	if i := strings.LastIndex(base, "/"); i >= 0 {
		base = base[i+1:]
	}
	family := base
	for {
		loc := quantSuffix.FindStringIndex(family)
		if loc == nil || loc[0] == 0 {
			break
		}
		family = family[:loc[0]]
	}
	return Identity{Name: name, BaseName: base, Family: strings.ToLower(family), GeneralName: generalName, FileType: quant}
}

// IdentifyFile identifies a GGUF file from its name and its metadata.
func IdentifyFile(path string) (Identity, error) {
	f, err := gguf.ParseGGUFFile(path, gguf.SkipLargeMetadata())
	if err != nil {
		return Identity{}, fmt.Errorf("%s: corrupt or truncated GGUF: %v", path, err)
	}
	md := f.Metadata()
	id := IdentifyModel(path, md.Name, md.FileType.String())
	id.Architecture = md.Architecture
	if v, ok := f.Header.MetadataKV.Get("general.size_label"); ok {
		id.SizeLabel = fmt.Sprint(v.Value)
	}
	return id, nil
}

// SameFamily reports whether a and b are files of one model: the same
// family key, or the same general.name, architecture and size label in their
// GGUF metadata (which survives renaming and requantization). "qwen3" and
// "qwen3.5" are different families; "gemma-3-270m-it-Q4_K_M" and
// "gemma-3-270m-it-Q8_0" are one.
func SameFamily(a, b Identity) bool {
	if a.Family != "" && a.Family == b.Family {
		return true
	}
	return a.GeneralName != "" && a.GeneralName == b.GeneralName &&
		a.Architecture == b.Architecture && a.SizeLabel == b.SizeLabel
}

// IdentifyNamed is id (a file's identity) named by name, a store's name for
// it ("qwen3:8b", "org/repo/file-Q4_K_M"): the three levels come from the
// name, the GGUF metadata stays.
func IdentifyNamed(name string, id Identity) Identity {
	n := IdentifyModel(name, id.GeneralName, id.FileType)
	id.Name, id.BaseName, id.Family = n.Name, n.BaseName, n.Family
	return id
}
