package embed

import (
	"fmt"

	"github.com/knights-analytics/hugot"
)

// Backend names the engine that runs the ONNX network.
type Backend string

const (
	// BackendGo is hugot's pure-Go backend (GoMLX simplego): no cgo, no
	// shared library. The default.
	BackendGo Backend = "go"
	// BackendORT is ONNX Runtime through hugot, available only in binaries
	// built with `-tags ORT`; see the package documentation for what it
	// needs on the machine.
	BackendORT Backend = "ort"
)

// newSession starts a hugot session for backend b.
func newSession(b Backend, ortLibrary string) (*hugot.Session, error) {
	switch b {
	case BackendGo, "":
		return hugot.NewGoSession()
	case BackendORT:
		return newORTSession(ortLibrary)
	default:
		return nil, fmt.Errorf("unknown backend %q (want %q or %q)", b, BackendGo, BackendORT)
	}
}
