//! The TCPU lab (`kind = "tcpu"`): TCPU live, with Open vSwitch standing for the switch ASIC.
//!
//! ```toml
//! kind = "tcpu"
//! prefix = "tt"            # namespaces tt-sw, tt-h1..; 1-6 characters of [a-z0-9]
//! hosts = 3                # 2 to 8 hosts, host i on switch port i, address 10.77.0.i/24
//! controller_port = 6653   # the controller listens on 127.0.0.1:PORT in tt-sw (default 6653)
//! metrics_port = 9653      # and serves its counters there (default 9653)
//! [tcpu]                   # the core's parameters (as `tandem controller --app-config`)
//! asic_flow_entries = 16
//! [app]                    # the app's limits
//! ```
//!
//! `up` makes a switch namespace `PREFIX-sw` and one namespace per host, a veth from each
//! host's `eth0` to port `pI` in the switch namespace, a private Open vSwitch in the switch
//! namespace (its own database and run folder in the lab's state folder, userspace datapath,
//! nothing of a system OVS touched, so labs never meet each other or a system OVS) with one
//! bridge whose flow table (`[app] table`) is capped by a `Flow_Table` with `flow_limit` = k + 1
//! (the table-miss entry) + the attack entries and `overflow_policy=refuse`, and starts
//! `tandem controller --app tcpu` for it in the same namespace. It returns once the controller
//! has installed its table-miss entry and host 1 reaches every other host. `down` stops the
//! processes it started (by PID, checked against their command lines) and removes the
//! namespaces it named (their veths and bridge go with them) and the state folder if `up` made
//! it; nothing else.

use super::app_lab::{
    attach_state, bring_up, config_with_log, controller_rows, is_kind, lab_namespaces, load_spec, replay_file,
    start_controller, stop_controller, take_app_text, take_common, take_int, wait_for, wait_reachable,
};
use super::ovs::PrivateOvs;
use super::{add_namespace, in_ns, is_lab_state, kill_processes_under, remove_named, veth};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use std::time::Duration;
use tandem_tcpu::openflow::{TcpuAppConfig, COOKIE_FLOW, COOKIE_MISS, COOKIE_SRC, COOKIE_TAG};

/// The bridge's datapath id.
pub const DPID: u64 = 1;

/// A TCPU lab file.
#[derive(Debug, Clone)]
pub struct TcpuLabSpec {
    /// Prefix of every name the lab makes.
    pub prefix: String,
    /// Hosts (2 to 8).
    pub hosts: usize,
    /// The controller's OpenFlow port on 127.0.0.1.
    pub controller_port: u16,
    /// The controller's metrics port on 127.0.0.1.
    pub metrics_port: u16,
    /// The app's configuration.
    pub app: TcpuAppConfig,
    /// Its `[tcpu]` and `[app]` tables as written, for the controller's `--app-config`.
    app_text: String,
}

/// Whether a lab text is a TCPU lab (`kind = "tcpu"`); other labs are Axon labs.
pub fn is_tcpu_lab(text: &str) -> bool {
    is_kind(text, "tcpu")
}

impl TcpuLabSpec {
    /// Reads and checks a lab file; errors name the file and the key.
    pub fn load(path: &Path) -> Result<TcpuLabSpec, String> {
        load_spec(path, TcpuLabSpec::parse)
    }

    /// Parses and checks a lab text.
    pub fn parse(text: &str) -> Result<TcpuLabSpec, String> {
        let mut t: toml::Table = toml::from_str(text).map_err(|e| crate::toml_error::describe(text, &e))?;
        let (prefix, controller_port, metrics_port) = take_common(&mut t, "tcpu")?;
        let hosts = take_int(&mut t, "hosts", 2, 8, None)? as usize;
        let app_text = take_app_text(
            t,
            &["tcpu", "app"],
            "kind, prefix, hosts, controller_port, metrics_port, [tcpu], [app]",
        )?;
        let app = TcpuAppConfig::parse(&app_text)?;
        if usize::from(app.tcpu.ports) < hosts {
            return Err(format!("key `tcpu.ports`: {} ports for {hosts} hosts", app.tcpu.ports));
        }
        Ok(TcpuLabSpec {
            prefix,
            hosts,
            controller_port,
            metrics_port,
            app,
            app_text,
        })
    }

    /// Namespace of host `h` (1-based).
    pub fn host_ns(&self, h: usize) -> String {
        format!("{}-h{h}", self.prefix)
    }

    /// Address of host `h`.
    pub fn host_ip(&self, h: usize) -> Ipv4Addr {
        Ipv4Addr::new(10, 77, 0, h as u8)
    }

    /// The switch's namespace (Open vSwitch and the controller run there).
    pub fn switch_ns(&self) -> String {
        format!("{}-sw", self.prefix)
    }

    /// Every namespace the lab makes.
    pub fn namespaces(&self) -> Vec<String> {
        lab_namespaces(&self.prefix, self.hosts)
    }

    /// The bridge standing for the ASIC.
    pub fn bridge(&self) -> String {
        format!("{}br", self.prefix)
    }

    /// Entries OVS lets the table hold: k flow entries, the table-miss entry, the attack
    /// entries.
    pub fn flow_limit(&self) -> usize {
        self.app.tcpu.asic_flow_entries as usize + 1 + self.app.app.max_attack_rules
    }

    /// The default state folder.
    pub fn default_state(&self) -> PathBuf {
        std::env::temp_dir().join(format!("tandem-lab-{}", self.prefix))
    }

    fn metrics(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.metrics_port))
    }
}

/// A TCPU lab that is up.
#[derive(Debug, Clone)]
pub struct TcpuLab {
    /// Its file.
    pub spec: TcpuLabSpec,
    /// Its state folder (absolute).
    pub state: PathBuf,
}

/// Builds the lab; `tandem` is the binary that runs the controller. On failure everything
/// made so far is removed before the error returns.
pub fn up(spec: &TcpuLabSpec, state: &Path, tandem: &Path) -> Result<TcpuLab, String> {
    let state = bring_up(
        &spec.prefix,
        &spec.namespaces(),
        state,
        |state| {
            TcpuLab {
                spec: spec.clone(),
                state: state.to_path_buf(),
            }
            .build(tandem)
        },
        |state| down(spec, state),
    )?;
    Ok(TcpuLab {
        spec: spec.clone(),
        state,
    })
}

impl TcpuLab {
    /// The lab's Open vSwitch.
    fn ovs(&self) -> PrivateOvs {
        PrivateOvs::new(&self.state.join("ovs"), Some(&self.spec.switch_ns()))
    }

    fn build(&self, tandem: &Path) -> Result<(), String> {
        let s = &self.spec;
        let sw = s.switch_ns();
        for ns in s.namespaces() {
            add_namespace(&ns)?;
        }
        for h in 1..=s.hosts {
            let ns = s.host_ns(h);
            veth(
                &format!("{}h{h}", s.prefix),
                (&ns, "eth0"),
                (&sw, &format!("p{h}")),
                "1500",
            )?;
            in_ns(
                &ns,
                &["ip", "addr", "add", &format!("{}/24", s.host_ip(h)), "dev", "eth0"],
            )?;
        }
        let ovs = self.ovs();
        ovs.start()?;
        let br = s.bridge();
        let mut args: Vec<String> = vec![
            "add-br".into(),
            br.clone(),
            "--".into(),
            "set".into(),
            "bridge".into(),
            br.clone(),
            "datapath_type=netdev".into(),
            "protocols=OpenFlow13".into(),
            "fail-mode=secure".into(),
            format!("other-config:datapath-id={DPID:016x}"),
            "other-config:disable-in-band=true".into(),
        ];
        for h in 1..=s.hosts {
            let p = format!("p{h}");
            args.extend([
                "--".into(),
                "add-port".into(),
                br.clone(),
                p.clone(),
                "--".into(),
                "set".into(),
                "interface".into(),
                p,
                format!("ofport_request={h}"),
            ]);
        }
        args.extend([
            "--".into(),
            "--id=@ft".into(),
            "create".into(),
            "Flow_Table".into(),
            "name=tcam".into(),
            format!("flow_limit={}", s.flow_limit()),
            "overflow_policy=refuse".into(),
            "--".into(),
            "set".into(),
            "bridge".into(),
            br.clone(),
            format!("flow_tables:{}=@ft", s.app.app.table),
        ]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        ovs.vsctl(&args)?;
        start_controller(
            &self.state,
            &sw,
            tandem,
            "tcpu",
            &self.app_config_text()?,
            s.controller_port,
            s.metrics(),
        )?;
        ovs.vsctl(&["set-controller", &br, &format!("tcp:127.0.0.1:{}", s.controller_port)])?;
        let miss = format!("cookie={COOKIE_MISS:#x}");
        wait_for(
            &self.state,
            "the controller's table-miss entry",
            Duration::from_secs(20),
            || self.dump_flows().is_ok_and(|f| f.contains(&miss)),
        )?;
        let others: Vec<String> = (2..=s.hosts).map(|h| s.host_ip(h).to_string()).collect();
        wait_reachable(&s.host_ns(1), &others, Duration::from_secs(20))
    }

    /// The log the controller writes (every input its TCPU core got, with a digest of the
    /// actions), for `tandem lab replay`.
    pub fn log_file(&self) -> PathBuf {
        self.state.join("tcpu-log.txt")
    }

    /// The controller's `--app-config`: the lab's `[tcpu]` and `[app]`, with the log going to
    /// [`TcpuLab::log_file`] (100,000 steps held between writes unless the lab says otherwise).
    fn app_config_text(&self) -> Result<String, String> {
        config_with_log(&self.spec.app_text, "app", &self.log_file())
    }

    /// Replays the controller's log through a fresh core with the lab's parameters: the steps
    /// replayed, or the first that differs.
    pub fn replay(&self) -> Result<usize, String> {
        replay_file(&self.log_file(), |text| {
            tandem_tcpu::openflow::replay_lines(&self.spec.app.tcpu, text)
        })
    }

    /// `ovs-ofctl dump-flows` of the bridge.
    pub fn dump_flows(&self) -> Result<String, String> {
        self.ovs().ofctl("dump-flows", &self.spec.bridge(), &[])
    }
}

/// The lab that `up` built in `state`.
pub fn attach(spec: &TcpuLabSpec, state: &Path) -> Result<TcpuLab, String> {
    Ok(TcpuLab {
        spec: spec.clone(),
        state: attach_state(state)?,
    })
}

/// Counts a flow dump's entries by kind: (TCPU flow entries, attack entries, all entries).
pub fn count_entries(dump: &str) -> (usize, usize, usize) {
    let mut n = (0, 0, 0);
    for line in dump.lines().filter(|l| l.contains("cookie=")) {
        n.2 += 1;
        let cookie = line
            .split("cookie=")
            .nth(1)
            .and_then(|c| c.split(',').next())
            .and_then(|c| u64::from_str_radix(c.trim().trim_start_matches("0x"), 16).ok())
            .unwrap_or(0);
        match cookie & COOKIE_TAG {
            COOKIE_FLOW => n.0 += 1,
            COOKIE_SRC => n.1 += 1,
            _ => {}
        }
    }
    n
}

/// One JSON object per element of the lab (the bridge, the controller, each host), each on a
/// line, with at least `element` and `kind`.
/// The controller's counters are read by `tandem` (the binary given) run in the switch's
/// namespace, where the metrics endpoint listens.
pub fn status(lab: &TcpuLab, tandem: &Path) -> Result<Vec<String>, String> {
    let s = &lab.spec;
    let rows = controller_rows(&s.switch_ns(), tandem, s.metrics())?;
    let label = format!("{{dpid=\"{DPID:016x}\"}}");
    let get = |name: &str| -> u64 {
        let key = format!("tandem_tcpu_{name}{label}");
        rows.iter().find(|(n, _)| *n == key).map_or(0, |(_, v)| *v)
    };
    let ctl = |name: &str| rows.iter().find(|(n, _)| n == name).map_or(0, |(_, v)| *v);
    let (entries, attack, all) = count_entries(&lab.dump_flows()?);
    let mut out = vec![format!(
        concat!(
            "{{\"element\":\"{}\",\"kind\":\"tcpu\",\"dpid\":\"{:016x}\",\"table_entries\":{},",
            "\"table_capacity\":{},\"offloaded_flows\":{},\"software_packets\":{},\"swaps\":{},",
            "\"deep_buffer_peak_bytes\":{},\"attack_entries\":{},\"attackers\":{},\"other_packets\":{},",
            "\"long_pins\":{},\"counter_reads\":{},\"op_failures\":{},\"switch_entries\":{},\"flow_limit\":{},",
            "\"cpu_bytes\":{},\"asic_bytes\":{},\"rank_swaps\":{},\"inactive_swaps\":{},",
            "\"rankings\":{},\"missed_counter_reads\":{}}}"
        ),
        s.bridge(),
        DPID,
        entries,
        s.app.tcpu.asic_flow_entries,
        get("offloaded_flows"),
        get("software_packets"),
        get("swaps"),
        get("deep_buffer_peak_bytes"),
        attack,
        get("attackers"),
        get("other_packets"),
        get("long_pins"),
        get("counter_reads"),
        get("op_failures"),
        all,
        s.flow_limit(),
        get("cpu_bytes"),
        get("asic_bytes"),
        get("rank_swaps"),
        get("inactive_swaps"),
        get("rankings"),
        get("missed_counter_reads"),
    )];
    out.push(format!(
        "{{\"element\":\"controller\",\"kind\":\"controller\",\"listen\":\"127.0.0.1:{}\",\"metrics\":\"{}\",\"switches_connected\":{},\"packet_ins\":{}}}",
        s.controller_port,
        s.metrics(),
        ctl("switches_connected"),
        ctl("packet_ins")
    ));
    for h in 1..=s.hosts {
        out.push(format!(
            "{{\"element\":\"{}\",\"kind\":\"host\",\"ip\":\"{}\",\"port\":{h}}}",
            s.host_ns(h),
            s.host_ip(h)
        ));
    }
    Ok(out)
}

/// Removes what [`up`] made: the controller and Open vSwitch (by PID, checked against their
/// command lines), the namespaces the lab names (with their veths and the bridge), and the
/// state folder if `up` made it. Safe to run when the lab is half up or already down.
pub fn down(spec: &TcpuLabSpec, state: &Path) {
    let state = &std::path::absolute(state).unwrap_or_else(|_| state.to_path_buf());
    stop_controller(state);
    PrivateOvs::stop(&state.join("ovs"));
    if is_lab_state(state) {
        kill_processes_under(state);
    }
    // Root-namespace veth ends of a half-made wire.
    let veths = (1..=spec.hosts).map(|h| format!("{}h{h}x", spec.prefix));
    remove_named(&spec.namespaces(), veths, state);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped() -> TcpuLabSpec {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../labs/tcpu.toml");
        TcpuLabSpec::load(&p).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_shipped_lab_parses() {
        let s = shipped();
        assert!(is_tcpu_lab(
            &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../labs/tcpu.toml")).unwrap()
        ));
        assert_eq!(s.hosts, 3);
        assert_eq!(
            s.flow_limit(),
            s.app.tcpu.asic_flow_entries as usize + 1 + s.app.app.max_attack_rules
        );
        assert_eq!(TcpuAppConfig::parse(&s.app_text).unwrap(), s.app);
    }

    #[test]
    fn bad_labs_name_the_key() {
        let ok = "kind = \"tcpu\"\nprefix = \"tt\"\nhosts = 3\ncontroller_port = 1\nmetrics_port = 2\n";
        assert!(TcpuLabSpec::parse(ok).is_ok());
        for (text, key) in [
            (ok.replace("hosts = 3", "hosts = 9"), "hosts"),
            (ok.replace("\"tt\"", "\"TT\""), "prefix"),
            (ok.replace("metrics_port = 2", "metrics_port = 1"), "metrics_port"),
            (format!("{ok}bogus = 1\n"), "bogus"),
            (ok.replace("hosts = 3\n", ""), "hosts"),
            (format!("{ok}[tcpu]\nports = 2\n"), "tcpu.ports"),
            (format!("{ok}[tcpu]\nrank_interval = 3\n"), "tcpu.rank_interval"),
        ] {
            let e = TcpuLabSpec::parse(&text).unwrap_err();
            assert!(e.contains(key), "{text}: {e}");
        }
        assert!(!is_tcpu_lab("prefix = \"tp\"\naxons = 1\n"));
    }

    #[test]
    fn flow_dumps_are_counted_by_cookie() {
        let dump = "OFPST_FLOW reply (OF1.3) (xid=0x2):\n \
            cookie=0x7463707500000003, duration=1.0s, table=0, n_packets=5, priority=10,tcp actions=output:3\n \
            cookie=0x7463707300000001, duration=1.0s, table=0, priority=40,ip,nw_src=10.77.0.2 actions=CONTROLLER:65535\n \
            cookie=0x7463706d00000000, duration=2.0s, table=0, priority=0 actions=CONTROLLER:65535\n";
        assert_eq!(count_entries(dump), (1, 1, 3));
    }
}
