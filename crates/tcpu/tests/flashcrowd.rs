//! The `tcpu-flashcrowd` experiment's qualitative claim, at the `--quick` size: with the deep
//! buffer the flash crowd loses no packet, without it TCP drops.

use tandem_tcpu::model::flashcrowd::{run_setup, Setup, QUICK_NR};

#[test]
fn deep_buffer_absorbs_the_flash_crowd_that_makes_tcp_drop() {
    // The largest quick NR (1,024 in 1 s: 2 Gb/s of responses into one 1 Gb/s port).
    if let Some(nr) = QUICK_NR.iter().copied().max() {
        let with = run_setup(Setup::TcpDeepBuffer, nr).expect("deep-buffer run");
        let without = run_setup(Setup::Tcp, nr).expect("plain run");
        eprintln!(
            "NR={nr}: deep buffer drops {} (mean RFT {:.3} s, p99 {:.3} s, peak DRAM {} B, R_port {}), \
             TCP w/o drops {} (mean RFT {:.3} s, p99 {:.3} s)",
            with.drops,
            with.mean_rft(),
            with.p99_rft(),
            with.peak_dram,
            with.rport_installs,
            without.drops,
            without.mean_rft(),
            without.p99_rft()
        );
        assert_eq!(with.drops, 0, "the deep buffer must not drop");
        assert!(with.rport_installs > 0, "the flash crowd must trigger R_port");
        assert!(with.peak_dram > 0);
        assert_eq!(with.unfinished, 0);
        assert!(without.drops > 0, "TCP without the deep buffer must drop");
        assert_eq!(without.unfinished, 0);
    }
}
