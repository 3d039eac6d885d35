//! Helpers for Tandem's integration tests (a dev-dependency only).
//!
//! Tests that need a system tool (tshark, Open vSwitch, ns-3, `ip netns`) call [`require`]: it
//! returns false, after printing why, when the tool is missing, so a developer without the tool
//! sees a clear skip; with `TANDEM_REQUIRE_SYSTEM=1` (set by `.ci/run`) it panics instead, so in
//! CI such a test can never pass by skipping. [`Scratch`] is a temporary directory removed on
//! drop, also when the test fails.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// Prints a skip line and, when `TANDEM_SKIP_LOG` names a file (scripts/test sets it), appends
/// the line there too, so that skips are listed at the end of the run rather than hidden in a
/// passing test's captured output.
pub fn skip(message: &str) {
    eprintln!("SKIP: {message}");
    if let Ok(path) = std::env::var("TANDEM_SKIP_LOG") {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
            let test = std::thread::current().name().unwrap_or("?").to_string();
            let _ = writeln!(f, "{test}: {message}");
        }
    }
}

/// True when `TANDEM_REQUIRE_SYSTEM=1`: system-dependent tests must run, not skip.
pub fn system_required() -> bool {
    std::env::var("TANDEM_REQUIRE_SYSTEM").as_deref() == Ok("1")
}

/// True if `program --version` runs successfully; otherwise prints a skip line (naming the Debian
/// package that provides it) and returns false, or panics when [`system_required`].
pub fn require(program: &str, debian_package: &str) -> bool {
    require_with(program, &["--version"], debian_package)
}

/// As [`require`], for a program whose version flag is not `--version` (`ip -V`).
pub fn require_with(program: &str, version_args: &[&str], debian_package: &str) -> bool {
    let ok = Command::new(program)
        .args(version_args)
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return true;
    }
    if system_required() {
        panic!(
            "{program} is required (TANDEM_REQUIRE_SYSTEM=1) but missing; .ci/run installs Debian's {debian_package}"
        );
    }
    skip(&format!(
        "{program} not found; install Debian's {debian_package} (or run .ci/run), \
         or set TANDEM_REQUIRE_SYSTEM=1 to make this a failure"
    ));
    false
}

/// True when the test runs as root; otherwise prints a skip line naming `what` needs root and
/// returns false, or panics when [`system_required`] (CI runs as root).
pub fn require_root(what: &str) -> bool {
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    if !is_root {
        assert!(!system_required(), "{what} needs root (TANDEM_REQUIRE_SYSTEM=1)");
        skip(&format!("{what} needs root (network namespaces)"));
    }
    is_root
}

/// True if `path` exists (a header, a library, a device); otherwise skips or panics as
/// [`require`] does, naming `what` and the Debian package that provides it.
pub fn require_file(path: &str, what: &str, debian_package: &str) -> bool {
    if Path::new(path).exists() {
        return true;
    }
    if system_required() {
        panic!("{what} ({path}) is required (TANDEM_REQUIRE_SYSTEM=1) but missing; .ci/run installs Debian's {debian_package}");
    }
    skip(&format!(
        "{what} not found ({path}); install Debian's {debian_package} (or run .ci/run), \
         or set TANDEM_REQUIRE_SYSTEM=1 to make this a failure"
    ));
    false
}

/// A fresh temporary directory, removed with everything in it when dropped.
#[derive(Debug)]
pub struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    /// Creates `$TMPDIR/tandem-<label>-<pid>-<n>`.
    pub fn new(label: &str) -> Scratch {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("tandem-{label}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
        Scratch { dir }
    }
    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }
    /// A path inside the directory.
    pub fn join(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_is_removed_on_drop() {
        let s = Scratch::new("selftest");
        std::fs::write(s.join("x"), b"1").unwrap();
        let p = s.path().to_path_buf();
        assert!(p.exists());
        drop(s);
        assert!(!p.exists());
    }
}
