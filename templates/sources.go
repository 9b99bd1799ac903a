package templates

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fragility/fragility/internal/suggest"
)

// SourceSeparator joins several template sources (a repeated --templates)
// into one source string, as the directories of PATH are joined: ':' on
// Unix, ';' on Windows (os.PathListSeparator).
const SourceSeparator = string(os.PathListSeparator)

// JoinSources returns the one source string that names every source in
// srcs (each "builtin", a directory or a file), in order; no sources give
// "builtin".
func JoinSources(srcs []string) string {
	if len(srcs) == 0 {
		return "builtin"
	}
	return strings.Join(srcs, SourceSeparator)
}

// SplitSources returns the sources a source string names: one for
// "builtin", an existing path or a string without SourceSeparator, else
// its parts (filepath.SplitList; empty parts dropped).
func SplitSources(src string) []string {
	if src == "builtin" || !strings.Contains(src, SourceSeparator) {
		return []string{src}
	}
	if _, err := os.Stat(src); err == nil {
		return []string{src}
	}
	var out []string
	for _, s := range filepath.SplitList(src) {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// HasFolder reports whether any source of src is a directory ("builtin"
// is not, even beside a folder of that name): templates
// that cannot be drawn are then left out (Options.SkipFailing) instead of
// stopping the set.
func HasFolder(src string) bool {
	for _, s := range SplitSources(src) {
		if st, err := os.Stat(s); s != "builtin" && err == nil && st.IsDir() {
			return true
		}
	}
	return false
}

// loadUnion loads each source of srcs with load and returns the union in
// source order. A template ID found in two sources is an error naming both
// files (and lines).
func loadUnion(srcs []string, load func(string) ([]*Template, []Skip, error)) ([]*Template, []Skip, error) {
	var out []*Template
	var skips []Skip
	for _, s := range srcs {
		ts, sk, err := load(s)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, ts...)
		skips = append(skips, sk...)
	}
	return out, skips, uniqueIDs(out)
}

// selectTemplates keeps the templates o selects: those whose ID is in
// o.IDs (in load order), then the first o.Limit of them. An ID that is not
// among ts is an error naming it and src. With a selection, only the skips
// of selected templates are kept (a file that did not load has no ID to
// select).
func selectTemplates(src string, ts []*Template, skips []Skip, o LoadOptions) ([]*Template, []Skip, error) {
	if len(o.IDs) == 0 && o.Limit <= 0 {
		return ts, skips, nil
	}
	keep := ts
	if len(o.IDs) > 0 {
		have := map[string]bool{}
		for _, t := range ts {
			have[t.ID] = true
		}
		for _, sk := range skips {
			if sk.Template != "" && slices.Contains(o.IDs, sk.Template) {
				have[sk.Template] = true
			}
		}
		for _, id := range o.IDs {
			if !have[id] {
				ids := make([]string, 0, len(ts))
				for _, t := range ts {
					ids = append(ids, t.ID)
				}
				hint := suggest.DidYouMean(id, "", ids)
				if hint != "" {
					hint += "; "
				}
				return nil, nil, fmt.Errorf("--template-ids: no template %q in %s (%s%d templates load; see `fragility templates list`)", id, src, hint, len(ts))
			}
		}
		keep = nil
		for _, t := range ts {
			if slices.Contains(o.IDs, t.ID) {
				keep = append(keep, t)
			}
		}
	}
	if o.Limit > 0 && len(keep) > o.Limit {
		keep = keep[:o.Limit]
	}
	var ks []Skip
	for _, sk := range skips {
		if sk.Template != "" && slices.Contains(o.IDs, sk.Template) {
			ks = append(ks, sk)
		}
	}
	return keep, ks, nil
}
