//! `tandem lab up|down LAB.toml`: a network of Axon processes and stock Linux hosts built from
//! network namespaces and veth pairs, and removed again.
//!
//! `up` creates namespaces `PREFIX-a1..` (one Axon process each, `tandem axon run`) and
//! `PREFIX-h1..` (hosts with an untouched Linux stack and IPv6 off), wires hosts to Axon ports
//! and Axons to each other with veth pairs, starts the Axons, then runs `dhclient` (Debian
//! `isc-dhcp-client`) in every host (checksum and segmentation offloads off on every veth, as
//! on a real wire; Axon-to-Axon links with a 9,000-byte MTU for the Axon header) and returns when each has its lease, or fails with a clear
//! message after cleaning up. `down` stops the processes it started (by PID, from its state
//! directory) and deletes the namespaces named in the lab file (their veths go with them);
//! nothing else is touched.

mod app_lab;
pub mod chain;
pub mod coswitch;
mod ovs;
pub mod spec;
pub mod tcpu;

pub use spec::LabSpec;

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A lab that is up.
#[derive(Debug, Clone)]
pub struct Lab {
    /// Its file.
    pub spec: LabSpec,
    /// Where its configs, logs and PID files are.
    pub state: PathBuf,
    /// Each host's address (host 1 first).
    pub host_ips: Vec<Ipv4Addr>,
}

/// Whether this process runs as root (effective user 0), which namespaces need.
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("Uid:"))?;
            line.split_whitespace().nth(2).map(|euid| euid == "0")
        })
        .unwrap_or(false)
}

/// The default state directory of a lab.
pub fn default_state(spec: &LabSpec) -> PathBuf {
    std::env::temp_dir().join(format!("tandem-lab-{}", spec.prefix))
}

pub(crate) fn run(cmd: &mut Command) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

pub(crate) fn ip(args: &[&str]) -> Result<String, String> {
    run(Command::new("ip").args(args))
}

pub(crate) fn in_ns(ns: &str, args: &[&str]) -> Result<String, String> {
    run(Command::new("ip").args(["netns", "exec", ns]).args(args))
}

pub(crate) fn existing_namespaces() -> Vec<String> {
    ip(&["netns", "list"])
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

/// Makes namespace `ns` with its loopback up and IPv6 off (so that hosts send no router
/// solicitations or duplicate-address probes of their own).
pub(crate) fn add_namespace(ns: &str) -> Result<(), String> {
    ip(&["netns", "add", ns])?;
    in_ns(ns, &["ip", "link", "set", "lo", "up"])?;
    for key in [
        "net.ipv6.conf.all.disable_ipv6=1",
        "net.ipv6.conf.default.disable_ipv6=1",
    ] {
        in_ns(ns, &["sysctl", "-q", "-w", key])?;
    }
    Ok(())
}

/// MTU of the veths between Axons: an Axon frame is the host's whole Ethernet frame (up to
/// 1,514 bytes) behind the Axon header, so Axon links carry more than a host link's 1,500.
const AXON_LINK_MTU: &str = "9000";

/// A veth pair with one end in each namespace, renamed there, with `mtu`.
pub(crate) fn veth(
    tmp: &str,
    (ns_a, name_a): (&str, &str),
    (ns_b, name_b): (&str, &str),
    mtu: &str,
) -> Result<(), String> {
    let (ta, tb) = (format!("{tmp}x"), format!("{tmp}y"));
    ip(&["link", "add", &ta, "type", "veth", "peer", "name", &tb])?;
    for (t, ns, name) in [(&ta, ns_a, name_a), (&tb, ns_b, name_b)] {
        ip(&["link", "set", t, "netns", ns])?;
        in_ns(ns, &["ip", "link", "set", t, "name", name, "mtu", mtu])?;
        // A veth defers checksums and segments to a NIC that is not there (offloads); frames a
        // packet socket forwards must be finished, as on a wire.
        in_ns(
            ns,
            &[
                "ethtool", "-K", name, "tx", "off", "tso", "off", "gso", "off", "gro", "off",
            ],
        )
        .map_err(|e| format!("{e} (ethtool is Debian's ethtool package)"))?;
        in_ns(ns, &["ip", "link", "set", name, "up"])?;
    }
    Ok(())
}

/// Builds the lab; `tandem` is the binary that runs the Axons. On failure everything made so
/// far is removed before the error returns.
pub fn up(spec: &LabSpec, state: &Path, tandem: &Path, lease_timeout: Duration) -> Result<Lab, String> {
    let clash: Vec<String> = spec
        .namespaces()
        .into_iter()
        .filter(|n| existing_namespaces().contains(n))
        .collect();
    if !clash.is_empty() {
        return Err(format!(
            "namespaces {} already exist: is the lab up already? (`tandem lab down` removes it)",
            clash.join(", ")
        ));
    }
    make_state(&spec.prefix, state)?;
    match build(spec, state, tandem, lease_timeout) {
        Ok(lab) => Ok(lab),
        Err(e) => {
            down(spec, state);
            Err(e)
        }
    }
}

/// The file that marks a state folder as made by `tandem lab up`: `down` deletes only a folder
/// that has it.
pub const STATE_MARK: &str = ".tandem-lab";

/// Whether `state` is a folder `up` made (it holds [`STATE_MARK`]).
pub fn is_lab_state(state: &Path) -> bool {
    state.join(STATE_MARK).is_file()
}

/// Makes (or reuses) the state folder: a folder that exists, is not empty and was not made by
/// a lab is refused, so that `down` never deletes what a user keeps there.
pub(crate) fn make_state(prefix: &str, state: &Path) -> Result<(), String> {
    let in_use = state.is_dir()
        && !is_lab_state(state)
        && std::fs::read_dir(state).map(|mut d| d.next().is_some()).unwrap_or(true);
    if in_use || (state.exists() && !state.is_dir()) {
        return Err(format!(
            "{}: exists and was not made by `tandem lab up`; give a new folder with --state",
            state.display()
        ));
    }
    std::fs::create_dir_all(state).map_err(|e| format!("{}: {e}", state.display()))?;
    std::fs::write(state.join(STATE_MARK), format!("{prefix}\n")).map_err(|e| format!("{}: {e}", state.display()))
}

fn build(spec: &LabSpec, state: &Path, tandem: &Path, lease_timeout: Duration) -> Result<Lab, String> {
    // Absolute paths in the processes' command lines: `down` recognises its processes by them.
    let state = &std::path::absolute(state).map_err(|e| format!("{}: {e}", state.display()))?;
    for ns in spec.namespaces() {
        add_namespace(&ns)?;
    }
    // Wires: hosts to their Axon, Axons to each other.
    let mut ports: Vec<Vec<(u8, &str)>> = vec![Vec::new(); spec.axons as usize + 1];
    for (i, h) in spec.hosts.iter().enumerate() {
        let (hn, an) = (spec.host_ns(i + 1), spec.axon_ns(h.axon));
        let pname = format!("p{}", h.port);
        veth(
            &format!("{}h{}", spec.prefix, i + 1),
            (&hn, "eth0"),
            (&an, &pname),
            "1500",
        )?;
        ports[h.axon as usize].push((h.port, "host"));
    }
    for (i, ((a, p), (b, q))) in spec.links()?.into_iter().enumerate() {
        let (pa, pb) = (format!("p{p}"), format!("p{q}"));
        veth(
            &format!("{}l{}", spec.prefix, i + 1),
            (&spec.axon_ns(a), &pa),
            (&spec.axon_ns(b), &pb),
            AXON_LINK_MTU,
        )?;
        ports[a as usize].push((p, "axon"));
        ports[b as usize].push((q, "axon"));
    }
    // The Axons.
    let topology = spec.topology_text()?;
    for a in 1..=spec.axons {
        let mut cfg = format!(
            "device_id = {a}\ndiscovery = {}\ntopology = \"\"\"\n{topology}\"\"\"\n\n[dhcp]\nserver_ip = \"10.0.{a}.1\"\nsubnet_mask = \"255.255.0.0\"\nfirst = \"10.0.{a}.10\"\nlast = \"10.0.{a}.200\"\nlease_secs = 3600\n",
            spec.discovery
        );
        for (p, kind) in &ports[a as usize] {
            cfg += &format!("\n[[ports]]\ninterface = \"p{p}\"\nport = {p}\nkind = \"{kind}\"\n");
        }
        let file = state.join(format!("a{a}.toml"));
        std::fs::write(&file, cfg).map_err(|e| format!("{}: {e}", file.display()))?;
        let log = std::fs::File::create(state.join(format!("a{a}.log"))).map_err(|e| e.to_string())?;
        let child = Command::new("ip")
            .args(["netns", "exec", &spec.axon_ns(a)])
            .arg(tandem)
            .args(["axon", "run", "--config"])
            .arg(&file)
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", tandem.display()))?;
        wait_for_cmdline(child.id());
        std::fs::write(state.join(format!("a{a}.pid")), child.id().to_string()).map_err(|e| e.to_string())?;
    }
    // Leases: every host asks at once.
    let conf = state.join("dhclient.conf");
    std::fs::write(&conf, "timeout 20;\nretry 1;\n").map_err(|e| e.to_string())?;
    let script = state.join("dhclient-script");
    std::fs::write(
        &script,
        "#!/bin/sh\n# Sets the leased address and nothing else (no resolv.conf, no routes).\ncase \"$reason\" in\n  BOUND|RENEW|REBIND|REBOOT)\n    [ -n \"$old_ip_address\" ] && [ \"$old_ip_address\" != \"$new_ip_address\" ] && ip -4 addr flush dev \"$interface\"\n    ip -4 addr replace \"$new_ip_address/$new_subnet_mask\" dev \"$interface\" ;;\n  EXPIRE|FAIL|RELEASE|STOP)\n    ip -4 addr flush dev \"$interface\" ;;\nesac\nexit 0\n",
    )
    .map_err(|e| e.to_string())?;
    set_executable(&script)?;
    let mut clients = Vec::new();
    for h in 1..=spec.hosts.len() {
        let pid = state.join(format!("h{h}.dhclient.pid"));
        let lease = state.join(format!("h{h}.leases"));
        let child = Command::new("ip")
            .args(["netns", "exec", &spec.host_ns(h), "dhclient", "-4", "-1", "-cf"])
            .arg(&conf)
            .arg("-sf")
            .arg(&script)
            .arg("-pf")
            .arg(&pid)
            .arg("-lf")
            .arg(&lease)
            .arg("eth0")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run dhclient (Debian isc-dhcp-client): {e}"))?;
        clients.push((h, child));
    }
    let deadline = Instant::now() + lease_timeout;
    let mut host_ips = vec![Ipv4Addr::UNSPECIFIED; spec.hosts.len()];
    for (h, child) in clients {
        let out = child.wait_with_output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!(
                "host {} ({}) got no DHCP lease from Axon {}: {}",
                h,
                spec.host_ns(h),
                spec.hosts[h - 1].axon,
                String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("")
            ));
        }
        loop {
            if let Some(a) = host_ip(spec, h) {
                host_ips[h - 1] = a;
                break;
            }
            if Instant::now() > deadline {
                return Err(format!("host {h}: dhclient finished but eth0 has no address"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    Ok(Lab {
        spec: spec.clone(),
        state: state.to_path_buf(),
        host_ips,
    })
}

#[cfg(unix)]
pub(crate) fn set_executable(p: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).map_err(|e| e.to_string())
}

/// The IPv4 address of host `h`'s eth0, if it has one.
pub fn host_ip(spec: &LabSpec, h: usize) -> Option<Ipv4Addr> {
    let out = in_ns(&spec.host_ns(h), &["ip", "-4", "-o", "addr", "show", "dev", "eth0"]).ok()?;
    let word = out.split_whitespace().skip_while(|w| *w != "inet").nth(1)?;
    word.split('/').next()?.parse().ok()
}

/// Runs `args` in host `h`'s namespace.
pub fn host_exec(spec: &LabSpec, h: usize, args: &[&str]) -> Result<String, String> {
    in_ns(&spec.host_ns(h), args)
}

/// Whether process `pid` is still ours: its command line names `mark` (a file of the lab's
/// state folder, given to it as an absolute path). A PID from a pidfile may have been reused by
/// an unrelated process since the lab's process died; that one is never signalled.
fn is_ours(pid: &str, mark: &Path) -> bool {
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let mark = mark.as_os_str().as_encoded_bytes();
    cmdline.split(|&b| b == 0).any(|arg| arg == mark)
}

/// Waits (at most 2 s) until process `pid` shows a command line. A process spawned through
/// vfork lets its parent go on inside `execve`, before the kernel has set the new program's
/// arguments, and `/proc/PID/cmdline` then reads empty: a cleanup in that window would take
/// the process for somebody else's and leave it running.
pub(crate) fn wait_for_cmdline(pid: u32) {
    let until = Instant::now() + Duration::from_secs(2);
    while Instant::now() < until {
        match std::fs::read(format!("/proc/{pid}/cmdline")) {
            Ok(c) if c.is_empty() => std::thread::sleep(Duration::from_millis(1)),
            _ => return,
        }
    }
}

/// Stops the process named by `file` if its command line carries `mark`.
pub(crate) fn kill_pidfile(file: &Path, mark: &Path) {
    let Ok(pid) = std::fs::read_to_string(file) else { return };
    let pid = pid.trim();
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) || !is_ours(pid, mark) {
        return;
    }
    let _ = Command::new("kill").arg(pid).stderr(Stdio::null()).status();
    let until = Instant::now() + Duration::from_secs(3);
    while Path::new(&format!("/proc/{pid}")).exists() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    if is_ours(pid, mark) {
        let _ = Command::new("kill").args(["-9", pid]).stderr(Stdio::null()).status();
    }
}

/// Stops every process (other than this one) whose command line names a path under `dir`
/// (absolute): what a lab or a chain started there, with or without a pidfile; a `dhclient`
/// still waiting for its lease has written none. TERM first, KILL for what is left after 3 s.
pub(crate) fn kill_processes_under(dir: &Path) {
    let mut mark = dir.as_os_str().as_encoded_bytes().to_vec();
    mark.push(b'/');
    let me = std::process::id().to_string();
    let ours = |pid: &str| {
        std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
            c.split(|&b| b == 0)
                .any(|arg| arg.windows(mark.len()).any(|w| w == mark))
        })
    };
    let pids: Vec<String> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|p| p.bytes().all(|b| b.is_ascii_digit()) && *p != me && ours(p))
        .collect();
    if pids.is_empty() {
        return;
    }
    let _ = Command::new("kill").args(&pids).stderr(Stdio::null()).status();
    let until = Instant::now() + Duration::from_secs(3);
    while pids.iter().any(|p| ours(p)) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<&String> = pids.iter().filter(|p| ours(p)).collect();
    if !left.is_empty() {
        let _ = Command::new("kill").arg("-9").args(left).stderr(Stdio::null()).status();
    }
}

/// Removes what [`up`] made: stops the processes in `state` by PID (only those whose command
/// line still names this lab's files), deletes the lab's namespaces, and removes `state` if
/// [`up`] made it (it holds [`STATE_MARK`]); any other folder is left as it is. Safe to run
/// when the lab is half up or already down.
pub fn down(spec: &LabSpec, state: &Path) {
    let state = &std::path::absolute(state).unwrap_or_else(|_| state.to_path_buf());
    for h in 1..=spec.hosts.len() {
        let pid = state.join(format!("h{h}.dhclient.pid"));
        kill_pidfile(&pid, &pid);
    }
    for a in 1..=spec.axons {
        kill_pidfile(&state.join(format!("a{a}.pid")), &state.join(format!("a{a}.toml")));
    }
    // What has no pidfile yet (a client still waiting for its lease, an Axon being started).
    if is_lab_state(state) {
        kill_processes_under(state);
    }
    // Root-namespace veth ends left by a half-made wire.
    let veths = (1..=spec.hosts.len().max(spec.links.len()))
        .flat_map(|i| ["h", "l"].map(|kind| format!("{}{kind}{i}x", spec.prefix)));
    remove_named(&spec.namespaces(), veths, state);
}

/// The end of every lab's `down`: deletes those of `namespaces` that exist, then those of
/// `links` (root-namespace interfaces) that exist, then `state` if a lab made it.
pub(crate) fn remove_named(namespaces: &[String], links: impl IntoIterator<Item = String>, state: &Path) {
    let present = existing_namespaces();
    for ns in namespaces {
        if present.contains(ns) {
            let _ = ip(&["netns", "del", ns]);
        }
    }
    for name in links {
        if Path::new(&format!("/sys/class/net/{name}")).exists() {
            let _ = ip(&["link", "del", &name]);
        }
    }
    if is_lab_state(state) {
        let _ = std::fs::remove_dir_all(state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> LabSpec {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../labs/pair.toml");
        LabSpec::load(&p).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A shell script that stays the process holding its arguments: dash (0.5.11 on) runs
    /// a lone `sleep 30` by exec, which would drop the mark from the command line.
    const STAYS: &str = "while :; do sleep 1; done";

    /// Starts a process that stays, with `mark` on its command line, once that line shows.
    fn stays(mark: impl AsRef<std::ffi::OsStr>) -> std::process::Child {
        let child = Command::new("sh").args(["-c", STAYS]).arg(mark).spawn().unwrap();
        wait_for_cmdline(child.id());
        child
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("tandem-lab-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn down_never_deletes_a_folder_the_lab_did_not_make() {
        let d = scratch("keep");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("precious.txt"), "mine").unwrap();
        // `up` refuses it before making anything ...
        let err = make_state("tp", &d).unwrap_err();
        assert!(err.contains("not made by `tandem lab up`"), "{err}");
        // ... and `down` leaves it.
        down(&spec(), &d);
        assert_eq!(std::fs::read_to_string(d.join("precious.txt")).unwrap(), "mine");
        // A folder `up` made is marked, and `down` removes it.
        let e = scratch("made");
        make_state("tp", &e).unwrap();
        assert!(is_lab_state(&e));
        down(&spec(), &e);
        assert!(!e.exists());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn processes_naming_the_state_folder_are_stopped_and_only_those() {
        let d = scratch("procs");
        std::fs::create_dir_all(&d).unwrap();
        let d = std::path::absolute(&d).unwrap();
        let mut ours = stays(d.join("h1.leases"));
        // A sibling folder whose name starts like ours is not ours.
        let mut other = stays(format!("{}x/h1.leases", d.display()));
        kill_processes_under(&d);
        assert!(!ours.wait().unwrap().success(), "ours was stopped by a signal");
        assert!(
            other.try_wait().unwrap().is_none(),
            "a process of another folder was stopped"
        );
        let _ = other.kill();
        let _ = other.wait();
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_reused_pid_is_not_signalled() {
        let d = scratch("pid");
        std::fs::create_dir_all(&d).unwrap();
        let mark = d.join("a1.toml");
        // Ours: the command line names the mark. Not ours: a process that does not.
        let mut ours = stays(&mark);
        let mut other = Command::new("sleep").arg("30").spawn().unwrap();
        wait_for_cmdline(other.id());
        for (child, name) in [(&ours, "ours.pid"), (&other, "other.pid")] {
            std::fs::write(d.join(name), child.id().to_string()).unwrap();
        }
        assert!(is_ours(&ours.id().to_string(), &mark));
        assert!(!is_ours(&other.id().to_string(), &mark));
        kill_pidfile(&d.join("other.pid"), &mark);
        assert!(other.try_wait().unwrap().is_none(), "an unrelated process was killed");
        kill_pidfile(&d.join("ours.pid"), &mark);
        assert!(ours.wait().is_ok());
        let _ = other.kill();
        let _ = other.wait();
        let _ = std::fs::remove_dir_all(&d);
    }
}
