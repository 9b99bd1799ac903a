package main

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/tools/benchmark/parse"
)

// goBenchRow is one `go test -bench` result, as a row of fragility bench's
// table.
type goBenchRow struct {
	Name    string  `json:"name"`
	Iters   int     `json:"iterations"`
	NsPerOp float64 `json:"ns_per_op"`
	MBPerS  float64 `json:"mb_per_s,omitempty"`
}

// readGoBench reads the output of `go test -bench` in path (the lines
// golang.org/x/tools/benchmark/parse recognises; others are skipped) in file
// order. Errors: an unreadable file, or a file with no benchmark line.
func readGoBench(path string) ([]goBenchRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--go-bench: %w", err)
	}
	defer f.Close()
	set, err := parse.ParseSet(f)
	if err != nil {
		return nil, fmt.Errorf("--go-bench %s: %w", path, err)
	}
	var all []*parse.Benchmark
	for _, bs := range set {
		all = append(all, bs...)
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("--go-bench %s: no `go test -bench` result lines", path)
	}
	rows := make([]goBenchRow, len(all))
	for _, b := range all {
		if b.Measured&parse.NsPerOp == 0 || !(b.NsPerOp > 0) || b.N < 1 {
			return nil, fmt.Errorf("--go-bench %s: result %d (%s) has no positive ns/op and iteration count: not `go test -bench` output", path, b.Ord+1, b.Name)
		}
		rows[b.Ord] = goBenchRow{Name: b.Name, Iters: b.N, NsPerOp: b.NsPerOp, MBPerS: b.MBPerS}
	}
	return rows, nil
}

// goBenchValue renders a time per operation in the unit that suits it, with
// the throughput when the benchmark set one.
func goBenchValue(r goBenchRow) string {
	var v string
	switch ns := r.NsPerOp; {
	case ns >= 1e9:
		v = fmt.Sprintf("%.2f s/op", ns/1e9)
	case ns >= 1e6:
		v = fmt.Sprintf("%.3f ms/op", ns/1e6)
	case ns >= 1e3:
		v = fmt.Sprintf("%.2f µs/op", ns/1e3)
	default:
		v = fmt.Sprintf("%.0f ns/op", ns)
	}
	if r.MBPerS > 0 {
		v += fmt.Sprintf(", %.0f MB/s", r.MBPerS)
	}
	return v
}

// goBenchLabel is a benchmark's name without the GOMAXPROCS suffix.
func goBenchLabel(name string) string {
	if i := strings.LastIndex(name, "-"); i > 0 && strings.Trim(name[i+1:], "0123456789") == "" {
		name = name[:i]
	}
	return "Go " + strings.TrimPrefix(name, "Benchmark")
}
