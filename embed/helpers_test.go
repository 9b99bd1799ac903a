package embed

import (
	"sync"
	"testing"

	"github.com/fragility/fragility/models"
)

var (
	defaultOnce sync.Once
	defaultEmb  *Embedder
	defaultErr  error
)

// openDefault opens the default embedder of models/manifest.json from the
// model cache once per test binary. A missing cache fails the test with the
// command that fills it.
func openDefault(tb testing.TB) *Embedder {
	tb.Helper()
	defaultOnce.Do(func() {
		m, err := models.Load()
		if err != nil {
			defaultErr = err
			return
		}
		md, err := m.Default("embedder")
		if err != nil {
			defaultErr = err
			return
		}
		dir, err := md.Path()
		if err != nil {
			defaultErr = err
			return
		}
		if !md.Installed() {
			defaultErr = &missingModel{name: md.Name, dir: dir}
			return
		}
		defaultEmb, defaultErr = Open(dir)
	})
	if defaultErr != nil {
		tb.Fatalf("default embedder: %v", defaultErr)
	}
	return defaultEmb
}

type missingModel struct{ name, dir string }

func (m *missingModel) Error() string {
	return "embedder " + m.name + " is not in the model cache (" + m.dir + "): run `make models` (or `go run ./models/fetch " + m.name + "`)"
}
