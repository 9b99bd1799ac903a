package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/fragility/fragility/internal/jsonerr"
	"github.com/fragility/fragility/internal/readlimit"
	"github.com/fragility/fragility/llm"
)

// LastFormat names the format of the record of the last bench (Last).
const LastFormat = "fragility-bench-last/1"

// LastFile is the name of the record of the last bench in the cache
// directory (LastPath).
const LastFile = "bench-last.json"

// Last is what `fragility bench` records of its last run on this machine
// (LastPath), for `fragility plan`'s rate when none is given: the machine,
// the model by sha256, the decoding parameters it ran at and its result.
type Last struct {
	Format      string       `json:"format"`       // LastFormat
	Time        string       `json:"time"`         // when the bench ended (RFC 3339, UTC)
	Machine     string       `json:"machine"`      // Machine() where it ran
	ModelSHA256 string       `json:"model_sha256"` // the model file's sha256
	Threads     int          `json:"threads"`      // llama.cpp threads of one sequence (after defaults)
	ThreadsB    int          `json:"threads_batch"`
	GPULayers   int          `json:"gpu_layers"`
	Result      *BenchResult `json:"result"`
}

// LastPath is where the last bench is recorded: $XDG_CACHE_HOME/fragility,
// else $HOME/.cache/fragility, then LastFile (beside the models' cache
// directory's default place).
func LastPath() (string, error) {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "fragility", LastFile), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("bench: cannot find the cache directory: %w", err)
	}
	return filepath.Join(home, ".cache", "fragility", LastFile), nil
}

// Machine names this machine for a recorded rate: the operating system and
// architecture, the CPU's model name (Linux's /proc/cpuinfo; "" elsewhere)
// and the number of logical CPUs. A rate recorded under another name was
// measured elsewhere, or on a machine that changed.
func Machine() string {
	cpu := ""
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	return fmt.Sprintf("%s/%s, %s, %d CPUs", runtime.GOOS, runtime.GOARCH, cpu, runtime.NumCPU())
}

// RecordLast writes the record of a bench that ran the model of sha256 sum
// with the load parameters p (as Bench loaded it: defaults filled in) to
// path, replacing the one there (written to a temporary file and renamed).
func RecordLast(path string, r *BenchResult, sum string, p llm.Params) error {
	p = p.Defaults()
	last := Last{Format: LastFormat, Time: time.Now().UTC().Format(time.RFC3339), Machine: Machine(), ModelSHA256: sum,
		Threads: p.Threads, ThreadsB: p.ThreadsBatch, GPULayers: p.GPULayers, Result: r}
	data, err := json.MarshalIndent(last, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".bench-last-")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(append(data, '\n'))
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		if werr == nil {
			werr = cerr
		}
		return fmt.Errorf("%s: %w", path, werr)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// maxLastSize bounds a bench record read by ReadLast, in bytes: a record
// is a few KiB, so a model or a device given as --bench is refused at once.
const maxLastSize = 1 << 20

// ReadLast reads the record of the last bench at path (at most
// maxLastSize bytes: a longer file gives a *readlimit.TooLargeError). A missing file is
// an error for which errors.Is(err, fs.ErrNotExist) holds; a file of another
// format says so.
func ReadLast(path string) (*Last, error) {
	data, err := readlimit.ReadFile(path, maxLastSize)
	if err != nil {
		return nil, err
	}
	var l Last
	if err := json.Unmarshal(data, &l); err != nil {
		msg, line := jsonerr.Describe(data, err)
		return nil, fmt.Errorf("%s:%d: not a record of fragility bench: %s", path, line, msg)
	}
	if l.Format != LastFormat || l.Result == nil {
		return nil, fmt.Errorf("%s: not a record of fragility bench (format %q, want %s)", path, l.Format, LastFormat)
	}
	return &l, nil
}
