package rundir

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
)

// RowRef names data row i (0-based) of the CSV file at path for a message:
// "line N" with its line in the file (the header is line 1), or "row
// i+1" when the file cannot be read.
func RowRef(path string, i int) string {
	if line := RowLine(path, i); line > 0 {
		return fmt.Sprintf("line %d", line)
	}
	return fmt.Sprintf("row %d", i+1)
}

// RowLine returns the line of the CSV file path on which data row i
// (0-based, header not counted) starts; a quoted field may span lines.
// It returns 0 when the file cannot be read that far.
func RowLine(path string, i int) int {
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
