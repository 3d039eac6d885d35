//! `turbo-capacity` at a small size: drops begin once payload rate x parking time reaches the
//! buffer, and a bigger buffer holds more payload.

use tandem_turboswitch::model::capacity::{max_lossless, run_point};
use tandem_turboswitch::types::US;
use tandem_turboswitch::DropReason;

#[test]
fn the_buffer_bounds_the_payload_held() {
    let l = 50 * US;
    let (small, _) = max_lossless(l, 500_000).expect("run");
    let (big, _) = max_lossless(l, 1_000_000).expect("run");
    eprintln!("max lossless: {small} Gb/s with 0.5 MB, {big} Gb/s with 1 MB (buffer/L = 80, 160)");
    assert!(big > small);
    // Never above buffer / L (payload is ~92% of the offered bytes).
    assert!(f64::from(small) * 0.918 <= 80.0 && f64::from(big) * 0.918 <= 160.0);
    assert!(small >= 30, "{small}");
    // Past the bound, loss is counted by reason and every packet is accounted for.
    let r = run_point(l, 500_000, 150.0).expect("run");
    assert!(r.lost_total() > 0);
    assert!(r
        .lost
        .keys()
        .all(|k| matches!(k, DropReason::BufferFull(_) | DropReason::ReclaimTimeout)));
    assert!(r.accounted(), "{:?}", r.lost);
}
