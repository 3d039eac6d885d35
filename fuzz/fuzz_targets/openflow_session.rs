#![no_main]
//! An OpenFlow session (both ends) fed arbitrary bytes, cut into reads at arbitrary places: it
//! never panics, consumes only whole messages, and what it sends always parses.
use libfuzzer_sys::fuzz_target;
use tandem_controller::{Role, Session, SessionConfig};
use tandem_wire::openflow::{FeaturesReply, Message, Version};

fuzz_target!(|data: &[u8]| {
    let Some((&cut, data)) = data.split_first() else { return };
    let roles = [
        Role::Controller,
        Role::Switch {
            versions: vec![Version::V1_0, Version::V1_3],
            features: FeaturesReply {
                datapath_id: 1,
                ..FeaturesReply::default()
            },
        },
    ];
    for role in roles {
        let mut s = Session::new(0, role, SessionConfig::default());
        let mut held: Vec<u8> = Vec::new();
        let step = usize::from(cut).max(1);
        for (i, chunk) in data.chunks(step).enumerate() {
            held.extend_from_slice(chunk);
            match s.handle_input(i as u64, &held, |_| {}) {
                Ok(n) => {
                    assert!(n <= held.len());
                    held.drain(..n);
                }
                Err(_) => break,
            }
            let _ = s.handle_timeout(i as u64 * 1_000_000_000_000);
            if let Some(t) = s.poll_transmit() {
                let mut at = 0;
                while at < t.bytes.len() {
                    let (_, used) = Message::parse(&t.bytes[at..]).expect("what a session sends parses");
                    at += used;
                }
            }
        }
    }
});
