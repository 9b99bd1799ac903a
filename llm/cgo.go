package llm

/*
#cgo CPPFLAGS: -I${SRCDIR}/../third_party/include/llama -I${SRCDIR}/../third_party/include/ggml
#cgo CXXFLAGS: -std=c++17
#cgo CFLAGS: -Wno-psabi
#include <stdlib.h>
#include "llama.h"
#include "ggml-backend.h"
#include "helpers.h"
*/
import "C"

import (
	"fmt"
	"os"
	"strings"
	"sync"

	_ "github.com/ollama/ollama/llama/llama.cpp/src"
)

// LlamaCommit is the llama.cpp commit compiled into this binary (the copy
// vendored in github.com/ollama/ollama@v0.17.4).
const LlamaCommit = "ec98e2002"

// OllamaModule is the Go module that carries the pinned llama.cpp sources.
const OllamaModule = "github.com/ollama/ollama@v0.17.4"

// BuildFlags are the C/C++ flags ggml was compiled with; set by the Makefile
// with -ldflags "-X github.com/fragility/fragility/llm.BuildFlags=...". They
// are recorded in manifests because they change the floating-point kernels.
var BuildFlags = "unknown (not built by make)"

var (
	initOnce sync.Once
	logMu    sync.Mutex
	logTail  []string // last lines llama.cpp/ggml logged at warning level or above
	logAll   = os.Getenv("FRAGILITY_LLAMA_LOG") != ""
)

// initBackend initialises llama.cpp once per process and routes its log
// through fragilityLog.
func initBackend() {
	initOnce.Do(func() {
		C.fragility_install_log()
		C.llama_backend_init()
	})
}

//export fragilityLog
func fragilityLog(level C.int, text *C.char) {
	s := C.GoString(text)
	if logAll {
		fmt.Fprint(os.Stderr, s)
	}
	if level < C.GGML_LOG_LEVEL_WARN && level != C.GGML_LOG_LEVEL_CONT {
		return
	}
	logMu.Lock()
	defer logMu.Unlock()
	if level == C.GGML_LOG_LEVEL_CONT && len(logTail) > 0 {
		logTail[len(logTail)-1] += s
		return
	}
	logTail = append(logTail, s)
	if len(logTail) > 16 {
		logTail = logTail[len(logTail)-16:]
	}
}

// takeLogTail returns and clears the warning/error lines llama.cpp logged
// since the last call, joined by "; ".
func takeLogTail() string {
	logMu.Lock()
	defer logMu.Unlock()
	var parts []string
	for _, l := range logTail {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	logTail = nil
	return strings.Join(parts, "; ")
}

// SystemInfo returns llama.cpp's description of the CPU features it was
// compiled with (llama_print_system_info), e.g. "CPU : SSE3 = 1 | AVX2 = 1 ...".
func SystemInfo() string {
	initBackend()
	return strings.TrimSpace(C.GoString(C.llama_print_system_info()))
}
