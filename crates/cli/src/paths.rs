//! The files and folders a user names on the command line: one rule for what counts as bad
//! input (exit 2) and for leaving nothing behind after a failure.

use crate::error::CliError;
use std::fs::File;
use std::path::{Path, PathBuf};

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
        Ok(OutDir {
            path: path.to_path_buf(),
            created,
            kept: false,
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
        if !self.kept {
            if let Some(dir) = &self.created {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }
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
}
