#![no_main]
//! The flow-record CSV reader on arbitrary text.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = tandem_wire::flow::read_csv(data);
    if let Ok(s) = std::str::from_utf8(data) {
        let _ = tandem_wire::flow::FlowRecord::parse_csv(s, 1);
    }
});
