# engram — the commands CI and people run. Keep it short.
GO      ?= go
LOCOMO  ?= ../shared/data/locomo/locomo10.json
BENCH_SCALE ?= 1000000

.PHONY: run test build bench bench-locomo bench-recall bench-extract bench-secrets fuzz

## run: engram with embedded NATS + JetStream and SQLite under ./data; no config, no LLM
run:
	$(GO) run ./cmd/engram serve

## test: every test, with the race detector (long soaks sit behind -tags soak)
test:
	$(GO) test -race -count=1 ./...

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

## fuzz: a short run of every fuzz target (FUZZTIME each)
FUZZTIME ?= 20s
fuzz:
	$(GO) test ./events -run '^$$' -fuzz FuzzDecodeStructured -fuzztime $(FUZZTIME)
	$(GO) test ./internal/textseg -run '^$$' -fuzz '^FuzzMatch$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/textseg -run '^$$' -fuzz '^FuzzMatchIn$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/textseg -run '^$$' -fuzz FuzzIndex -fuzztime $(FUZZTIME)
	$(GO) test ./internal/textseg -run '^$$' -fuzz FuzzUnderstand -fuzztime $(FUZZTIME)
	$(GO) test ./internal/stream -run '^$$' -fuzz FuzzSubjectToken -fuzztime $(FUZZTIME)
	$(GO) test ./internal/llm -run '^$$' -fuzz FuzzJSONContent -fuzztime $(FUZZTIME)
	$(GO) test ./internal/llmextract -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME)
	$(GO) test ./internal/ruleextract -run '^$$' -fuzz FuzzExtract -fuzztime $(FUZZTIME)
	$(GO) test ./internal/secrets -run '^$$' -fuzz '^FuzzMask$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/secrets -run '^$$' -fuzz FuzzMaskJSONWalk -fuzztime $(FUZZTIME)
	$(GO) test ./internal/prefilter -run '^$$' -fuzz FuzzShouldRetrieve -fuzztime $(FUZZTIME)
	$(GO) test ./internal/contextblock -run '^$$' -fuzz FuzzRender -fuzztime $(FUZZTIME)
	$(GO) test ./internal/tokens -run '^$$' -fuzz FuzzTruncate -fuzztime $(FUZZTIME)
	$(GO) test ./internal/vector -run '^$$' -fuzz FuzzDecode -fuzztime $(FUZZTIME)
	$(GO) test ./internal/dedupe -run '^$$' -fuzz FuzzSimilarity -fuzztime $(FUZZTIME)
	$(GO) test ./internal/rules -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME)
	$(GO) test ./internal/episode -run '^$$' -fuzz FuzzExtractive -fuzztime $(FUZZTIME)
	$(GO) test ./internal/cards -run '^$$' -fuzz FuzzMemoryMD -fuzztime $(FUZZTIME)
	$(GO) test ./internal/migrate -run '^$$' -fuzz FuzzParseMemoryMD -fuzztime $(FUZZTIME)
