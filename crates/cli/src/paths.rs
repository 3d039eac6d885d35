//! The files and folders a user names on the command line: one rule for what counts as bad
//! input (exit 2) and for leaving nothing behind after a failure.

use crate::error::CliError;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, Once};

/// Output folders of this process whose command has not finished: (id, the folder, the
/// outermost folder the command made for it, if it made one). An interrupt removes what they
/// hold unfinished ([`clean_up_on_interrupt`]).
static UNFINISHED: Mutex<Vec<(u64, PathBuf, Option<PathBuf>)>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(0);
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// True once an interrupt is being handled ([`clean_up_on_interrupt`]): the command's own
/// failure after that (its network or files were just removed) is not to be reported; the
/// handler exits with 130 or 143 when it has cleaned up.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// What an interrupt must undo besides output folders (namespaces and processes a live
/// experiment made), by id.
type Hook = Box<dyn Fn() + Send>;
static HOOKS: Mutex<Vec<(u64, Hook)>> = Mutex::new(Vec::new());

/// Runs `undo` if the process is interrupted ([`clean_up_on_interrupt`]) while the returned
/// guard lives (hooks run newest first); dropping the guard forgets it.
pub fn on_interrupt(undo: impl Fn() + Send + 'static) -> InterruptHook {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    hooks().push((id, Box::new(undo)));
    InterruptHook { id }
}

/// Keeps an [`on_interrupt`] action registered.
#[derive(Debug)]
pub struct InterruptHook {
    id: u64,
}

impl Drop for InterruptHook {
    fn drop(&mut self) {
        hooks().retain(|(id, _)| *id != self.id);
    }
}

fn hooks() -> std::sync::MutexGuard<'static, Vec<(u64, Hook)>> {
    HOOKS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Opens a file named as input: a missing or unreadable path, or a folder, is bad input.
pub fn open_input(path: &Path) -> Result<File, CliError> {
    if path.is_dir() {
        return Err(CliError::input(path, "is a folder, not a file"));
    }
    File::open(path).map_err(|e| CliError::input(path, e))
}

/// An output folder, created (with its parents) before any work so that an unusable path is
/// bad input rather than a failure after minutes of work. Dropped without [`OutDir::keep`]
/// (the command failed or was interrupted), a folder this created is removed again, so a
/// failure leaves no empty or half-filled results folder; a folder that was already there is
/// left as it was found, but for what the command wrote into it.
#[derive(Debug)]
pub struct OutDir {
    path: PathBuf,
    created: Option<PathBuf>,
    kept: bool,
    id: u64,
}

impl OutDir {
    /// Creates `path` if needed; a path that exists as a file, or cannot be created, is bad input.
    pub fn prepare(path: &Path) -> Result<OutDir, CliError> {
        if path.exists() && !path.is_dir() {
            return Err(CliError::input(path, "exists and is not a folder"));
        }
        // The outermost folder this creates, to remove on failure.
        let created = path
            .ancestors()
            .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
            .last()
            .map(Path::to_path_buf);
        std::fs::create_dir_all(path).map_err(|e| CliError::input(path, e))?;
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        unfinished().push((id, path.to_path_buf(), created.clone()));
        Ok(OutDir {
            path: path.to_path_buf(),
            created,
            kept: false,
            id,
        })
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The command succeeded: keep the folder.
    pub fn keep(mut self) {
        self.kept = true;
    }
}

impl Drop for OutDir {
    fn drop(&mut self) {
        unfinished().retain(|(id, ..)| *id != self.id);
        if !self.kept {
            if let Some(dir) = &self.created {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }
}

fn unfinished() -> std::sync::MutexGuard<'static, Vec<(u64, PathBuf, Option<PathBuf>)>> {
    UNFINISHED.lock().unwrap_or_else(|p| p.into_inner())
}

/// Removes what unfinished commands of this process have written: the folders they made, and
/// in folders that were already there, the files still under their temporary names
/// ([`tandem_sim::table::temp_name`]). Returns how many places it cleaned.
pub fn remove_unfinished_outputs() -> usize {
    remove_outputs(&unfinished())
}

fn remove_outputs(entries: &[(u64, PathBuf, Option<PathBuf>)]) -> usize {
    let suffix = format!(".tmp-{}", std::process::id());
    let mut n = 0;
    for (_, path, created) in entries {
        match created {
            Some(dir) => {
                // Twice: the command may still have been writing when the first pass ran.
                if std::fs::remove_dir_all(dir).is_err() {
                    let _ = std::fs::remove_dir_all(dir);
                }
                n += 1;
            }
            None => {
                for e in std::fs::read_dir(path).into_iter().flatten().flatten() {
                    if e.file_name().to_string_lossy().ends_with(&suffix) {
                        let _ = std::fs::remove_file(e.path());
                        n += 1;
                    }
                }
            }
        }
    }
    n
}

/// For the `tandem` binary's commands that write results (`sim run`, `reproduce`, `analyze`):
/// Ctrl-C or SIGTERM runs the registered [`on_interrupt`] actions, removes their unfinished
/// outputs ([`remove_unfinished_outputs`]) and exits with 130 or 143, so an interrupted run leaves no empty or partial results folder.
/// Not for library use: it takes SIGINT and SIGTERM over for the whole process (the Python
/// bindings keep Python's own handling and stop runs through their cancellation instead).
pub fn clean_up_on_interrupt() {
    static WATCH: Once = Once::new();
    WATCH.call_once(|| {
        let _ = std::thread::Builder::new().name("tandem-interrupt".into()).spawn(|| {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
                return;
            };
            let code = rt.block_on(async {
                use tokio::signal::unix::{signal, SignalKind};
                let Ok(mut term) = signal(SignalKind::terminate()) else {
                    return None;
                };
                tokio::select! {
                    r = tokio::signal::ctrl_c() => r.ok().map(|_| 130),
                    _ = term.recv() => Some(143),
                }
            });
            if let Some(code) = code {
                INTERRUPTED.store(true, Ordering::SeqCst);
                // Last registered first, as destructors run: an inner chain goes before the
                // folder that holds it.
                for (_, undo) in hooks().iter().rev() {
                    undo();
                }
                remove_unfinished_outputs();
                eprintln!("tandem: interrupted; unfinished outputs removed");
                std::process::exit(code);
            }
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_command_removes_the_folders_it_made_and_only_those() {
        let base = std::env::temp_dir().join(format!("tandem-outdir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        let deep = base.join("a/b/c");
        let d = OutDir::prepare(&deep).unwrap();
        std::fs::write(deep.join("x"), "1").unwrap();
        drop(d);
        assert!(!base.join("a").exists() && base.exists());
        let d = OutDir::prepare(&deep).unwrap();
        d.keep();
        assert!(deep.is_dir());
        // Already there: a failure leaves it.
        drop(OutDir::prepare(&deep).unwrap());
        assert!(deep.is_dir());
        std::fs::write(base.join("file"), "x").unwrap();
        assert!(matches!(OutDir::prepare(&base.join("file")), Err(CliError::Input(_))));
        assert!(matches!(open_input(&base), Err(CliError::Input(_))));
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn interrupt_hooks_live_as_long_as_their_guard() {
        let before = hooks().len();
        let guard = on_interrupt(|| {});
        assert_eq!(hooks().len(), before + 1);
        drop(guard);
        assert_eq!(hooks().len(), before);
    }

    #[test]
    fn an_interrupt_removes_unfinished_outputs_only() {
        let base = std::env::temp_dir().join(format!("tandem-outdir-int-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("old")).unwrap();
        let made = OutDir::prepare(&base.join("new/run")).unwrap();
        std::fs::write(made.path().join("flows.csv"), "x").unwrap();
        let existing = OutDir::prepare(&base.join("old")).unwrap();
        let tmp = tandem_sim::table::temp_name(&existing.path().join("summary.json"));
        std::fs::write(&tmp, "{").unwrap();
        std::fs::write(existing.path().join("keep.txt"), "mine").unwrap();
        // Only this test's entries: other tests of this binary have output folders too.
        let mine: Vec<_> = unfinished()
            .iter()
            .filter(|e| e.1.starts_with(&base))
            .cloned()
            .collect();
        assert_eq!(mine.len(), 2);
        remove_outputs(&mine);
        assert!(!base.join("new").exists());
        assert!(!tmp.exists());
        assert!(base.join("old/keep.txt").is_file());
        made.keep();
        existing.keep();
        let _ = std::fs::remove_dir_all(&base);
    }
}
