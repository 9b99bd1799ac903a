//go:build ORT || ALL

package embed

import (
	"github.com/knights-analytics/hugot"
	"github.com/knights-analytics/hugot/options"
)

// ORTAvailable reports whether this binary was built with ONNX Runtime
// support (`-tags ORT`).
const ORTAvailable = true

// newORTSession starts an ONNX Runtime session; lib, if not empty, is the
// path of libonnxruntime.so. ONNX Runtime allows one session per process.
func newORTSession(lib string) (*hugot.Session, error) {
	var opts []options.WithOption
	if lib != "" {
		opts = append(opts, options.WithOnnxLibraryPath(lib))
	}
	return hugot.NewORTSession(opts...)
}
