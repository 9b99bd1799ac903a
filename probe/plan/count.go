package plan

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

// generateSet is probe.GenerateSet with the templates drawn in parallel,
// one template at a time on each of the machine's cores: an instance's
// draws depend on the set's seed, its template, variant and index alone
// (never on another template's), so the parts, joined in template order,
// are the set GenerateSet draws, byte for byte (tested). What a plan
// counts (instances, draws refused, variant instances left out, templates
// that cannot be drawn) needs the draws themselves: whether a template
// draws at all and whether a no-op clause fits a drawn instance are known
// only by drawing. Document items, released datasets and a source that
// names a template ID twice (whose error GenerateSet words) go to
// GenerateSet.
func generateSet(cfg rundir.Config) (*templates.Set, error) {
	if len(cfg.Datasets) > 0 || cfg.Items != "" {
		return probe.GenerateSet(cfg)
	}
	ts, skipped, err := templates.LoadSkipping(cfg.Templates, cfg.LoadOptions())
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, t := range ts {
		if seen[t.ID] {
			return probe.GenerateSet(cfg)
		}
		seen[t.ID] = true
	}
	opt := setOptions(cfg)
	if err := templates.CheckSetSize(len(ts), opt, cfg.MaxItems); err != nil {
		return nil, probe.OptionError{Msg: err.Error()}
	}
	set, err := templates.Generate(nil, opt) // the options as Generate completes them
	if err != nil {
		return nil, err
	}
	parts := make([]*templates.Set, len(ts))
	errs := make([]error, len(ts))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.NumCPU(), len(ts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				parts[i], errs[i] = templates.Generate(ts[i:i+1], opt)
			}
		}()
	}
	for i := range ts {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, p := range parts {
		if errs[i] != nil {
			return nil, errs[i] // the first in template order, as GenerateSet fails
		}
		set.Templates = append(set.Templates, p.Templates...)
		set.Instances = append(set.Instances, p.Instances...)
		set.Excluded = append(set.Excluded, p.Excluded...)
		set.Flagged = append(set.Flagged, p.Flagged...)
		set.Skipped = append(set.Skipped, p.Skipped...)
	}
	set.Skipped = append(skipped, set.Skipped...)
	return set, nil
}

// setOptions are the options of the item set of cfg, as probe.GenerateSet
// draws it from templates.
func setOptions(cfg rundir.Config) templates.Options {
	return templates.Options{Variants: cfg.Variants, Instances: cfg.Instances, Seed: cfg.Seed, SkipFailing: templates.HasFolder(cfg.Templates), Reference: cfg.Reference, Split: cfg.Split}
}

// CountFormat names the format of a counted set in the plan's cache
// (countedSet).
const CountFormat = "fragility-plan-count/1"

// countCacheKeep is the number of counted sets the cache keeps (the most
// recently written).
const countCacheKeep = 24

// countFile is a counted set in the plan's cache: what a plan reads of a
// drawn set (its options, templates, the templates left out, each
// instance's identity, and the exclusion counts), not the instances'
// texts.
type countFile struct {
	Format    string                   `json:"format"`
	Options   templates.Options        `json:"options"`
	Templates []templates.TemplateInfo `json:"templates"`
	Skipped   []templates.Skip         `json:"skipped,omitempty"`
	Instances []countInstance          `json:"instances"`
	Refused   int                      `json:"refused_draws"`
	LeftOut   int                      `json:"left_out"`
}

// countInstance is an instance's identity in a countFile.
type countInstance struct {
	ID       string            `json:"id"`
	Template string            `json:"t"`
	Variant  templates.Variant `json:"v"`
	Index    int               `json:"i"`
}

// CountCacheDir is the folder of the plan's counted sets:
// $XDG_CACHE_HOME/fragility/plan-counts, else
// $HOME/.cache/fragility/plan-counts.
func CountCacheDir() (string, error) {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "fragility", "plan-counts"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".cache", "fragility", "plan-counts"), nil
}

// countedSet returns the item set of cfg for a plan: read from the plan's
// cache (CountCacheDir) when the same templates (every file of the
// sources, by path, size and modification time), the same options that
// draw them and the same fragility binary (by path, size and modification
// time: the built-in templates and the drawing code are in it) were drawn
// before, else drawn (generateSet) and kept there. A set read from the
// cache (from names its file, "" otherwise) holds each instance's identity
// (ID, template, variant, index) and no text, and as many exclusions as
// were refused and left out: all a plan counts (fullItems draws the texts
// of the few items a calibration generates). Document items and released
// datasets are not cached; a cache that cannot be read or written is
// passed by, never an error.
func countedSet(cfg rundir.Config) (set *templates.Set, from string, err error) {
	if len(cfg.Datasets) > 0 || cfg.Items != "" {
		set, err = probe.GenerateSet(cfg)
		return set, "", err
	}
	path := countCachePath(cfg)
	if path != "" {
		if set, ok := readCount(path); ok {
			return set, path, nil
		}
	}
	if set, err = generateSet(cfg); err != nil {
		return nil, "", err
	}
	if path != "" {
		writeCount(path, set)
	}
	return set, "", nil
}

// countCachePath is the cache file of cfg's set ("" when its key cannot
// be made: a source or the binary cannot be read).
func countCachePath(cfg rundir.Config) string {
	dir, err := CountCacheDir()
	if err != nil {
		return ""
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	type stamp struct {
		Path string `json:"path"`
		Size int64  `json:"size"`
		Time int64  `json:"mtime_ns"`
	}
	stampOf := func(p string, st fs.FileInfo) stamp { return stamp{p, st.Size(), st.ModTime().UnixNano()} }
	st, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	key := struct {
		Format   string                `json:"format"`
		Exe      stamp                 `json:"exe"`
		Sources  string                `json:"sources"`
		Load     templates.LoadOptions `json:"load"`
		Options  templates.Options     `json:"options"`
		MaxItems int                   `json:"max_items"`
		Files    []stamp               `json:"files"`
	}{Format: CountFormat, Exe: stampOf(exe, st), Sources: cfg.Templates, Load: cfg.LoadOptions(), Options: setOptions(cfg), MaxItems: cfg.MaxItems}
	for _, src := range templates.SplitSources(cfg.Templates) {
		if src == "builtin" {
			continue
		}
		root, err := filepath.EvalSymlinks(src) // a linked folder: its files, not the link
		if err != nil {
			return ""
		}
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			st, err := os.Stat(p)
			if err != nil {
				return err
			}
			key.Files = append(key.Files, stampOf(p, st))
			return nil
		})
		if err != nil {
			return ""
		}
	}
	data, err := json.Marshal(key)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return filepath.Join(dir, hex.EncodeToString(sum[:])+".json")
}

// readCount reads a counted set written by writeCount.
func readCount(path string) (*templates.Set, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	var f countFile
	if json.Unmarshal(data, &f) != nil || f.Format != CountFormat {
		return nil, false
	}
	set := &templates.Set{Seed: f.Options.Seed, Options: f.Options, Templates: f.Templates, Skipped: f.Skipped,
		Instances: make([]templates.Instance, len(f.Instances)), Excluded: make([]templates.Exclusion, f.Refused+f.LeftOut)}
	for i, x := range f.Instances {
		set.Instances[i] = templates.Instance{ID: x.ID, TemplateID: x.Template, Variant: x.Variant, Index: x.Index}
	}
	for i := range f.Refused {
		set.Excluded[i].Draw = 1 // a refused draw (templates.Set.ExclusionCounts)
	}
	return set, true
}

// writeCount keeps set's counts at path (a temporary file renamed), and
// removes the oldest counted sets beyond countCacheKeep.
func writeCount(path string, set *templates.Set) {
	f := countFile{Format: CountFormat, Options: set.Options, Templates: set.Templates, Skipped: set.Skipped, Instances: make([]countInstance, len(set.Instances))}
	for i := range set.Instances {
		in := &set.Instances[i]
		f.Instances[i] = countInstance{ID: in.ID, Template: in.TemplateID, Variant: in.Variant, Index: in.Index}
	}
	f.Refused, f.LeftOut = set.ExclusionCounts()
	data, err := json.Marshal(f)
	if err != nil {
		return
	}
	dir := filepath.Dir(path)
	if os.MkdirAll(dir, 0o755) != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, ".count-")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Chmod(tmp.Name(), 0o644) != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type aged struct {
		name string
		t    int64
	}
	var files []aged
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() && filepath.Ext(e.Name()) == ".json" {
			files = append(files, aged{e.Name(), info.ModTime().UnixNano()})
		}
	}
	slices.SortFunc(files, func(a, b aged) int { return cmp.Compare(b.t, a.t) })
	for _, f := range files[min(len(files), countCacheKeep):] {
		os.Remove(filepath.Join(dir, f.name))
	}
}

// fullItems returns items with their instances drawn in full (question,
// answer, clause), for a calibration that generates them, when set came
// from the plan's cache (its instances have no text): the items'
// templates alone are drawn again, with the set's options (an instance's
// draw depends on its template, variant, index and the seed alone).
func fullItems(cfg rundir.Config, items []probe.PlannedItem) ([]probe.PlannedItem, error) {
	need := map[string]bool{}
	for _, it := range items {
		need[it.Inst.TemplateID] = true
	}
	ts, _, err := templates.LoadSkipping(cfg.Templates, cfg.LoadOptions())
	if err != nil {
		return nil, err
	}
	ts = slices.DeleteFunc(ts, func(t *templates.Template) bool { return !need[t.ID] })
	set, err := templates.Generate(ts, setOptions(cfg))
	if err != nil {
		return nil, err
	}
	byID := map[string]*templates.Instance{}
	for i := range set.Instances {
		byID[set.Instances[i].ID] = &set.Instances[i]
	}
	out := slices.Clone(items)
	for i := range out {
		in, ok := byID[out[i].Inst.ID]
		if !ok {
			return nil, fmt.Errorf("item %s: not drawn again from its template", out[i].ID)
		}
		out[i].Inst = in
	}
	return out, nil
}
