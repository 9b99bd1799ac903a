package rundir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe/results"
)

// TestReadResultsTornRow: a ragged row of results.csv is refused naming
// the file, the line and the run directory to resume.
func TestReadResultsTornRow(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileResults)
	data := strings.Join(results.Header(), ",") + "\nm0/a/base/0,x\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadResults(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+": line 2: a torn or ragged row (2 fields where the header has") ||
		!strings.Contains(err.Error(), "`fragility run --resume "+dir+"`") {
		t.Errorf("%v", err)
	}
}
