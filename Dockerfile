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
COPY src ./src
# Cargo.toml declares the criterion bench: cargo refuses to load the manifest without it.
COPY benches ./benches
RUN cargo build --release --locked --bin aztable \
 && strip target/release/aztable

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends libstdc++6 ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home /data aztable \
 && mkdir -p /data && chown aztable /data
COPY --from=build /src/target/release/aztable /usr/local/bin/aztable
USER aztable
VOLUME ["/data"]
EXPOSE 10002
# Defaults for a container: listen on all interfaces, data on the /data volume.
# Arguments given to `docker run` replace CMD (e.g. `--inMemoryPersistence`).
ENTRYPOINT ["aztable"]
CMD ["--tableHost", "0.0.0.0", "--tablePort", "10002", "--location", "/data"]
