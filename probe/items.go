package probe

import (
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/fragility/fragility/probe/docqa"
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

// generateSet loads the templates of cfg and generates its item set, as
// Run does. A folder may hold templates that are refused or cannot be drawn
// (a downloaded GSM-Symbolic folder): they are left out, each with a
// one-line reason, and listed in set.Skipped (then in the set file and the
// manifest).
func generateSet(cfg Config) (*templates.Set, error) {
	if cfg.Items != "" {
		items, err := docqa.Load(cfg.Items)
		if err != nil {
			return nil, err
		}
		return docqa.Generate(items, templates.Options{Variants: cfg.Variants, Instances: cfg.Instances, Seed: cfg.Seed})
	}
	ts, skipped, err := templates.LoadSkipping(cfg.Templates, templates.LoadOptions{Level: cfg.Level})
	if err != nil {
		return nil, err
	}
	st, statErr := os.Stat(cfg.Templates)
	folder := statErr == nil && st.IsDir()
	set, err := templates.Generate(ts, templates.Options{Variants: cfg.Variants, Instances: cfg.Instances, Seed: cfg.Seed, SkipFailing: folder, Reference: cfg.Reference, Split: cfg.Split})
	if err != nil {
		return nil, err
	}
	set.Skipped = append(skipped, set.Skipped...)
	return set, nil
}
