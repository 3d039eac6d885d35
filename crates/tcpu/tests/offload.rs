//! The `tcpu-offload` experiment's qualitative claim, at the `--quick` size (20 s of
//! arrivals): with k = 1,792 TCAM entries the ASIC carries more than 85% of the bytes, at the
//! paper's arrival rate and with inter-arrival times compressed 10x, and the table never
//! holds more entries than it has.

use tandem_tcpu::model::offload::{run_setup, QUICK_SPAN};

#[test]
fn most_bytes_are_offloaded_to_the_asic() {
    for compress in [1, 10] {
        let o = run_setup(QUICK_SPAN, compress, 1_792).expect("offload run");
        eprintln!(
            "compress {compress}: {} flows, {:.2} GB, TFOR {:.2}%, max active {}, {:.0} swaps/s",
            o.flows,
            o.bytes as f64 / 1e9,
            o.tfor() * 100.0,
            o.max_active,
            o.swaps_per_sec
        );
        assert_eq!(o.asic_bytes + o.cpu_bytes, o.bytes, "every byte accounted once");
        assert!(o.tfor() > 0.85, "compress {compress}: TFOR {:.3}", o.tfor());
        assert_eq!(o.refused, 0, "the core never asks for more than k entries");
        assert!(o.swaps > 0, "a full table swaps");
    }
}
