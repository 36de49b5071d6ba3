# engram — the commands CI and people run. Keep it short.
GO      ?= go
LOCOMO  ?= ../shared/data/locomo/locomo10.json
BENCH_SCALE ?= 1000000

.PHONY: run test lint build bench bench-locomo bench-recall bench-extract bench-secrets fuzz

## run: engram with embedded NATS + JetStream and SQLite under ./data; no config, no LLM
run:
	$(GO) run ./cmd/engram serve

## test: every test, with the race detector (long soaks sit behind -tags soak)
test:
	$(GO) test -race -count=1 ./...

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

.PHONY: cluster cluster-stop

## cluster: three nats-server nodes on loopback and the workers apart (deploy/cluster.sh); cluster-stop stops them
cluster:
	deploy/cluster.sh start

cluster-stop:
	deploy/cluster.sh stop

## bench: the figures README.md reports (secret masking, ingest, ack latency, search at 100k and 1M turns, LoCoMo, two extractors against one)
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
