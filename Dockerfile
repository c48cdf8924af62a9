# aztable: multi-stage build. The builder compiles RocksDB's C++ (needs clang's
# libclang for the bindings); the runtime image is `scratch` with the binary, the shared
# libraries it loads, and a static busybox for the shell tools container tooling runs
# inside it (docs/docker.md: the contract and the sizes).
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

# The release's binary on its own: `docker buildx build --target binary --output
# type=local,dest=DIR .` (linked against Debian bookworm's glibc 2.36).
FROM scratch AS binary
COPY --from=build /src/target/release/aztable /aztable

# The runtime's files, gathered on Debian under /rootfs:
# - the binary, and the shared libraries it loads as ldd names them for the
#   architecture being built (libstdc++ and libgcc_s for RocksDB, glibc, the loader);
# - a static busybox with the tools Testcontainers' wait strategies run inside the
#   container (Java: sh, grep, nc; Go: sh, cat, awk, grep, nc), and a few for a person
#   who opens a shell in it;
# - /etc/passwd and /etc/group naming root and aztable (10001), /tmp, and /data owned
#   by 10001.
FROM debian:bookworm-slim AS rootfs
RUN apt-get update \
 && apt-get install -y --no-install-recommends busybox-static \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/release/aztable /rootfs/usr/local/bin/aztable
RUN set -e; cd /rootfs \
 && mkdir -p bin etc tmp data && chmod 1777 tmp && chown 10001:10001 data \
 && cp /bin/busybox bin/busybox \
 && for tool in sh ash grep egrep awk sed cat nc ls ps id env sleep kill cut head tail wc \
      tr sort uniq find xargs mkdir rm cp mv ln chmod chown du df free top uptime \
      hostname date test [ true false echo printf wget vi less; do ln -s busybox "bin/$tool"; done \
 && for lib in $(ldd usr/local/bin/aztable | awk '$2 == "=>" { print $3 } $1 ~ /^\// { print $1 }'); do \
      mkdir -p ".$(dirname "$lib")" && cp -L "$lib" ".$lib"; \
    done \
 && printf 'root:x:0:0:root:/root:/bin/sh\naztable:x:10001:10001:aztable:/data:/bin/sh\n' > etc/passwd \
 && printf 'root:x:0:\naztable:x:10001:\n' > etc/group \
 && ln -s aztable usr/local/bin/azurite \
 && for name in azurite-table azurite-blob azurite-queue; do ln -s aztable "usr/local/bin/$name"; done \
 && chroot /rootfs /usr/local/bin/aztable --version

FROM scratch
COPY --from=rootfs /rootfs/ /
ENV PATH=/usr/local/bin:/bin
# Azurite's command names (links to aztable): Testcontainers' .NET, Node and Go modules
# set the entrypoint `azurite`; Java runs the command `azurite ...` after the entrypoint
# `aztable`. `azurite-blob` and `azurite-queue` (Go, with only Blob or only Queue
# enabled) exit 1 saying that the Table service is served alone.
#
# The container starts as root, as Azurite's does, so that a certificate and key handed
# over as root-owned files of mode 0600 (Testcontainers Java's `withSsl`) can be read;
# the binary reads them and then runs as AZTABLE_RUN_AS (10001, the owner of /data)
# before it opens the data directory or a port. `--user 10001` (runAsNonRoot) runs as
# that user from the start, the variable unused.
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
    AZTABLE_QUEUE_HOST=0.0.0.0 \
    AZTABLE_RUN_AS=10001:10001
# Blob, Queue (both: an error saying tables only), Table
EXPOSE 10000 10001 10002
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 CMD ["aztable", "healthcheck"]
ENTRYPOINT ["aztable"]
