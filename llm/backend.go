package llm

/*
#include <stdlib.h>
#include "llama.h"
#include "ggml-backend.h"
*/
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
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
	return fmt.Sprintf("%s (%s, %d MiB, compute %d.%d), %d layers offloaded", d.Name, d.Description,
		d.MemoryTotal>>20, d.ComputeMajor, d.ComputeMinor, gpuLayers)
}
