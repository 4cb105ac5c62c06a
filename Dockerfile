# syntax=docker/dockerfile:1
# The gardener-scheduler image: the release binary, built with the toolchain pinned in
# rust-toolchain.toml and the committed Cargo.lock, alone on a distroless non-root base.
# Builder (Debian 12 "bookworm") and runtime (distroless cc-debian12) share one glibc.

FROM rust:1.95.0-bookworm AS builder
WORKDIR /src
COPY . .
# target/ is a cache mount that does not outlive the RUN, so the binary is copied out of it.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked \
    && cp target/release/gardener-scheduler /usr/local/bin/gardener-scheduler

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=builder /usr/local/bin/gardener-scheduler /gardener-scheduler
# One malloc arena instead of one per thread and core: the process allocates little after its
# start, and the arenas were a third of its resident memory (docs/operations/deployment.md).
ENV MALLOC_ARENA_MAX=1
USER 65532:65532
ENTRYPOINT ["/gardener-scheduler"]
