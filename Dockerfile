# Multi-stage build: compile in the Rust image, ship the two binaries in a
# small distroless image running as distroless's non-root user (65532).
#   docker build -t sudoku-grpc:0.1.0 .
#   docker run --rm -p 50051:50051 -p 9464:9464 sudoku-grpc:0.1.0
# The tag is the crate's version (Cargo.toml); deploy/kubernetes/sudoku.yaml
# runs the same tag.
FROM rust:1.95-bookworm AS build
WORKDIR /src
# The whole build context: .dockerignore keeps out build outputs, node
# modules and git, so no list of files here can fall behind the crate.
# .ci/check-docker.sh replays this stage on the same files.
COPY . .
RUN cargo build --release --locked --package sudoku-grpc --package sudoku-cli

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/target/release/sudoku-server /usr/local/bin/sudoku-server
COPY --from=build /src/target/release/sudoku /usr/local/bin/sudoku
# Listen on every interface inside the container; metrics on their own port.
ENV SUDOKU_LISTEN=0.0.0.0:50051 \
    SUDOKU_METRICS_LISTEN=0.0.0.0:9464 \
    SUDOKU_LOG_FORMAT=json
EXPOSE 50051 9464
# By number, not by name: Kubernetes' runAsNonRoot can only check a numeric
# user. 65532 is the nonroot user and group of the distroless image.
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/sudoku-server"]
