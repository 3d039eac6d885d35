#![no_main]
//! OpenFlow messages from arbitrary bytes; a parsed message must re-emit and re-parse to itself.
use libfuzzer_sys::fuzz_target;
use tandem_wire::openflow::{Message, MessageReader};

fuzz_target!(|data: &[u8]| {
    if let Ok((m, used)) = Message::parse(data) {
        assert!(used <= data.len());
        let out = m.to_bytes().expect("emit of a parsed message");
        assert_eq!(Message::parse(&out), Ok((m, out.len())));
    }
    let mut r = MessageReader::new();
    r.push(data);
    for m in r {
        let _ = m;
    }
});
