package llm

/*
#cgo linux LDFLAGS: -ldl
#include <stdlib.h>
#include <dlfcn.h>
#include "llama.h"
#include "ggml-backend.h"

// fragility_dlopen_error tries to load a shared library the way ggml does and
// returns why it failed, or NULL when it loads.
static const char *fragility_dlopen_error(const char *path) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		return dlerror();
	}
	dlclose(h);
	return NULL;
}
*/
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unsafe"
)

// Device describes one ggml compute device available to llama.cpp.
type Device struct {
	Name         string `json:"name"`        // ggml device name, e.g. "CPU", "CUDA0"
	Description  string `json:"description"` // e.g. the GPU's marketing name or the CPU model
	Type         string `json:"type"`        // "cpu", "gpu", "igpu" or "accel"
	MemoryTotal  uint64 `json:"memory_total_bytes"`
	MemoryFree   uint64 `json:"memory_free_bytes"`
	ComputeMajor int    `json:"compute_major,omitempty"` // CUDA compute capability, 0 when not a CUDA device
	ComputeMinor int    `json:"compute_minor,omitempty"`
	Library      string `json:"library,omitempty"` // backend library that provides it
}

var backendDir string

// LoadBackends loads the dynamic ggml backends (e.g. libggml-cuda.so built by
// `make cuda`) found in dir, through ggml_backend_load_all_from_path. It must
// be called before the first Load to take effect. An empty dir means: the
// value of $FRAGILITY_BACKEND_DIR, else a "lib" directory next to the
// executable. It returns the directory searched; a directory without backends
// is not an error (the CPU backend is compiled in).
func LoadBackends(dir string) string {
	initBackend()
	if dir == "" {
		dir = os.Getenv("FRAGILITY_BACKEND_DIR")
	}
	if dir == "" {
		if exe, err := os.Executable(); err == nil {
			dir = filepath.Join(filepath.Dir(exe), "lib")
		}
	}
	if dir == "" {
		return ""
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return dir
	}
	cdir := C.CString(dir)
	defer C.free(unsafe.Pointer(cdir))
	C.ggml_backend_load_all_from_path(cdir)
	backendDir = dir
	return dir
}

// Devices lists the compute devices ggml knows, CPU included.
func Devices() []Device {
	initBackend()
	n := int(C.ggml_backend_dev_count())
	out := make([]Device, 0, n)
	for i := 0; i < n; i++ {
		dev := C.ggml_backend_dev_get(C.size_t(i))
		var p C.struct_ggml_backend_dev_props
		C.ggml_backend_dev_get_props(dev, &p)
		d := Device{
			Name:         C.GoString(p.name),
			Description:  C.GoString(p.description),
			MemoryTotal:  uint64(p.memory_total),
			MemoryFree:   uint64(p.memory_free),
			ComputeMajor: int(p.compute_major),
			ComputeMinor: int(p.compute_minor),
		}
		if p.library != nil {
			d.Library = C.GoString(p.library)
		}
		switch p._type {
		case C.GGML_BACKEND_DEVICE_TYPE_CPU:
			d.Type = "cpu"
		case C.GGML_BACKEND_DEVICE_TYPE_GPU:
			d.Type = "gpu"
		case C.GGML_BACKEND_DEVICE_TYPE_IGPU:
			d.Type = "igpu"
		default:
			d.Type = "accel"
		}
		out = append(out, d)
	}
	return out
}

// GPUs returns the devices of type "gpu" or "igpu".
func GPUs() []Device {
	var g []Device
	for _, d := range Devices() {
		if d.Type == "gpu" || d.Type == "igpu" {
			g = append(g, d)
		}
	}
	return g
}

// BackendSummary is a one-line description of where a model with the given
// number of offloaded layers runs, for manifests and notices.
func BackendSummary(gpuLayers int) string {
	g := GPUs()
	if len(g) == 0 || gpuLayers == 0 {
		return "CPU"
	}
	d := g[0]
	layers := fmt.Sprintf("%d layers", gpuLayers)
	if gpuLayers < 0 {
		layers = "all layers"
	}
	return fmt.Sprintf("%s (%s, %d MiB, compute %d.%d), %s offloaded", d.Name, d.Description,
		d.MemoryTotal>>20, d.ComputeMajor, d.ComputeMinor, layers)
}

// GPUProblem explains why no GPU device is available although dir holds a
// GPU backend library (libggml-cuda.so and the like): ggml loads backends
// silently, so the reason (a missing libcudart or driver, an incompatible
// build) would otherwise be lost. It returns "" when a GPU device is
// registered or dir holds no GPU backend library.
func GPUProblem(dir string) string {
	if dir == "" || len(GPUs()) > 0 {
		return ""
	}
	libs, _ := filepath.Glob(filepath.Join(dir, "libggml-*.so"))
	for _, lib := range libs {
		base := filepath.Base(lib)
		if strings.HasPrefix(base, "libggml-base") || strings.HasPrefix(base, "libggml-cpu") {
			continue
		}
		clib := C.CString(lib)
		msg := C.fragility_dlopen_error(clib)
		C.free(unsafe.Pointer(clib))
		if msg != nil {
			return fmt.Sprintf("%s cannot be loaded: %s", lib, C.GoString(msg))
		}
		return fmt.Sprintf("%s loads but reports no usable GPU (is the NVIDIA driver installed and a GPU visible?)", lib)
	}
	return ""
}
