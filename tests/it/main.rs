//! The integration tests: one binary, one module per area. Every test that
//! needs a server runs the real one on 127.0.0.1 ([`support`]).

mod support;

mod browser;
mod buf;
mod cli;
mod codes;
mod connections;
mod contract;
mod corpus;
mod fairness;
mod flow_control;
mod grpc_web;
mod honest;
mod logic_sizes;
mod memory;
mod metrics;
mod node_client;
mod otel;
mod properties;
mod python_client;
mod qqwing;
mod regressions;
mod scale_out;
mod service;
mod signals;
mod sized_pipeline;
mod sizes;
mod slots;
mod tls;
mod toolkit;
mod work_bounds;
mod zstd_curl;
