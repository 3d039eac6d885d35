//! A private Open vSwitch for a lab: `ovsdb-server` and `ovs-vswitchd` (userspace datapath
//! only, `--disable-system`) run from a folder of the lab's own (database, sockets, logs, PID
//! files), in a network namespace or in the root one. Nothing of a system Open vSwitch is
//! touched, and the daemons are stopped by PID, checked against their command lines.

use super::{kill_pidfile, run};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where Debian's `openvswitch-common` puts the database schema.
const SCHEMA: &str = "/usr/share/openvswitch/vswitch.ovsschema";
/// The daemons, in the order they are stopped.
const DAEMONS: [&str; 2] = ["ovs-vswitchd", "ovsdb-server"];

/// One private Open vSwitch (see the module documentation).
#[derive(Debug, Clone)]
pub(crate) struct PrivateOvs {
    dir: PathBuf,
    ns: Option<String>,
}

impl PrivateOvs {
    /// The instance kept in `dir` (absolute), its daemons running in namespace `ns` (`None`: the
    /// root namespace).
    pub fn new(dir: &Path, ns: Option<&str>) -> PrivateOvs {
        PrivateOvs {
            dir: dir.to_path_buf(),
            ns: ns.map(str::to_string),
        }
    }

    /// A command running `prog` with this instance's folders (in its namespace).
    fn cmd(&self, prog: &str) -> Command {
        let mut c = match &self.ns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, prog]);
                c
            }
            None => Command::new(prog),
        };
        for var in ["OVS_RUNDIR", "OVS_LOGDIR", "OVS_DBDIR", "OVS_SYSCONFDIR"] {
            c.env(var, &self.dir);
        }
        c
    }

    fn db(&self) -> String {
        format!("unix:{}", self.dir.join("db.sock").display())
    }

    /// Creates the database and starts both daemons (detached, with PID files).
    pub fn start(&self) -> Result<(), String> {
        std::fs::create_dir_all(&self.dir).map_err(|e| format!("{}: {e}", self.dir.display()))?;
        let missing = |e: String| format!("{e} (Open vSwitch is Debian's openvswitch-switch)");
        let o = &self.dir;
        run(self.cmd("ovsdb-tool").arg("create").arg(o.join("conf.db")).arg(SCHEMA)).map_err(missing)?;
        run(self
            .cmd("ovsdb-server")
            .arg(o.join("conf.db"))
            .arg(format!("--remote=p{}", self.db()))
            .arg(format!("--pidfile={}", o.join("ovsdb-server.pid").display()))
            .arg("--detach")
            .arg(format!("--log-file={}", o.join("ovsdb-server.log").display())))?;
        self.vsctl(&["--no-wait", "init"])?;
        run(self
            .cmd("ovs-vswitchd")
            .arg(self.db())
            .arg(format!("--pidfile={}", o.join("ovs-vswitchd.pid").display()))
            .arg("--detach")
            .arg(format!("--log-file={}", o.join("ovs-vswitchd.log").display()))
            .args(["--disable-system", "--disable-system-route"]))?;
        Ok(())
    }

    /// Runs `ovs-vsctl` on this instance's database.
    pub fn vsctl(&self, args: &[&str]) -> Result<String, String> {
        run(self.cmd("ovs-vsctl").arg(format!("--db={}", self.db())).args(args))
    }

    /// Runs `ovs-ofctl` (OpenFlow 1.3) on bridge `br` of this instance.
    pub fn ofctl(&self, command: &str, br: &str, args: &[&str]) -> Result<String, String> {
        let mgmt = format!("unix:{}", self.dir.join(format!("{br}.mgmt")).display());
        run(self
            .cmd("ovs-ofctl")
            .args(["-O", "OpenFlow13", command, &mgmt])
            .args(args))
    }

    /// Stops the daemons of the instance kept in `dir` (a no-op when none runs).
    pub fn stop(dir: &Path) {
        for d in DAEMONS {
            let pid = dir.join(format!("{d}.pid"));
            // The daemon's command line names its PID file: only ours is signalled.
            let mark = PathBuf::from(format!("--pidfile={}", pid.display()));
            kill_pidfile(&pid, &mark);
        }
    }
}
