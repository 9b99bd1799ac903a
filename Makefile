# fragility — build, fetch default models, test, demo.
#
#   make demo     run the probe on the default models and print the narrative
#   make test     install what is needed (Go modules, default models) and run every test
#   make build    build bin/fragility; ggml is compiled for THIS machine's CPU (-march=native)
#   make build PORTABLE=1   baseline x86-64 build that runs on any x86-64 CPU
#   make models   fetch the default models into the cache (see models/README.md)
#   make cuda     build ggml's CUDA backend as a shared library next to the binary (bin/lib)
#   make bench    Go benchmarks and `fragility bench` on the default model

SHELL := /bin/bash
GO ?= go
OLLAMA_MODULE := github.com/ollama/ollama
PKG := github.com/fragility/fragility

ifeq ($(PORTABLE),1)
ARCH_FLAGS :=
ARCH_NOTE := portable baseline x86-64 (PORTABLE=1)
else
ARCH_FLAGS := -march=native
ARCH_NOTE := -march=native: tuned to this machine's CPU; use PORTABLE=1 for a build that runs anywhere
endif
export CGO_ENABLED := 1
export CGO_CFLAGS := -O3 $(ARCH_FLAGS)
export CGO_CXXFLAGS := -O3 $(ARCH_FLAGS)
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X 'main.version=$(VERSION)' -X '$(PKG)/llm.BuildFlags=CGO_CFLAGS=$(CGO_CFLAGS); CGO_CXXFLAGS=$(CGO_CXXFLAGS)'
GOFLAGS_BUILD := -ldflags "$(LDFLAGS)"

.PHONY: all build headers models test test-short demo bench cuda fmt vet clean fuzz

all: build

# third_party/include: the pinned llama.cpp and ggml headers, copied from the
# ollama module in the Go module cache (generated, git-ignored).
headers: third_party/include/.stamp
third_party/include/.stamp: go.mod go.sum
	@$(GO) mod download $(OLLAMA_MODULE)
	@dir=$$($(GO) list -m -f '{{.Dir}}' $(OLLAMA_MODULE)) && \
	  rm -rf third_party/include && mkdir -p third_party/include && \
	  cp -r $$dir/llama/llama.cpp/include third_party/include/llama && \
	  cp -r $$dir/ml/backend/ggml/ggml/include third_party/include/ggml && \
	  chmod -R u+w third_party/include && \
	  echo "headers: third_party/include from $$dir" && touch $@

build: headers
	@echo "build: ggml compiled with $(ARCH_NOTE)"
	@echo "build: CGO_CFLAGS='$(CGO_CFLAGS)' (the first build compiles llama.cpp: ~4-5 min on 2 cores)"
	$(GO) build $(GOFLAGS_BUILD) -o bin/fragility ./cmd/fragility

models:
	$(GO) run ./models/fetch

test: headers models
	$(GO) vet ./...
	$(GO) test $(GOFLAGS_BUILD) -count=1 -timeout 60m ./...
	$(MAKE) --no-print-directory fuzz FUZZTIME=10s

FUZZTIME ?= 10s
# Bounded fuzz runs of the answer extractor and both template parsers.
fuzz: headers
	$(GO) test -run '^$$' -fuzz '^FuzzExtract$$' -fuzztime $(FUZZTIME) ./probe/
	$(GO) test -run '^$$' -fuzz '^FuzzParseOwn$$' -fuzztime $(FUZZTIME) ./templates/
	$(GO) test -run '^$$' -fuzz '^FuzzParseGSMSymbolic$$' -fuzztime $(FUZZTIME) ./templates/

DEMO_OUT ?= runs/demo
# The main job on the default models: 5 built-in templates x base/symbolic/noop x 2 instances.
demo: build models
	bin/fragility run --out $(DEMO_OUT) --force --variants base,symbolic,noop --instances 2 --seed 1

fmt:
	gofmt -l -w .

vet: headers
	$(GO) vet ./...

clean:
	rm -rf bin third_party/include
