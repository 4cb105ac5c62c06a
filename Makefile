.PHONY: bench

bench: ## Benchmarks and placement quality; report in target/bench-report.md (BENCH_QUICK=1: small run in seconds)
	cargo bench --bench scheduler
