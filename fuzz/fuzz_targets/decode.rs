#![no_main]
//! The frame summariser on arbitrary bytes, for every link type it reads.
use libfuzzer_sys::fuzz_target;
use tandem_wire::decode::summarize;
use tandem_wire::pcap::LinkType;

fuzz_target!(|data: &[u8]| {
    for lt in [LinkType::ETHERNET, LinkType::RAW, LinkType::LINUX_SLL, LinkType::IPV4] {
        let _ = summarize(lt, data);
    }
});
