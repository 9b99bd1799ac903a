package embed

import (
	"os"
	"path/filepath"
	"sync"

	gomlxbackends "github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/knights-analytics/hugot"
	"github.com/knights-analytics/hugot/pipelines"
)

// sequentialMu serialises the opening of pure-Go sessions while
// openSequential says how the next one is configured.
var (
	sequentialMu   sync.Mutex
	openSequential bool
)

func init() {
	// hugot asks GoMLX for the backend "go" with an empty configuration.
	// This constructor, registered under the same name after simplego's
	// own, adds "parallelism=0" (every operation in the calling goroutine,
	// no worker pool) when Open was given WithSequential.
	gomlxbackends.Register(simplego.BackendName, func(config string) (gomlxbackends.Backend, error) {
		if config == "" && openSequential {
			config = "parallelism=0"
			// simplego announces that setting on stdout, which carries
			// fragility's results (--json): send the line nowhere. Open
			// holds sequentialMu; nothing else of ours writes to stdout
			// while an embedder opens.
			stdout := os.Stdout
			if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
				os.Stdout = null
				defer func() { os.Stdout = stdout; null.Close() }()
			}
		}
		return simplego.New(config)
	})
}

// newPipeline loads the ONNX model at onnxPath into a feature-extraction
// pipeline of session; sequential as for WithSequential.
func newPipeline(session *hugot.Session, onnxPath string, sequential bool) (*pipelines.FeatureExtractionPipeline, error) {
	sequentialMu.Lock()
	defer func() { openSequential = false; sequentialMu.Unlock() }()
	openSequential = sequential
	return hugot.NewPipeline(session, hugot.FeatureExtractionConfig{
		ModelPath:    filepath.Dir(onnxPath),
		OnnxFilename: filepath.Base(onnxPath),
		Name:         "embed",
	})
}
