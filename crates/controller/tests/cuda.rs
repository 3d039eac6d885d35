//! The `cuda` backend: without a driver it refuses to start with a clear error; NVRTC, where
//! present, compiles its kernel; on a GPU machine (`cargo test -p tandem-controller --features
//! cuda -- --ignored`) it gives exactly the scalar backend's replies and counters.
#![cfg(feature = "cuda")]

use tandem_controller::cuda::{compile_kernel, driver_present, nvrtc_present};
use tandem_controller::event::NO_BUFFER;
use tandem_controller::{Backend, CudaBackend, CudaError, Event, L2Config, L2Switch, PacketInEvent, ScalarBackend};
use tandem_wire::openflow::Version;

#[test]
fn refuses_to_start_without_a_driver() {
    if driver_present() {
        tandem_testkit::skip("a CUDA driver is present on this machine (this test checks the refusal without one)");
        return;
    }
    let err = CudaBackend::new(0).expect_err("no driver, no backend");
    assert_eq!(err, CudaError::NoDriver);
    assert_eq!(
        err.to_string(),
        "no CUDA driver found (libcuda.so could not be loaded): the cuda backend needs an NVIDIA GPU and driver; \
         use --backend cpu"
    );
}

#[test]
fn backend_and_error_can_move_to_another_thread() {
    fn send<T: Send + 'static>() {}
    send::<CudaBackend>();
    send::<CudaError>();
}

#[test]
fn kernel_compiles_where_nvrtc_is_present() {
    if !nvrtc_present() {
        assert_eq!(compile_kernel().err(), Some(CudaError::NoNvrtc));
        tandem_testkit::skip("no NVRTC library on this machine: the CUDA kernel was not compiled");
        return;
    }
    let ptx = compile_kernel().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        ptx.to_src().contains(".entry l2_resolve("),
        "no kernel entry in the PTX"
    );
}

/// Deterministic events over 3 datapaths, 10 stations (two of them group addresses), 4 ports,
/// both versions, buffered or not, sorted by size in batches as the pool hands them out.
fn events(n: usize, seed: u64) -> Vec<Event> {
    let mut x = seed;
    let mut next = move || {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        x >> 33
    };
    (0..n)
        .map(|i| {
            let (dpid, src, dst, port, len) = (next() % 3, next() % 10, next() % 10, next() % 4 + 1, next() % 60 + 14);
            let mac = |s: u64| match s {
                8 => [0x01, 0, 0x5e, 0, 0, 1],
                9 => [0xff; 6],
                s => [2, 0, 0, 0, 0, s as u8],
            };
            let mut f = vec![0u8; len as usize];
            f[0..6].copy_from_slice(&mac(dst));
            f[6..12].copy_from_slice(&mac(src));
            let version = if next() % 2 == 0 { Version::V1_0 } else { Version::V1_3 };
            let buffer_id = if next() % 2 == 0 { i as u32 } else { NO_BUFFER };
            let packet_in = PacketInEvent::from_frame(version, i as u32, buffer_id, port as u32, len as u16, f)
                .expect("frame has an ethernet header");
            Event { dpid, packet_in }
        })
        .collect()
}

#[test]
#[ignore = "needs an NVIDIA GPU, its driver and NVRTC"]
fn cuda_matches_scalar_on_gpu() {
    let mut gpu = CudaBackend::new(0).unwrap_or_else(|e| panic!("{e}"));
    for (max_macs, batch) in [(4096, 1024), (3, 37), (6, 1), (5, 5000)] {
        let cfg = L2Config {
            max_macs_per_dpid: max_macs,
            ..L2Config::default()
        };
        let (mut a, mut b) = (L2Switch::new(cfg), L2Switch::new(cfg));
        let (mut ra, mut rb) = (Vec::new(), Vec::new());
        let all = events(20_000, batch as u64);
        for chunk in all.chunks(batch) {
            let mut sorted = chunk.to_vec();
            sorted.sort_by_key(Event::size);
            ScalarBackend.process(0, &sorted, &mut a, &mut ra);
            gpu.process(0, &sorted, &mut b, &mut rb);
            assert_eq!(ra, rb);
        }
        assert_eq!(a.counters(), b.counters());
        assert_eq!(gpu.fallbacks(), 0, "device failed: {:?}", gpu.last_error());
    }
}
