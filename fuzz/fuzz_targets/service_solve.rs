//! Arbitrary bytes decoded as a SolveRequest and answered by the
//! handler's own validation and solve path (`service::fuzz_request`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| sudoku_grpc_fuzz::check_service(data, false));
