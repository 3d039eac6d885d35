//! A chain of `n` forwarding elements between two stock Linux hosts: live Axons (a generated lab
//! of `n` Axons in a line), Linux bridges, or Open vSwitch bridges (userspace datapath), so that
//! what a host measures (ping round trips, an application's operations per second) can be set
//! against the number of devices on the path, as the Axon thesis does in Figures 4.5 and 4.10.
//!
//! Names: namespaces `PREFIX-h1` (the server), `PREFIX-h2` (the client), and `PREFIX-a1..` (one
//! per Axon) or `PREFIX-sw` (every bridge of the chain, joined by veth pairs, with Open vSwitch's
//! two processes). Every veth has its offloads off, as `tandem lab` sets them. The bridges'
//! hosts have static addresses [`SERVER_IP`] and [`CLIENT_IP`]; the Axons' hosts lease theirs.
//! A chain is removed when dropped (processes by PID, then the namespaces by name), also when
//! building it failed half-way; `up` refuses to start when a namespace of its names exists.

use super::ovs::PrivateOvs;
use super::{add_namespace, existing_namespaces, in_ns, ip, LabSpec};
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The server host's address on a bridge chain.
pub const SERVER_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 9, 1);
/// The client host's address on a bridge chain.
pub const CLIENT_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 9, 2);
/// Most devices in one chain.
pub const MAX_DEVICES: usize = 16;

/// What forwards frames along the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Element {
    /// Live Axons (`tandem axon run`), one process and namespace each.
    Axon,
    /// Linux bridges (the kernel's, STP off).
    LinuxBridge,
    /// Open vSwitch bridges on its userspace datapath (`datapath_type=netdev`, the NORMAL action).
    Ovs,
}

impl Element {
    /// Every element, in the order results list them.
    pub const ALL: [Element; 3] = [Element::Axon, Element::LinuxBridge, Element::Ovs];

    /// The short name used in CSV files and tables.
    pub fn name(self) -> &'static str {
        match self {
            Element::Axon => "axon",
            Element::LinuxBridge => "linux-bridge",
            Element::Ovs => "ovs",
        }
    }
}

/// A chain that is up; dropping it removes it.
#[derive(Debug)]
pub struct Chain {
    /// Its elements.
    pub element: Element,
    /// Devices on the path between the two hosts.
    pub devices: usize,
    /// The server host's address.
    pub server_ip: Ipv4Addr,
    prefix: String,
    state: PathBuf,
    servers: Vec<Child>,
    teardown: Arc<Teardown>,
}

/// Everything needed to remove a chain, whether it is up, half built or its owner is going
/// away (an interrupt handler may run it from another thread): processes by PID, namespaces and
/// root-namespace veths by name, the state folder.
#[derive(Debug)]
pub struct Teardown {
    element: Element,
    devices: usize,
    prefix: String,
    state: PathBuf,
    servers: Mutex<Vec<u32>>,
}

impl Teardown {
    /// The teardown of the chain [`Chain::up`] builds from these (the state folder as an
    /// absolute path, so that it names the same folder from any thread).
    pub fn new(element: Element, devices: usize, prefix: &str, state: &Path) -> Arc<Teardown> {
        Arc::new(Teardown {
            element,
            devices,
            prefix: prefix.to_string(),
            state: std::path::absolute(state).unwrap_or_else(|_| state.to_path_buf()),
            servers: Mutex::new(Vec::new()),
        })
    }

    /// Removes whatever of the chain exists; safe to run more than once and on a chain that
    /// was never (or only half) built.
    pub fn run(&self) {
        for pid in self.servers.lock().unwrap_or_else(|p| p.into_inner()).drain(..) {
            let _ = Command::new("kill").arg(pid.to_string()).stderr(Stdio::null()).status();
        }
        if self.element == Element::Axon {
            if let Ok(spec) = axon_line(&self.prefix, self.devices) {
                super::down(&spec, &self.state.join("lab"));
            }
        }
        PrivateOvs::stop(&self.state.join("ovs"));
        if self.state.is_dir() {
            super::kill_processes_under(&self.state);
        }
        let present = existing_namespaces();
        for ns in namespaces(self.element, self.devices, &self.prefix) {
            if present.contains(&ns) {
                let _ = ip(&["netns", "del", &ns]);
            }
        }
        for i in 0..=self.devices {
            let name = format!("{}c{i}x", self.prefix);
            if Path::new(&format!("/sys/class/net/{name}")).exists() {
                let _ = ip(&["link", "del", &name]);
            }
        }
        let _ = std::fs::remove_dir_all(&self.state);
    }
}

/// The lab file of `devices` Axons in a line: the server on Axon 1's port 0, the client on the
/// last Axon's port 0 (port 1 when there is one Axon), Axon i's port 1 wired to Axon i+1's port 2.
pub fn axon_line(prefix: &str, devices: usize) -> Result<LabSpec, String> {
    let mut text = format!("prefix = \"{prefix}\"\naxons = {devices}\n[[hosts]]\naxon = 1\nport = 0\n");
    let client_port = if devices == 1 { 1 } else { 0 };
    text += &format!("[[hosts]]\naxon = {devices}\nport = {client_port}\n");
    for i in 1..devices {
        text += &format!("[[links]]\na = \"{i}.1\"\nb = \"{}.2\"\n", i + 1);
    }
    LabSpec::parse(&text)
}

impl Chain {
    /// Namespace of the server host.
    pub fn server_ns(&self) -> String {
        format!("{}-h1", self.prefix)
    }

    /// Namespace of the client host.
    pub fn client_ns(&self) -> String {
        format!("{}-h2", self.prefix)
    }

    /// Builds a chain of `devices` elements under names starting with `prefix` (1-5
    /// characters of a-z, 0-9), keeping configs, logs and PID files in `state` (made here, removed
    /// with the chain). `tandem` is the binary that runs the Axons. Returns once the client
    /// reaches the server with ping.
    pub fn up(element: Element, devices: usize, prefix: &str, state: &Path, tandem: &Path) -> Result<Chain, String> {
        Chain::up_with(Teardown::new(element, devices, prefix, state), tandem)
    }

    /// As [`Chain::up`], for the chain `teardown` describes; the caller keeps a handle to it so
    /// that it can remove the chain even while it is being built (on an interrupt, say).
    pub fn up_with(teardown: Arc<Teardown>, tandem: &Path) -> Result<Chain, String> {
        let (element, devices, prefix, state) = (
            teardown.element,
            teardown.devices,
            teardown.prefix.clone(),
            teardown.state.clone(),
        );
        let (prefix, state) = (prefix.as_str(), state.as_path());
        if devices == 0 || devices > MAX_DEVICES {
            return Err(format!("a chain has 1 to {MAX_DEVICES} devices, not {devices}"));
        }
        let names = namespaces(element, devices, prefix);
        let present = existing_namespaces();
        let clash: Vec<&String> = names.iter().filter(|n| present.contains(n)).collect();
        if !clash.is_empty() {
            return Err(format!(
                "namespaces {clash:?} already exist (a run that was stopped?); remove them with `ip netns del NAME`"
            ));
        }
        if state.exists() {
            return Err(format!(
                "{}: exists; a chain makes its own state folder",
                state.display()
            ));
        }
        std::fs::create_dir_all(state).map_err(|e| format!("{}: {e}", state.display()))?;
        // From here on a failure drops the chain, which removes what was made.
        let mut chain = Chain {
            element,
            devices,
            server_ip: SERVER_IP,
            prefix: prefix.to_string(),
            state: state.to_path_buf(),
            servers: Vec::new(),
            teardown,
        };
        match element {
            Element::Axon => {
                let spec = axon_line(prefix, devices)?;
                let lab = super::up(&spec, &chain.state.join("lab"), tandem, Duration::from_secs(30))?;
                chain.server_ip = lab.host_ips[0];
            }
            Element::LinuxBridge | Element::Ovs => chain.build_bridges()?,
        }
        chain.wait_reachable(Duration::from_secs(20))?;
        Ok(chain)
    }

    fn sw(&self) -> String {
        format!("{}-sw", self.prefix)
    }

    /// Hosts and one switch namespace; veth `d{i}a`/`d{i}b` are bridge i's two ports.
    fn build_bridges(&mut self) -> Result<(), String> {
        let (sw, p) = (self.sw(), self.prefix.clone());
        for ns in [self.server_ns(), self.client_ns(), sw.clone()] {
            add_namespace(&ns)?;
        }
        let n = self.devices;
        super::veth(&format!("{p}c0"), (&self.server_ns(), "eth0"), (&sw, "d1a"), "1500")?;
        for i in 1..n {
            super::veth(
                &format!("{p}c{i}"),
                (&sw, &format!("d{i}b")),
                (&sw, &format!("d{}a", i + 1)),
                "1500",
            )?;
        }
        super::veth(
            &format!("{p}c{n}"),
            (&sw, &format!("d{n}b")),
            (&self.client_ns(), "eth0"),
            "1500",
        )?;
        for (ns, ip) in [(self.server_ns(), SERVER_IP), (self.client_ns(), CLIENT_IP)] {
            in_ns(&ns, &["ip", "addr", "add", &format!("{ip}/24"), "dev", "eth0"])?;
        }
        match self.element {
            Element::LinuxBridge => {
                for i in 1..=n {
                    let br = format!("br{i}");
                    in_ns(&sw, &["ip", "link", "add", &br, "type", "bridge", "stp_state", "0"])?;
                    for port in [format!("d{i}a"), format!("d{i}b")] {
                        in_ns(&sw, &["ip", "link", "set", &port, "master", &br])?;
                    }
                    in_ns(&sw, &["ip", "link", "set", &br, "up"])?;
                }
                Ok(())
            }
            _ => self.start_ovs(),
        }
    }

    /// `ovsdb-server` and `ovs-vswitchd` in the switch namespace, from a private database and
    /// run folder (nothing of a system Open vSwitch is touched), then one netdev bridge per
    /// device.
    fn start_ovs(&mut self) -> Result<(), String> {
        let ovs = PrivateOvs::new(&self.state.join("ovs"), Some(&self.sw()));
        ovs.start()?;
        for i in 1..=self.devices {
            let br = format!("br{i}");
            ovs.vsctl(&[
                "add-br",
                &br,
                "--",
                "set",
                "bridge",
                &br,
                "datapath_type=netdev",
                "--",
                "add-port",
                &br,
                &format!("d{i}a"),
                "--",
                "add-port",
                &br,
                &format!("d{i}b"),
            ])?;
        }
        Ok(())
    }

    fn wait_reachable(&self, within: Duration) -> Result<(), String> {
        let until = Instant::now() + within;
        let ip = self.server_ip.to_string();
        loop {
            if self.client(&["ping", "-c", "1", "-W", "1", &ip]).is_ok() {
                return Ok(());
            }
            if Instant::now() > until {
                return Err(format!(
                    "{} chain of {}: the client cannot reach the server within {within:?}",
                    self.element.name(),
                    self.devices
                ));
            }
            // A ping that fails at once (no route yet) must not make this a busy loop.
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Runs `args` in the client host and returns its standard output.
    pub fn client(&self, args: &[&str]) -> Result<String, String> {
        in_ns(&self.client_ns(), args)
    }

    /// Starts `args` in the server host as a background process, stopped when the chain goes.
    pub fn spawn_server(&mut self, args: &[&str]) -> Result<(), String> {
        let log = self.state.join(format!("server{}.log", self.servers.len()));
        let log = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let child = Command::new("ip")
            .args(["netns", "exec", &self.server_ns()])
            .args(args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start {args:?}: {e}"))?;
        self.teardown
            .servers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(child.id());
        self.servers.push(child);
        Ok(())
    }

    /// Pings the server from the client `count` times, `interval` apart, with `payload` bytes
    /// of ICMP data, after a few unmeasured pings; returns each round trip in microseconds as the
    /// client's `ping` printed it. Lost pings are left out (the count says how many came back).
    pub fn ping_rtts_us(&self, count: u32, interval: Duration, payload: usize) -> Result<Vec<f64>, String> {
        let ip = self.server_ip.to_string();
        let size = payload.to_string();
        self.client(&["ping", "-c", "3", "-i", "0.05", "-s", &size, &ip])?;
        let out = self.client(&[
            "ping",
            "-c",
            &count.to_string(),
            "-i",
            &format!("{:.3}", interval.as_secs_f64()),
            "-W",
            "1",
            "-s",
            &size,
            &ip,
        ])?;
        Ok(parse_ping_rtts_us(&out))
    }
}

/// Round trips (microseconds) from `ping`'s reply lines (`... time=0.123 ms`).
pub fn parse_ping_rtts_us(out: &str) -> Vec<f64> {
    out.lines()
        .filter_map(|l| l.split("time=").nth(1))
        .filter_map(|t| t.split_whitespace().next()?.parse::<f64>().ok())
        .map(|ms| ms * 1000.0)
        .collect()
}

fn namespaces(element: Element, devices: usize, prefix: &str) -> Vec<String> {
    let mut v = vec![format!("{prefix}-h1"), format!("{prefix}-h2")];
    match element {
        Element::Axon => v.extend((1..=devices).map(|a| format!("{prefix}-a{a}"))),
        _ => v.push(format!("{prefix}-sw")),
    }
    v
}

impl Drop for Chain {
    fn drop(&mut self) {
        // Our own children: stopped and reaped here, so that no PID is signalled after reuse.
        self.teardown.servers.lock().unwrap_or_else(|p| p.into_inner()).clear();
        for c in &mut self.servers {
            let _ = c.kill();
            let _ = c.wait();
        }
        self.teardown.run();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_axon_line_wires_the_hosts_to_its_ends() {
        let s = axon_line("tq", 3).unwrap();
        assert_eq!((s.axons, s.hosts.len()), (3, 2));
        assert_eq!((s.hosts[1].axon, s.hosts[1].port), (3, 0));
        assert_eq!(s.links().unwrap(), vec![((1, 1), (2, 2)), ((2, 1), (3, 2))]);
        let one = axon_line("tq", 1).unwrap();
        assert_eq!((one.hosts[1].axon, one.hosts[1].port), (1, 1));
        assert!(one.links.is_empty());
    }

    #[test]
    fn ping_lines_give_microseconds() {
        let out = "PING 10.0.9.1 (10.0.9.1) 56(84) bytes of data.\n64 bytes from 10.0.9.1: icmp_seq=1 ttl=64 time=0.123 ms\n64 bytes from 10.0.9.1: icmp_seq=2 ttl=64 time=1.5 ms\n\n--- 10.0.9.1 ping statistics ---\nrtt min/avg/max/mdev = 0.123/0.8/1.5/0.6 ms\n";
        let v = parse_ping_rtts_us(out);
        assert_eq!(v.len(), 2);
        assert!((v[0] - 123.0).abs() < 1e-9 && (v[1] - 1500.0).abs() < 1e-9);
    }

    #[test]
    fn bad_sizes_are_refused_before_anything_is_made() {
        let d = std::env::temp_dir().join(format!("tandem-chain-{}", std::process::id()));
        let e = Chain::up(Element::LinuxBridge, 0, "tq", &d, Path::new("tandem")).unwrap_err();
        assert!(e.contains("1 to 16"), "{e}");
        assert!(!d.exists());
    }
}
