//! Reading a saved file without trusting it: the path is opened without blocking (a FIFO
//! with no writer would stall the caller), only a regular file is read, and no more than
//! [`MAX_SAVED_BYTES`] are read (`/dev/zero` or a huge file would exhaust memory).

use super::atomic::describe;
use crate::error::{Error, ErrorKind, Result};
use std::fs::OpenOptions;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The largest saved document `load` reads and `save` writes, in bytes (1 GiB).
pub const MAX_SAVED_BYTES: u64 = 1 << 30;

/// The bytes of the regular file at `path`: IO when it cannot be opened or read or is not a
/// regular file, OUT_OF_RANGE when it is larger than [`MAX_SAVED_BYTES`]. Errors name the
/// path.
pub fn read_saved(path: &Path) -> Result<Vec<u8>> {
    let io = |what: String| Error::new(ErrorKind::Io, format!("cannot read '{}': {what}", path.display()));
    let mut file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| io(e.to_string()))?;
    let meta = file.metadata().map_err(|e| io(e.to_string()))?;
    if !meta.file_type().is_file() {
        return Err(io(format!("it is {}, not a regular file", describe(&meta.file_type()))));
    }
    let too_large = |size: u64| {
        Error::new(
            ErrorKind::OutOfRange,
            format!("cannot read '{}': {size} bytes, above the {MAX_SAVED_BYTES} bytes a saved window may hold", path.display()),
        )
    };
    if meta.len() > MAX_SAVED_BYTES {
        return Err(too_large(meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // The file may grow while it is read: never past the limit.
    (&mut file).take(MAX_SAVED_BYTES + 1).read_to_end(&mut bytes).map_err(|e| io(e.to_string()))?;
    if bytes.len() as u64 > MAX_SAVED_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn refuses_fifos_and_devices_at_once() {
        let dir = std::env::temp_dir().join(format!("ctxwin-reading-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let c_path = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        // No writer: a blocking open would never return.
        let err = read_saved(&fifo).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Io);
        assert!(err.message().contains("fifo': it is a FIFO, not a regular file"), "{}", err.message());
        for (path, what) in [("/dev/zero", "a character device"), ("/dev/null", "a character device")] {
            let err = read_saved(Path::new(path)).unwrap_err();
            assert!(err.message().contains(what) && err.message().contains(path), "{}", err.message());
        }
        let err = read_saved(&dir).unwrap_err();
        assert!(err.message().contains("a directory"), "{}", err.message());
        let file = dir.join("w.json");
        std::fs::write(&file, b"{}").unwrap();
        assert_eq!(read_saved(&file).unwrap(), b"{}");
        // A sparse file above the limit is refused before it is read.
        std::fs::File::create(&file).unwrap().set_len(MAX_SAVED_BYTES + 1).unwrap();
        let err = read_saved(&file).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::OutOfRange);
        assert!(err.message().contains(&format!("{} bytes", MAX_SAVED_BYTES + 1)), "{}", err.message());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
