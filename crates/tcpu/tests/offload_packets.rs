//! `tcpu-offload-packets` at a small size (10 s of arrivals at the paper's rate, each of the
//! paper's flows a TCP connection): every connection completes through the TCPU switch, the
//! ASIC carries more than the paper's "over 90%" of the bytes, TCP offloads more than the
//! flow-level model predicts for the same flows (a flow in slow start sends its first bytes
//! slowly, so fewer of them go through the CPU before its TCAM entry takes effect), the table
//! never refuses an operation, and the run is deterministic.

use tandem_tcpu::model::offload_packets::{run_settings, Setting, K};
use tandem_tcpu::types::SEC;

#[test]
fn tcp_through_a_tcpu_switch_offloads_more_than_the_flow_level_model() {
    let s = Setting {
        split: 1,
        compress: 1,
        span: 10 * SEC,
    };
    let r = run_settings(&[s], K, 2).expect("offload run");
    let r = &r[0];
    let o = &r.tcpu;
    eprintln!(
        "{} connections, {:.2} GB: TFOR {:.2}% (payload {:.2}%), flow-level {:.2}%; mean FCT {:.2} ms (plain {:.2} ms)",
        o.flows,
        o.bytes as f64 / 1e9,
        o.tfor() * 100.0,
        o.tfor_payload() * 100.0,
        r.flow_level.tfor() * 100.0,
        o.mean_fct_s * 1e3,
        r.plain.mean_fct_s * 1e3
    );
    assert_eq!(o.completed, o.flows, "every connection completes: {o:?}");
    assert_eq!(r.plain.completed, r.plain.flows, "{:?}", r.plain);
    assert!(
        o.asic_payload + o.cpu_payload >= o.bytes,
        "every byte crossed the switch: {o:?}"
    );
    assert!(o.tfor() > 0.90, "TFOR {:.4}", o.tfor());
    assert!(
        o.tfor_payload() > r.flow_level.tfor(),
        "TCP {:.4} against the flow-level model's {:.4}",
        o.tfor_payload(),
        r.flow_level.tfor()
    );
    assert_eq!(o.refused, 0, "the core never asks for more than k entries");
    assert_eq!(
        o.core_flows,
        2 * o.flows,
        "each direction of a connection is a core flow"
    );
    assert_eq!(
        (r.plain.asic_wire, r.plain.cpu_wire),
        (0, 0),
        "a plain switch has no model"
    );

    // The same setting again gives the same outcome (wall time aside).
    let again = run_settings(&[s], K, 1).expect("offload run");
    let strip = |mut o: tandem_tcpu::model::offload_packets::Outcome| {
        o.wall_s = 0.0;
        o
    };
    assert_eq!(strip(again[0].tcpu.clone()), strip(o.clone()));
    assert_eq!(strip(again[0].plain.clone()), strip(r.plain.clone()));
}
