package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fragility/fragility/probe"
	"github.com/fragility/fragility/templates"
)

// Exit codes of the fragility command.
const (
	exitOK        = 0 // success
	exitFailure   = 1 // a run, check or verification failed, or input was bad
	exitUsage     = 2 // wrong flags or arguments
	exitInterrupt = 130
)

// usageError marks an error caused by how the command was called.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func exitCode(err error) int {
	var u usageError
	var o probe.OptionError
	if errors.As(err, &u) || errors.As(err, &o) || errors.Is(err, templates.ErrLevelFolders) || strings.HasPrefix(err.Error(), "Required flag") {
		return exitUsage
	}
	return exitFailure
}

// outNotStdout refuses --out - (wrong usage) in a command whose --out is a
// directory or a file it writes beside others: "-" would name a file
// called "-", not standard output. what says what --out names.
func outNotStdout(c interface{ String(string) string }, what string) error {
	if c.String("out") == "-" {
		return usageError{fmt.Sprintf("--out -: %s, not standard output", what)}
	}
	return nil
}

// outFileNotDir refuses an output file path that is an existing directory
// (bad input, exit 1, as quantize refuses one), whatever --force says:
// nothing is written or deleted. A path whose folder does not exist is
// refused the same way. what names the flag or argument.
func outFileNotDir(what, path string) error {
	if path == "" || path == "-" {
		return nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s %s is a directory (give a file path)", what, path)
	}
	// Else the write would fail on a temporary file's name beside it.
	if dir := filepath.Dir(path); !isDir(dir) {
		return fmt.Errorf("%s %s: the folder %s does not exist (or is not a folder)", what, path, dir)
	}
	return nil
}

// isDir reports whether path is a folder that can be stat'ed.
func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
