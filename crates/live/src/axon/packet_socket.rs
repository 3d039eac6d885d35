//! Raw Ethernet frames on a Linux interface through an `AF_PACKET` socket: bound to one
//! interface, all protocols, promiscuous, without the copies of what we send ourselves
//! (`PACKET_IGNORE_OUTGOING`). Axon frames have no Ethernet header, so nothing above the driver
//! could carry them.
//!
//! The socket calls need `unsafe` (libc); it stays in this module, every block with its reason.
#![allow(unsafe_code)]

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::time::Duration;

/// `SOL_PACKET` option: do not deliver frames this host sent (Linux 4.20 and later).
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;

/// An `AF_PACKET` socket bound to one interface.
#[derive(Debug)]
pub struct PacketSocket {
    file: File,
    name: String,
}

impl PacketSocket {
    /// Opens a socket on `interface`; frames read block for at most `read_timeout`.
    pub fn open(interface: &str, read_timeout: Duration) -> io::Result<PacketSocket> {
        let ifindex: libc::c_int = std::fs::read_to_string(format!("/sys/class/net/{interface}/ifindex"))
            .map_err(|e| io::Error::new(e.kind(), format!("interface {interface}: {e}")))?
            .trim()
            .parse()
            .map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("interface {interface}: bad ifindex"),
                )
            })?;
        let proto = (libc::ETH_P_ALL as u16).to_be();
        // SAFETY: plain system call with constant arguments; the result is checked.
        let fd = unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                libc::c_int::from(proto),
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor we own; OwnedFd closes it on every path from here.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: sockaddr_ll is plain old data; all-zero is a valid value to fill in.
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = proto;
        addr.sll_ifindex = ifindex;
        // SAFETY: `addr` is a valid sockaddr_ll and the length passed is its size.
        let r = unsafe {
            libc::bind(
                fd,
                (&addr as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: packet_mreq is plain old data; all-zero is valid.
        let mut mreq: libc::packet_mreq = unsafe { std::mem::zeroed() };
        mreq.mr_ifindex = ifindex;
        mreq.mr_type = libc::PACKET_MR_PROMISC as u16;
        setsockopt(fd, libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mreq)?;
        setsockopt(fd, libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, &(1 as libc::c_int))?;
        let tv = libc::timeval {
            tv_sec: read_timeout.as_secs() as libc::time_t,
            tv_usec: read_timeout.subsec_micros() as libc::suseconds_t,
        };
        setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVTIMEO, &tv)?;
        Ok(PacketSocket {
            file: File::from(owned),
            name: interface.to_string(),
        })
    }

    /// The interface's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A second handle on the same socket (one thread reads while another writes).
    pub fn try_clone(&self) -> io::Result<PacketSocket> {
        Ok(PacketSocket {
            file: self.file.try_clone()?,
            name: self.name.clone(),
        })
    }

    /// Reads one frame into `buf`; `Ok(None)` when the read timed out.
    pub fn recv(&mut self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        match self.file.read(buf) {
            Ok(n) => Ok(Some(n)),
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => Ok(None),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Sends one frame as it is.
    pub fn send(&mut self, frame: &[u8]) -> io::Result<()> {
        self.file.write_all(frame)
    }
}

fn setsockopt<T>(fd: libc::c_int, level: libc::c_int, name: libc::c_int, value: &T) -> io::Result<()> {
    // SAFETY: `value` points to a live T and the length passed is its size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (value as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}
