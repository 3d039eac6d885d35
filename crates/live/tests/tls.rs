//! The controller over TLS with client certificates: a switch with a certificate the CA signed
//! completes the OpenFlow handshake; one without a certificate, with one from another CA, or
//! speaking plain TCP is closed in the TLS handshake and counted; unusable files are refused
//! at start with the file's name. The certificates are made here with rcgen (no system tool).

mod common;

use common::pki::Pki;
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tandem_live::controller::{ControllerHandle, TlsFiles};
use tandem_wire::openflow::{Body, Hello, Message, Version};

/// A switch's TLS client: trusts the CA and presents `identity` (a `NAME` whose `NAME-cert.pem`
/// and `NAME-key.pem` are in the PKI folder), or no certificate.
fn client(pki: &Pki, identity: Option<&str>, addr: SocketAddr) -> StreamOwned<ClientConnection, TcpStream> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(pki.file("ca-cert.pem")).unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    let b = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
    let cfg = match identity {
        Some(name) => {
            let chain = CertificateDer::pem_file_iter(pki.file(&format!("{name}-cert.pem")))
                .unwrap()
                .collect::<Result<Vec<_>, _>>()
                .unwrap();
            let key = PrivateKeyDer::from_pem_file(pki.file(&format!("{name}-key.pem"))).unwrap();
            b.with_client_auth_cert(chain, key).unwrap()
        }
        None => b.with_no_client_auth(),
    };
    let conn = ClientConnection::new(Arc::new(cfg), ServerName::try_from("localhost").unwrap()).unwrap();
    let tcp = TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    StreamOwned::new(conn, tcp)
}

/// Sends a hello and answers the features request as datapath `dpid`; `false` if the
/// controller closed the connection (or the TLS handshake failed) first.
fn handshake<S: Read + Write>(s: &mut S, dpid: u64) -> bool {
    let hello = Message {
        version: Version::V1_3,
        xid: 1,
        body: Body::Hello(Hello::with_versions(&[Version::V1_3])),
    };
    if s.write_all(&hello.to_bytes().unwrap()).and_then(|_| s.flush()).is_err() {
        return false;
    }
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        while buf.len() >= 8 {
            let len = usize::from(u16::from_be_bytes([buf[2], buf[3]]));
            if buf.len() < len {
                break;
            }
            let (m, n) = Message::parse(&buf).expect("a bad message from the controller");
            buf.drain(..n);
            if matches!(m.body, Body::FeaturesRequest) {
                let reply = common::features_reply(Version::V1_3, m.xid, dpid);
                return s.write_all(&reply.to_bytes().unwrap()).and_then(|_| s.flush()).is_ok();
            }
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return false,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

fn wait_for(what: &str, mut ok: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(10);
    while !ok() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn tls_controller(pki: &Pki) -> ControllerHandle {
    let files = pki.controller_files();
    common::controller(|c| c.tls = Some(files))
}

#[test]
fn a_switch_with_a_certificate_from_the_ca_connects() {
    let pki = Pki::new("tls-ok");
    let ctl = tls_controller(&pki);
    let mut s = client(&pki, Some("switch"), ctl.addrs()[0]);
    assert!(handshake(&mut s, 0xa1), "handshake over TLS");
    let stats = ctl.stats().clone();
    wait_for("the switch to be connected", || {
        stats.switches_connected.load(Ordering::Relaxed) == 1
    });
    assert_eq!(stats.tls_failures.load(Ordering::Relaxed), 0);
    ctl.stop();
}

#[test]
fn switches_without_a_trusted_certificate_are_closed_in_the_tls_handshake() {
    let pki = Pki::new("tls-refused");
    let ctl = tls_controller(&pki);
    let addr = ctl.addrs()[0];
    let stats = ctl.stats().clone();
    // No client certificate, then one the CA did not sign.
    for (i, identity) in [None, Some("intruder")].into_iter().enumerate() {
        let mut s = client(&pki, identity, addr);
        assert!(!handshake(&mut s, 0xb1 + i as u64), "{identity:?} must not get through");
        wait_for("the refusal to be counted", || {
            stats.tls_failures.load(Ordering::Relaxed) == i as u64 + 1
        });
    }
    // Plain OpenFlow on a TLS port: not TLS, closed.
    let mut plain = TcpStream::connect(addr).unwrap();
    plain.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    assert!(!handshake(&mut plain, 0xb9));
    wait_for("the plain client to be counted", || {
        stats.tls_failures.load(Ordering::Relaxed) == 3
    });
    assert_eq!(stats.switches_connected.load(Ordering::Relaxed), 0);
    assert_eq!(stats.handshakes.load(Ordering::Relaxed), 0);
    ctl.stop();
}

#[test]
fn unusable_tls_files_are_refused_at_start_with_the_file_named() {
    let pki = Pki::new("tls-files");
    let spawn = |files: TlsFiles| {
        let cfg = tandem_live::controller::ControllerConfig {
            listen: vec!["127.0.0.1:0".parse().unwrap()],
            tls: Some(files),
            ..Default::default()
        };
        let engines = tandem_live::controller::l2_engine(
            tandem_live::controller::BackendChoice::Cpu,
            tandem_controller::L2Config::default(),
        );
        match ControllerHandle::spawn(cfg, engines) {
            Ok(_) => panic!("started with unusable TLS files"),
            Err(e) => e.to_string(),
        }
    };
    let ok = pki.controller_files();
    let missing = pki.file("nope.pem");
    let e = spawn(TlsFiles {
        cert: missing.clone(),
        ..ok.clone()
    });
    assert!(e.contains("nope.pem") && e.contains("cannot read"), "{e}");
    // A key given as the CA, a certificate given as the key, a key that does not match.
    let e = spawn(TlsFiles {
        ca: ok.key.clone(),
        ..ok.clone()
    });
    assert!(e.contains("controller-key.pem") && e.contains("no certificate"), "{e}");
    let e = spawn(TlsFiles {
        key: ok.cert.clone(),
        ..ok.clone()
    });
    assert!(e.contains("controller-cert.pem") && e.contains("private key"), "{e}");
    let e = spawn(TlsFiles {
        key: pki.file("switch-key.pem"),
        ..ok.clone()
    });
    assert!(e.contains("switch-key.pem") && e.contains("does not go with"), "{e}");
}
