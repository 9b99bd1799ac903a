package embed

import (
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func TestClasses(t *testing.T) {
	main, err := Classes(LevelMain)
	if err != nil {
		t.Fatal(err)
	}
	div, err := Classes(LevelDivision)
	if err != nil {
		t.Fatal(err)
	}
	if len(main) != 10 || len(div) != 99 {
		t.Fatalf("%d main classes and %d divisions, want 10 and 99", len(main), len(div))
	}
	for i, c := range main {
		if want := string(rune('0'+i)) + "00"; c.Code != want {
			t.Errorf("main class %d has code %s, want %s", i, c.Code, want)
		}
	}
	seen := map[string]bool{}
	for _, c := range div {
		if len(c.Code) != 3 || c.Code[2] != '0' || seen[c.Code] || c.Code == "040" {
			t.Errorf("bad or repeated division code %q", c.Code)
		}
		seen[c.Code] = true
		if strings.TrimSpace(c.Name) == "" || len(strings.Fields(c.Description)) < 3 {
			t.Errorf("division %s has no proper name or description", c.Code)
		}
	}
	if !sort.SliceIsSorted(div, func(i, j int) bool { return div[i].Code < div[j].Code }) {
		t.Error("divisions are not in numeric order")
	}
	if _, err := Classes(Level(7)); err == nil {
		t.Error("unknown level: no error")
	}
	for _, s := range []string{"main", "division"} {
		l, err := ParseLevel(s)
		if err != nil || l.String() != s {
			t.Errorf("ParseLevel(%q) = %v, %v", s, l, err)
		}
	}
	if _, err := ParseLevel("section"); err == nil {
		t.Error(`ParseLevel("section"): no error`)
	}
}

// checkRanking checks the invariants of a ranking of n classes.
func checkRanking(t *testing.T, r Ranking, n int) {
	t.Helper()
	if len(r.Scores) != n {
		t.Fatalf("%d scores, want %d", len(r.Scores), n)
	}
	for i := 1; i < n; i++ {
		if r.Scores[i].Cosine > r.Scores[i-1].Cosine {
			t.Fatalf("scores not in descending order at %d", i)
		}
	}
	if r.Top != r.Scores[0] || r.RunnerUp != r.Scores[1] {
		t.Errorf("Top/RunnerUp are not the first two scores")
	}
	if r.Margin != r.Top.Cosine-r.RunnerUp.Cosine || r.Margin < 0 {
		t.Errorf("Margin %v, want %v", r.Margin, r.Top.Cosine-r.RunnerUp.Cosine)
	}
	for _, s := range r.Scores {
		if s.Cosine < -1-1e-9 || s.Cosine > 1+1e-9 || math.IsNaN(s.Cosine) {
			t.Errorf("cosine %v of %s out of [-1, 1]", s.Cosine, s.Code)
		}
	}
}

func TestClassifyMain(t *testing.T) {
	e := openDefault(t)
	c, err := NewClassifier(e, LevelMain)
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{
		"500": "Tom has 3 apples and buys 5 more. How many apples does he have?",
		"200": "The congregation prayed together in the cathedral on Sunday before the bishop's sermon.",
		"900": "The Roman Empire declined over centuries before Constantinople fell in 1453.",
		"700": "The orchestra performed a symphony and the painter exhibited her watercolours.",
	}
	for want, text := range texts {
		r, err := c.Classify(text)
		if err != nil {
			t.Fatal(err)
		}
		checkRanking(t, r, 10)
		if r.Top.Code != want {
			t.Errorf("%q: top class %s %q (%.3f), want %s", text, r.Top.Code, r.Top.Name, r.Top.Cosine, want)
		}
		t.Logf("%s %.4f, runner-up %s %.4f, margin %.4f: %.50q", r.Top.Code, r.Top.Cosine, r.RunnerUp.Code, r.RunnerUp.Cosine, r.Margin, text)
	}
	// The batch form gives exactly what one-by-one calls give.
	list := []string{texts["500"], texts["200"]}
	all, err := c.ClassifyAll(list)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range list {
		one, _ := c.Classify(text)
		if one.Margin != all[i].Margin || one.Top != all[i].Top {
			t.Errorf("ClassifyAll differs from Classify for %q", text)
		}
	}
	if _, err := c.Classify("   "); err == nil {
		t.Error("empty text: no error")
	}
	r, err := c.Classify(strings.Repeat("Nine boxes hold twelve eggs each. ", 60))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Truncated || r.Tokens <= e.MaxTokens() {
		t.Errorf("over-long text: Truncated %t Tokens %d, want flagged", r.Truncated, r.Tokens)
	}
}

func TestClassifyDivisionAndDiskCache(t *testing.T) {
	e := openDefault(t)
	dir := t.TempDir()
	c, err := NewClassifier(e, LevelDivision, WithCacheDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Classify("A baker has 48 cupcakes and puts them equally into 6 boxes. How many cupcakes are in each box?")
	if err != nil {
		t.Fatal(err)
	}
	checkRanking(t, r, 99)
	if r.Top.Code != "510" {
		t.Errorf("division of an arithmetic word problem: %s %q, want 510", r.Top.Code, r.Top.Name)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "ddc-division-*.json"))
	if len(files) != 1 {
		t.Fatalf("cache files %v, want one ddc-division-*.json", files)
	}
	// Drop the in-memory copy: the next classifier must read the file and
	// get identical vectors.
	classCacheMu.Lock()
	clear(classCache)
	classCacheMu.Unlock()
	c2, err := NewClassifier(e, LevelDivision, WithCacheDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.vecs {
		for k := range c.vecs[i] {
			if c.vecs[i][k] != c2.vecs[i][k] {
				t.Fatalf("vector of %s changed through the disk cache", c.classes[i].Code)
			}
		}
	}
	// A damaged file is ignored and rewritten.
	if err := os.WriteFile(files[0], []byte("{broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	classCacheMu.Lock()
	clear(classCache)
	classCacheMu.Unlock()
	if _, err := NewClassifier(e, LevelDivision, WithCacheDir(dir)); err != nil {
		t.Fatalf("damaged cache file: %v", err)
	}
	if _, ok := readClassFile(files[0], e.fingerprint(LevelDivision, classTexts(t, LevelDivision)), classTexts(t, LevelDivision), e.Dim()); !ok {
		t.Error("damaged cache file was not rewritten")
	}
	if _, err := NewClassifier(nil, LevelMain); err == nil {
		t.Error("nil embedder: no error")
	}
}

func classTexts(t *testing.T, l Level) []string {
	cs, err := Classes(l)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Text()
	}
	return out
}
