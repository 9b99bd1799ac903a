package llm

/*
#include <stdlib.h>
#include "llama.h"
*/
import "C"

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unsafe"
)

// QuantizeOptions are the settings of Quantize. The zero value quantizes
// with llama.cpp's defaults (all hardware threads, no requantization).
type QuantizeOptions struct {
	// AllowRequantize lets llama.cpp quantize tensors that are already
	// quantized (llama_model_quantize_params.allow_requantize). A model
	// requantized from a quantized file can never be more precise than its
	// source, whatever the new type: say so when you publish numbers.
	AllowRequantize bool
	// Threads is the number of quantization threads; 0 lets llama.cpp use
	// every hardware thread.
	Threads int
	// Force replaces an existing output file (never the input file).
	Force bool
	// Progress, when set, is called about once a second while llama.cpp
	// writes, and once at the end, with the bytes written so far to the
	// (temporary) output file and the time since the start. llama.cpp has no
	// progress callback for quantization, so this watches the file grow. It
	// runs on another goroutine.
	Progress func(written int64, elapsed time.Duration)
}

// QuantizeTypes returns the quantization type names Quantize accepts
// (llama.cpp's spelling, as in FileTypeName), sorted.
func QuantizeTypes() []string {
	var out []string
	for _, n := range fileTypeNames {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Quantize writes a copy of the GGUF model in to out with its tensors
// converted to the quantization type typ ("Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M",
// "Q4_0", "F16", ...; see QuantizeTypes), through llama.cpp's
// llama_model_quantize with llama_model_quantize_default_params and
// opts applied.
//
// The output is first written to a hidden temporary file in out's directory
// and renamed to out only when llama.cpp succeeded, so out is never a half
// file. Errors name the file: an unknown type; out equal to in; an existing
// out without opts.Force; an input that is not a GGUF file; and a
// quantization llama.cpp refuses, with the reason it logged (for example
// "requantizing from type q5_0 is disabled" for a quantized input without
// opts.AllowRequantize). When ctx is cancelled the temporary file is removed
// at once and an error wrapping ErrAborted is returned; llama.cpp cannot be
// interrupted, so its thread finishes in the background writing to the
// removed file (its space is freed when the process exits).
func Quantize(ctx context.Context, in, out, typ string, opts QuantizeOptions) error {
	ft, ok := FileTypeByName(typ)
	if !ok {
		return fmt.Errorf("quantize %s: unknown quantization type %q (known: %v)", in, typ, QuantizeTypes())
	}
	if err := CheckGGUF(in); err != nil {
		return err
	}
	absIn, err := filepath.Abs(in)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	if absIn == absOut {
		return fmt.Errorf("quantize %s: the output is the input file; choose another output path", in)
	}
	if st, err := os.Stat(out); err == nil {
		if ist, ierr := os.Stat(in); ierr == nil && os.SameFile(st, ist) {
			return fmt.Errorf("quantize %s: the output %s is the input file; choose another output path", in, out)
		}
		if st.IsDir() {
			return fmt.Errorf("quantize %s: output %s is a directory", in, out)
		}
		if !opts.Force {
			return fmt.Errorf("quantize %s: output %s already exists (use --force to replace it)", in, out)
		}
	}
	tmpf, err := os.CreateTemp(filepath.Dir(absOut), "."+filepath.Base(absOut)+".tmp-")
	if err != nil {
		return fmt.Errorf("quantize %s: cannot write next to %s: %w", in, out, err)
	}
	tmp := tmpf.Name()
	tmpf.Close()

	initBackend()
	qp := C.llama_model_quantize_default_params()
	qp.ftype = C.enum_llama_ftype(ft)
	qp.nthread = C.int32_t(opts.Threads)
	qp.allow_requantize = C.bool(opts.AllowRequantize)
	cin, cout := C.CString(in), C.CString(tmp)

	start := time.Now()
	type result struct {
		rc   uint32
		tail string
	}
	done := make(chan result, 1)
	go func() {
		defer C.free(unsafe.Pointer(cin))
		defer C.free(unsafe.Pointer(cout))
		logMu.Lock()
		logTail = nil
		logMu.Unlock()
		rc := uint32(C.llama_model_quantize(cin, cout, &qp))
		done <- result{rc, takeLogTail()}
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	report := func() {
		if opts.Progress != nil {
			if st, err := os.Stat(tmp); err == nil {
				opts.Progress(st.Size(), time.Since(start))
			}
		}
	}
	var res result
wait:
	for {
		select {
		case res = <-done:
			break wait
		case <-tick.C:
			report()
		case <-ctx.Done():
			os.Remove(tmp)
			return fmt.Errorf("quantize %s: %w: %v", in, ErrAborted, ctx.Err())
		}
	}
	if res.rc != 0 {
		os.Remove(tmp)
		hint := ""
		if strings.Contains(res.tail, "requantizing from type") {
			hint = " (the input is already quantized: allow requantization, e.g. --allow-requantize, and disclose it)"
		}
		return fmt.Errorf("quantize %s to %s: llama.cpp refused: %s%s", in, typ, orUnknown(res.tail), hint)
	}
	report()
	if err := CheckGGUF(tmp); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("quantize %s to %s: llama.cpp wrote an invalid file: %w", in, typ, err)
	}
	if quantized, from, err := sourceQuantized(in); err == nil && quantized {
		sum, _, err := hashFile(in)
		if err == nil {
			err = addStringKV(tmp, KeyRequantizedFrom, from+" sha256:"+sum)
		}
		if err != nil {
			os.Remove(tmp)
			return fmt.Errorf("quantize %s: recording %s: %w", in, KeyRequantizedFrom, err)
		}
	}
	// CreateTemp made it 0600; the output is an ordinary file, as a run's are.
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("quantize %s: %w", in, err)
	}
	if err := os.Rename(tmp, out); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("quantize %s: %w", in, err)
	}
	return nil
}
