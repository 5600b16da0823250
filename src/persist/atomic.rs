//! Atomic file replacement: write a temporary file in the target's directory, fsync it,
//! rename it over the target, fsync the directory. A crash at any moment leaves the old
//! file or the new one, never a mix; at worst a stray temporary file (`.NAME.PID.N.tmp`).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// How many temporary names are tried before giving up.
const NAME_ATTEMPTS: u32 = 16;

/// Replaces the file at `path` with `bytes`, atomically and durably.
pub fn replace_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = path.file_name().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path does not name a file"))?;
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let (temp, mut file) = create_temporary(dir, &name.to_string_lossy())?;
    let written = file.write_all(bytes).and_then(|()| file.sync_all()).and_then(|()| fs::rename(&temp, path));
    drop(file);
    if let Err(error) = written {
        let _ = fs::remove_file(&temp);
        return Err(error);
    }
    // The rename is durable only once the directory entry is on disk.
    File::open(dir)?.sync_all()
}

/// A new, exclusively created temporary file next to the target.
fn create_temporary(dir: &Path, name: &str) -> io::Result<(PathBuf, File)> {
    let mut last_error = None;
    for attempt in 0..NAME_ATTEMPTS {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let temp = dir.join(format!(".{name}.{}.{nanos}{attempt}.tmp", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => last_error = Some(error),
            Err(error) => return Err(error),
        }
    }
    Err(last_error.unwrap_or_else(|| io::Error::other("no free temporary file name")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary_behind() {
        let dir = std::env::temp_dir().join(format!("ctxwin-atomic-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let target = dir.join("state.json");
        replace_file(&target, b"old").unwrap();
        replace_file(&target, b"new contents").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"new contents");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1, "only the target is left");
        let err = replace_file(&dir.join("missing-dir").join("x.json"), b"x").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        fs::remove_dir_all(&dir).unwrap();
    }
}
