//! A minimal blocking OpenFlow switch for the integration tests, and a controller on a free
//! loopback port.

#![allow(dead_code)]

pub mod pki;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;
use tandem_controller::L2Config;
use tandem_live::controller::{l2_engine, BackendChoice, ControllerConfig, ControllerHandle};
use tandem_wire::openflow::{Body, FeaturesReply, Hello, Message, OxmField, OxmMatch, PacketIn, Version};

/// A controller on 127.0.0.1 with a free port, the cpu backend, and `tweak` applied.
pub fn controller(tweak: impl FnOnce(&mut ControllerConfig)) -> ControllerHandle {
    let mut cfg = ControllerConfig {
        listen: vec!["127.0.0.1:0".parse().unwrap()],
        ..ControllerConfig::default()
    };
    tweak(&mut cfg);
    ControllerHandle::spawn(cfg, l2_engine(BackendChoice::Cpu, L2Config::default())).unwrap()
}

/// The features reply of datapath `dpid` to the request `xid`.
pub fn features_reply(version: Version, xid: u32, dpid: u64) -> Message {
    Message {
        version,
        xid,
        body: Body::FeaturesReply(FeaturesReply {
            datapath_id: dpid,
            n_buffers: 256,
            n_tables: 1,
            ..FeaturesReply::default()
        }),
    }
}

/// A switch's end of a connection.
pub struct Switch {
    pub stream: TcpStream,
    pub version: Version,
    buf: Vec<u8>,
}

impl Switch {
    /// Connects and completes the handshake as datapath `dpid`.
    pub fn connect(addr: SocketAddr, version: Version, dpid: u64) -> Switch {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut s = Switch {
            stream,
            version,
            buf: Vec::new(),
        };
        s.send(&Message {
            version,
            xid: 1,
            body: Body::Hello(Hello::with_versions(&[version])),
        });
        loop {
            let m = s.recv().expect("controller closed during the handshake");
            if matches!(m.body, Body::FeaturesRequest) {
                s.send(&features_reply(version, m.xid, dpid));
                return s;
            }
        }
    }

    pub fn send(&mut self, m: &Message) {
        self.send_raw(&m.to_bytes().unwrap());
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).unwrap();
    }

    /// The next message; `None` when the controller closed the connection.
    pub fn recv(&mut self) -> Option<Message> {
        loop {
            if self.buf.len() >= 8 {
                let len = usize::from(u16::from_be_bytes([self.buf[2], self.buf[3]]));
                if self.buf.len() >= len {
                    let (m, n) = Message::parse(&self.buf).expect("the controller sent a bad message");
                    self.buf.drain(..n);
                    return Some(m);
                }
            }
            let mut chunk = [0u8; 4096];
            match self.stream.read(&mut chunk) {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
            }
        }
    }

    /// The next message that is not a keepalive or the table-miss flow.
    pub fn recv_reply(&mut self) -> Option<Message> {
        loop {
            let m = self.recv()?;
            match &m.body {
                Body::EchoRequest(d) => {
                    let reply = Message {
                        version: m.version,
                        xid: m.xid,
                        body: Body::EchoReply(d.clone()),
                    };
                    self.send(&reply);
                }
                Body::FlowMod(f) if f.priority == 0 => {}
                _ => return Some(m),
            }
        }
    }
}

/// A packet_in from `src` to `dst` (last address bytes) on `in_port`, buffered as `buffer_id`.
pub fn packet_in(version: Version, xid: u32, buffer_id: u32, in_port: u32, src: u8, dst: u8) -> Message {
    let mut frame = vec![0u8; 60];
    frame[0..6].copy_from_slice(&[2, 0, 0, 0, 0, dst]);
    frame[6..12].copy_from_slice(&[2, 0, 0, 0, 0, src]);
    frame[12] = 0x08;
    let oxm = if version == Version::V1_3 {
        OxmMatch {
            fields: vec![OxmField::InPort(in_port)],
        }
    } else {
        OxmMatch::default()
    };
    Message {
        version,
        xid,
        body: Body::PacketIn(PacketIn {
            buffer_id,
            total_len: 60,
            reason: 0,
            in_port: in_port as u16,
            table_id: 0,
            cookie: 0,
            oxm,
            data: frame,
        }),
    }
}

/// Resident memory of this process in KiB (0 where /proc is missing).
pub fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}
