# Developer and CI entry points; `make help` lists them.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

CARGO ?= cargo
DOCKER ?= docker
IMAGE ?= gardener-scheduler
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)
CHART := charts/gardener-scheduler
# State of the local garden cluster API (make dev-apiserver).
DEV_STATE ?= $(CURDIR)/.dev/apiserver
# Length of `make soak` in minutes, and changes per second during it.
SOAK_MINUTES ?= 10
SOAK_RATE ?= 5
# Landscapes `make reference` generates, and the generator seed of the first.
N ?= 100000
SEED ?= 0
# Values files `lint-chart` renders the chart with, besides the defaults.
CHART_VALUES := $(CHART)/ci/all-options-values.yaml example/values-production.yaml

.PHONY: help build test diagrams link-check report-check soak simulate start-scheduler dev-apiserver dev-apiserver-stop dev-landscape bench bench-instructions reference reference-bench lint lint-chart image image-check docker-image crds clean

help: ## List the targets, one line each.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## Build the release binary target/release/gardener-scheduler.
	$(CARGO) build --release --locked

test: ## Run every test, including the chart tests, the alert rules under promtool, the end-to-end tests against Gardener's own API server behind a kube-apiserver with RBAC and a real Prometheus, the Markdown link check, and the image run as the chart's Deployment says (image-check).
	hack/ensure-package.sh chromium chromium prometheus promtool groff-base nroff nodejs node npm npm buildah buildah podman podman runc runc iproute2 ip openssl openssl
	hack/tools.sh >/dev/null
	hack/schema-tools.sh >/dev/null
	hack/link-check.sh
	hack/diagrams.sh --check
	tests/garden/ensure.sh >/dev/null
	$(CARGO) test --locked --all-targets
	CARGO=$(CARGO) hack/report-check.sh
	$(MAKE) --no-print-directory image-check

diagrams: ## Render the docs' diagrams (docs/**/*.dot) to the SVG beside each with Graphviz; make test checks they are current.
	hack/diagrams.sh

link-check: ## Check every relative link and anchor in the Markdown files (remark-validate-links, offline).
	hack/link-check.sh

report-check: ## Render the example HTML reports (src/report/pages.tsv) in headless Chromium; fail on an empty screenshot or console errors.
	hack/ensure-package.sh chromium chromium
	CARGO=$(CARGO) hack/report-check.sh

soak: ## Churn shoots and seeds for SOAK_MINUTES (10) against Gardener's API, two replicas through a fault proxy with faults on a 3-minute cycle; then check binds, capacity, memory.
	tests/garden/ensure.sh >/dev/null
	SOAK_MINUTES=$(SOAK_MINUTES) SOAK_RATE=$(SOAK_RATE) $(CARGO) test --locked --test soak -- --ignored --nocapture

simulate: ## Decide offline where the pending shoots of example/landscape/ would go, and why.
	$(CARGO) run --quiet --locked -- simulate -f example/landscape/

start-scheduler: ## Run the scheduler locally against the cluster in KUBECONFIG (config/dev-scheduler.yaml).
	KUBECONFIG="$${KUBECONFIG:-}" $(CARGO) run --locked -- --config config/dev-scheduler.yaml

dev-apiserver: ## Start a local garden cluster API: etcd, kube-apiserver (RBAC) and gardener-apiserver, built from their Go modules (prints the KUBECONFIG to export).
	tests/garden/start.sh "$$(tests/garden/ensure.sh)" $(DEV_STATE)

dev-apiserver-stop: ## Stop the local garden cluster API started by dev-apiserver.
	tests/garden/stop.sh $(DEV_STATE)

dev-landscape: ## Apply example/dev (namespaces, project, cloud profile, seeds with status, shoots).
	kubectl apply -f example/dev/namespace.yaml
	kubectl apply -f example/dev/cloudprofile.yaml -f example/dev/project.yaml -f example/dev/credentials.yaml -f example/dev/seeds.yaml
	kubectl apply --server-side --subresource=status -f example/dev/seeds.yaml
	kubectl apply -f example/dev/shoots.yaml

reference: ## Decide N (100000) generated landscapes from generator seed SEED (0) with upstream's own DetermineSeed and with both modes here; print the summary table, fail on any difference no documented rule explains.
	tests/reference/ensure.sh >/dev/null
	REFERENCE_LANDSCAPES=$(N) REFERENCE_SEED=$(SEED) $(CARGO) test --locked --release --test reference -- --nocapture generated_landscapes

reference-bench: ## Time upstream's own DetermineSeed, reading through its informer cache, beside this project's decision on the landscapes of make bench; rewrites that section of docs/performance.md (BENCH_UPSTREAM_SEEDS, BENCH_UPSTREAM_SHOOTS pick cells).
	tests/reference/ensure.sh >/dev/null
	BENCH_SECTIONS=upstream $(CARGO) bench --locked --bench scheduler

bench: ## Benchmarks, placement quality and the process at landscape scale; report in target/bench-report.md (BENCH_QUICK=1: small run in minutes).
	$(CARGO) bench --locked --bench scheduler

bench-instructions: ## Instructions per decision under callgrind, independent of machine load (needs valgrind; SEEDS, SHOOTS, DECISIONS; BENCH_PATH=reference counts schedule()).
	hack/bench-instructions.sh

lint: ## Check formatting (cargo fmt), lints (cargo clippy, warnings are errors), that the API docs build without warnings (cargo doc) and that modules import one way (no cycles).
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --locked --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps --locked
	$(CARGO) test --locked --test module_graph

lint-chart: ## helm lint + helm template the chart with default, all-options and production values.
	bin="$$(hack/tools.sh)"; \
	"$$bin/helm" lint --strict $(CHART); \
	"$$bin/helm" template gardener-scheduler $(CHART) --namespace garden >/dev/null; \
	for values in $(CHART_VALUES); do \
	  "$$bin/helm" lint --strict $(CHART) --values "$$values"; \
	  "$$bin/helm" template gardener-scheduler $(CHART) --namespace garden --values "$$values" >/dev/null; \
	done; \
	echo "chart renders with default values and with: $(CHART_VALUES)"

image: ## Build the container image IMAGE:VERSION from the Dockerfile with buildah and the binary built here (no pull of rust: needed; a local distroless-equivalent base when the public one cannot be pulled); print its size and layers.
	hack/ensure-package.sh buildah buildah podman podman runc runc
	$(CARGO) build --release --locked
	hack/image.sh $(IMAGE):$(VERSION)

image-check: image ## Run the image with podman exactly as the rendered chart's Deployment says, against Gardener's API with RBAC: binds, probes, metrics, failover, stop within the grace period, bad mounts and tokens.
	hack/ensure-package.sh podman podman runc runc prometheus promtool
	hack/tools.sh >/dev/null
	tests/garden/ensure.sh >/dev/null
	GARDENER_SCHEDULER_IMAGE=$(IMAGE):$(VERSION) $(CARGO) test --locked --test image -- --ignored --test-threads=1

docker-image: ## Build the container image IMAGE:VERSION with Docker, entirely from the public base images (the Dockerfile's default path).
	$(DOCKER) build --tag $(IMAGE):$(VERSION) .

crds: ## Regenerate config/crd/ from the API types (UPDATE_CRDS=1); the tests verify it is current.
	UPDATE_CRDS=1 $(CARGO) test --locked --test crds

clean: ## Remove build output (target/).
	$(CARGO) clean
