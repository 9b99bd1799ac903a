package probe

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/fragility/fragility/probe/results"
	"github.com/fragility/fragility/templates"
)

// checkRowsKnown refuses a results.csv row whose variant or model name is
// not the one its item has in the run: the variant of the item's instance
// in set.jsonl, and the name of the item's model (the m<index> of its item
// ID) in manifest.json. A hand-edited row would otherwise be summarised as
// a variant or a model the run never had. The error names the file, the
// line the row starts on, the item and the value. Rows whose item the set
// or the manifest does not know are left to CheckRecords.
func checkRowsKnown(dir string, man *Manifest, set *templates.Set, trials []results.Trial) error {
	variantOf := make(map[string]templates.Variant, len(set.Instances))
	for i := range set.Instances {
		variantOf[set.Instances[i].ID] = set.Instances[i].Variant
	}
	path := filepath.Join(dir, FileResults)
	for i := range trials {
		t := &trials[i]
		mi, inst, err := SplitItemID(t.ItemID, len(man.Models))
		if err != nil {
			continue
		}
		if v, ok := variantOf[inst]; ok && string(v) != t.Variant {
			return fmt.Errorf("%s: %s (item %s): variant %s is not a variant of this run (set.jsonl has the item as %s): the file was edited",
				path, rowRef(path, i), t.ItemID, results.Quote(t.Variant), v)
		}
		if want := man.Models[mi].Identity.Name; want != "" && t.ModelName != want {
			return fmt.Errorf("%s: %s (item %s): model %s is not a model of this run (manifest.json has model %d as %q): the file was edited",
				path, rowRef(path, i), t.ItemID, results.Quote(t.ModelName), mi, want)
		}
	}
	return nil
}

// rowRef names data row i (0-based) of the CSV file at path for a message:
// "line N" with its line in the file (the header is line 1), or "row
// i+1" when the file cannot be read.
func rowRef(path string, i int) string {
	if line := rowLine(path, i); line > 0 {
		return fmt.Sprintf("line %d", line)
	}
	return fmt.Sprintf("row %d", i+1)
}

// rowLine returns the line of the CSV file path on which data row i
// (0-based, header not counted) starts; a quoted field may span lines.
// It returns 0 when the file cannot be read that far.
func rowLine(path string, i int) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	for k := -1; ; k++ { // k = -1 is the header
		if _, err := r.Read(); err == io.EOF || err != nil {
			return 0
		}
		if k == i {
			line, _ := r.FieldPos(0)
			return line
		}
	}
}
