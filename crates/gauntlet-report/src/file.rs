//! Files written whole: a report or an export goes to a temporary file beside its destination and is renamed over
//! it only once complete, so a killed or failed write never leaves a truncated report that reads like a whole one,
//! and the previous one stays until the new one is ready.

use std::io::Write;
use std::path::{Path, PathBuf};

/// A file being written; [`AtomicFile::commit`] puts it in place, and dropping it uncommitted removes it.
pub struct AtomicFile {
    out: Option<std::io::BufWriter<std::fs::File>>,
    /// The temporary file renamed over the destination; `None` when the destination is written directly.
    temp: Option<PathBuf>,
    path: PathBuf,
}

impl AtomicFile {
    /// Starts writing `path` through a temporary file in the same directory (so the rename stays on one file
    /// system), created anew (never through a link someone left there). A destination that exists and is not a
    /// regular file (`/dev/null`, `/dev/stdout`, a pipe, a link) is written directly: it is not replaced.
    pub fn create(path: &Path) -> std::io::Result<AtomicFile> {
        let named = |e: std::io::Error| {
            std::io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display()))
        };
        let regular = match std::fs::symlink_metadata(path) {
            Ok(m) => m.file_type().is_file(),
            Err(_) => true,
        };
        if !regular {
            let file = std::fs::File::create(path).map_err(named)?;
            return Ok(AtomicFile {
                out: Some(std::io::BufWriter::new(file)),
                temp: None,
                path: path.to_path_buf(),
            });
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // A name no one else uses: this process, and a count (create_new refuses one that exists).
        static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let mut tries = 0;
        loop {
            let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let temp = path.with_file_name(format!(".{name}.{}.{n}.tmp", std::process::id()));
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&temp)
            {
                Ok(file) => {
                    return Ok(AtomicFile {
                        out: Some(std::io::BufWriter::new(file)),
                        temp: Some(temp),
                        path: path.to_path_buf(),
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 100 => {
                    tries += 1
                }
                Err(e) => return Err(named(e)),
            }
        }
    }

    /// Flushes the file to disk and renames it over the destination.
    pub fn commit(mut self) -> std::io::Result<()> {
        if let Some(out) = self.out.take() {
            let file = out.into_inner().map_err(|e| e.into_error())?;
            if self.temp.is_some() {
                file.sync_all()?;
            }
        }
        let Some(temp) = self.temp.take() else {
            return Ok(());
        };
        std::fs::rename(&temp, &self.path).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("cannot write {}: {e}", self.path.display()),
            )
        })
    }
}

/// Where a report goes: a file written whole ([`AtomicFile`]), or standard output.
pub enum Output {
    /// `-o FILE`.
    File(AtomicFile),
    /// No file given.
    Stdout(std::io::BufWriter<std::io::StdoutLock<'static>>),
}

impl Output {
    /// The file at `path`, or standard output (no path, or `-`).
    pub fn open(path: Option<&Path>) -> std::io::Result<Output> {
        Ok(match path.filter(|p| p.as_os_str() != "-") {
            Some(p) => Output::File(AtomicFile::create(p)?),
            None => Output::Stdout(std::io::BufWriter::new(std::io::stdout().lock())),
        })
    }

    /// Puts the file in place, or flushes standard output.
    pub fn finish(self) -> std::io::Result<()> {
        match self {
            Output::File(f) => f.commit(),
            Output::Stdout(mut o) => o.flush(),
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Output::File(f) => f.write(buf),
            Output::Stdout(o) => o.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Output::File(f) => f.flush(),
            Output::Stdout(o) => o.flush(),
        }
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.out.as_mut() {
            Some(o) => o.write(buf),
            None => Err(std::io::Error::other("the file is already committed")),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.as_mut().map_or(Ok(()), |o| o.flush())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // Not committed: the destination keeps what it had, and the partial file goes.
        if self.out.take().is_some()
            && let Some(temp) = &self.temp
        {
            let _ = std::fs::remove_file(temp);
        }
    }
}

/// Writes `bytes` to `path` whole ([`AtomicFile`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(bytes)?;
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_appears_only_when_complete_and_an_abandoned_one_leaves_the_old() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("report.html");
        std::fs::write(&path, "old").unwrap_or_else(|e| panic!("{e}"));
        let mut f = AtomicFile::create(&path).unwrap_or_else(|e| panic!("{e}"));
        f.write_all(b"new, half").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(std::fs::read_to_string(&path).ok().as_deref(), Some("old"));
        drop(f);
        assert_eq!(std::fs::read_to_string(&path).ok().as_deref(), Some("old"));
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .map(|d| d.flatten().map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert_eq!(left.len(), 1, "the partial file is removed: {left:?}");
        write_atomic(&path, b"new").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(std::fs::read_to_string(&path).ok().as_deref(), Some("new"));
        // A device is written, never replaced.
        write_atomic(Path::new("/dev/null"), b"x").unwrap_or_else(|e| panic!("{e}"));
        let null = std::fs::metadata("/dev/null").map(|m| m.file_type().is_file());
        assert_eq!(null.ok(), Some(false));
    }
}
