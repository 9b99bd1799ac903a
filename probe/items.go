package probe

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/fragility/fragility/probe/docqa"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

// itemID is the unique ID of an instance run on the model with index mi.
func itemID(mi int, inst *templates.Instance) string {
	return fmt.Sprintf("m%d/%s", mi, inst.ID)
}

// Order returns the run order of n items: a permutation drawn from a PCG
// generator seeded with (seed, "order") (math/rand/v2 Perm). Every model runs
// its items in this same order.
func Order(n int, seed int64) []int {
	return rand.New(rand.NewPCG(uint64(seed), 0x6f72646572)).Perm(n)
}

// GenerateSet loads the templates of cfg and generates its item set, as
// Run does. A folder may hold templates that are refused or cannot be drawn
// (a downloaded GSM-Symbolic folder): they are left out, each with a
// one-line reason, and listed in set.Skipped (then in the set file and the
// manifest). A requested variant that no document item can be built in is
// an OptionError (docqa.CheckCovers).
func GenerateSet(cfg rundir.Config) (*templates.Set, error) {
	if len(cfg.Datasets) > 0 {
		return DatasetSet(cfg) // released instances: nothing drawn
	}
	if cfg.Items != "" {
		items, err := docqa.Load(cfg.Items)
		if err != nil {
			return nil, err
		}
		set, err := docqa.Generate(items, templates.Options{Variants: cfg.Variants, Instances: cfg.Instances, Seed: cfg.Seed})
		if err != nil {
			return nil, err
		}
		if err := docqa.CheckCovers(items, cfg.Items, set); err != nil {
			return nil, OptionError{Msg: err.Error()}
		}
		return set, nil
	}
	ts, skipped, err := templates.LoadSkipping(cfg.Templates, cfg.LoadOptions())
	if err != nil {
		return nil, err
	}
	opt := templates.Options{Variants: cfg.Variants, Instances: cfg.Instances, Seed: cfg.Seed, SkipFailing: templates.HasFolder(cfg.Templates), Reference: cfg.Reference, Split: cfg.Split}
	if err := templates.CheckSetSize(len(ts), opt, cfg.MaxItems); err != nil {
		return nil, OptionError{err.Error()}
	}
	set, err := templates.Generate(ts, opt)
	if err != nil {
		return nil, err
	}
	set.Skipped = append(skipped, set.Skipped...)
	return set, nil
}

// MaxLeftOutShare is the share of a template source's templates that may
// fail to load or draw before a run stops (unless Config.SkipInvalid): a
// published set with a known refusal or two runs, a folder that mostly
// does not parse does not quietly become a small run.
const MaxLeftOutShare = 0.10

// CheckLeftOut refuses a run whose template source lost more than
// MaxLeftOutShare of its templates when loading or drawing, unless
// cfg.SkipInvalid, naming how many and the first reasons.
func CheckLeftOut(cfg rundir.Config, set *templates.Set) error {
	n := len(set.Skipped)
	if n == 0 || cfg.SkipInvalid || cfg.Items != "" {
		return nil
	}
	total := n + len(set.Templates)
	if float64(n) <= MaxLeftOutShare*float64(total) {
		return nil
	}
	var first []string
	for _, sk := range set.Skipped[:min(n, 3)] {
		first = append(first, sk.String())
	}
	return fmt.Errorf("templates %s: %d of %d templates (or files) could not be loaded or drawn, more than %.0f%%: %s; fix them, or give --skip-invalid to run the %d that work (recorded in the manifest)",
		cfg.Templates, n, total, 100*MaxLeftOutShare, strings.Join(first, "; "), len(set.Templates))
}

// CheckSetCovers refuses an item set that leaves a requested variant
// without a single instance (noop-seeming on templates with no reviewed
// clause, paraphrase on templates with no paraphrase; an OptionError, wrong
// usage) or a split without a template, naming the variant or split and the
// template source; document items are checked by GenerateSet
// (docqa.CheckCovers), released instances by DatasetSet.
func CheckSetCovers(cfg rundir.Config, set *templates.Set) error {
	if cfg.Items != "" || len(cfg.Datasets) > 0 {
		return nil
	}
	if cfg.Split != "" && len(set.Templates) == 0 {
		sel := "the templates in " + cfg.Templates
		if len(cfg.TemplateIDs) > 0 {
			sel = fmt.Sprintf("the templates --template-ids selects (%s)", strings.Join(cfg.TemplateIDs, ","))
		}
		if cfg.Limit > 0 {
			sel = fmt.Sprintf("the first %d of %s (--limit)", cfg.Limit, sel)
		}
		return fmt.Errorf("--split %s: none of %s is in the %s split", cfg.Split, sel, cfg.Split)
	}
	if err := namedOutsideSplit(cfg, set); err != nil {
		return err
	}
	have := map[templates.Variant]bool{}
	for i := range set.Instances {
		have[set.Instances[i].Variant] = true
	}
	for _, v := range cfg.Variants {
		if !have[v] && len(set.Instances) > 0 {
			return OptionError{Msg: fmt.Sprintf("--variants %s: no template in %s has a %s instance (see `fragility templates check %s` for why)", v, cfg.Templates, v, cfg.Templates)}
		}
	}
	return nil
}

// namedOutsideSplit refuses a --template-ids selection of which --split
// keeps only part: a template named by ID and left out because it is in
// the other split would otherwise vanish from the run without a word.
// Templates left out for another reason (Set.Skipped) are not counted.
func namedOutsideSplit(cfg rundir.Config, set *templates.Set) error {
	if cfg.Split == "" || len(cfg.TemplateIDs) == 0 || cfg.Limit > 0 {
		return nil
	}
	kept := map[string]bool{}
	for _, t := range set.Templates {
		kept[t.ID] = true
	}
	for _, sk := range set.Skipped {
		kept[sk.Template] = true
	}
	var out []string
	for _, id := range cfg.TemplateIDs {
		if !kept[id] {
			out = append(out, id)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return fmt.Errorf("--split %s: %s, named by --template-ids, %s not in the %s split; name only templates of that split, or leave out --split",
		cfg.Split, strings.Join(out, ","), map[bool]string{true: "is", false: "are"}[len(out) == 1], cfg.Split)
}

// SplitItemID splits an item ID "m<index>/<instance id>" (see itemID) into
// the model index and the instance ID; errors say what is wrong with it.
func SplitItemID(id string, nModels int) (int, string, error) {
	head, inst, ok := strings.Cut(id, "/")
	if !ok || !strings.HasPrefix(head, "m") {
		return 0, "", fmt.Errorf("item id %q is not of the form m<model>/<instance>", id)
	}
	mi, err := strconv.Atoi(head[1:])
	if err != nil || mi < 0 || mi >= nModels {
		return 0, "", fmt.Errorf("item id %q names model %s, but the manifest has %d model(s)", id, head, nModels)
	}
	inst, _, _ = strings.Cut(inst, "#") // a condition suffix (condItemID)
	return mi, inst, nil
}
