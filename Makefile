# gatehouse — every target a newcomer or CI needs. `make help` lists them.
GO       ?= go
BIN      := bin/gatehouse
FUZZTIME ?= 30s

.PHONY: help build run test vet fmt-check manifests golden fuzz bench clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

build: ## build bin/gatehouse
	$(GO) build -o $(BIN) ./cmd/gatehouse

# The examples include denied objects on purpose, so check's exit status 1
# (denied) is the expected outcome here; 2 (unreadable input) still fails.
run: build ## admit the examples in deploy/examples/ offline and show the verdicts
	./$(BIN) check -f deploy/examples/ || [ $$? -eq 1 ]

test: fmt-check vet ## format check, vet, and every unit, golden, fuzz-seed and HTTPS adapter test
	$(GO) test -count=1 ./...

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

manifests: ## regenerate deploy/webhooks from the webhook registry
	$(GO) run ./cmd/gatehouse manifests > deploy/webhooks/webhookconfigurations.yaml

golden: ## regenerate the policies' golden fixtures (review the diff!)
	GATEHOUSE_UPDATE_GOLDEN=1 $(GO) test -count=1 ./policies/...

fuzz: ## run every Fuzz target for FUZZTIME each (default 30s)
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$target"; \
	    $(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

bench: ## run every benchmark with allocations (compare runs with benchstat)
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin
