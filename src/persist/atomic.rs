//! Atomic file replacement: write a temporary file in the target's directory, fsync it,
//! rename it over the target, fsync the directory. A crash at any moment leaves the old
//! file or the new one, never a mix; at worst a stray temporary file
//! (`.NAME.ctxwin-PID-N.tmp`), which the next save to the same name removes once the process
//! that wrote it is gone.
//!
//! The target is followed through symbolic links (the link stays, the file it names is
//! replaced), must be a regular file if it exists (a FIFO, device or directory is refused, not
//! replaced), and keeps its permission bits; a new file is created private (0600, less what
//! the umask removes).

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// How many temporary names are tried before giving up.
const NAME_ATTEMPTS: u32 = 16;

/// How many symbolic links are followed before giving up (Linux's own limit).
const MAX_LINKS: u32 = 40;

/// The mode of a file a save creates.
const NEW_FILE_MODE: u32 = 0o600;

/// What marks a temporary file as ctxwin's: `.NAME` + this + `PID-N.tmp`.
const TEMP_MARK: &str = ".ctxwin-";

/// Replaces the file at `path` with what `write` writes, atomically and durably. Nothing is
/// replaced when `write` fails (its error is returned) or when `path` names something that is
/// not a regular file.
pub fn replace_file(path: &Path, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let target = follow_links(path)?;
    let name = target.file_name().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path does not name a file"))?;
    let dir = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mode = match fs::symlink_metadata(&target) {
        Ok(meta) if meta.file_type().is_file() => Some(meta.permissions().mode() & 0o7777),
        Ok(meta) => return Err(not_regular(&target, path, &meta.file_type())),
        Err(error) if error.kind() == io::ErrorKind::NotFound => None,
        Err(error) => return Err(error),
    };
    remove_stale_temporaries(dir, name);
    let (temp, file) = create_temporary(dir, name)?;
    let written = fill(file, mode, write).and_then(|()| fs::rename(&temp, &target));
    if let Err(error) = written {
        let _ = fs::remove_file(&temp);
        return Err(error);
    }
    // The rename is durable only once the directory entry is on disk.
    File::open(dir)?.sync_all()
}

/// Writes the temporary file, gives it the target's mode and flushes it to disk.
fn fill(file: File, mode: Option<u32>, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    if let Some(mode) = mode {
        file.set_permissions(fs::Permissions::from_mode(mode))?;
    }
    let mut out = BufWriter::new(file);
    write(&mut out)?;
    out.into_inner().map_err(io::IntoInnerError::into_error)?.sync_all()
}

/// The file `path` names once every symbolic link in its last component is followed (a
/// link's relative target is taken from the link's directory). A dangling link names the
/// file it would create.
fn follow_links(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let next = fs::read_link(&current)?;
                current = match current.parent() {
                    Some(dir) if next.is_relative() => dir.join(next),
                    _ => next,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(io::Error::new(io::ErrorKind::InvalidInput, format!("more than {MAX_LINKS} symbolic links to follow")))
}

/// What kind of file `file_type` is, in words, for a file that is not a regular one.
pub(super) fn describe(file_type: &fs::FileType) -> &'static str {
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else if file_type.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// The refusal to replace `target` (reached from `path`), which is not a regular file.
fn not_regular(target: &Path, path: &Path, file_type: &fs::FileType) -> io::Error {
    let what = describe(file_type);
    let message = if target == path {
        format!("it is {what}, not a regular file (nothing was written)")
    } else {
        format!("its link target '{}' is {what}, not a regular file (nothing was written)", target.display())
    };
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// A new, exclusively created temporary file next to the target, private to its owner.
fn create_temporary(dir: &Path, name: &OsStr) -> io::Result<(PathBuf, File)> {
    let mut last_error = None;
    for attempt in 0..NAME_ATTEMPTS {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let temp = dir.join(temporary_name(name, std::process::id(), &format!("{nanos}{attempt}")));
        match OpenOptions::new().write(true).create_new(true).mode(NEW_FILE_MODE).open(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => last_error = Some(error),
            Err(error) => return Err(error),
        }
    }
    Err(last_error.unwrap_or_else(|| io::Error::other("no free temporary file name")))
}

/// `.NAME.ctxwin-PID-N.tmp`.
fn temporary_name(name: &OsStr, pid: u32, nonce: &str) -> OsString {
    let mut bytes = vec![b'.'];
    bytes.extend_from_slice(name.as_bytes());
    bytes.extend_from_slice(format!("{TEMP_MARK}{pid}-{nonce}.tmp").as_bytes());
    OsString::from_vec(bytes)
}

/// The process id in `entry` when it is the name of a temporary file a save to `name` makes:
/// `.NAME.ctxwin-PID-N.tmp`, or `.NAME.PID.N.tmp` as versions before 0.3 named them.
fn temporary_owner(entry: &[u8], name: &[u8]) -> Option<u32> {
    let rest = entry.strip_prefix(b".")?.strip_prefix(name)?.strip_suffix(b".tmp")?;
    let (pid, nonce) = match rest.strip_prefix(TEMP_MARK.as_bytes()) {
        Some(marked) => split_once(marked, b'-')?,
        None => split_once(rest.strip_prefix(b".")?, b'.')?,
    };
    let digits = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
    if !digits(pid) || !digits(nonce) {
        return None;
    }
    std::str::from_utf8(pid).ok()?.parse().ok()
}

fn split_once(bytes: &[u8], separator: u8) -> Option<(&[u8], &[u8])> {
    let at = bytes.iter().position(|&b| b == separator)?;
    Some((&bytes[..at], &bytes[at + 1..]))
}

/// Removes the temporary files of earlier saves to `name` in `dir` that their saving process
/// left behind when it was killed: files named as only [`create_temporary`] names them,
/// regular, owned by this user, written by a process that no longer runs (this process's own
/// are left alone: another thread may be saving). Best effort: a file that cannot be read or
/// removed is left.
fn remove_stale_temporaries(dir: &Path, name: &OsStr) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    // SAFETY: geteuid has no preconditions and cannot fail.
    let user = unsafe { libc::geteuid() };
    for entry in entries.flatten() {
        let Some(pid) = temporary_owner(entry.file_name().as_bytes(), name.as_bytes()) else { continue };
        let ours = entry.metadata().is_ok_and(|meta| meta.file_type().is_file() && meta.uid() == user);
        if ours && pid != std::process::id() && !process_runs(pid) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Whether a process with id `pid` exists (one that runs as another user counts).
fn process_runs(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    if pid <= 0 {
        return true;
    }
    // SAFETY: signal 0 only checks that the process exists; nothing is sent.
    let sent = unsafe { libc::kill(pid, 0) };
    sent == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ctxwin-atomic-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn put(path: &Path, bytes: &[u8]) -> io::Result<()> {
        replace_file(path, |out| out.write_all(bytes))
    }

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn replaces_the_file_and_leaves_no_temporary_behind() {
        let dir = scratch("replace");
        let target = dir.join("state.json");
        put(&target, b"old").unwrap();
        put(&target, b"new contents").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"new contents");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1, "only the target is left");
        let err = put(&dir.join("missing-dir").join("x.json"), b"x").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        // A failed write replaces nothing and leaves no temporary file.
        let err = replace_file(&target, |out| out.write_all(b"half").and(Err(io::Error::other("full")))).unwrap_err();
        assert_eq!(err.to_string(), "full");
        assert_eq!(fs::read(&target).unwrap(), b"new contents");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn keeps_the_mode_and_creates_private_files() {
        let dir = scratch("mode");
        let target = dir.join("state.json");
        put(&target, b"first").unwrap();
        assert_eq!(mode(&target) & 0o077, 0, "a new file is private");
        for kept in [0o600, 0o640, 0o644, 0o400] {
            fs::set_permissions(&target, fs::Permissions::from_mode(kept)).unwrap();
            put(&target, b"again").unwrap();
            assert_eq!(mode(&target), kept);
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn writes_through_symbolic_links() {
        let dir = scratch("links");
        let real = dir.join("real.json");
        put(&real, b"old").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).unwrap();
        symlink("real.json", dir.join("link.json")).unwrap();
        symlink(dir.join("link.json"), dir.join("link2.json")).unwrap();
        put(&dir.join("link2.json"), b"new").unwrap();
        assert!(fs::symlink_metadata(dir.join("link.json")).unwrap().file_type().is_symlink());
        assert!(fs::symlink_metadata(dir.join("link2.json")).unwrap().file_type().is_symlink());
        assert_eq!(fs::read(&real).unwrap(), b"new");
        assert_eq!(mode(&real), 0o640);
        // A dangling link creates the file it names; a loop is refused.
        symlink("later.json", dir.join("dangling.json")).unwrap();
        put(&dir.join("dangling.json"), b"x").unwrap();
        assert_eq!(fs::read(dir.join("later.json")).unwrap(), b"x");
        symlink("loop.json", dir.join("loop.json")).unwrap();
        assert!(put(&dir.join("loop.json"), b"x").unwrap_err().to_string().contains("symbolic links"));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn refuses_what_is_not_a_regular_file() {
        let dir = scratch("special");
        let fifo = dir.join("fifo");
        let c_path = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        let err = put(&fifo, b"x").unwrap_err();
        assert!(err.to_string().contains("a FIFO, not a regular file"), "{err}");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO is still there");
        symlink(&fifo, dir.join("to-fifo")).unwrap();
        let err = put(&dir.join("to-fifo"), b"x").unwrap_err();
        assert!(err.to_string().contains("link target") && err.to_string().contains("FIFO"), "{err}");
        let err = put(&dir, b"x").unwrap_err();
        assert!(err.to_string().contains("a directory"), "{err}");
        let err = put(Path::new("/dev/null"), b"x").unwrap_err();
        assert!(err.to_string().contains("a character device"), "{err}");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 2, "no temporary file left");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn names_temporaries_as_only_ctxwin_does() {
        let name = b"w.json";
        assert_eq!(temporary_owner(b".w.json.ctxwin-123-456.tmp", name), Some(123));
        assert_eq!(temporary_owner(b".w.json.123.4560.tmp", name), Some(123), "before 0.3");
        let made = temporary_name(OsStr::new("w.json"), 77, "12");
        assert_eq!(temporary_owner(made.as_bytes(), name), Some(77));
        for other in [
            &b".w.json.ctxwin-123-456.tmp.bak"[..],
            b".w.json.ctxwin-12a-456.tmp",
            b".w.json.ctxwin--456.tmp",
            b".x.json.ctxwin-123-456.tmp",
            b"w.json.ctxwin-123-456.tmp",
            b".w.json.123.tmp",
            b".w.json.swp",
            b".w.jsonctxwin-1-2.tmp",
        ] {
            assert_eq!(temporary_owner(other, name), None, "{}", String::from_utf8_lossy(other));
        }
    }

    #[test]
    fn removes_the_temporaries_of_dead_savers_only() {
        let dir = scratch("stale");
        // A process that has exited: its id is free until it is reused.
        let dead = std::process::Command::new("true").spawn().unwrap();
        let dead_pid = dead.id();
        let mut dead = dead;
        dead.wait().unwrap();
        let alive = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let stale = [format!(".w.json.ctxwin-{dead_pid}-1.tmp"), format!(".w.json.{dead_pid}.22.tmp")];
        let kept = [
            format!(".w.json.ctxwin-{}-1.tmp", alive.id()),
            format!(".w.json.ctxwin-{}-1.tmp", std::process::id()),
            format!(".other.json.ctxwin-{dead_pid}-1.tmp"),
            format!("w.json.ctxwin-{dead_pid}-1.tmp"),
            format!(".w.json.ctxwin-{dead_pid}-1.tmp.keep"),
        ];
        for file in stale.iter().chain(&kept) {
            fs::write(dir.join(file), b"partial").unwrap();
        }
        fs::create_dir(dir.join(format!(".w.json.ctxwin-{dead_pid}-2.tmp"))).unwrap();
        put(&dir.join("w.json"), b"saved").unwrap();
        let mut alive = alive;
        alive.kill().unwrap();
        alive.wait().unwrap();
        for file in &stale {
            assert!(!dir.join(file).exists(), "{file} was left");
        }
        for file in &kept {
            assert!(dir.join(file).exists(), "{file} was removed");
        }
        assert!(dir.join(format!(".w.json.ctxwin-{dead_pid}-2.tmp")).is_dir(), "a directory is never removed");
        fs::remove_dir_all(&dir).unwrap();
    }
}
