//! What the labs that run a controller app share (the TCPU lab, the CoSwitch lab): the
//! controller started in the switch namespace with its app, its counters read there, waiting
//! for the app's entries and for hosts to reach each other, and stopping it.

use super::{existing_namespaces, in_ns, is_lab_state, kill_pidfile, make_state, wait_for_cmdline};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Checks a lab's namespace prefix: 1-6 characters of a-z, 0-9 (every lab kind).
pub(crate) fn check_prefix(p: &str) -> Result<(), String> {
    if p.is_empty() || p.len() > 6 || !p.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()) {
        return Err(format!("key `prefix`: {p:?} must be 1-6 characters of a-z, 0-9"));
    }
    Ok(())
}

/// Whether a lab text names `kind` (`kind = "..."`); Axon labs have no `kind`.
pub(crate) fn is_kind(text: &str, kind: &str) -> bool {
    toml::from_str::<toml::Table>(text)
        .ok()
        .and_then(|t| t.get("kind").and_then(|k| k.as_str().map(|k| k == kind)))
        .unwrap_or(false)
}

/// Reads a lab file with `parse`; errors name the file.
pub(crate) fn load_spec<S>(path: &Path, parse: impl FnOnce(&str) -> Result<S, String>) -> Result<S, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Takes integer key `k` out of `t`: within `lo..=hi`, `default` when absent (missing is an
/// error without one).
pub(crate) fn take_int(t: &mut toml::Table, k: &str, lo: i64, hi: i64, default: Option<i64>) -> Result<i64, String> {
    match (t.remove(k), default) {
        (Some(v), _) => v
            .as_integer()
            .filter(|n| (lo..=hi).contains(n))
            .ok_or_else(|| format!("key `{k}`: expected an integer from {lo} to {hi}, got {v}")),
        (None, Some(d)) => Ok(d),
        (None, None) => Err(format!("key `{k}`: missing")),
    }
}

/// The keys every app lab's file has, taken out of its table: `kind` (which must be the
/// lab's), `prefix`, and the controller's two ports (6653 and 9653 by default, never equal).
pub(crate) fn take_common(t: &mut toml::Table, kind: &str) -> Result<(String, u16, u16), String> {
    match t.remove("kind") {
        Some(k) if k.as_str() == Some(kind) => {}
        Some(k) => return Err(format!("key `kind`: expected \"{kind}\", got {k}")),
        None => return Err("key `kind`: missing".into()),
    }
    let prefix = match t.remove("prefix") {
        Some(p) => p.as_str().map(str::to_string).unwrap_or_default(),
        None => return Err("key `prefix`: missing".into()),
    };
    check_prefix(&prefix)?;
    let controller_port = take_int(t, "controller_port", 1, 65535, Some(6653))? as u16;
    let metrics_port = take_int(t, "metrics_port", 1, 65535, Some(9653))? as u16;
    if controller_port == metrics_port {
        return Err("key `metrics_port`: the same as controller_port".into());
    }
    Ok((prefix, controller_port, metrics_port))
}

/// The app's tables (`tables`) taken out of what is left of a lab's table, as the text the
/// controller's `--app-config` reads; any other key left is an error listing `expected`.
pub(crate) fn take_app_text(mut t: toml::Table, tables: &[&str], expected: &str) -> Result<String, String> {
    let mut app = toml::Table::new();
    for k in tables {
        if let Some(v) = t.remove(*k) {
            app.insert(k.to_string(), v);
        }
    }
    if let Some(k) = t.keys().next() {
        return Err(format!("key `{k}`: unknown (expected {expected})"));
    }
    toml::to_string(&app).map_err(|e| e.to_string())
}

/// The namespaces of an app lab named `prefix` with `hosts` hosts: PREFIX-sw, then PREFIX-h1..
pub(crate) fn lab_namespaces(prefix: &str, hosts: usize) -> Vec<String> {
    let mut v = vec![format!("{prefix}-sw")];
    v.extend((1..=hosts).map(|h| format!("{prefix}-h{h}")));
    v
}

/// Starts `tandem controller --app APP --app-config STATE/app.toml` (with `app_text` written
/// there) in namespace `ns`, listening on 127.0.0.1:`port` with its metrics on `metrics`; its
/// output goes to STATE/controller.log, its PID to STATE/controller.pid. `down` recognises it by
/// the configuration path on its command line ([`stop_controller`]).
pub(crate) fn start_controller(
    state: &Path,
    ns: &str,
    tandem: &Path,
    app: &str,
    app_text: &str,
    port: u16,
    metrics: SocketAddr,
) -> Result<(), String> {
    let app_cfg = state.join("app.toml");
    std::fs::write(&app_cfg, app_text).map_err(|e| format!("{}: {e}", app_cfg.display()))?;
    let log = std::fs::File::create(state.join("controller.log")).map_err(|e| format!("{}: {e}", state.display()))?;
    let err = log.try_clone().map_err(|e| e.to_string())?;
    let child = Command::new("ip")
        .args(["netns", "exec", ns])
        .arg(tandem)
        .args(["controller", "--app", app, "--app-config"])
        .arg(&app_cfg)
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args(["--metrics", &metrics.to_string()])
        .args(["--log", "warn"])
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("{}: {e}", tandem.display()))?;
    wait_for_cmdline(child.id());
    std::fs::write(state.join("controller.pid"), child.id().to_string()).map_err(|e| e.to_string())
}

/// Stops the controller [`start_controller`] started in `state` (a no-op when none runs).
pub(crate) fn stop_controller(state: &Path) {
    kill_pidfile(&state.join("controller.pid"), &state.join("app.toml"));
}

/// Waits (polling every 100 ms) until `ready` holds; the error names `what` and adds the
/// controller's log.
pub(crate) fn wait_for(
    state: &Path,
    what: &str,
    within: Duration,
    mut ready: impl FnMut() -> bool,
) -> Result<(), String> {
    let until = Instant::now() + within;
    while !ready() {
        if Instant::now() >= until {
            let log = std::fs::read_to_string(state.join("controller.log")).unwrap_or_default();
            return Err(format!(
                "{what}: not within {within:?} (controller log: {})",
                log.trim()
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

/// Waits until the host in namespace `from` reaches every address of `to` with ping.
pub(crate) fn wait_reachable(from: &str, to: &[String], within: Duration) -> Result<(), String> {
    let until = Instant::now() + within;
    for target in to {
        while in_ns(from, &["ping", "-c", "1", "-W", "1", target]).is_err() {
            if Instant::now() >= until {
                return Err(format!("{from} does not reach {target} within {within:?}"));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    Ok(())
}

/// The controller's counters as `(name, value)`, read by `tandem controller stats` (the binary
/// given) run in namespace `ns`, where the metrics endpoint listens.
pub(crate) fn controller_rows(ns: &str, tandem: &Path, metrics: SocketAddr) -> Result<Vec<(String, u64)>, String> {
    let text = in_ns(
        ns,
        &[
            &tandem.display().to_string(),
            "controller",
            "stats",
            "--metrics",
            &metrics.to_string(),
        ],
    )?;
    Ok(text
        .lines()
        .filter_map(|l| {
            let (n, v) = l.rsplit_once(' ')?;
            Some((n.trim().to_string(), v.trim().parse().ok()?))
        })
        .collect())
}

/// Brings a lab up: refuses when any of `namespaces` exists, makes the state folder (marked as
/// the lab's), runs `build` with it (absolute), and on failure runs `down` before returning the
/// error. Returns the absolute state folder.
pub(crate) fn bring_up(
    prefix: &str,
    namespaces: &[String],
    state: &Path,
    build: impl FnOnce(&Path) -> Result<(), String>,
    down: impl FnOnce(&Path),
) -> Result<PathBuf, String> {
    let present = existing_namespaces();
    let clash: Vec<&String> = namespaces.iter().filter(|n| present.contains(n)).collect();
    if !clash.is_empty() {
        let names: Vec<&str> = clash.iter().map(|s| s.as_str()).collect();
        return Err(format!(
            "namespaces {} already exist: is the lab up already? (`tandem lab down` removes it)",
            names.join(", ")
        ));
    }
    make_state(prefix, state)?;
    let state = std::path::absolute(state).map_err(|e| format!("{}: {e}", state.display()))?;
    match build(&state) {
        Ok(()) => Ok(state),
        Err(e) => {
            down(&state);
            Err(e)
        }
    }
}

/// The absolute state folder of a lab that `up` built there.
pub(crate) fn attach_state(state: &Path) -> Result<PathBuf, String> {
    if !is_lab_state(state) {
        return Err(format!("{}: no lab state here (is the lab up?)", state.display()));
    }
    std::path::absolute(state).map_err(|e| format!("{}: {e}", state.display()))
}

/// An app's `--app-config` text with its log going to `log_file`: `section`'s `log` (the steps
/// held between writes) set to 100,000 unless the lab gave one, and its `log_file` set.
pub(crate) fn config_with_log(app_text: &str, section: &str, log_file: &Path) -> Result<String, String> {
    let mut t: toml::Table = toml::from_str(app_text).map_err(|e| e.to_string())?;
    let table = t
        .entry(section)
        .or_insert_with(|| toml::Value::Table(toml::Table::new()))
        .as_table_mut()
        .ok_or_else(|| format!("{section}: expected a table"))?;
    if table.get("log").and_then(toml::Value::as_integer).unwrap_or(0) == 0 {
        table.insert("log".into(), toml::Value::Integer(100_000));
    }
    table.insert("log_file".into(), toml::Value::String(log_file.display().to_string()));
    toml::to_string(&t).map_err(|e| e.to_string())
}

/// Reads the log at `path` and replays it with `replay`; errors name the file.
pub(crate) fn replay_file(path: &Path, replay: impl FnOnce(&str) -> Result<usize, String>) -> Result<usize, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    replay(&text).map_err(|e| format!("{}: {e}", path.display()))
}
