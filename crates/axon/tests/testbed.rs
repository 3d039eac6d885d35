//! The testbed itself: wiring errors are typed, hosts resolve and exchange timestamped frames
//! across Axons, and a failed link loses what crosses it.

#![cfg(feature = "sim")]

use tandem_axon::control::{ControlConfig, Endpoint};
use tandem_axon::testbed::layout::host_mac;
use tandem_axon::testbed::layout::{host_ip, pool};
use tandem_axon::testbed::{FailureNotice, Host, LineSpec, TestbedError};
use tandem_axon::{DeviceConfig, Topology};

const US: u64 = 1_000_000;

#[test]
fn wiring_errors_are_typed() {
    let spec = LineSpec::line(2);
    let mut tb = spec.build().unwrap();
    let e = |device, port| Endpoint { device, port };
    assert_eq!(
        tb.add_axon(
            DeviceConfig::new(1, 4, 1),
            ControlConfig::new(1, pool(1)),
            spec.topology().unwrap()
        ),
        Err(TestbedError::DuplicateAxon(1))
    );
    assert_eq!(tb.connect(e(1, 1), e(2, 1), 0), Err(TestbedError::PortInUse(e(1, 1))));
    assert_eq!(
        tb.connect(e(1, 20), e(2, 3), 0),
        Err(TestbedError::NoSuchPort(e(1, 20)))
    );
    assert_eq!(tb.connect(e(9, 2), e(2, 3), 0), Err(TestbedError::NoSuchPort(e(9, 2))));
    assert!(matches!(
        tb.add_axon(
            DeviceConfig::new(5, 4, 1),
            ControlConfig::new(5, pool(5)),
            Topology::new()
        ),
        Err(TestbedError::Control(_))
    ));
}

#[test]
fn hosts_resolve_and_exchange_timestamped_frames() {
    let spec = LineSpec::line(3);
    let mut tb = spec.build().unwrap();
    let a = spec.add_host(&mut tb, 1, 0).unwrap();
    let b = spec.add_host(&mut tb, 3, 0).unwrap();
    tb.run_until(100 * US);
    for k in 0..5 {
        tb.send_at(100 * US + k * 10 * US, a, host_ip(3, 0), k);
    }
    tb.run_until(5_000 * US);
    let (ha, hb) = (tb.host(a).unwrap(), tb.host(b).unwrap());
    assert_eq!(ha.arp_sent.len(), 1, "one ARP, the rest waited for it");
    assert_eq!(hb.received.len(), 5);
    let seqs: Vec<u64> = hb.received.iter().map(|d| d.seq).collect();
    assert_eq!(seqs, vec![0, 1, 2, 3, 4]);
    // Once resolved, a frame takes the links and the Axons' forwarding latency only.
    let last = hb.received[4];
    let one_way = last.at_ps - last.sent_ps;
    assert!(one_way > 4 * 500_000 && one_way < 10 * US, "{one_way}");
    // The target learned the source from Axon-ARP's Phase II request.
    assert!(hb.arp_cache.contains_key(&host_ip(1, 0)));
}

#[test]
fn a_failed_link_loses_what_crosses_it() {
    let spec = LineSpec::line(2);
    let mut tb = spec.build().unwrap();
    let a = spec.add_host(&mut tb, 1, 0).unwrap();
    let b = spec.add_host(&mut tb, 2, 0).unwrap();
    tb.send_at(0, a, host_ip(2, 0), 0);
    tb.run_until(2_000 * US);
    assert_eq!(tb.host(b).unwrap().received.len(), 1);
    tb.fail_link_at(2_000 * US, Endpoint { device: 1, port: 1 }, FailureNotice::Nobody);
    tb.send_at(2_001 * US, a, host_ip(2, 0), 1);
    tb.run_until(3_000 * US);
    assert_eq!(tb.host(b).unwrap().received.len(), 1);
    assert_eq!(tb.counters().lost_on_links, 1);
}

#[test]
fn a_dhcp_host_gets_an_address_from_its_axon_and_reaches_a_remote_host() {
    let spec = LineSpec::line(2);
    let mut tb = spec.build().unwrap();
    let at = Endpoint { device: 1, port: 5 };
    let c = tb
        .add_host(Host::dhcp_client(host_mac(1, 5), at, spec.rate_bps, spec.delay_ps))
        .unwrap();
    let b = spec.add_host(&mut tb, 2, 0).unwrap();
    tb.run_until(1_000 * US);
    let h = tb.host(c).unwrap();
    let p = pool(1);
    assert!(p.contains(h.ip), "{}", h.ip);
    let bound = h.dhcp_bound_ps.expect("bound");
    assert!(bound >= 2 * 91 * US, "two DHCP replies of 91 us each");
    let ip = h.ip;
    assert_eq!(tb.node(1).unwrap().control().local_hosts()[&ip].port, 5);
    tb.send_at(tb.now(), c, host_ip(2, 0), 7);
    tb.run_until(3_000 * US);
    let got = &tb.host(b).unwrap().received;
    assert_eq!(got.len(), 1);
    assert_eq!((got[0].from_ip, got[0].seq), (ip, 7));
}

/// The testbed is the simulator's kernel: two identical runs give the same frames at the same
/// times, the kernel counts its events, and Axons and their links come before the network runs.
#[test]
fn the_testbed_runs_on_the_kernel_and_is_deterministic() {
    let run = || {
        let spec = LineSpec::ring(3);
        let mut tb = spec.build().unwrap();
        let a = spec.add_host(&mut tb, 1, 0).unwrap();
        let b = spec.add_host(&mut tb, 3, 0).unwrap();
        for k in 0..20 {
            tb.send_at(100 * US + k * 3 * US, a, host_ip(3, 0), k);
            tb.send_at(100 * US + k * 5 * US, b, host_ip(1, 0), k);
        }
        tb.run_until(3_000 * US);
        (
            tb.host(a).unwrap().clone(),
            tb.host(b).unwrap().clone(),
            tb.counters(),
            tb,
        )
    };
    let (a1, b1, c1, mut tb) = run();
    let (a2, b2, c2, _) = run();
    assert_eq!((&a1, &b1, c1), (&a2, &b2, c2));
    assert_eq!((a1.received.len(), b1.received.len()), (20, 20));
    assert!(c1.events > 100, "{c1:?}");
    assert_eq!(c1.lost_unwired, 0);
    let e = Endpoint { device: 2, port: 4 };
    assert_eq!(
        tb.connect(e, Endpoint { device: 3, port: 5 }, 0),
        Err(TestbedError::Started)
    );
    assert_eq!(
        tb.add_axon(
            DeviceConfig::new(9, 4, 1),
            ControlConfig::new(9, pool(9)),
            LineSpec::line(9).topology().unwrap()
        ),
        Err(TestbedError::Started)
    );
}
