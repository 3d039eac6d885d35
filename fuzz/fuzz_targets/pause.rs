#![no_main]
//! PAUSE/PFC view and repr on arbitrary bytes; a parsed repr must round-trip.
use libfuzzer_sys::fuzz_target;
use tandem_wire::pause::{Packet, PauseRepr};

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = Packet::new_checked(data) {
        let _ = (p.opcode(), p.pause_quanta(), p.class_enable(), (0..10).fold(0u16, |a, c| a.wrapping_add(p.class_quanta(c))));
        if let Ok(r) = PauseRepr::parse(&p) {
            let mut out = vec![0u8; r.buffer_len()];
            r.emit(&mut out).expect("emit of a parsed repr");
            assert_eq!(PauseRepr::parse(&Packet::new_checked(&out[..]).unwrap()), Ok(r));
        }
    }
});
