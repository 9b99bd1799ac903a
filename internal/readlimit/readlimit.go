// Package readlimit reads a file named on the command line with a bound on
// how much of it is read, so that a device or a stream without end
// (/dev/zero, /dev/urandom, a pipe that never closes its end) or a model
// file given in place of a small input file is refused with one line
// instead of filling memory.
package readlimit

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// TooLargeError is the error of ReadFile for a file or stream longer than
// its bound.
type TooLargeError struct {
	// Path is the file as it was named.
	Path string
	// Max is the bound, in bytes.
	Max int64
}

// Error names the file and the bound (Size).
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: larger than %s, more than this input can be (a device or another kind of file?)", e.Path, Size(e.Max))
}

// Size writes n bytes as MiB, KiB below one MiB, bytes below one KiB.
func Size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadFile reads the file at path, at most max bytes (max > 0): a file or
// stream with more gives a *TooLargeError after reading max+1 bytes, never
// more. Other errors are os.Open's and the read's, unwrapped.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, path, max)
}

// Read is ReadFile on an open reader; name stands for it in the error.
func Read(r io.Reader, name string, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &TooLargeError{Path: name, Max: max}
	}
	return data, nil
}

// IsTooLarge reports whether err is or wraps a *TooLargeError.
func IsTooLarge(err error) bool {
	var t *TooLargeError
	return errors.As(err, &t)
}
