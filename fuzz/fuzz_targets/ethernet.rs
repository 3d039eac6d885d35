#![no_main]
//! Ethernet/802.1Q view and repr on arbitrary bytes; a parsed repr must re-emit identically.
use libfuzzer_sys::fuzz_target;
use tandem_wire::ethernet::{EthernetRepr, Frame};

fuzz_target!(|data: &[u8]| {
    if let Ok(f) = Frame::new_checked(data) {
        let _ = (f.dst_addr(), f.src_addr(), f.vlan(), f.ethertype(), f.payload().len());
        if let Ok(r) = EthernetRepr::parse(&f) {
            let mut out = vec![0u8; r.header_len()];
            r.emit(&mut out).expect("emit of a parsed repr");
            assert_eq!(&out[..], &data[..r.header_len()]);
        }
    }
});
