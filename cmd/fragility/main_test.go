package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fragility/fragility/models"
	"github.com/urfave/cli/v2"
)

// binDir holds the fragility binary built once for this package's tests.
var (
	binDir   string
	binOnce  sync.Once
	binPath  string
	binError error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// fragilityBin builds the command once (go build into a temporary
// directory that other users may enter, for the unreadable-file case) and
// returns the binary's path.
func fragilityBin(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binError = os.MkdirTemp("", "fragility-bin-")
		if binError != nil {
			return
		}
		os.Chmod(binDir, 0o755)
		binPath = filepath.Join(binDir, "fragility")
		cmd := exec.Command("go", "build", "-o", binPath, ".")
		if out, err := cmd.CombinedOutput(); err != nil {
			binError = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binError != nil {
		t.Fatal(binError)
	}
	return binPath
}

// result is what one run of the binary gave.
type result struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

// fragility runs the binary with args and extra environment variables
// ("K=V") and waits for it.
func fragility(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(fragilityBin(t), args...)
	cmd.Env = append(os.Environ(), env...)
	return wait(t, cmd, start(t, cmd))
}

// start starts cmd with its output captured.
func start(t *testing.T, cmd *exec.Cmd) *[2]bytes.Buffer {
	t.Helper()
	var out [2]bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out[0], &out[1]
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return &out
}

// wait waits for a started cmd and fails the test if it died of a signal
// other than the ones tests send (a crash or an abort inside C).
func wait(t *testing.T, cmd *exec.Cmd, out *[2]bytes.Buffer) result {
	t.Helper()
	t0 := time.Now()
	err := cmd.Wait()
	r := result{stdout: out[0].String(), stderr: out[1].String(), took: time.Since(t0)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Fatalf("%v: killed by %v\nstderr:\n%s", cmd.Args, ws.Signal(), tail(r.stderr))
		}
	default:
		t.Fatal(err)
	}
	if strings.Contains(r.stderr, "panic:") || strings.Contains(r.stderr, "SIGABRT") || strings.Contains(r.stderr, "SIGSEGV") {
		t.Fatalf("%v: crashed\n%s", cmd.Args, tail(r.stderr))
	}
	return r
}

func tail(s string) string {
	if len(s) > 3000 {
		return "..." + s[len(s)-3000:]
	}
	return s
}

// gemmaName is the manifest name of the fast pretrained model the tests of
// this package run (Gemma 3 270M): the default LLM is a larger chat model.
const gemmaName = "gemma-3-270m-q4_k_m"

// gemmaLLM returns the path of the cached Gemma model.
func gemmaLLM(t *testing.T) string {
	t.Helper()
	p, err := models.PathOf(gemmaName)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// oneErrorLine fails unless r is a failure (exit 1) whose stderr is exactly
// one line "fragility: ..." containing every string of want.
func oneErrorLine(t *testing.T, what string, r result, want ...string) {
	t.Helper()
	line := strings.TrimSuffix(r.stderr, "\n")
	switch {
	case r.code != exitFailure:
		t.Errorf("%s: exit %d, want %d; stderr:\n%s", what, r.code, exitFailure, tail(r.stderr))
		return
	case strings.Contains(line, "\n") || !strings.HasPrefix(line, "fragility: "):
		t.Errorf("%s: stderr is not one error line:\n%s", what, tail(r.stderr))
		return
	}
	for _, w := range want {
		if !strings.Contains(line, w) {
			t.Errorf("%s: error %q does not contain %q", what, line, w)
			return
		}
	}
	t.Logf("%s: %s", what, line)
}

// TestHelpDefaultsOnce: no flag's help line states a default twice (our
// own "(default 2)" and then cli's "(default: 0)" for the 0 that stands for
// "not given" read as --layers 0). Every command and subcommand's help is
// read.
func TestHelpDefaultsOnce(t *testing.T) {
	twice := regexp.MustCompile(`(?i)default:? *\(?-?[0-9][^)]*\)?.*\(default[ :]`)
	var walk func(path []string, cs []*cli.Command)
	walk = func(path []string, cs []*cli.Command) {
		for _, c := range cs {
			p := append(append([]string{}, path...), c.Name)
			r := fragility(t, nil, append(p, "--help")...)
			for _, line := range strings.Split(r.stdout, "\n") {
				if twice.MatchString(line) {
					t.Errorf("fragility %s --help states a default twice: %s", strings.Join(p, " "), strings.TrimSpace(line))
				}
			}
			walk(p, c.Subcommands)
		}
	}
	walk(nil, newApp().Commands)
}

// TestThreadsEnvNote: a FRAGILITY_THREADS that is not taken as given (not
// a positive integer: ignored; above 512: capped) is said in one line on
// stderr, and the command goes on; a valid one says nothing.
func TestThreadsEnvNote(t *testing.T) {
	for env, want := range map[string]string{
		"abc":    `fragility: FRAGILITY_THREADS="abc" is not a positive integer: ignored (every core: `,
		"0":      `fragility: FRAGILITY_THREADS="0" is not a positive integer`,
		"100000": "fragility: FRAGILITY_THREADS=100000 is above 512, the most llama.cpp takes: 512 threads",
		"1":      "",
	} {
		r := fragility(t, []string{"FRAGILITY_THREADS=" + env}, "templates", "list")
		if r.code != 0 {
			t.Errorf("FRAGILITY_THREADS=%s: exit %d: %s", env, r.code, tail(r.stderr))
		}
		if want == "" && r.stderr != "" || want != "" && (!strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "\n") != 1) {
			t.Errorf("FRAGILITY_THREADS=%s: stderr %q, want one line starting %q", env, r.stderr, want)
		}
	}
}
