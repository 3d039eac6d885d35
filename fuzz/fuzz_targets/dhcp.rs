#![no_main]
//! DHCP view, option iterator and repr on arbitrary bytes; a parsed repr must round-trip.
use libfuzzer_sys::fuzz_target;
use tandem_wire::dhcp::{DhcpRepr, Packet};

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = Packet::new_checked(data) {
        let _ = (p.sname().len(), p.file().len(), p.client_hardware_addr().len(), p.options().count());
        if let Ok(r) = DhcpRepr::parse(&p) {
            let mut out = vec![0u8; r.buffer_len()];
            if r.emit(&mut out).is_ok() {
                assert_eq!(DhcpRepr::parse(&Packet::new_checked(&out[..]).unwrap()), Ok(r));
            }
        }
    }
});
