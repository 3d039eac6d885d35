//! What the live lab tests share: a lab brought up with `tandem lab up` from a lab text, the
//! traffic processes started in its hosts, and `tandem lab down` (and those processes stopped)
//! when the test ends, also when it fails.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use tandem_testkit::Scratch;

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs the `tandem` binary under test.
pub fn tandem(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tandem")).args(args).output().unwrap()
}

/// Bytes as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A flat JSON object's numeric field.
pub fn field(obj: &str, key: &str) -> Option<u64> {
    let at = obj.find(&format!("\"{key}\":"))? + key.len() + 3;
    obj[at..].split([',', '}']).next()?.parse().ok()
}

/// A lab that is up; `down` runs on drop, after the processes started in it are stopped.
pub struct AppLab {
    pub file: PathBuf,
    pub state: PathBuf,
    /// The hosts' namespace prefix (`PREFIX-hN`).
    prefix: String,
    children: Vec<Child>,
    /// `lab up`'s standard output (one `namespace<TAB>address` line per host).
    pub hosts: String,
    _scratch: Scratch,
}

impl AppLab {
    /// Writes `lab` (a lab file's text whose prefix is `prefix`) to a scratch folder and brings
    /// it up.
    pub fn up(name: &str, prefix: &str, lab: &str) -> AppLab {
        let scratch = Scratch::new(name);
        let file = scratch.join("lab.toml");
        std::fs::write(&file, lab).unwrap();
        let state = scratch.join("state");
        let mut l = AppLab {
            file,
            state,
            prefix: prefix.to_string(),
            children: Vec::new(),
            hosts: String::new(),
            _scratch: scratch,
        };
        let o = tandem(&["lab", "up", l.file(), "--state", l.state()]);
        assert!(o.status.success(), "lab up: {}", text(&o.stderr));
        l.hosts = text(&o.stdout);
        l
    }

    pub fn file(&self) -> &str {
        self.file.to_str().unwrap()
    }

    pub fn state(&self) -> &str {
        self.state.to_str().unwrap()
    }

    /// Starts `args` in host `h`'s namespace; returns its handle for [`AppLab::wait`].
    pub fn spawn(&mut self, h: usize, args: &[&str]) -> usize {
        let c = Command::new("ip")
            .args(["netns", "exec", &format!("{}-h{h}", self.prefix)])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        self.children.push(c);
        self.children.len() - 1
    }

    /// Waits for process `i` (at most `within`) and returns its output.
    pub fn wait(&mut self, i: usize, within: Duration) -> String {
        let until = Instant::now() + within;
        let c = &mut self.children[i];
        while c.try_wait().unwrap().is_none() {
            assert!(Instant::now() < until, "a traffic process did not finish in {within:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut out = String::new();
        if let Some(mut o) = c.stdout.take() {
            std::io::Read::read_to_string(&mut o, &mut out).unwrap();
        }
        if let Some(mut e) = c.stderr.take() {
            std::io::Read::read_to_string(&mut e, &mut out).unwrap();
        }
        out
    }

    /// `tandem lab status --json`.
    pub fn status(&self) -> String {
        let o = tandem(&["lab", "status", self.file(), "--state", self.state(), "--json"]);
        assert!(o.status.success(), "lab status: {}", text(&o.stderr));
        text(&o.stdout)
    }

    /// `tandem lab replay`: succeeds, and returns how many steps of the controller's log were
    /// replayed with every answer the same.
    pub fn replayed_steps(&self) -> u64 {
        let o = tandem(&["lab", "replay", self.file(), "--state", self.state()]);
        assert!(o.status.success(), "lab replay: {}", text(&o.stderr));
        let out = text(&o.stdout);
        eprintln!("{out}");
        out.strip_prefix("replayed ")
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{out}"))
    }

    /// `ovs-ofctl dump-flows` of bridge `br` of the lab whose state folder is `state`.
    pub fn dump(state: &Path, br: &str) -> String {
        let o = Command::new("ovs-ofctl")
            .args(["-O", "OpenFlow13", "dump-flows"])
            .arg(format!("unix:{}", state.join(format!("ovs/{br}.mgmt")).display()))
            .output()
            .unwrap();
        text(&o.stdout)
    }
}

impl Drop for AppLab {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = tandem(&["lab", "down", self.file(), "--state", self.state()]);
    }
}

/// `python3 -c ECHO_SERVER ADDR PORT SIZE`: answers each connection's SIZE bytes with the same.
pub const ECHO_SERVER: &str = r#"
import asyncio, sys
async def handle(r, w):
    try:
        w.write(await r.readexactly(int(sys.argv[3])))
        await w.drain()
    except Exception:
        pass
    w.close()
async def main():
    srv = await asyncio.start_server(handle, sys.argv[1], int(sys.argv[2]), backlog=1024)
    async with srv:
        await srv.serve_forever()
asyncio.run(main())
"#;

/// Whether what an app lab test needs is here: root, Open vSwitch, iperf3, python3, ethtool,
/// iproute2 and ping (each missing one is a visible skip, or a failure in CI).
pub fn app_lab_tools(what: &str) -> bool {
    use tandem_testkit::{require, require_root, require_with};
    require_root(what)
        && require("ovs-vswitchd", "openvswitch-switch")
        && require("iperf3", "iperf3")
        && require("python3", "python3")
        && require("ethtool", "ethtool")
        && require_with("ip", &["-V"], "iproute2")
        && require_with("ping", &["-V"], "iputils-ping")
}
