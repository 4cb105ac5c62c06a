# syntax=docker/dockerfile:1
# The gardener-scheduler image: the release binary, built with the toolchain pinned in
# rust-toolchain.toml and the committed Cargo.lock, without its line tables, alone on a distroless
# non-root base. Builder (Debian 12 "bookworm") and runtime (distroless cc-debian12) share one glibc.
#
# Both base images are build arguments whose defaults are the public ones. `make image` builds this
# file with buildah on a machine that cannot pull them: it builds the binary on the machine, feeds
# it in place of the builder stage (--build-context builder=DIR, DIR/out/gardener-scheduler) and,
# when the runtime base cannot be pulled, sets RUNTIME_IMAGE to a local equivalent built from
# Debian packages (hack/image-base.sh). docs/operations/deployment.md, "The image".
ARG BUILDER_IMAGE=rust:1.95.0-bookworm
ARG RUNTIME_IMAGE=gcr.io/distroless/cc-debian12:nonroot

FROM ${BUILDER_IMAGE} AS builder
WORKDIR /src
COPY . .
# target/ is a cache mount that does not outlive the RUN, so the binary is copied out of it.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked \
    && hack/image-binary.sh target/release/gardener-scheduler /out

FROM ${RUNTIME_IMAGE}
COPY --from=builder /out/gardener-scheduler /gardener-scheduler
# One malloc arena instead of one per thread and core: the process allocates little after its
# start, and the arenas were a third of its resident memory (docs/operations/deployment.md).
ENV MALLOC_ARENA_MAX=1
USER 65532:65532
ENTRYPOINT ["/gardener-scheduler"]
