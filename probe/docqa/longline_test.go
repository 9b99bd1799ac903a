package docqa

import (
	"io"
	"strings"
	"testing"
)

// TestReadLongLine: a line longer than the scanner's 64 MiB (a device or
// a binary file given as --items) is one line naming the file and the
// line, not the scanner's "token too long".
func TestReadLongLine(t *testing.T) {
	_, err := Read(io.LimitReader(zeros{}, 65<<20), "/dev/zero")
	if err == nil || !strings.HasPrefix(err.Error(), "/dev/zero:1: a line longer than 64 MiB") || strings.Contains(err.Error(), "token too long") {
		t.Errorf("%v", err)
	}
}

// zeros reads as zero bytes without end.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
