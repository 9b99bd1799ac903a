package llm

/*
#include <stdlib.h>
#include "helpers.h"
*/
import "C"

import (
	"os"
	"sync"
	"unsafe"
)

// EntropyWorkers is the number of goroutines that compute the blocks of one
// entropy pass. The default is 1: during generation each pass already runs
// beside the next llama_decode, and more workers would take cores from
// llama.cpp's threads. The result does not depend on it.
var EntropyWorkers = 1

// maxLogit returns the largest logit, its lowest index, and whether a NaN
// is present (vectorised C kernel).
func maxLogit(logits []float32) (float32, int, bool) {
	var arg, nan C.int
	m := C.fragility_max((*C.float)(unsafe.Pointer(&logits[0])), nil, C.int(len(logits)), &arg, &nan)
	return float32(m), int(arg), nan != 0
}

// maxLogitCopy is maxLogit that also copies logits into dst (len(dst) ≥
// len(logits)) in the same pass over memory.
func maxLogitCopy(dst, logits []float32) (float32, int, bool) {
	var arg, nan C.int
	m := C.fragility_max((*C.float)(unsafe.Pointer(&logits[0])), (*C.float)(unsafe.Pointer(&dst[0])), C.int(len(logits)), &arg, &nan)
	return float32(m), int(arg), nan != 0
}

// EntropyISA names the code path of kernel v2 on this CPU: "avx512",
// "avx2" (with FMA) or "scalar", chosen when the package is initialised from
// the CPU's features, whatever the build's -march flags. The environment
// variable FRAGILITY_ENTROPY_ISA=avx2 or scalar asks for a narrower path
// (for benchmarks). The paths give the same bits but on a CPU without FMA.
var EntropyISA = setEntropyISA(os.Getenv("FRAGILITY_ENTROPY_ISA"))

// setEntropyISA chooses the kernel-v2 path (want: "", "avx2" or "scalar",
// never more than the CPU has) and returns its name. Not safe while a pass
// runs.
func setEntropyISA(want string) string {
	cw := C.CString(want)
	defer C.free(unsafe.Pointer(cw))
	C.fragility_entropy_init(cw)
	return C.GoString(C.fragility_entropy_isa)
}

// scalarFMA reports whether the scalar path of kernel v2 fuses its
// multiply-adds (the build targets a CPU with FMA), as the vector paths do.
var scalarFMA = C.fragility_entropy_scalar_fma != 0

// blockSums fills zs[b], ss[b] with the sums over block b of entropyChunk
// logits of kernel v1 (when v1) or v2, spreading blocks over EntropyWorkers
// goroutines.
func blockSums(v1 bool, logits []float32, m float64, zs, ss []float64) {
	nb := len(zs)
	run := func(b int) {
		lo := b * entropyChunk
		hi := min(lo+entropyChunk, len(logits))
		var z, s C.double
		if v1 {
			C.fragility_entropy_sums((*C.float)(unsafe.Pointer(&logits[lo])), C.int(hi-lo), C.double(m), &z, &s)
		} else {
			C.fragility_entropy_sums2((*C.float)(unsafe.Pointer(&logits[lo])), C.int(hi-lo), C.double(m), &z, &s)
		}
		zs[b], ss[b] = float64(z), float64(s)
	}
	w := min(EntropyWorkers, nb)
	if w <= 1 {
		for b := 0; b < nb; b++ {
			run(b)
		}
		return
	}
	var wg sync.WaitGroup
	for k := 0; k < w; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			for b := k; b < nb; b += w {
				run(b)
			}
		}(k)
	}
	wg.Wait()
}
