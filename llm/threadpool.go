package llm

/*
#include "llama.h"
#include "helpers.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"unsafe"
)

// threadPoolPoll is the polling level of a model's ggml thread pool
// (ggml_threadpool_params.poll: after a graph, each worker spins for up to
// poll × 131,072 pause instructions, a few milliseconds at 1, before it
// sleeps; 0: it sleeps at once). A worker still spinning takes the next
// graph (the entropy pass right after a decode, the next decode right
// after a pass) without being woken: with every core decoding, the pass
// took 0.17 ms on two threads against 0.25 ms on one. Against level 0,
// measured with `fragility bench --model gemma-3-270m-q4_k_m` (16 items of
// (c), 8 per batch, 2 vCPUs), the batched items took 29.6 and 29.1 s
// without the DDC classifier (30.8 and 31.3 s at 0) and 41.6 and 39.6 s
// with it beside generation (36.6 and 41.3 s at 0); the binary before the
// pool, 31.5 and 42.9 s. A pool whose one-token decodes take fewer threads
// than it has (Threads < ThreadsBatch) polls at level 0 instead: its other
// workers sleep through those decodes anyway, and spinning after each pass
// they would take a core from other processes (the test packages `make
// test` runs at once took 1.3–2× as long with them spinning); at one
// thread b/a was 0.990 at level 0 and 0.994 at level 1.
const threadPoolPoll = 1

// threadPool is a ggml thread pool of n threads (the calling thread is
// one of them) with the graph of an entropy pass on it (threadpool.c).
// Not safe for concurrent use: one graph runs on it at a time.
type threadPool struct {
	c *C.struct_fragility_tp
	n int
}

// tpMaxBlocks is the most blocks of entropyChunk logits a pass on the pool
// takes (TP_MAX_BLOCKS in threadpool.c; newThreadPool checks they agree).
const tpMaxBlocks = 64

// newThreadPool starts a pool of n ≥ 1 threads polling at level poll.
func newThreadPool(n, poll int) (*threadPool, error) {
	if int(C.fragility_tp_max_blocks()) != tpMaxBlocks {
		return nil, fmt.Errorf("threadpool.c takes %d blocks a pass, threadpool.go %d", int(C.fragility_tp_max_blocks()), tpMaxBlocks)
	}
	t := C.fragility_tp_new(C.int(n), C.uint(poll))
	if t == nil {
		return nil, errors.New("ggml could not create a thread pool")
	}
	return &threadPool{c: t, n: n}, nil
}

// free stops the pool's threads; p may be nil.
func (p *threadPool) free() {
	if p != nil {
		C.fragility_tp_free(p.c)
	}
}

// entropy is entropyWith computed by threads of the pool's n threads (at
// most n; the calling thread is one of them): the largest logit of each
// block of entropyChunk logits, then each block's sums, each block by one
// thread, combined in index order as fragility_max combines its lanes and
// entropyAt its blocks, so the result is bit-identical to entropyWith.
// logits has shape [n_vocab]; a row longer than tpMaxBlocks blocks
// (1,048,576 entries) goes to entropyWith. The errors are entropyWith's.
func (p *threadPool) entropy(kernel string, logits []float32, threads int) (Dist, error) {
	nb := (len(logits) + entropyChunk - 1) / entropyChunk
	if len(logits) == 0 || nb > tpMaxBlocks {
		return entropyWith(kernel, logits)
	}
	var zs, ss [tpMaxBlocks]float64
	v1 := 0
	if kernel == EntropyKernelV1 {
		v1 = 1
	}
	var mx C.float
	var arg, nan C.int
	if C.fragility_tp_pass(p.c, C.int(min(threads, p.n)), C.int(v1), (*C.float)(unsafe.Pointer(&logits[0])), C.int(len(logits)), C.int(entropyChunk),
		&mx, &arg, &nan, (*C.double)(unsafe.Pointer(&zs[0])), (*C.double)(unsafe.Pointer(&ss[0]))) != 0 {
		return Dist{}, errors.New("entropy: ggml's thread pool failed to run the pass")
	}
	m := float32(mx)
	if err := maxError(m, nan != 0); err != nil {
		return Dist{}, err
	}
	return combineBlocks(zs[:nb], ss[:nb], m, int(arg)), nil
}

// useThreadPool reports whether Load gives the context a ggml thread pool
// of its own: when llama.cpp decodes on two or more threads (Threads or
// ThreadsBatch) and the entropy passes run between two decodes (no pass
// pool). The pool has max(Threads, ThreadsBatch) threads; each decode
// takes as many of them as llama.cpp asks for, and each entropy pass as
// many as a one-token decode (Threads): a pass on more threads than that
// would need a worker that may be asleep or, on a machine shared with other
// processes, waiting for a core, and every thread of a ggml graph waits for
// the slowest at its end (`make test`, whose packages run two at a time
// with one-token decodes on one thread, took 1.2–2× as long per package
// with the pass on two threads). FRAGILITY_TP=0 turns it off, for
// measurements (llama.cpp then starts and joins its threads for each
// graph, and each pass runs on the generating goroutine alone).
func (m *Model) useThreadPool() bool {
	p := m.params
	return os.Getenv("FRAGILITY_TP") != "0" && max(p.Threads, p.ThreadsBatch) >= 2 && m.poolWorkers() <= 0
}

// attachThreadPool creates the context's thread pool and attaches it to
// every decode (see useThreadPool).
func (m *Model) attachThreadPool() error {
	n, poll := max(m.params.Threads, m.params.ThreadsBatch), threadPoolPoll
	if m.params.Threads < n {
		poll = 0
	}
	p, err := newThreadPool(n, poll)
	if err != nil {
		return err
	}
	m.tp = p
	pool := C.fragility_tp_pool(p.c)
	C.llama_attach_threadpool(m.ctx, pool, pool)
	return nil
}

// entropyInline is the entropy pass of one row of logits on the generating
// goroutine, between two decodes: on as many of the context's pool threads
// as its one-token decodes take (EntropyPassThreads), else entropyWith; the
// same bits either way.
func (m *Model) entropyInline(kernel string, logits []float32) (Dist, error) {
	if n := m.EntropyPassThreads(); n >= 2 {
		return m.tp.entropy(kernel, logits, n)
	}
	return entropyWith(kernel, logits)
}
