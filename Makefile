# Developer entry points. `make help` lists them.
SHELL := /usr/bin/env bash
CARGO ?= cargo
# State of the local development API server (make dev-apiserver).
DEV_STATE ?= $(CURDIR)/.dev/apiserver

.PHONY: help build test simulate lint clean crds start-scheduler dev-apiserver dev-apiserver-stop dev-landscape

help: ## List the targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-20s %s\n", $$1, $$2}'

build: ## Build the gardener-scheduler binary
	$(CARGO) build --release

test: ## Run every test, including the end-to-end tests against a real API server
	tests/apiserver/ensure.sh >/dev/null
	$(CARGO) test

simulate: ## Decide offline where the example landscape's pending shoots would go
	$(CARGO) run --quiet -- simulate -f example/landscape

lint: ## Formatting and clippy, as CI checks them
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --all-targets -- -D warnings

clean: ## Remove build output
	$(CARGO) clean

crds: ## Rewrite config/crd/ from src/crds.rs
	UPDATE_CRDS=1 $(CARGO) test --quiet --test crds

start-scheduler: ## Run the scheduler from source against $$KUBECONFIG with config/dev-scheduler.yaml
	@[ -n "$$KUBECONFIG" ] || { echo "set KUBECONFIG first (see docs/development/local-setup.md)" >&2; exit 1; }
	$(CARGO) run -- --config config/dev-scheduler.yaml

dev-apiserver: ## Start a local API server with the CRDs (prints the KUBECONFIG to export)
	tests/apiserver/start.sh "$$(tests/apiserver/ensure.sh)" $(DEV_STATE) config/crd

dev-apiserver-stop: ## Stop the local API server started by dev-apiserver
	tests/apiserver/stop.sh $(DEV_STATE)

dev-landscape: ## Apply example/dev (namespaces, project, cloud profile, seeds with status, shoots)
	kubectl apply -f example/dev/namespace.yaml
	kubectl apply -f example/dev/cloudprofile.yaml -f example/dev/project.yaml -f example/dev/seeds.yaml
	kubectl apply --server-side --subresource=status -f example/dev/seeds.yaml
	kubectl apply -f example/dev/shoots.yaml
