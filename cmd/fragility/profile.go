package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"sync"
)

// EnvCPUProfile names the environment variable that makes any fragility
// command write a Go CPU profile (runtime/pprof) to the file it gives, e.g.
//
//	FRAGILITY_CPUPROFILE=/tmp/run.pprof fragility run ... && go tool pprof -top bin/fragility /tmp/run.pprof
//
// The profile covers the Go side and the cgo calls as seen from Go
// (llama_decode appears as one runtime.cgocall).
const EnvCPUProfile = "FRAGILITY_CPUPROFILE"

var (
	profileOnce sync.Once
	profileFile *os.File
)

// startCPUProfile starts the CPU profile when EnvCPUProfile is set; a file
// that cannot be created is reported on stderr and the command runs on.
func startCPUProfile() {
	path := os.Getenv(EnvCPUProfile)
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fragility: %s: %v (no CPU profile)\n", EnvCPUProfile, err)
		return
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		fmt.Fprintf(os.Stderr, "fragility: %s=%s: %v (no CPU profile)\n", EnvCPUProfile, path, err)
		return
	}
	profileFile = f
}

// stopCPUProfile writes out the CPU profile, if one runs; it is called on
// every way out of the command (os.Exit skips deferred calls).
func stopCPUProfile() {
	profileOnce.Do(func() {
		if profileFile != nil {
			pprof.StopCPUProfile()
			profileFile.Close()
		}
	})
}
