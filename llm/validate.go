package llm

import (
	"fmt"

	gguf "github.com/gpustack/gguf-parser-go"
)

// validateGGUF parses the GGUF header, metadata and tensor infos with
// github.com/gpustack/gguf-parser-go (no tensor data is read) and checks that
// every tensor's data lies inside the file, so that a truncated or corrupt file
// is refused with a clear error before llama.cpp maps it.
func validateGGUF(path string, fileSize int64) error {
	f, err := gguf.ParseGGUFFile(path, gguf.SkipLargeMetadata())
	if err != nil {
		return fmt.Errorf("%s: corrupt or truncated GGUF: %v", path, err)
	}
	if f.TensorDataStartOffset < 0 || f.TensorDataStartOffset > fileSize {
		return fmt.Errorf("%s: corrupt GGUF: tensor data starts at byte %d of a %d-byte file", path, f.TensorDataStartOffset, fileSize)
	}
	if len(f.TensorInfos) == 0 {
		return fmt.Errorf("%s: GGUF file holds no tensors (vocabulary-only or damaged file)", path)
	}
	for _, ti := range f.TensorInfos {
		end := uint64(f.TensorDataStartOffset) + ti.Offset + ti.Bytes()
		if end > uint64(fileSize) {
			return fmt.Errorf("%s: truncated GGUF: tensor %q ends at byte %d but the file has %d bytes", path, ti.Name, end, fileSize)
		}
	}
	return nil
}
