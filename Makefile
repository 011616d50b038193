# tmac — see README.md. `make run` and `make test` install missing
# prerequisites themselves (scripts/install-deps.sh).
export PATH := /usr/local/go/bin:$(PATH)
export CGO_ENABLED := 0
LLVM_BIN ?= /usr/lib/llvm-22/bin
export LLVM_BIN
GO ?= go
TMAC := build/tmac
# staticcheck, pinned (the Go module proxy serves v0.6.1; newer tags are refused).
STATICCHECK_VERSION ?= v0.6.1
STATICCHECK := build/bin/staticcheck
# make fuzz runs every fuzz target for a count of executions, seed corpus
# included (docs/fuzzing.md): about 20-40 s each here. Counts, not
# durations: with a duration go1.26's coordinator can fail a clean run with
# "context deadline exceeded" at the deadline (go.dev/issue/75804, fixed in
# go1.27). FUZZTIME=10m (or 1000000x) sets one budget for every target.
# Minimization is capped at 100 runs: the default (60 s for every input
# that adds coverage) leaves the multi-kilobyte seeds barely fuzzed.
FUZZTIME ?=
FUZZ_PARSE_EXECS ?= 30000x
FUZZ_COMPILE_EXECS ?= 10000x
FUZZ_READ_EXECS ?= 60000x
FUZZFLAGS ?= -parallel 1 -fuzzminimizetime 100x

.PHONY: all build deps generate test vet staticcheck gotest lit pytest fuzz run docs bench-parse bench-compile bench-gpu clean

all: build

deps:
	@scripts/install-deps.sh

# The commit goes into `tmac version` (benchmark results name the binary
# that timed them); bundles keep tmac_version "dev", unchanged by commits.
REVISION := $(shell git describe --always --dirty=' + uncommitted changes' 2>/dev/null)

build:
	$(GO) build -ldflags "-X 'main.Revision=$(REVISION)'" -o $(TMAC) ./cmd/tmac

# go vet, and gofmt on every tracked Go file (a file gofmt would change fails).
vet:
	$(GO) vet ./...
	@unformatted=$$("$$($(GO) env GOROOT)/bin/gofmt" -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './build/*')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted" >&2; exit 1; fi

# Installs the pinned staticcheck into build/bin when missing or of another version.
$(STATICCHECK):
	GOBIN=$(CURDIR)/build/bin $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

staticcheck: $(STATICCHECK)
	@$(STATICCHECK) -version | grep -q '$(STATICCHECK_VERSION:v%=%)' || GOBIN=$(CURDIR)/build/bin $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	$(STATICCHECK) ./...

gotest:
	$(GO) test ./...

lit: deps build
	$(LLVM_BIN)/lit -sv lit-tests

test: deps build vet staticcheck gotest lit pytest

# The Python package (python/, issue 17): installed offline into a venv
# (build/pyvenv, from $(TMAC_PYTHON) with the system's setuptools), then its
# unit tests, which need no GPU. The GPU tests run through scripts/gpu-step11.sh.
TMAC_PYTHON ?= /usr/bin/python3
export TMAC_PYTHON
PYVENV := build/pyvenv
$(PYVENV)/bin/python:
	$(TMAC_PYTHON) -m venv --system-site-packages $(PYVENV)

pytest: deps $(PYVENV)/bin/python
	PIP_DISABLE_PIP_VERSION_CHECK=1 $(PYVENV)/bin/python -m pip install -q --no-build-isolation --no-index --no-deps --force-reinstall ./python
	cd build && pyvenv/bin/python -c 'import tmac, os; assert "site-packages" in tmac.__file__, tmac.__file__'
	$(PYVENV)/bin/python -m unittest discover -s python/tests -t python

# Typed op accessors (dialects/*/ops_gen.go) from the op registry;
# internal/opgen's test fails when they are out of date.
generate:
	$(GO) generate ./dialects/all

# Reference docs (docs/dialects, docs/passes) generated from the op and pass
# registries; lit-tests/tmac/doc-up-to-date.tma checks they are current.
docs: build
	$(TMAC) doc -o docs

fuzz:
	$(GO) test ./ir -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(or $(FUZZTIME),$(FUZZ_PARSE_EXECS)) $(FUZZFLAGS)
	$(GO) test ./driver -run '^$$' -fuzz '^FuzzCompile$$' -fuzztime $(or $(FUZZTIME),$(FUZZ_COMPILE_EXECS)) $(FUZZFLAGS)
	$(GO) test ./bundle -run '^$$' -fuzz '^FuzzRead$$' -fuzztime $(or $(FUZZTIME),$(FUZZ_READ_EXECS)) $(FUZZFLAGS)

bench-parse:
	$(GO) test ./ir -run '^$$' -bench BenchmarkParse100k -benchtime 5x

# Compile speed of the GEMM example: tmac front end, tmac compile, llc alone,
# upstream mlir-opt (N runs each, N=21 by default); see docs/perf.md.
bench-compile: deps build
	@scripts/bench-compile.sh

# tmac against cuBLAS, Triton and torch on the H200 (issue 7): builds tmac
# and the GEMM / memory-bound bundles here (build/gpu/bench); the run step
# needs the GPU machine (scripts/bench-gpu.sh says how).
bench-gpu: deps
	@scripts/bench-gpu.sh build
	@scripts/gpu-attention.sh build
	@echo "next, on the GPU machine, with build/tmac, build/gpu/bench and build/gpu-attention carried over:"
	@echo "  scripts/bench-gpu.sh run    # tmac runs + bench/gpu/peers.py; table last, results in build/gpu/bench"
	@echo "  scripts/gpu-attention.sh run    # attention (issue 19): tmac + torch SDPA backends + Triton; table last"

run: deps build
	@scripts/run-example.sh

clean:
	rm -rf build
