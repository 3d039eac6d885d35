//! The `tcpu-forwarding` experiment's qualitative claim, at the `--quick` size (5,000 TCP
//! connections, 10,000 unidirectional flows, 0.5 s): with no TCAM flow entry every packet goes
//! through the CPU, and the throughput is bound by the 4 x 1 Gb/s internal links, which it
//! nearly fills.

use tandem_tcpu::model::forwarding::{run_setup, QUICK_CONNECTIONS, QUICK_TIMING};

#[test]
fn cpu_forwarding_is_bound_by_the_internal_links() {
    let o = run_setup(4, QUICK_CONNECTIONS, QUICK_TIMING).expect("forwarding run");
    eprintln!(
        "{} flows through the CPU, internal links {:.3} Gb/s, goodput {:.3} Gb/s, {:.2} cores",
        o.cpu_flows,
        o.internal_bps / 1e9,
        o.goodput_bps / 1e9,
        o.cpu_cores_busy
    );
    assert_eq!(o.asic_packets, 0, "no TCAM entry: nothing bypasses the CPU");
    assert_eq!(
        o.cpu_flows,
        2 * u64::from(QUICK_CONNECTIONS),
        "both directions of every connection"
    );
    assert!(o.internal_bps <= 4.004e9, "never above the links: {}", o.internal_bps);
    assert!(o.internal_bps >= 3.6e9, "nearly fills the links: {}", o.internal_bps);
    assert!(o.cpu_cores_busy < 1.0, "one core is enough: {}", o.cpu_cores_busy);
}
