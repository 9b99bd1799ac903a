//go:build !ORT && !ALL

package embed

import (
	"errors"

	"github.com/knights-analytics/hugot"
)

// ORTAvailable reports whether this binary was built with ONNX Runtime
// support (`-tags ORT`).
const ORTAvailable = false

// newORTSession fails: this binary has no ONNX Runtime support.
func newORTSession(string) (*hugot.Session, error) {
	return nil, errors.New("this binary was built without ONNX Runtime support: rebuild with -tags ORT (needs libonnxruntime.so and libtokenizers.a)")
}
