package llm

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"

	gguf "github.com/gpustack/gguf-parser-go"
)

// KeyRequantizedFrom is the GGUF metadata key Quantize writes into a file
// made from an already quantized one: "TYPE sha256:HEX" of the source (its
// llama.cpp file type name, or "unknown", and the sha256 of the source
// file). Such a file can be no more precise than its source.
const KeyRequantizedFrom = "fragility.requantized_from"

// sourceQuantized reports whether any tensor of the GGUF file at path is of
// a quantized type (not F32, F16 or BF16), and the file's type name.
func sourceQuantized(path string) (bool, string, error) {
	f, err := parseGGUF(path)
	if err != nil {
		return false, "", fmt.Errorf("%s: %w", path, err)
	}
	name := "unknown"
	if ft, ok, err := uintKey(f.Header.MetadataKV, "general.file_type"); err == nil && ok {
		name = FileTypeName(int(ft))
	}
	for _, ti := range f.TensorInfos {
		switch ti.Type {
		case gguf.GGMLTypeF32, gguf.GGMLTypeF16, gguf.GGMLTypeBF16:
		default:
			return true, name, nil
		}
	}
	return false, name, nil
}

// addStringKV rewrites the GGUF file at path with one more metadata pair
// key = value (a string), through a temporary file renamed over it: the
// header's key count + 1, the pair after the others, the tensor table as it
// was, padding to the file's alignment, then the tensor data unchanged
// (tensor offsets are relative to the data section).
func addStringKV(path, key, value string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	s := &ggufScanner{r: bufio.NewReaderSize(fh, 1<<20), left: uint64(st.Size()), size: uint64(st.Size())}
	if err := scanHeader(s); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	dataStart := (s.infoEnd + s.align - 1) / s.align * s.align
	head := make([]byte, s.infoEnd)
	if _, err := fh.ReadAt(head, 0); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var kv []byte
	kv = binary.LittleEndian.AppendUint64(kv, uint64(len(key)))
	kv = append(kv, key...)
	kv = binary.LittleEndian.AppendUint32(kv, ggufTypeString)
	kv = binary.LittleEndian.AppendUint64(kv, uint64(len(value)))
	kv = append(kv, value...)

	out := make([]byte, 0, len(head)+len(kv)+int(s.align))
	out = append(out, head[:16]...)
	out = binary.LittleEndian.AppendUint64(out, binary.LittleEndian.Uint64(head[16:24])+1)
	out = append(out, head[24:s.kvEnd]...)
	out = append(out, kv...)
	out = append(out, head[s.kvEnd:]...)
	for uint64(len(out))%s.align != 0 {
		out = append(out, 0)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".kv.tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return err
	}
	if _, err := io.Copy(tmp, io.NewSectionReader(fh, int64(dataStart), st.Size()-int64(dataStart))); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
