package plan

import (
	"os"
	"testing"

	"github.com/fragility/fragility/models"
)

// TestMain keeps the plan's cache of counted sets (CountCacheDir) in a
// folder of the test run: the models are still read from their cache.
func TestMain(m *testing.M) {
	if dir, err := models.CacheDir(); err == nil && os.Getenv("FRAGILITY_MODELS") == "" {
		os.Setenv("FRAGILITY_MODELS", dir)
	}
	tmp, err := os.MkdirTemp("", "plan-test-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", tmp)
	code := m.Run()
	os.RemoveAll(tmp)
	os.Exit(code)
}
