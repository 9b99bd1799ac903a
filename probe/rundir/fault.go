package rundir

import (
	"os"
	"strconv"
	"strings"
	"sync"
)

// EnvCrashAt names the environment variable of the crash hook the
// reliability tests use to kill a run at a named point, as a power loss
// would: "POINT" or "POINT:N" kills the process with SIGKILL the N-th time
// (default the first) it reaches POINT. The points are
//
//	start    after set.jsonl and manifest.json are written, before results.csv
//	decode   a decoding step of a batch in flight (N counts steps)
//	traces   halfway through appending a batch's traces.jsonl lines (N counts batches)
//	results  halfway through appending a batch's results.csv records (N counts batches)
//	summary  after manifest.json says complete, before summary.json is written
//
// A torn write (traces, results) is synced before the kill, so that the
// half line is on disk. Unset, the hook does nothing.
const EnvCrashAt = "FRAGILITY_CRASH_AT"

var crash struct {
	once  sync.Once
	point string
	at    int
	mu    sync.Mutex
	seen  int
}

// crashHere reports whether the crash hook (EnvCrashAt) is armed for
// point and this is the time it must fire.
func crashHere(point string) bool {
	crash.once.Do(func() {
		spec := os.Getenv(EnvCrashAt)
		p, n, _ := strings.Cut(spec, ":")
		crash.point, crash.at = p, 1
		if k, err := strconv.Atoi(n); err == nil && k > 0 {
			crash.at = k
		}
	})
	if crash.point == "" || crash.point != point {
		return false
	}
	crash.mu.Lock()
	defer crash.mu.Unlock()
	crash.seen++
	return crash.seen == crash.at
}

// CrashPoint kills the process at point when the crash hook says so.
func CrashPoint(point string) {
	if crashHere(point) {
		die()
	}
}

// writeSynced writes b to f; when the crash hook fires at point it writes
// the first half of b, syncs it and kills the process (a torn line).
func writeSynced(f *os.File, b []byte, point string) error {
	if crashHere(point) {
		f.Write(b[:len(b)/2])
		f.Sync()
		die()
	}
	if _, err := f.Write(b); err != nil {
		return err
	}
	return f.Sync()
}
