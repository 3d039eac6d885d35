#![no_main]
//! ARP view and repr on arbitrary bytes; a parsed repr must round-trip.
use libfuzzer_sys::fuzz_target;
use tandem_wire::arp::{ArpRepr, Packet};

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = Packet::new_checked(data) {
        let _ = (p.sender_hardware_addr(), p.sender_protocol_addr(), p.target_hardware_addr(), p.target_protocol_addr());
        if let Ok(r) = ArpRepr::parse(&p) {
            let mut out = vec![0u8; r.buffer_len()];
            r.emit(&mut out).expect("emit of a parsed repr");
            assert_eq!(ArpRepr::parse(&Packet::new_checked(&out[..]).unwrap()), Ok(r));
        }
    }
});
