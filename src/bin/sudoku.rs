//! `sudoku`: the command-line client. All of it lives in `sudoku_grpc::client`.

#![forbid(unsafe_code)]

fn main() {
    std::process::exit(sudoku_grpc::client::main());
}
