//! The `tcpu-burst-rate` experiment at its `--quick` size: data for one port arrives at 2C in
//! TCP slow start, with and without delayed ACKs (paper §3.2.1, Figure 4), and the one
//! exception we found: many senders starting at once put their initial windows on the port
//! faster than that in the first round trip.

use tandem_sim::time::MS;
use tandem_tcpu::model::burstrate::{measure, Senders, TOLERANCE};

#[test]
fn slow_start_arrives_at_twice_the_port_speed() {
    for senders in [Senders::OneFast, Senders::Many] {
        for delayed_ack in [false, true] {
            let o = measure(senders, delayed_ack, 4_000_000, 60 * MS).expect("run");
            eprintln!(
                "{senders:?} delayed ACK {delayed_ack}: slow start {:.3} C, peak {:.3} C, {} growth windows",
                o.slow_start, o.peak, o.growth_windows
            );
            assert_eq!(o.drops, 0, "the queue has no limit");
            assert!(o.growth_windows >= 10, "slow start lasts: {}", o.growth_windows);
            assert!((o.slow_start / 2.0 - 1.0).abs() <= TOLERANCE, "{}", o.slow_start);
            match senders {
                Senders::OneFast => assert!(o.peak <= 2.0 * (1.0 + TOLERANCE), "{}", o.peak),
                // 15 initial windows of 10 segments arrive within the first round trip.
                Senders::Many => assert!(o.peak > 2.5, "{}", o.peak),
            }
        }
    }
}
