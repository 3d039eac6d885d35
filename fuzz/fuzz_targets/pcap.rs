#![no_main]
//! The pcap/pcapng reader on arbitrary files: every record is an Ok or an Err, never a panic.
use libfuzzer_sys::fuzz_target;
use tandem_wire::pcap::TraceReader;

fuzz_target!(|data: &[u8]| {
    if let Ok(mut r) = TraceReader::new(data) {
        for _ in 0..10_000 {
            match r.next_packet() {
                Some(Ok(p)) => {
                    let _ = tandem_wire::decode::summarize(p.linktype, p.data);
                }
                Some(Err(_)) | None => break,
            }
        }
    }
});
