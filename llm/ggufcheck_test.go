package llm

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// GGUF metadata value types (gguf.h).
const (
	gtU8, gtI8, gtU16, gtI16, gtU32, gtI32, gtF32, gtBool, gtString, gtArray, gtU64, gtI64, gtF64 = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
)

// rawKV is one metadata pair as written: key, value type and the value's
// bytes after the type.
type rawKV struct {
	key string
	typ uint32
	val []byte
}

// rawTensor is one tensor-table entry as written.
type rawTensor struct {
	name  string
	nDims uint32 // written as is; dims are written len(dims) times
	dims  []uint64
	typ   uint32
	off   uint64
}

// ggufSpec is a whole hand-built GGUF file; the zero overrides write the
// true counts.
type ggufSpec struct {
	magic              string
	version            uint32
	nTensors, nKV      int64 // -1: the true count
	kvs                []rawKV
	tensors            []rawTensor
	align              int   // padding before the data section
	dataBytes          int64 // bytes of tensor data written
	rawHeaderOverwrite func([]byte) []byte
}

func str(s string) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(s)))
	return append(b, s...)
}
func u32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func u64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// goodSpec is a sound one-layer llama file with one F32 tensor of 32×2
// elements and one Q8_0 tensor of 64 elements.
func goodSpec() ggufSpec {
	return ggufSpec{
		magic: "GGUF", version: 3, nTensors: -1, nKV: -1, align: 32,
		kvs: []rawKV{
			{"general.architecture", gtString, str("llama")},
			{"llama.block_count", gtU32, u32(1)},
			{"general.alignment", gtU32, u32(32)},
		},
		tensors: []rawTensor{
			{name: "a.weight", nDims: 2, dims: []uint64{32, 2}, typ: 0, off: 0},
			{name: "b.weight", nDims: 1, dims: []uint64{64}, typ: 8, off: 256},
		},
		dataBytes: 256 + 68,
	}
}

func (s ggufSpec) bytes() []byte {
	var b bytes.Buffer
	b.WriteString(s.magic)
	b.Write(u32(s.version))
	nt, nk := s.nTensors, s.nKV
	if nt < 0 {
		nt = int64(len(s.tensors))
	}
	if nk < 0 {
		nk = int64(len(s.kvs))
	}
	b.Write(u64(uint64(nt)))
	b.Write(u64(uint64(nk)))
	for _, kv := range s.kvs {
		b.Write(str(kv.key))
		b.Write(u32(kv.typ))
		b.Write(kv.val)
	}
	for _, t := range s.tensors {
		b.Write(str(t.name))
		b.Write(u32(t.nDims))
		for _, d := range t.dims {
			b.Write(u64(d))
		}
		b.Write(u32(t.typ))
		b.Write(u64(t.off))
	}
	out := b.Bytes()
	if s.rawHeaderOverwrite != nil {
		out = s.rawHeaderOverwrite(out)
	}
	for s.align > 0 && len(out)%s.align != 0 {
		out = append(out, 0)
	}
	return append(out, make([]byte, s.dataBytes)...)
}

// TestCheckGGUFHandBuilt writes one file per check of gguf.cpp's loader
// (docs/gguf-checks.md) and per malformed header the parser must survive,
// and wants each refused by CheckGGUF with one line naming the file, before
// any C code runs (no model is loaded here: the test needs no model file).
func TestCheckGGUFHandBuilt(t *testing.T) {
	t.Setenv(EnvMemAvailable, "1000000000")
	dir := t.TempDir()
	good := filepath.Join(dir, "good.gguf")
	if err := os.WriteFile(good, goodSpec().bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckGGUF(good); err != nil {
		t.Fatalf("sound hand-built file refused: %v", err)
	}
	type edit func(*ggufSpec)
	kv := func(i int, k rawKV) edit { return func(s *ggufSpec) { s.kvs[i] = k } }
	addKV := func(k rawKV) edit { return func(s *ggufSpec) { s.kvs = append(s.kvs, k) } }
	tensor := func(i int, f func(*rawTensor)) edit { return func(s *ggufSpec) { f(&s.tensors[i]) } }
	arr := func(typ uint32, n uint64, items ...[]byte) []byte {
		b := append(u32(typ), u64(n)...)
		for _, it := range items {
			b = append(b, it...)
		}
		return b
	}
	cases := []struct {
		name string
		edit edit
		want string
	}{
		{"bad magic", func(s *ggufSpec) { s.magic = "GGML" }, "not a GGUF file"},
		{"version 1", func(s *ggufSpec) { s.version = 1 }, "GGUF"},
		{"version 4", func(s *ggufSpec) { s.version = 4 }, "GGUF"},
		{"version byte-swapped", func(s *ggufSpec) { s.version = 3 << 24 }, "GGUF"},
		{"tensor count negative", func(s *ggufSpec) {
			s.rawHeaderOverwrite = func(b []byte) []byte { binary.LittleEndian.PutUint64(b[8:], uint64(1<<64-5)); return b }
		}, "tensor count -5"},
		{"tensor count huge", func(s *ggufSpec) { s.nTensors = 1 << 62 }, "GGUF"},
		{"key count huge", func(s *ggufSpec) { s.nKV = 1 << 62 }, "GGUF"},
		{"key count beyond the keys", func(s *ggufSpec) { s.nKV = 4 }, "GGUF"},
		{"empty key", addKV(rawKV{"", gtU32, u32(7)}), "corrupt GGUF metadata: key 3 is empty"},
		{"duplicate key", addKV(rawKV{"llama.block_count", gtU32, u32(1)}), `key "llama.block_count" appears twice`},
		{"key length huge", func(s *ggufSpec) {
			s.rawHeaderOverwrite = func(b []byte) []byte { binary.LittleEndian.PutUint64(b[24:], 1<<62); return b }
		}, "truncated GGUF (or a corrupt length in its header): key 0 has length 4611686018427387904"},
		{"unknown value type", kv(1, rawKV{"llama.block_count", 13, u32(1)}), "GGUF"},
		{"array of arrays", addKV(rawKV{"x.nested", gtArray, arr(gtArray, 1, arr(gtU8, 1, []byte{1}))}), "GGUF"},
		{"array length huge", addKV(rawKV{"x.big", gtArray, arr(gtU8, 1<<60)}), "GGUF"},
		{"alignment 0", kv(2, rawKV{"general.alignment", gtU32, u32(0)}), "general.alignment is 0, not a power of two"},
		{"alignment 48", kv(2, rawKV{"general.alignment", gtU32, u32(48)}), "general.alignment is 48, not a power of two"},
		{"alignment as uint64", kv(2, rawKV{"general.alignment", gtU64, u64(32)}), "general.alignment holds a"},
		{"alignment as string", kv(2, rawKV{"general.alignment", gtString, str("32")}), "general.alignment holds a"},
		{"alignment as array", kv(2, rawKV{"general.alignment", gtArray, arr(gtU32, 1, u32(32))}), "general.alignment holds a"},
		{"tensor name 64 bytes", tensor(0, func(r *rawTensor) { r.name = strings.Repeat("n", 64) }), "name is 64 bytes long, at most 63"},
		{"duplicate tensor name", tensor(1, func(r *rawTensor) { r.name = "a.weight" }), `tensor name "a.weight" appears twice`},
		{"5 dimensions", tensor(0, func(r *rawTensor) { r.nDims, r.dims = 5, []uint64{32, 2, 1, 1, 1} }), "GGUF"},
		{"dimension 0 (first)", tensor(0, func(r *rawTensor) { r.dims = []uint64{0, 2} }), "dimension of 0"},
		{"dimension 0 (second)", tensor(0, func(r *rawTensor) { r.dims = []uint64{32, 0} }), "dimension of 0"},
		{"negative dimension", tensor(0, func(r *rawTensor) { r.dims = []uint64{32, 1 << 63} }), "GGUF"},
		{"element count overflow", tensor(0, func(r *rawTensor) { r.dims = []uint64{1 << 32, 1 << 32} }), "GGUF"},
		{"element count overflow, 4 dims", tensor(0, func(r *rawTensor) { r.nDims, r.dims = 4, []uint64{1 << 16, 1 << 16, 1 << 16, 1 << 16} }), "GGUF"},
		{"unknown tensor type", tensor(0, func(r *rawTensor) { r.typ = 40 }), "not a ggml type"},
		{"negative tensor type", tensor(0, func(r *rawTensor) { r.typ = 0xffffffff }), "GGUF"},
		{"removed tensor type Q4_2", tensor(0, func(r *rawTensor) { r.typ = 4 }), "GGUF"},
		{"removed tensor type Q4_0_4_4", tensor(0, func(r *rawTensor) { r.typ = 31 }), "GGUF"},
		{"row not a multiple of the block", tensor(1, func(r *rawTensor) { r.dims = []uint64{48} }), "GGUF"},
		{"first tensor offset not 0", tensor(0, func(r *rawTensor) { r.off = 32 }), "expected 0"},
		{"second tensor misplaced", tensor(1, func(r *rawTensor) { r.off = 224 }), "expected 256"},
		{"tensor data past the end", func(s *ggufSpec) { s.dataBytes = 300 }, "truncated GGUF"},
		{"no tensors", func(s *ggufSpec) { s.tensors, s.dataBytes = nil, 0 }, "no tensors"},
		{"no architecture", func(s *ggufSpec) { s.kvs = s.kvs[1:] }, "no general.architecture"},
		{"header cut in a key", func(s *ggufSpec) {
			s.rawHeaderOverwrite = func(b []byte) []byte { return b[:40] }
			s.align, s.dataBytes = 0, 0
		}, "GGUF"},
	}
	names := map[string]bool{}
	for _, c := range cases {
		if names[c.name] {
			t.Fatalf("case %q twice", c.name)
		}
		names[c.name] = true
		s := goodSpec()
		c.edit(&s)
		p := filepath.Join(dir, fmt.Sprintf("case-%02d.gguf", len(names)))
		if err := os.WriteFile(p, s.bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		wantErr(t, c.name, CheckGGUF(p), p, c.want)
	}
	if len(cases) < 30 {
		t.Errorf("%d cases", len(cases))
	}
}

// TestAddStringKV: the rewritten file keeps its tensors (data section moved
// to the new alignment boundary), passes CheckGGUF and carries the pair.
func TestAddStringKV(t *testing.T) {
	t.Setenv(EnvMemAvailable, "1000000000")
	p := filepath.Join(t.TempDir(), "m.gguf")
	spec := goodSpec()
	data := spec.bytes()
	for i := range spec.dataBytes {
		data[int64(len(data))-spec.dataBytes+i] = byte(i)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := addStringKV(p, KeyRequantizedFrom, "Q4_K_M sha256:00ff"); err != nil {
		t.Fatal(err)
	}
	if err := CheckGGUF(p); err != nil {
		t.Fatalf("rewritten file refused: %v", err)
	}
	f, err := parseGGUF(p)
	if err != nil {
		t.Fatal(err)
	}
	kv, ok := f.Header.MetadataKV.Get(KeyRequantizedFrom)
	if !ok || kv.ValueString() != "Q4_K_M sha256:00ff" || len(f.Header.MetadataKV) != 4 {
		t.Fatalf("key %v %q, %d keys", ok, kv.ValueString(), len(f.Header.MetadataKV))
	}
	got, _ := os.ReadFile(p)
	tail := got[int64(len(got))-spec.dataBytes:]
	for i, b := range tail {
		if b != byte(i) {
			t.Fatalf("tensor data byte %d changed", i)
		}
	}
	if f.TensorDataStartOffset%32 != 0 || int64(len(got))-f.TensorDataStartOffset != spec.dataBytes {
		t.Errorf("data section at %d of %d bytes", f.TensorDataStartOffset, len(got))
	}
}
