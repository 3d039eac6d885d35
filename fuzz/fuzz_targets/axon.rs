#![no_main]
//! Axon header view and repr, and the control, probe and error bodies, on arbitrary bytes; a
//! parsed repr must round-trip and forwarding one hop in place must agree with the repr.
use libfuzzer_sys::fuzz_target;
use tandem_wire::axon::{self, control, error, probe, AxonRepr, Packet};

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = Packet::new_checked(data) {
        let _ = (p.packet_type(), p.next_hop(), p.forward_path(), p.reverse_path(), p.payload());
        if let Ok(r) = AxonRepr::parse(&p) {
            let frame = r.to_frame(p.payload()).expect("emit of a parsed repr");
            assert_eq!(AxonRepr::parse(&Packet::new_checked(&frame[..]).unwrap()), Ok(r.clone()));
            let mut moved = frame.clone();
            let mut r2 = r;
            let in_port = data.last().copied().unwrap_or(0) & 0x0f;
            let hop = Packet::new_checked(&mut moved[..]).unwrap().advance(in_port);
            assert_eq!(hop, r2.advance(in_port));
            assert_eq!(AxonRepr::parse(&Packet::new_checked(&moved[..]).unwrap()), Ok(r2));
        }
        let body = p.payload();
        if let Ok(c) = control::Packet::new_checked(body) {
            if let Ok(r) = control::ControlRepr::parse(&c) {
                let mut out = vec![0u8; r.buffer_len()];
                r.emit(&mut out).expect("emit of a parsed repr");
                assert_eq!(control::ControlRepr::parse(&control::Packet::new_checked(&out[..]).unwrap()), Ok(r));
            }
        }
        if let Ok(pr) = probe::Packet::new_checked(body) {
            if let Ok(r) = probe::ProbeRepr::parse(&pr) {
                let mut out = vec![0u8; r.buffer_len()];
                r.emit(&mut out).expect("emit of a parsed repr");
                assert_eq!(probe::ProbeRepr::parse(&probe::Packet::new_checked(&out[..]).unwrap()), Ok(r));
            }
        }
        if let Ok(e) = error::Packet::new_checked(body) {
            let _ = (error::ErrorRepr::parse(&e), e.payload());
        }
        let mut frame = data.to_vec();
        let _ = probe::append_record(
            &mut frame,
            p.header_len(),
            &probe::ProbeRecord { device_id: 1, port: axon::CONTROL_PORT, point: probe::StampPoint::Input, time_ps: 0 },
        );
    }
});
