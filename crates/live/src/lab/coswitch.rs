//! The CoSwitch lab (`kind = "coswitch"`): servers' vswitches and a small-table ToR, all real
//! Open vSwitch bridges, under `tandem controller --app coswitch`.
//!
//! ```toml
//! kind = "coswitch"
//! prefix = "cs"            # namespaces cs-sw, cs-h1..; 1-6 characters of [a-z0-9]
//! servers = 2              # 2 to 4 servers (vswitch bridges csv1.., datapath ids 1..)
//! hosts_per_server = 2     # 1 to 4; host i has address 10.78.0.i/24
//! controller_port = 6653   # in cs-sw (defaults 6653 and 9653)
//! metrics_port = 9653
//! [coswitch]               # the app's parameters (docs/systems/coswitch.md)
//! tor_capacity = 200       # the ToR's elephant entries; OVS's flow_limit is one more
//! ```
//!
//! `up` makes the switch namespace `PREFIX-sw` with a private Open vSwitch (its own database and
//! run folder in the lab's state folder, userspace datapath): one bridge per server (`PREFIXvS`,
//! datapath id S) with that server's hosts on ports 1.., a ToR bridge (`PREFIXtor`, datapath id
//! 100) whose table 0 is capped by a `Flow_Table` with `flow_limit` = `tor_capacity` + 1 (the
//! default entry) and `overflow_policy=refuse`, and a patch-port pair from each vswitch to the
//! ToR; one namespace per host with a veth to its server's bridge; and the controller with the
//! coswitch app. It returns once every bridge has its default entries and host 1 reaches every
//! other host. `down` stops the controller and Open vSwitch by PID and removes the namespaces
//! (with their veths and bridges) and the state folder if `up` made it; nothing else.

use super::app_lab::{
    attach_state, bring_up, config_with_log, controller_rows, is_kind, lab_namespaces, load_spec, replay_file,
    start_controller, stop_controller, take_app_text, take_common, take_int, wait_for, wait_reachable,
};
use super::ovs::PrivateOvs;
use super::{add_namespace, in_ns, is_lab_state, kill_processes_under, remove_named, veth};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tandem_coswitch::openflow::{CoSwitchAppConfig, COOKIE_TAG, COOKIE_TOR, COOKIE_VFLOW};

/// The ToR's datapath id.
pub const TOR_DPID: u64 = 100;

/// A CoSwitch lab file.
#[derive(Debug, Clone)]
pub struct CoSwitchLabSpec {
    /// Prefix of every name the lab makes.
    pub prefix: String,
    /// Servers (vswitch bridges).
    pub servers: usize,
    /// Hosts per server.
    pub hosts_per_server: usize,
    /// The controller's OpenFlow port on 127.0.0.1 in the switch namespace.
    pub controller_port: u16,
    /// The controller's metrics port there.
    pub metrics_port: u16,
    /// The app's configuration.
    pub app: CoSwitchAppConfig,
    app_text: String,
}

/// Whether a lab text is a CoSwitch lab (`kind = "coswitch"`).
pub fn is_coswitch_lab(text: &str) -> bool {
    is_kind(text, "coswitch")
}

impl CoSwitchLabSpec {
    /// Reads and checks a lab file; errors name the file and the key.
    pub fn load(path: &Path) -> Result<CoSwitchLabSpec, String> {
        load_spec(path, CoSwitchLabSpec::parse)
    }

    /// Parses and checks a lab text.
    pub fn parse(text: &str) -> Result<CoSwitchLabSpec, String> {
        let mut t: toml::Table = toml::from_str(text).map_err(|e| crate::toml_error::describe(text, &e))?;
        let (prefix, controller_port, metrics_port) = take_common(&mut t, "coswitch")?;
        let servers = take_int(&mut t, "servers", 2, 4, None)? as usize;
        let hosts_per_server = take_int(&mut t, "hosts_per_server", 1, 4, None)? as usize;
        let app_text = take_app_text(
            t,
            &["coswitch"],
            "kind, prefix, servers, hosts_per_server, controller_port, metrics_port, [coswitch]",
        )?;
        let app = CoSwitchAppConfig::parse(&app_text)?;
        if app.tor_dpid != TOR_DPID {
            return Err(format!("key `coswitch.tor_dpid`: the lab's ToR is datapath {TOR_DPID}"));
        }
        Ok(CoSwitchLabSpec {
            prefix,
            servers,
            hosts_per_server,
            controller_port,
            metrics_port,
            app,
            app_text,
        })
    }

    /// Hosts in all.
    pub fn hosts(&self) -> usize {
        self.servers * self.hosts_per_server
    }

    /// The server of host `h` (1-based both).
    pub fn server_of(&self, h: usize) -> usize {
        (h - 1) / self.hosts_per_server + 1
    }

    /// Namespace of host `h`.
    pub fn host_ns(&self, h: usize) -> String {
        format!("{}-h{h}", self.prefix)
    }

    /// Address of host `h`.
    pub fn host_ip(&self, h: usize) -> Ipv4Addr {
        Ipv4Addr::new(10, 78, 0, h as u8)
    }

    /// The switch namespace.
    pub fn switch_ns(&self) -> String {
        format!("{}-sw", self.prefix)
    }

    /// Every namespace the lab makes.
    pub fn namespaces(&self) -> Vec<String> {
        lab_namespaces(&self.prefix, self.hosts())
    }

    /// Server `s`'s vswitch bridge.
    pub fn vswitch(&self, s: usize) -> String {
        format!("{}v{s}", self.prefix)
    }

    /// The ToR bridge.
    pub fn tor(&self) -> String {
        format!("{}tor", self.prefix)
    }

    /// The default state folder.
    pub fn default_state(&self) -> PathBuf {
        std::env::temp_dir().join(format!("tandem-lab-{}", self.prefix))
    }

    fn metrics(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.metrics_port))
    }
}

/// A CoSwitch lab that is up.
#[derive(Debug, Clone)]
pub struct CoSwitchLab {
    /// Its file.
    pub spec: CoSwitchLabSpec,
    /// Its state folder (absolute).
    pub state: PathBuf,
}

/// Builds the lab; `tandem` is the binary that runs the controller. On failure everything
/// made so far is removed before the error returns.
pub fn up(spec: &CoSwitchLabSpec, state: &Path, tandem: &Path) -> Result<CoSwitchLab, String> {
    let state = bring_up(
        &spec.prefix,
        &spec.namespaces(),
        state,
        |state| {
            CoSwitchLab {
                spec: spec.clone(),
                state: state.to_path_buf(),
            }
            .build(tandem)
        },
        |state| down(spec, state),
    )?;
    Ok(CoSwitchLab {
        spec: spec.clone(),
        state,
    })
}

/// The lab that `up` built in `state`.
pub fn attach(spec: &CoSwitchLabSpec, state: &Path) -> Result<CoSwitchLab, String> {
    Ok(CoSwitchLab {
        spec: spec.clone(),
        state: attach_state(state)?,
    })
}

impl CoSwitchLab {
    /// The log the controller writes (every step of its cores), for `tandem lab replay`.
    pub fn log_file(&self) -> PathBuf {
        self.state.join("coswitch-log.txt")
    }

    /// The controller's `--app-config`: the lab's `[coswitch]`, with the cores' log going to
    /// [`CoSwitchLab::log_file`] (100,000 steps held between writes unless the lab says
    /// otherwise).
    fn app_config_text(&self) -> Result<String, String> {
        config_with_log(&self.spec.app_text, "coswitch", &self.log_file())
    }

    /// Replays the controller's log through fresh cores with the lab's parameters: the steps
    /// replayed, or the first that differs.
    pub fn replay(&self) -> Result<usize, String> {
        replay_file(&self.log_file(), |text| {
            tandem_coswitch::openflow::replay_lines(&self.spec.app, text)
        })
    }

    fn ovs(&self) -> PrivateOvs {
        PrivateOvs::new(&self.state.join("ovs"), Some(&self.spec.switch_ns()))
    }

    /// `ovs-ofctl dump-flows` of bridge `br`.
    pub fn dump_flows(&self, br: &str) -> Result<String, String> {
        self.ovs().ofctl("dump-flows", br, &[])
    }

    fn build(&self, tandem: &Path) -> Result<(), String> {
        let s = &self.spec;
        let sw = s.switch_ns();
        for ns in s.namespaces() {
            add_namespace(&ns)?;
        }
        for h in 1..=s.hosts() {
            let ns = s.host_ns(h);
            veth(
                &format!("{}h{h}", s.prefix),
                (&ns, "eth0"),
                (&sw, &format!("h{h}")),
                "1500",
            )?;
            in_ns(
                &ns,
                &["ip", "addr", "add", &format!("{}/24", s.host_ip(h)), "dev", "eth0"],
            )?;
        }
        let ovs = self.ovs();
        ovs.start()?;
        let mut args: Vec<String> = Vec::new();
        let mut cmd = |a: &[&str]| {
            args.push("--".into());
            args.extend(a.iter().map(|x| x.to_string()));
        };
        let bridge = |name: &str, dpid: u64| {
            vec![
                "add-br".to_string(),
                name.to_string(),
                "--".into(),
                "set".into(),
                "bridge".into(),
                name.to_string(),
                "datapath_type=netdev".into(),
                "protocols=OpenFlow13".into(),
                "fail-mode=secure".into(),
                format!("other-config:datapath-id={dpid:016x}"),
                "other-config:disable-in-band=true".into(),
            ]
        };
        let tor = s.tor();
        let first = bridge(&tor, TOR_DPID);
        for v in 1..=s.servers {
            let br = s.vswitch(v);
            let b = bridge(&br, v as u64);
            let b: Vec<&str> = b.iter().map(String::as_str).collect();
            cmd(&b);
            let (up, dn) = (format!("{}u{v}", s.prefix), format!("{}d{v}", s.prefix));
            cmd(&[
                "add-port",
                &br,
                &up,
                "--",
                "set",
                "interface",
                &up,
                "type=patch",
                &format!("options:peer={dn}"),
                "ofport_request=100",
            ]);
            cmd(&[
                "add-port",
                &tor,
                &dn,
                "--",
                "set",
                "interface",
                &dn,
                "type=patch",
                &format!("options:peer={up}"),
                &format!("ofport_request={v}"),
            ]);
        }
        for h in 1..=s.hosts() {
            let (br, port) = (s.vswitch(s.server_of(h)), format!("h{h}"));
            let local = (h - 1) % s.hosts_per_server + 1;
            cmd(&[
                "add-port",
                &br,
                &port,
                "--",
                "set",
                "interface",
                &port,
                &format!("ofport_request={local}"),
            ]);
        }
        let limit = format!("flow_limit={}", u64::from(s.app.tor_capacity) + 1);
        cmd(&[
            "--id=@ft",
            "create",
            "Flow_Table",
            "name=tor",
            &limit,
            "overflow_policy=refuse",
        ]);
        cmd(&["set", "bridge", &tor, "flow_tables:0=@ft"]);
        let all: Vec<&str> = first.iter().chain(args.iter()).map(String::as_str).collect();
        ovs.vsctl(&all)?;
        start_controller(
            &self.state,
            &sw,
            tandem,
            "coswitch",
            &self.app_config_text()?,
            s.controller_port,
            s.metrics(),
        )?;
        let target = format!("tcp:127.0.0.1:{}", s.controller_port);
        for br in (1..=s.servers).map(|v| s.vswitch(v)).chain([tor.clone()]) {
            ovs.vsctl(&["set-controller", &br, &target])?;
        }
        wait_for(
            &self.state,
            "the controller's default entries",
            Duration::from_secs(20),
            || {
                self.dump_flows(&tor).is_ok_and(|f| f.contains("actions=NORMAL"))
                    && (1..=s.servers).all(|v| {
                        self.dump_flows(&s.vswitch(v))
                            .is_ok_and(|f| f.contains("priority=1,ip actions=CONTROLLER"))
                    })
            },
        )?;
        let others: Vec<String> = (2..=s.hosts()).map(|h| s.host_ip(h).to_string()).collect();
        wait_reachable(&s.host_ns(1), &others, Duration::from_secs(20))
    }
}

/// Counts a flow dump's entries by cookie tag: (entries with `tag`, those of them that match the
/// DSCP mark `dscp`, all entries).
pub fn count_tagged(dump: &str, tag: u64, dscp: u8) -> (usize, usize, usize) {
    let mut n = (0, 0, 0);
    let tos = format!("nw_tos={}", u32::from(dscp) << 2);
    let field = format!("ip_dscp={dscp}");
    for line in dump.lines().filter(|l| l.contains("cookie=")) {
        n.2 += 1;
        let cookie = line
            .split("cookie=")
            .nth(1)
            .and_then(|c| c.split(',').next())
            .and_then(|c| u64::from_str_radix(c.trim().trim_start_matches("0x"), 16).ok())
            .unwrap_or(0);
        if cookie & COOKIE_TAG == tag {
            n.0 += 1;
            let matches = line.split(" actions=").next().unwrap_or("");
            if matches.contains(&tos) || matches.contains(&field) {
                n.1 += 1;
            }
        }
    }
    n
}

/// One JSON object per element (the ToR, each vswitch, the controller, each host), each on a
/// line, with at least `element` and `kind`. The controller's counters are read in the switch
/// namespace by `tandem` (the binary given).
pub fn status(lab: &CoSwitchLab, tandem: &Path) -> Result<Vec<String>, String> {
    let s = &lab.spec;
    let rows = controller_rows(&s.switch_ns(), tandem, s.metrics())?;
    let get = |name: &str, dpid: u64| -> u64 {
        let key = format!("tandem_coswitch_{name}{{dpid=\"{dpid:016x}\"}}");
        rows.iter().find(|(n, _)| *n == key).map_or(0, |(_, v)| *v)
    };
    let ctl = |name: &str| rows.iter().find(|(n, _)| n == name).map_or(0, |(_, v)| *v);
    let dscp = match s.app.arbiter.mark {
        tandem_coswitch::Mark::Dscp(d) => d,
        tandem_coswitch::Mark::Vlan(_) => 0,
    };
    let (entries, marked, all) = count_tagged(&lab.dump_flows(&s.tor())?, COOKIE_TOR, dscp);
    let mut out = vec![format!(
        concat!(
            "{{\"element\":\"{}\",\"kind\":\"coswitch\",\"dpid\":\"{:016x}\",\"table_entries\":{},",
            "\"table_capacity\":{},\"offloaded_flows\":{},\"software_packets\":{},\"threshold_packets\":{},",
            "\"marked_flows\":{},\"marked_entries\":{},\"switch_entries\":{},\"flow_limit\":{},\"tor_full\":{},",
            "\"reports\":{},\"threshold_moves\":{}}}"
        ),
        s.tor(),
        TOR_DPID,
        entries,
        s.app.tor_capacity,
        get("offloaded_flows", TOR_DPID),
        get("software_packets", TOR_DPID),
        get("threshold_packets", TOR_DPID),
        get("marked_flows", TOR_DPID),
        marked,
        all,
        u64::from(s.app.tor_capacity) + 1,
        get("tor_full", TOR_DPID),
        get("reports", TOR_DPID),
        get("threshold_moves", TOR_DPID),
    )];
    for v in 1..=s.servers {
        let dump = lab.dump_flows(&s.vswitch(v))?;
        let (flows, _, _) = count_tagged(&dump, COOKIE_VFLOW, dscp);
        out.push(format!(
            "{{\"element\":\"{}\",\"kind\":\"vswitch\",\"dpid\":\"{:016x}\",\"flow_entries\":{flows},\"marking_entries\":{},\"packets\":{}}}",
            s.vswitch(v),
            v,
            elephants_marking(&dump, dscp),
            get("vswitch_packets", v as u64),
        ));
    }
    out.push(format!(
        "{{\"element\":\"controller\",\"kind\":\"controller\",\"listen\":\"127.0.0.1:{}\",\"metrics\":\"{}\",\"switches_connected\":{},\"packet_ins\":{}}}",
        s.controller_port,
        s.metrics(),
        ctl("switches_connected"),
        ctl("packet_ins")
    ));
    for h in 1..=s.hosts() {
        out.push(format!(
            "{{\"element\":\"{}\",\"kind\":\"host\",\"ip\":\"{}\",\"server\":{}}}",
            s.host_ns(h),
            s.host_ip(h),
            s.server_of(h)
        ));
    }
    Ok(out)
}

/// vswitch entries whose actions rewrite the DSCP to the mark (the marked flows).
fn elephants_marking(dump: &str, dscp: u8) -> usize {
    let tos = format!("mod_nw_tos:{}", u32::from(dscp) << 2);
    let field = format!("set_field:{dscp}->ip_dscp");
    dump.lines().filter(|l| l.contains(&tos) || l.contains(&field)).count()
}

/// Removes what [`up`] made (see the module documentation). Safe to run when the lab is half
/// up or already down.
pub fn down(spec: &CoSwitchLabSpec, state: &Path) {
    let state = &std::path::absolute(state).unwrap_or_else(|_| state.to_path_buf());
    stop_controller(state);
    PrivateOvs::stop(&state.join("ovs"));
    if is_lab_state(state) {
        kill_processes_under(state);
    }
    // Root-namespace veth ends of a half-made wire.
    let veths = (1..=spec.hosts()).map(|h| format!("{}h{h}x", spec.prefix));
    remove_named(&spec.namespaces(), veths, state);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_lab_parses() {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../labs/coswitch.toml");
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(is_coswitch_lab(&text));
        let s = CoSwitchLabSpec::load(&p).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((s.servers, s.hosts_per_server, s.hosts()), (2, 2, 4));
        assert_eq!((s.server_of(1), s.server_of(2), s.server_of(3)), (1, 1, 2));
        assert_eq!(CoSwitchAppConfig::parse(&s.app_text).unwrap(), s.app);
    }

    #[test]
    fn bad_labs_name_the_key() {
        let ok = "kind = \"coswitch\"\nprefix = \"cs\"\nservers = 2\nhosts_per_server = 2\n";
        assert!(CoSwitchLabSpec::parse(ok).is_ok());
        for (text, key) in [
            (ok.replace("servers = 2", "servers = 9"), "servers"),
            (ok.replace("hosts_per_server = 2\n", ""), "hosts_per_server"),
            (format!("{ok}bogus = 1\n"), "bogus"),
            (format!("{ok}[coswitch]\ntor_dpid = 5\n"), "tor_dpid"),
            (format!("{ok}[coswitch]\ndscp = 70\n"), "dscp"),
        ] {
            let e = CoSwitchLabSpec::parse(&text).unwrap_err();
            assert!(e.contains(key), "{text}: {e}");
        }
    }

    #[test]
    fn dumps_are_counted_by_tag_and_mark() {
        let dump = " cookie=0x636f737400000001, duration=1s, table=0, priority=10,tcp,nw_tos=32,nw_src=10.78.0.1 actions=NORMAL\n \
            cookie=0x636f737400000002, duration=1s, table=0, priority=10,tcp,nw_src=10.78.0.2 actions=NORMAL\n \
            cookie=0x0, duration=2s, table=0, priority=0 actions=NORMAL\n";
        assert_eq!(count_tagged(dump, COOKIE_TOR, 8), (2, 1, 3));
        let vs = " cookie=0x636f737600000000, priority=10,tcp actions=mod_nw_tos:32,NORMAL\n";
        assert_eq!(elephants_marking(vs, 8), 1);
    }
}
