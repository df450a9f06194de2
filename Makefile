# gatehouse — every target a newcomer or CI needs. `make help` lists them.
GO       ?= go
BIN      := bin/gatehouse
FUZZTIME ?= 30s
# Each new interesting input is minimized for up to this long; the default
# (60s) spends most of a short run minimizing the large fixture seeds.
FUZZMINIMIZETIME ?= 2s
# kube-apiserver and etcd built from module sources (tools/controlplane), cached here.
E2E_CACHE ?= $(CURDIR)/.cache/e2e
# The e2e module is separate (cert-manager, kustomize, envtest stay out of the
# product module) and must never be upgraded by a newer toolchain on its own.
E2E_GO   := GOTOOLCHAIN=local GOWORK=off $(GO)

.PHONY: help build release run check test unit lint vet fmt-check rbacdiff chart chart-files e2e-bin e2e e2e-kind e2e-matrix soak manifests crds golden fuzz bench bench-micro clean

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

# The release this tree builds: the chart's appVersion and the image tag.
VERSION  ?= 0.1.0
COMMIT   ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
LDFLAGS  := -X github.com/gatehouse-dev/gatehouse/cmd/gatehouse/app.Version=$(VERSION) -X github.com/gatehouse-dev/gatehouse/cmd/gatehouse/app.Commit=$(COMMIT)
IMAGE    ?= ghcr.io/gatehouse-dev/gatehouse

build: ## build bin/gatehouse, stamped with VERSION and the commit
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/gatehouse

release: ## build the image ghcr.io/gatehouse-dev/gatehouse:VERSION, release and commit stamped (needs Docker)
	docker build --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) -t $(IMAGE):$(VERSION) .

run: e2e-bin ## start a local control plane with cert-manager and gatehouse, apply deploy/examples/, keep serving
	cd e2e && KUBEBUILDER_ASSETS=$$(../tools/controlplane/build.sh $(E2E_CACHE) | tail -1) $(E2E_GO) run ./cmd/localcluster --repo .. $(RUN_ARGS)

# The examples include denied objects on purpose, so check's exit status 1
# (denied) is the expected outcome here; 2 (unreadable input) still fails,
# and so does 3 (undecided): the examples carry the namespaces they are
# created in (deploy/examples/00-namespaces.yaml), so none may lack state.
check: build ## admit the examples in deploy/examples/ offline (no cluster) and show the verdicts
	./$(BIN) check -f deploy/examples/ || [ $$? -eq 1 ]

test: fmt-check vet lint unit rbacdiff chart e2e ## everything CI runs: format, vet, lint, unit tests, then the e2e suite on a real API server

unit: ## unit, golden, fuzz-seed and HTTPS adapter tests of the product module, and every benchmark once
	$(GO) test -count=1 ./...
	# One iteration of every benchmark: a benchmark whose setup no longer
	# holds (its document gained a finding) fails here, not in make bench.
	$(GO) test -count=1 -run '^$$' -bench . -benchtime 1x ./...

# golangci-lint, pinned in its own module (tools/golangci-lint), built into bin/.
GOLANGCI_LINT := $(CURDIR)/bin/golangci-lint

lint: ## golangci-lint with .golangci.yml, and go mod tidy -diff: the product module's go.mod and go.sum are tidy
	cd tools/golangci-lint && $(E2E_GO) build -o $(GOLANGCI_LINT) github.com/golangci/golangci-lint/v2/cmd/golangci-lint
	$(GOLANGCI_LINT) run ./...
	$(GO) mod tidy -diff

vet: ## go vet of the product, e2e and chart modules
	$(GO) vet ./...
	cd e2e && $(E2E_GO) vet ./...
	cd e2e/chart && $(E2E_GO) vet ./...

rbacdiff: ## the harness's RBAC rule matching against the Kubernetes authorizer's own (a module of its own: it imports k8s.io/kubernetes)
	cd e2e/rbacdiff && $(E2E_GO) test -count=1 ./...

chart: ## the Helm chart rendered with Helm's library: equal to deploy/default (and deploy/monitoring), linted, its values (a module of its own: Helm's dependencies)
	cd e2e/chart && $(E2E_GO) test -count=1 ./...

# The chart carries copies of generated files of deploy/ (Helm reads nothing
# outside the chart); the chart test fails when they drift.
chart-files: ## copy into charts/gatehouse the files it shares with deploy/
	cp deploy/monitoring/prometheusrule.yaml deploy/monitoring/dashboard.json charts/gatehouse/files/
	cp deploy/crds/vshn.net_operatorharnesses.yaml deploy/crds/gatehouse.dev_*.yaml charts/gatehouse/crds/
	cp deploy/policyreport-crds/wgpolicyk8s.io_*.yaml deploy/openreports-crds/openreports.io_*.yaml charts/gatehouse/files/crds/

e2e-bin: ## build (once, then cached) kube-apiserver, etcd, kube-controller-manager, kube-scheduler and kubemark from module sources
	tools/controlplane/build.sh $(E2E_CACHE) >/dev/null

e2e: e2e-bin ## the e2e suite: fixtures, UPDATE, ratcheting, dry run, cert rotation on a real API server with real cert-manager
	cd e2e && KUBEBUILDER_ASSETS=$$(../tools/controlplane/build.sh $(E2E_CACHE) | tail -1) $(E2E_GO) test -count=1 -timeout 20m ./...

# The soak is not part of `make test`: it runs for SOAK_DURATION (10 minutes).
SOAK_DURATION ?= 10m
soak: e2e-bin ## reviews at a fixed rate for SOAK_DURATION (10m) while cert-manager re-issues the serving certificate; checks failures, RSS, goroutines
	cd e2e && KUBEBUILDER_ASSETS=$$(../tools/controlplane/build.sh $(E2E_CACHE) | tail -1) $(E2E_GO) run ./soak --repo .. --duration $(SOAK_DURATION) $(SOAK_ARGS)

e2e-kind: ## the same suite on a kind cluster (needs Docker and network)
	e2e/kind/run.sh

e2e-matrix: ## the e2e suite against other kube-apiserver minors (see tools/controlplane/README.md)
	tools/controlplane/matrix.sh

fmt-check: ## fail when gofmt would change a file
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

manifests: ## regenerate deploy/webhooks from the webhook registry
	$(GO) run ./cmd/gatehouse manifests --manage-selections > deploy/webhooks/webhookconfigurations.yaml
	$(MAKE) chart-files

crds: ## regenerate deploy/crds and the deepcopy code of api/ with controller-gen (pinned in tools/controller-gen)
	tools/controller-gen/generate.sh
	$(MAKE) chart-files

golden: ## regenerate the policies' golden fixtures (review the diff!)
	GATEHOUSE_UPDATE_GOLDEN=1 $(GO) test -count=1 ./policies/...

# Every Fuzz target of every package, FUZZTIME each, one after another (a
# fuzz run takes one package and one target). A failure does not stop the
# others; the crashers are written to the package's testdata/fuzz/ (commit them
# as regression seeds), and the summary lists the failed targets.
fuzz: ## run every Fuzz target for FUZZTIME (default 30s) each; crashers land in testdata/fuzz/
	@failed=""; for pkg in $$($(GO) list ./...); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$target ($(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) $$pkg || failed="$$failed $$pkg.$$target"; \
	  done; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: failed:$$failed"; exit 1; fi; echo "fuzz: every target passed"

bench-micro: ## run every micro-benchmark with allocations (compare runs with benchstat)
	$(GO) test -run '^$$' -bench . -benchmem ./...
	cd e2e && $(E2E_GO) test -run '^$$' -bench . -benchmem ./perf/

# bench: micro-benchmarks (short), then gatehouse against the floor on loopback,
# end to end on the local control plane, a cluster's mixed traffic through it
# (--mixed-requests, --mixed-rate), and memory at scale; prints the
# targets and ratios and writes docs/performance.md. BENCH_ARGS go to the load
# tool (e.g. BENCH_ARGS='--scale=false --rounds 1'); results land in bin/.
BENCHTIME ?= 100ms
bench: build e2e-bin ## measure gatehouse against its floor, end to end, under mixed traffic and at scale (~7.5 min once e2e-bin is cached); writes docs/performance.md
	@mkdir -p bin
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -count 3 ./policies/... ./webhooks/ > bin/bench.txt
	cd e2e && $(E2E_GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -count 3 ./perf/ >> ../bin/bench.txt
	cd e2e && $(E2E_GO) build -o ../bin/floor ./perf/cmd/floor && $(E2E_GO) build -o ../bin/gatehouse-load ./perf/cmd/gatehouse-load
	cd e2e && KUBEBUILDER_ASSETS=$$(../tools/controlplane/build.sh $(E2E_CACHE) | tail -1) ../bin/gatehouse-load --repo .. \
	  --gatehouse ../bin/gatehouse --floor ../bin/floor --bench ../bin/bench.txt \
	  --json ../bin/performance.json --doc ../docs/performance.md $(BENCH_ARGS)

clean: ## remove bin/ (the e2e binaries in .cache/e2e stay)
	rm -rf bin
