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
    /// Opens a non-blocking socket on `interface` (wait for frames with a [`Poller`]).
    pub fn open(interface: &str) -> io::Result<PacketSocket> {
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
        // Room for bursts while the node is busy (the kernel doubles it and caps it at rmem_max).
        setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, &(4 << 20 as libc::c_int))?;
        // SAFETY: plain fcntl calls on a descriptor we own; results checked.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
            return Err(io::Error::last_os_error());
        }
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

    /// Reads one frame into `buf`; `Ok(None)` when none is waiting.
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

    /// Reads up to `bufs.len()` frames with one `recvmmsg` call (non-blocking sockets: returns
    /// what is there, possibly nothing); `lens[i]` is the length of the frame in `bufs[i]`.
    pub fn recv_batch(&mut self, bufs: &mut [Vec<u8>], lens: &mut Vec<usize>) -> io::Result<usize> {
        use std::os::fd::AsRawFd;
        let mut iovs: Vec<libc::iovec> = bufs
            .iter_mut()
            .map(|b| libc::iovec {
                iov_base: b.as_mut_ptr().cast(),
                iov_len: b.len(),
            })
            .collect();
        // SAFETY: mmsghdr is plain old data; all-zero is valid before the fields are set.
        let mut msgs: Vec<libc::mmsghdr> = (0..iovs.len()).map(|_| unsafe { std::mem::zeroed() }).collect();
        for (m, iov) in msgs.iter_mut().zip(iovs.iter_mut()) {
            m.msg_hdr.msg_iov = iov;
            m.msg_hdr.msg_iovlen = 1;
        }
        // SAFETY: every mmsghdr points to one live iovec over a live buffer of its length;
        // the kernel writes at most that many bytes into each.
        let n = unsafe {
            libc::recvmmsg(
                self.file.as_raw_fd(),
                msgs.as_mut_ptr(),
                msgs.len() as libc::c_uint,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
            )
        };
        lens.clear();
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(0),
                _ => Err(e),
            };
        }
        lens.extend(msgs[..n as usize].iter().map(|m| m.msg_len as usize));
        Ok(n as usize)
    }

    /// Sends every frame of `frames` with as few `sendmmsg` calls as it takes; frames the
    /// kernel refuses (a full queue) are dropped and counted in the result's second field.
    pub fn send_batch(&mut self, frames: &[Vec<u8>]) -> (usize, usize) {
        use std::os::fd::AsRawFd;
        let mut iovs: Vec<libc::iovec> = frames
            .iter()
            .map(|f| libc::iovec {
                iov_base: f.as_ptr() as *mut libc::c_void,
                iov_len: f.len(),
            })
            .collect();
        // SAFETY: mmsghdr is plain old data; all-zero is valid before the fields are set.
        let mut msgs: Vec<libc::mmsghdr> = (0..iovs.len()).map(|_| unsafe { std::mem::zeroed() }).collect();
        for (m, iov) in msgs.iter_mut().zip(iovs.iter_mut()) {
            m.msg_hdr.msg_iov = iov;
            m.msg_hdr.msg_iovlen = 1;
        }
        let (mut sent, mut dropped, mut at) = (0, 0, 0);
        while at < msgs.len() {
            // SAFETY: the headers from `at` on point to live iovecs over the caller's frames,
            // which the kernel only reads.
            let n = unsafe {
                libc::sendmmsg(
                    self.file.as_raw_fd(),
                    msgs[at..].as_mut_ptr(),
                    (msgs.len() - at) as libc::c_uint,
                    libc::MSG_DONTWAIT,
                )
            };
            if n <= 0 {
                // The first frame left was refused: drop it and go on with the rest.
                at += 1;
                dropped += 1;
            } else {
                at += n as usize;
                sent += n as usize;
            }
        }
        (sent, dropped)
    }
}

/// Waits on a fixed set of sockets with `poll`, reusing its descriptor array.
#[derive(Debug)]
pub struct Poller {
    fds: Vec<libc::pollfd>,
}

impl Poller {
    /// A poller over `sockets` (which must outlive it).
    pub fn new(sockets: &[&PacketSocket]) -> Poller {
        use std::os::fd::AsRawFd;
        Poller {
            fds: sockets
                .iter()
                .map(|s| libc::pollfd {
                    fd: s.file.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                })
                .collect(),
        }
    }

    /// Waits up to `timeout` until at least one socket has a frame to read; `ready[i]` tells
    /// whether socket `i` does.
    pub fn wait(&mut self, timeout: Duration, ready: &mut Vec<bool>) -> io::Result<()> {
        let ms = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
        // SAFETY: `fds` is a live array of `fds.len()` pollfd structures.
        let r = unsafe { libc::poll(self.fds.as_mut_ptr(), self.fds.len() as libc::nfds_t, ms) };
        ready.clear();
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                ready.resize(self.fds.len(), false);
                return Ok(());
            }
            return Err(e);
        }
        ready.extend(self.fds.iter().map(|f| f.revents & (libc::POLLIN | libc::POLLERR) != 0));
        Ok(())
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
