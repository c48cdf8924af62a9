# aztable: multi-stage build. The builder compiles RocksDB's C++ (needs clang's
# libclang for the bindings); the runtime image carries only the binary.
FROM rust:1-bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends libclang-dev clang \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
# target features (SSE4.2, PCLMULQDQ on x86-64): RocksDB's hardware CRC32C
COPY .cargo ./.cargo
# The workspace's manifests; the root one declares the criterion bench, and cargo
# refuses to load a manifest whose bench file is missing.
COPY benches ./benches
COPY crates/model/Cargo.toml crates/model/
COPY crates/wire/Cargo.toml crates/wire/
COPY crates/store/Cargo.toml crates/store/
COPY crates/insight/Cargo.toml crates/insight/
COPY crates/engine/Cargo.toml crates/engine/
COPY crates/server/Cargo.toml crates/server/
COPY crates/transfer/Cargo.toml crates/transfer/
COPY crates/bench/Cargo.toml crates/bench/
# The dependencies first, against empty sources: RocksDB's C++ is most of the build
# time, and this layer stays cached while only the sources change.
RUN mkdir -p src && echo 'fn main() {}' > src/main.rs \
 && for c in crates/*/; do mkdir -p "$c/src" && touch "$c/src/lib.rs"; done \
 && echo 'fn main() {}' > crates/bench/src/main.rs \
 && cargo build --release --locked --bin aztable \
 && rm -rf src crates/*/src
COPY src ./src
COPY crates ./crates
# the copies keep the context's times, which may be older than the stubs' build
RUN find src crates -name '*.rs' -exec touch {} + \
 && cargo build --release --locked --bin aztable \
 && strip target/release/aztable

FROM debian:bookworm-slim
# libstdc++ for RocksDB (already in the official slim image: then a no-op). No CA
# certificates: the server makes no outgoing connections. apt's caches go too (the
# official image's apt configuration drops them; a locally bootstrapped one keeps them).
RUN apt-get update \
 && apt-get install -y --no-install-recommends libstdc++6 \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt /var/log/dpkg.log \
 && useradd --system --uid 10001 --home /data aztable \
 && mkdir -p /data && chown aztable /data
COPY --from=build /src/target/release/aztable /usr/local/bin/aztable
# Azurite's command names: Testcontainers' .NET and Node modules set the entrypoint
# `azurite`; Java runs the command `azurite ...` after the entrypoint `aztable`.
RUN ln -s aztable /usr/local/bin/azurite && ln -s aztable /usr/local/bin/azurite-table
# numeric, so that runAsNonRoot policies can verify it
USER 10001
VOLUME ["/data"]
# The container's defaults are read by the binary from the environment, so arguments
# given to `docker run` (which replace CMD) add to them instead of dropping them: all
# interfaces, data on the /data volume, and the Blob and Queue ports (10000, 10001),
# which answer that this emulator serves the Table service only. A flag given still
# wins (`--inMemoryPersistence`, `--tableHost 127.0.0.1`, ...). AZTABLE_PORT moves the
# table port and the healthcheck with it.
ENV AZTABLE_HOST=0.0.0.0 \
    AZTABLE_LOCATION=/data \
    AZTABLE_BLOB_HOST=0.0.0.0 \
    AZTABLE_QUEUE_HOST=0.0.0.0
# Blob, Queue (both: an error saying tables only), Table
EXPOSE 10000 10001 10002
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 CMD ["aztable", "healthcheck"]
ENTRYPOINT ["aztable"]
