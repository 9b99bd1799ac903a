package probe

import (
	"fmt"
	"path/filepath"

	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/probe/rundir"
	"github.com/fragility/fragility/templates"
)

// checkRowsKnown refuses a results.csv row whose variant or model name is
// not the one its item has in the run: the variant of the item's instance
// in set.jsonl, and the name of the item's model (the m<index> of its item
// ID) in manifest.json. A hand-edited row would otherwise be summarised as
// a variant or a model the run never had. The error names the file, the
// line the row starts on, the item and the value. Rows whose item the set
// or the manifest does not know are left to CheckRecords.
func checkRowsKnown(dir string, man *rundir.Manifest, set *templates.Set, trials []results.Trial) error {
	variantOf := make(map[string]templates.Variant, len(set.Instances))
	for i := range set.Instances {
		variantOf[set.Instances[i].ID] = set.Instances[i].Variant
	}
	path := filepath.Join(dir, rundir.FileResults)
	for i := range trials {
		t := &trials[i]
		mi, inst, err := SplitItemID(t.ItemID, len(man.Models))
		if err != nil {
			continue
		}
		if v, ok := variantOf[inst]; ok && string(v) != t.Variant {
			return fmt.Errorf("%s: %s (item %s): variant %s is not a variant of this run (set.jsonl has the item as %s): the file was edited",
				path, rundir.RowRef(path, i), t.ItemID, results.Quote(t.Variant), v)
		}
		if want := man.Models[mi].Identity.Name; want != "" && t.ModelName != want {
			return fmt.Errorf("%s: %s (item %s): model %s is not a model of this run (manifest.json has model %d as %q): the file was edited",
				path, rundir.RowRef(path, i), t.ItemID, results.Quote(t.ModelName), mi, want)
		}
	}
	return nil
}
