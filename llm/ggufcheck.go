package llm

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
)

// ggmlTypeCount is GGML_TYPE_COUNT of the pinned ggml (ggml.h).
const ggmlTypeCount = 40

// ggmlMaxName is GGML_MAX_NAME of the pinned ggml: a tensor name must be
// shorter.
const ggmlMaxName = 64

// ggmlBlockSize is blck_size of each ggml type in the pinned ggml's
// type_traits (ggml.c): how many elements one block holds. 0 marks the types
// whose support was removed (4, 5, 31–33, 36–38); ggml refuses them.
var ggmlBlockSize = [ggmlTypeCount]int64{
	0: 1, 1: 1, 2: 32, 3: 32, 4: 0, 5: 0, 6: 32, 7: 32, 8: 32, 9: 32,
	10: 256, 11: 256, 12: 256, 13: 256, 14: 256, 15: 256, 16: 256, 17: 256, 18: 256, 19: 256,
	20: 32, 21: 256, 22: 256, 23: 256, 24: 1, 25: 1, 26: 1, 27: 1, 28: 1, 29: 256,
	30: 1, 31: 0, 32: 0, 33: 0, 34: 256, 35: 256, 36: 0, 37: 0, 38: 0, 39: 32,
}

// gguf value types (gguf.h) and their sizes; string (8) and array (9) have
// none.
const (
	ggufTypeUint32 = 4
	ggufTypeString = 8
	ggufTypeArray  = 9
	ggufTypeCount  = 13
)

var ggufTypeSize = [ggufTypeCount]uint64{1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8}

// ggufTypeName names a gguf value type for messages.
var ggufTypeName = [ggufTypeCount]string{"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array", "uint64", "int64", "float64"}

// errShort marks a read past the end of the file; errLength a length or
// count beyond it.
var (
	errShort  = errors.New("file ends inside the GGUF header")
	errLength = errors.New("truncated GGUF (or a corrupt length in its header)")
)

// ggufScanner reads the GGUF header the way gguf_init_from_file_impl does,
// bounding every length by the bytes left in the file.
type ggufScanner struct {
	r    *bufio.Reader
	left uint64 // bytes not yet read
	size uint64 // bytes in the file

	// Where scanHeader found the sections end, and the alignment.
	kvEnd, infoEnd, align uint64
}

func (s *ggufScanner) read(n uint64) ([]byte, error) {
	if n > s.left {
		return nil, errShort
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(s.r, b); err != nil {
		return nil, errShort
	}
	s.left -= n
	return b, nil
}

func (s *ggufScanner) skip(n uint64) error {
	if n > s.left {
		return errShort
	}
	if _, err := s.r.Discard(int(n)); err != nil {
		return errShort
	}
	s.left -= n
	return nil
}

func (s *ggufScanner) u32() (uint32, error) {
	b, err := s.read(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (s *ggufScanner) u64() (uint64, error) {
	b, err := s.read(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// str reads a GGUF string (u64 length, bytes); max bounds its length.
func (s *ggufScanner) str(what string, max uint64) (string, error) {
	n, err := s.u64()
	if err != nil {
		return "", err
	}
	if n > s.left {
		return "", fmt.Errorf("%w: %s has length %d but only %d bytes follow", errLength, what, n, s.left)
	}
	if n > max {
		return "", fmt.Errorf("%s is %d bytes long, at most %d allowed", what, n, max)
	}
	b, err := s.read(n)
	return string(b), err
}

// scanGGUFHeader refuses what gguf_init_from_file_impl of the pinned ggml
// (ggml/src/gguf.cpp) would refuse or, worse, abort the process on
// (GGML_ASSERT, a division by zero), reading the file itself in the order
// gguf.cpp does: magic and version (2 or 3), tensor and key counts in range;
// per key a non-empty (the gguf_kv constructor asserts), unique key and a
// known value type (arrays of a known, non-array type, lengths within the
// file); general.alignment one uint32 (gguf_get_val_u32 asserts otherwise)
// and a power of two; per tensor a name under GGML_MAX_NAME bytes and unique,
// at most GGML_MAX_DIMS dimensions, none 0 (the element-count check divides
// by them: SIGFPE) or negative, fewer than 2^63−1 elements, a type of the
// pinned enum that is not removed and a row length a multiple of the type's
// block (validateGGUF checks the data offsets after it). docs/gguf-checks.md
// lists each check with the place in gguf.cpp it stands for. Errors are one
// line, without the file name.
func scanGGUFHeader(path string, size int64) error {
	fh, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot read: %w", pathErrCause(err))
	}
	defer fh.Close()
	s := &ggufScanner{r: bufio.NewReaderSize(fh, 1<<20), left: uint64(size), size: uint64(size)}
	err = scanHeader(s)
	if errors.Is(err, errShort) {
		return fmt.Errorf("truncated GGUF: %w", err)
	}
	if errors.Is(err, errLength) {
		return err
	}
	return err
}

func scanHeader(s *ggufScanner) error {
	magic, err := s.read(4)
	if err != nil {
		return err
	}
	if string(magic) != "GGUF" {
		return fmt.Errorf("%w (bad magic %q)", ErrNotGGUF, magic)
	}
	version, err := s.u32()
	if err != nil {
		return err
	}
	if version != 2 && version != 3 {
		if version&0xffff == 0 {
			return fmt.Errorf("GGUF version %d (%#x) is not supported: a file of the other byte order?", version, version)
		}
		return fmt.Errorf("GGUF version %d is not supported (llama.cpp %s reads versions 2 and 3)", version, LlamaCommit)
	}
	nTensors, err := s.u64()
	if err != nil {
		return err
	}
	nKV, err := s.u64()
	if err != nil {
		return err
	}
	// Every tensor entry takes at least 24 bytes and every key 13: counts
	// beyond what the file can hold are corrupt (gguf.cpp also refuses
	// negative counts).
	if int64(nTensors) < 0 || nTensors > s.left/24 {
		return fmt.Errorf("corrupt GGUF header: tensor count %d for a file of this size", int64(nTensors))
	}
	if int64(nKV) < 0 || nKV > s.left/13 {
		return fmt.Errorf("corrupt GGUF header: key count %d for a file of this size", int64(nKV))
	}
	var align uint64 = 32 // GGUF_DEFAULT_ALIGNMENT
	seen := make(map[string]uint64, nKV)
	for i := uint64(0); i < nKV; i++ {
		key, err := s.str(fmt.Sprintf("key %d", i), s.left)
		if err != nil {
			return err
		}
		if key == "" {
			return fmt.Errorf("corrupt GGUF metadata: key %d is empty", i)
		}
		if j, dup := seen[key]; dup {
			return fmt.Errorf("corrupt GGUF metadata: key %q appears twice (keys %d and %d)", key, j, i)
		}
		seen[key] = i
		typ, err := s.u32()
		if err != nil {
			return err
		}
		n, array := uint64(1), false
		if typ == ggufTypeArray {
			array = true
			if typ, err = s.u32(); err != nil {
				return err
			}
			if n, err = s.u64(); err != nil {
				return err
			}
		}
		if typ >= ggufTypeCount || typ == ggufTypeArray {
			return fmt.Errorf("corrupt GGUF metadata: key %q has value type %d, not a GGUF value type", key, int32(typ))
		}
		if key == "general.alignment" {
			if array || typ != ggufTypeUint32 {
				what := " " + ggufTypeName[typ]
				if array {
					what = "n array of" + what
				}
				return fmt.Errorf("corrupt GGUF metadata: general.alignment holds a%s, llama.cpp reads only a uint32", what)
			}
			v, err := s.u32()
			if err != nil {
				return err
			}
			if align = uint64(v); align == 0 || align&(align-1) != 0 {
				return fmt.Errorf("corrupt GGUF metadata: general.alignment is %d, not a power of two", v)
			}
			continue
		}
		if typ == ggufTypeString {
			if n > s.left/8 {
				return fmt.Errorf("%w: key %q holds %d strings but only %d bytes follow", errLength, key, n, s.left)
			}
			for k := uint64(0); k < n; k++ {
				m, err := s.u64()
				if err != nil {
					return err
				}
				if err := s.skip(m); err != nil {
					return fmt.Errorf("%w: key %q: string %d has length %d but only %d bytes follow", errLength, key, k, m, s.left)
				}
			}
			continue
		}
		hi, total := bits.Mul64(n, ggufTypeSize[typ])
		if hi != 0 || total > s.left {
			return fmt.Errorf("%w: key %q holds %d values but only %d bytes follow", errLength, key, n, s.left)
		}
		if err := s.skip(total); err != nil {
			return err
		}
	}
	s.kvEnd, s.align = s.size-s.left, align
	names := make(map[string]uint64, nTensors)
	for i := uint64(0); i < nTensors; i++ {
		name, err := s.str(fmt.Sprintf("tensor %d's name", i), ggmlMaxName-1)
		if err != nil {
			if errors.Is(err, errLength) || errors.Is(err, errShort) {
				return err
			}
			return fmt.Errorf("corrupt GGUF tensor table: %w", err)
		}
		if j, dup := names[name]; dup {
			return fmt.Errorf("corrupt GGUF tensor table: tensor name %q appears twice (tensors %d and %d)", name, j, i)
		}
		names[name] = i
		nDims, err := s.u32()
		if err != nil {
			return err
		}
		if nDims > 4 {
			return fmt.Errorf("corrupt GGUF tensor table: tensor %q has %d dimensions, ggml allows at most 4", name, nDims)
		}
		dims := []uint64{1, 1, 1, 1}
		var elems uint64 = 1
		for d := uint32(0); d < nDims; d++ {
			if dims[d], err = s.u64(); err != nil {
				return err
			}
			n := dims[d]
			if n == 0 {
				return fmt.Errorf("corrupt GGUF tensor table: tensor %q has a dimension of 0 (dimension %d), on which ggml divides by zero", name, d)
			}
			if n > math.MaxInt64 {
				return fmt.Errorf("corrupt GGUF tensor table: tensor %q dimension %d is %d, a negative count", name, d, int64(n))
			}
			hi, lo := bits.Mul64(elems, n)
			if hi != 0 || lo >= math.MaxInt64 {
				return fmt.Errorf("corrupt GGUF tensor table: tensor %q has 2^63−1 elements or more", name)
			}
			elems = lo
		}
		typ, err := s.u32()
		if err != nil {
			return err
		}
		if typ >= ggmlTypeCount {
			return fmt.Errorf("corrupt GGUF tensor table: tensor %q has type %d, not a ggml type (llama.cpp %s knows 0 to %d)", name, int32(typ), LlamaCommit, ggmlTypeCount-1)
		}
		blk := ggmlBlockSize[typ]
		if blk == 0 {
			return fmt.Errorf("corrupt GGUF tensor table: tensor %q has type %d, a ggml type whose support was removed", name, typ)
		}
		if dims[0]%uint64(blk) != 0 {
			return fmt.Errorf("corrupt GGUF tensor table: tensor %q (type %d) has %d elements per row, not a multiple of its block size %d", name, typ, dims[0], blk)
		}
		// The data offset: validateGGUF checks offsets and sizes once the
		// parser has sized each tensor.
		if _, err := s.u64(); err != nil {
			return err
		}
	}
	s.infoEnd = s.size - s.left
	return nil
}
