# engram — the commands CI and people run. Keep it short.
GO      ?= go
# LoCoMo is not shipped (CC BY-NC 4.0): docs/benchmarks.md says where to get it.
LOCOMO  ?= testdata/locomo/locomo10.json
BENCH_SCALE ?= 1000000

.PHONY: run test lint build release bench bench-locomo bench-recall bench-extract bench-secrets fuzz

## run: engram with embedded NATS + JetStream and SQLite under ./data; no config, no LLM
run:
	$(GO) run ./cmd/engram serve

## test: every test with the race detector, a line per package as it finishes and the slowest tests at the end
## Long soaks sit behind -tags soak. -timeout is per package, well above the slowest's few minutes on a loaded
## machine. -parallel 3: most tests wait on timers and fsyncs, not the CPU (at 8, and once at 4, starting
## engram or storing a batch timed out on two cores at load average 25-32). checkptr is off inside modernc's transpiled SQLite, where it took a third of the CPU of
## SQLite-heavy tests, and on for our code; the race detector stays on for all.
TESTFLAGS ?= -race -count=1 -timeout 15m -parallel 3 -gcflags=modernc.org/...=-d=checkptr=0
test:
	$(GO) test $(TESTFLAGS) -json ./... | $(GO) run ./internal/testprogress

## lint: golangci-lint with the checked-in .golangci.yml (the version .ci/run installs: GOLANGCI_LINT_VERSION)
GOLANGCI_LINT_VERSION ?= v2.15.0
GOLANGCI_LINT ?= $(shell $(GO) env GOPATH)/bin/golangci-lint
lint:
	@$(GOLANGCI_LINT) version 2>/dev/null | grep -q "version $(GOLANGCI_LINT_VERSION:v%=%) " || \
		$(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	$(GOLANGCI_LINT) run ./...

## build: all binaries into ./bin
build:
	$(GO) build -o bin/ ./cmd/...

## release: static binaries of engram and the workers for each of PLATFORMS into dist/<os>_<arch>/, and dist/SHA256SUMS
PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
VERSION   ?= $(shell git describe --tags --match 'v[0-9]*' 2>/dev/null | sed 's/^v//' | grep . || echo 0.1.0-dev)
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null)
MODIFIED  ?= $(shell test -z "$$(git status --porcelain 2>/dev/null)" || echo true)
APP       := github.com/engramhq/engram/internal/app
LDFLAGS   := -s -w -X $(APP).Version=$(VERSION) -X $(APP).Commit=$(COMMIT) -X $(APP).Modified=$(MODIFIED)
release:
	rm -rf dist
	for p in $(PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -tags timetzdata -ldflags "$(LDFLAGS)" \
			-o dist/engram_$${os}_$${arch}/ ./cmd/engram ./cmd/ingest ./cmd/retriever ./cmd/extractor ./cmd/consolidator || exit 1; \
	done
	cd dist && for f in */*; do sha256sum "$$f" 2>/dev/null || shasum -a 256 "$$f"; done > SHA256SUMS
	@echo "dist/: $(VERSION), commit $(COMMIT)$(if $(MODIFIED), (modified),)"

.PHONY: cluster cluster-stop

## cluster: three nats-server nodes on loopback and the workers apart (deploy/cluster.sh); cluster-stop stops them
cluster:
	deploy/cluster.sh start

cluster-stop:
	deploy/cluster.sh stop

## bench: the figures docs/benchmarks.md reports (secret masking, ingest, ack latency, search at 100k and 1M turns, LoCoMo, two extractors against one)
bench:
	$(GO) run ./cmd/engram-bench -locomo $(LOCOMO) -scale $(BENCH_SCALE)

## bench-locomo: LoCoMo turn-level recall only
bench-locomo:
	$(GO) run ./cmd/engram-bench -only locomo -locomo $(LOCOMO)

## bench-recall: recall@5/@10 on our own bilingual sets (dev: tuned on; test: held out) beside a plain BM25
bench-recall:
	$(GO) run ./cmd/engram-bench -only recall

## bench-extract: extraction precision and recall on testdata/extract (rules; the LLM too when ENGRAM_LLM_BASE_URL is set)
bench-extract:
	$(GO) run ./cmd/engram-bench -only extract

## bench-secrets: precision and recall of secret masking on internal/secrets/corpus
bench-secrets:
	$(GO) run ./cmd/engram-bench -only secrets

## fuzz: a short run of every fuzz target (FUZZTIME each); archtest checks FUZZ names every func Fuzz in the tree
FUZZTIME ?= 20s
FUZZ := \
	./events:FuzzDecodeStructured \
	./internal/cards:FuzzMemoryMD \
	./internal/chars:FuzzCut \
	./internal/contextblock:FuzzRender \
	./internal/dedupe:FuzzSimilarity \
	./internal/episode:FuzzExtractive \
	./internal/episode:FuzzParse \
	./internal/llm:FuzzJSONContent \
	./internal/llmextract:FuzzParse \
	./internal/llmextract:FuzzPrompt \
	./internal/locomo:FuzzParse \
	./internal/locomo:FuzzSplitEvidence \
	./internal/migrate:FuzzParseMemoryMD \
	./internal/prefilter:FuzzShouldRetrieve \
	./internal/ruleextract:FuzzExtract \
	./internal/rules:FuzzParse \
	./internal/secrets:FuzzMask \
	./internal/secrets:FuzzMaskJSONWalk \
	./internal/stream:FuzzEncodeValidated \
	./internal/stream:FuzzSubjectToken \
	./internal/textseg:FuzzIndex \
	./internal/textseg:FuzzMatch \
	./internal/textseg:FuzzMatchIn \
	./internal/textseg:FuzzUnderstand \
	./internal/tokens:FuzzTruncate \
	./internal/vector:FuzzDecode
fuzz:
	@set -e; for t in $(FUZZ); do \
		echo "fuzz $$t"; \
		$(GO) test "$${t%%:*}" -run '^$$' -fuzz "^$${t#*:}\$$" -fuzztime $(FUZZTIME); \
	done
