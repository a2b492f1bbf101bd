# Multi-stage build: compile in the Rust image, ship the two binaries in a
# small distroless image running as a non-root user.
#   docker build -t sudoku-grpc .
#   docker run --rm -p 50051:50051 -p 9464:9464 sudoku-grpc
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock build.rs rustfmt.toml ./
COPY proto proto
COPY src src
RUN cargo build --release --locked --bin sudoku-server --bin sudoku

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/target/release/sudoku-server /usr/local/bin/sudoku-server
COPY --from=build /src/target/release/sudoku /usr/local/bin/sudoku
# Listen on every interface inside the container; metrics on their own port.
ENV SUDOKU_LISTEN=0.0.0.0:50051 \
    SUDOKU_METRICS_LISTEN=0.0.0.0:9464 \
    SUDOKU_LOG_FORMAT=json
EXPOSE 50051 9464
USER nonroot
ENTRYPOINT ["/usr/local/bin/sudoku-server"]
