package templates

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fragility/fragility/internal/jsonerr"
	"github.com/fragility/fragility/internal/readlimit"
)

//go:embed builtin/*.yaml
var builtinFS embed.FS

// Builtin returns the built-in templates (embedded YAML files in the own
// format), sorted by file name. Their Source is "builtin/<file>".
func Builtin() ([]*Template, error) {
	entries, err := fs.ReadDir(builtinFS, "builtin")
	if err != nil {
		return nil, fmt.Errorf("built-in templates: %w", err)
	}
	var out []*Template
	for _, e := range entries {
		data, err := builtinFS.ReadFile(path.Join("builtin", e.Name()))
		if err != nil {
			return nil, fmt.Errorf("built-in templates: %w", err)
		}
		ts, err := ParseOwn(path.Join("builtin", e.Name()), data)
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
	}
	return out, uniqueIDs(out)
}

// maxFileSize bounds a template file read by Load.
const maxFileSize = 256 << 20

// LoadOptions control how template files are read.
type LoadOptions struct {
	// Level is the GSM-Symbolic difficulty level of the files read
	// ("symbolic", "p1" or "p2"); "" infers it from each file's folder name
	// (LevelFromPath), and symbolic when that says nothing. Other formats
	// ignore it.
	Level string
	// IDs, when not empty, keeps only the templates with these IDs (in load
	// order); an ID that does not load is an error naming it.
	IDs []string
	// Limit, when positive, keeps the first Limit templates (after IDs).
	Limit int
}

// Skip is a template (or a file) left out of a set: refused when loaded, or
// unable to generate an instance.
type Skip struct {
	Source   string `json:"source"`             // the file
	Template string `json:"template,omitempty"` // the template ID; "" when the file did not load
	Reason   string `json:"reason"`
}

// String is the one-line log form of a skip.
func (s Skip) String() string {
	if s.Template != "" {
		return fmt.Sprintf("skipped template %s: %s", s.Template, s.Reason)
	}
	return fmt.Sprintf("skipped %s: %s", s.Source, s.Reason)
}

// Load reads templates from src: "builtin"; a directory (every .yaml, .yml,
// .json and .jsonl file in it, not recursive, in name order; or, when it has
// none, those of its level folders symbolic, p1 and p2, as templateFiles
// describes); or one file. A
// .yaml/.yml file is in the own format; a .json file must be JSON (an
// object or a list) and is a GSM-Symbolic annotated template when it is an
// object with a GSM-Symbolic field (question_annotated, answer_annotated,
// id_orig, id_shuffled; question_annotated is then required) and the own
// format otherwise (parseJSONFile); a .jsonl file holds GSM8K rows. Every template is checked
// at its base values; the first problem is returned as an error naming the
// file and line. Template IDs must be unique across everything loaded.
func Load(src string) ([]*Template, error) {
	return LoadWith(src, LoadOptions{})
}

// LoadWith is Load with options. src may name several sources joined by
// SourceSeparator (JoinSources): their union is loaded, and a template ID
// in two of them is an error naming both files. o.IDs and o.Limit then
// select a subset.
func LoadWith(src string, o LoadOptions) ([]*Template, error) {
	if _, err := ParseLevel(o.Level); err != nil {
		return nil, err
	}
	ts, _, err := loadUnion(SplitSources(src), func(s string) ([]*Template, []Skip, error) {
		ts, err := loadOne(s, o)
		return ts, nil, err
	})
	if err != nil {
		return nil, err
	}
	ts, _, err = selectTemplates(src, ts, nil, o)
	return ts, err
}

// loadOne is LoadWith for one source.
func loadOne(src string, o LoadOptions) ([]*Template, error) {
	if src == "builtin" {
		return Builtin()
	}
	st, err := os.Stat(src)
	if err != nil {
		return nil, fmt.Errorf("templates %s: %w", src, BarePathError(err))
	}
	if !st.IsDir() {
		ts, err := LoadFileWith(src, o)
		if err != nil {
			return nil, err
		}
		return ts, uniqueIDs(ts)
	}
	files, err := templateFiles(src, o)
	if err != nil {
		return nil, err
	}
	var out []*Template
	for _, f := range files {
		ts, err := LoadFileWith(f, o)
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
	}
	return out, uniqueIDs(out)
}

// LoadSkipping is LoadWith for a directory that may hold refused templates
// (a downloaded GSM-Symbolic folder): a file that does not load, or a
// template whose ID was already loaded, is left out and reported as a Skip
// instead of stopping. "builtin" and a single file load as LoadWith does. It
// fails when src cannot be read or nothing in it loads. Several sources
// (JoinSources) and o.IDs and o.Limit are read as LoadWith reads them.
func LoadSkipping(src string, o LoadOptions) ([]*Template, []Skip, error) {
	if _, err := ParseLevel(o.Level); err != nil {
		return nil, nil, err
	}
	ts, skips, err := loadUnion(SplitSources(src), func(s string) ([]*Template, []Skip, error) {
		return loadSkippingOne(s, o)
	})
	if err != nil {
		return nil, nil, err
	}
	return selectTemplates(src, ts, skips, o)
}

// loadSkippingOne is LoadSkipping for one source.
func loadSkippingOne(src string, o LoadOptions) ([]*Template, []Skip, error) {
	st, err := os.Stat(src)
	if src == "builtin" || err != nil || !st.IsDir() {
		ts, err := loadOne(src, o)
		return ts, nil, err
	}
	files, err := templateFiles(src, o)
	if err != nil {
		return nil, nil, err
	}
	var out []*Template
	var skips []Skip
	seen := map[string]string{}
	for _, f := range files {
		ts, err := LoadFileWith(f, o)
		if err != nil {
			skips = append(skips, Skip{Source: f, Reason: err.Error()})
			continue
		}
		for _, t := range ts {
			if prev, ok := seen[t.ID]; ok {
				skips = append(skips, Skip{Source: f, Template: t.ID, Reason: fmt.Sprintf("template ID %q is also used in %s", t.ID, prev)})
				continue
			}
			seen[t.ID] = t.Source
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, skips, fmt.Errorf("%s: no template loads (%d refused; first: %s)", src, len(skips), skips[0].Reason)
	}
	return out, skips, nil
}

// ErrLevelFolders is the error (wrapped, with the folder) for a level given
// for a folder that holds level folders: wrong usage, as each file's level
// comes from its folder's name.
var ErrLevelFolders = errors.New("a level cannot be given for a folder of level folders")

// templateFiles lists the template files of a directory in name order. A
// directory with no template file of its own that holds level folders
// (symbolic, p1, p2 in any case, as the templates folder of
// apple/ml-gsm-symbolic does) gives the files of each, levels in the order
// symbolic, p1, p2; each file's level then comes from its folder's name, so
// o.Level must be "" for such a directory.
func templateFiles(dir string, o LoadOptions) ([]string, error) {
	files, err := filesIn(dir)
	if err != nil || len(files) > 0 {
		return files, err
	}
	levels, err := levelDirs(dir)
	if err != nil {
		return nil, err
	}
	if len(levels) == 0 {
		return nil, fmt.Errorf("%s: no template files (.yaml, .yml, .json, .jsonl) and no level folders (symbolic, p1, p2)", dir)
	}
	if o.Level != "" {
		return nil, fmt.Errorf("%w: %s holds level folders (%s), and each file's level comes from its folder's name (give one of the folders instead)",
			ErrLevelFolders, dir, strings.Join(levels, ", "))
	}
	for _, l := range levels {
		fs, err := filesIn(filepath.Join(dir, l))
		if err != nil {
			return nil, err
		}
		files = append(files, fs...)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no template files (.yaml, .yml, .json, .jsonl) in its level folders (%s)", dir, strings.Join(levels, ", "))
	}
	return files, nil
}

// filesIn lists the template files directly in dir, in name order.
func filesIn(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	var files []string
	for _, e := range entries {
		if e.IsDir() || !knownExt(e.Name()) {
			continue
		}
		files = append(files, filepath.Join(dir, e.Name()))
	}
	sort.Strings(files)
	return files, nil
}

// levelDirs lists the sub-folders of dir named after a difficulty level,
// in level order (symbolic, p1, p2), then by name.
func levelDirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	rank := map[string]int{LevelSymbolic: 0, LevelP1: 1, LevelP2: 2}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if l, err := ParseLevel(e.Name()); err == nil && l != "" {
			out = append(out, e.Name())
		}
	}
	sort.Slice(out, func(i, j int) bool {
		ri, rj := rank[strings.ToLower(out[i])], rank[strings.ToLower(out[j])]
		if ri != rj {
			return ri < rj
		}
		return out[i] < out[j]
	})
	return out, nil
}

func knownExt(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json", ".jsonl":
		return true
	}
	return false
}

// LoadFile reads the templates of one file, choosing the parser by extension
// and content as Load describes.
func LoadFile(name string) ([]*Template, error) {
	return LoadFileWith(name, LoadOptions{})
}

// LoadFileWith is LoadFile with options.
func LoadFileWith(name string, o LoadOptions) ([]*Template, error) {
	st, err := os.Stat(name)
	if err != nil {
		return nil, fmt.Errorf("templates %s: %w", name, BarePathError(err))
	}
	if st.Size() > maxFileSize {
		return nil, fmt.Errorf("%s: larger than %d MiB", name, maxFileSize>>20)
	}
	data, err := readlimit.ReadFile(name, maxFileSize)
	if readlimit.IsTooLarge(err) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	return ParseFileWith(name, data, o)
}

// ParseFile parses data as the template file name (by its extension).
func ParseFile(name string, data []byte) ([]*Template, error) {
	return ParseFileWith(name, data, LoadOptions{})
}

// ParseFileWith is ParseFile with options.
func ParseFileWith(name string, data []byte, o LoadOptions) ([]*Template, error) {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml":
		return ParseOwn(name, data)
	case ".json":
		return parseJSONFile(name, data, o)
	case ".jsonl":
		return ParseGSM8K(name, data)
	}
	return nil, fmt.Errorf("%s: unknown template file type (want .yaml, .yml, .json or .jsonl)", name)
}

// gsmsOnlyKeys are the fields of a GSM-Symbolic template file that the own
// format does not have: an object with one of them is a GSM-Symbolic
// template, whatever else it lacks.
var gsmsOnlyKeys = []string{"question_annotated", "answer_annotated", "id_orig", "id_shuffled"}

// parseJSONFile parses a .json template file. The file must be JSON: a
// syntax error is reported in JSON terms (jsonerr), and the value must be an
// object or a list. An object with a GSM-Symbolic field (gsmsOnlyKeys) is a
// GSM-Symbolic annotated template; one of those without question_annotated
// is refused as such (it is not an own-format template with unknown keys).
// Anything else is the own format, read as YAML (ParseOwn). A file of white
// space only is an empty template file, as for YAML.
func parseJSONFile(name string, data []byte, o LoadOptions) ([]*Template, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return ParseOwn(name, data)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, jsonError(name, data, err)
	}
	obj, isObj := v.(map[string]any)
	if _, isList := v.([]any); !isObj && !isList {
		return nil, fileError(name, lineAt(data, int64(len(data)-len(bytes.TrimLeft(data, " \t\r\n")))),
			"a .json template file holds a JSON object (one template) or a list of them, not %s", jsonerr.KindOf(v))
	}
	if !isObj {
		return ParseOwn(name, data)
	}
	var gsms []string
	for _, k := range gsmsOnlyKeys {
		if _, ok := obj[k]; ok {
			gsms = append(gsms, k)
		}
	}
	switch {
	case len(gsms) == 0:
		return ParseOwn(name, data)
	case gsms[0] != "question_annotated":
		return nil, fileError(name, 1, "this looks like a GSM-Symbolic template (it has %s), and a GSM-Symbolic template needs question_annotated", strings.Join(gsms, ", "))
	}
	return ParseGSMSymbolicLevel(name, data, o.Level)
}

func uniqueIDs(ts []*Template) error {
	seen := map[string]*Template{}
	for _, t := range ts {
		if p, ok := seen[t.ID]; ok {
			return fmt.Errorf("template ID %q is used twice: %s:%d and %s:%d", t.ID, p.Source, p.Line, t.Source, t.Line)
		}
		seen[t.ID] = t
	}
	return nil
}

// Find returns the template with the given ID.
func Find(ts []*Template, id string) (*Template, error) {
	for _, t := range ts {
		if t.ID == id {
			return t, nil
		}
	}
	return nil, errors.New("no template with ID " + id)
}
