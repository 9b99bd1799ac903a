package probe

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fragility/fragility/probe/internal/probetest"
)

// TestCtxTrainWarning: a run whose --n-ctx is above a model's training
// context (the tiny model's 2048) says so once per model on its log, and
// one within it says nothing.
func TestCtxTrainWarning(t *testing.T) {
	paths := probetest.TinyModels(t, 1)
	tdir := probetest.ShardTemplates(t)
	for _, c := range []struct {
		nctx int
		want bool
	}{{4096, true}, {probetest.ShardTestNCtx, false}} {
		cfg := probetest.ShardConfig(tdir, paths, filepath.Join(t.TempDir(), "run"))
		cfg.Params.NCtx = c.nctx
		var log bytes.Buffer
		if _, err := Run(context.Background(), cfg, Options{Log: &log}); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("Warning: --n-ctx 4096 is above %s's training context of 2048 tokens", filepath.Base(paths[0]))
		if got := strings.Count(log.String(), want); (got == 1) != c.want || (!c.want && strings.Contains(log.String(), "training context")) {
			t.Errorf("--n-ctx %d: %d warnings in the log, want %v:\n%s", c.nctx, got, c.want, log.String())
		}
	}
}
