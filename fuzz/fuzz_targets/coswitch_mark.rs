#![no_main]
//! CoSwitch's elephant mark on arbitrary frames: reading never panics, and marking a frame
//! that can be marked makes it read back as marked.
use libfuzzer_sys::fuzz_target;
use tandem_coswitch::marking::{apply, read, Mark};

fuzz_target!(|data: &[u8]| {
    for mark in [Mark::Dscp(8), Mark::Vlan(100)] {
        let _ = read(data, mark);
        let mut f = data.to_vec();
        if apply(&mut f, mark).is_ok() {
            assert_eq!(read(&f, mark), Ok(true));
        }
    }
});
