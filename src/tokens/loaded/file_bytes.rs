//! The bytes of a tokenizer file, read into memory.
//!
//! A file is read, never mapped: another process that truncates a mapped file while it is
//! read makes the reads past the new end fail with `SIGBUS`, which ends the host. Reading
//! costs Gemma 3's 33 MB `tokenizer.json` a few milliseconds more (the kernel zeroes the new
//! pages and copies the file into them; see the README's load column).
//!
//! Only a regular file is read: a FIFO would block the call for as long as no one writes to
//! it, and a device such as `/dev/zero` would be read until memory runs out. The file is
//! opened without blocking (a FIFO's open would wait for a writer), checked, then read; no
//! more than [`MAX_FILE_BYTES`] are read even if the file grows meanwhile.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::path::Path;

/// The largest tokenizer file read (4 GB: the tables index the file's bytes with 32 bits).
/// The families' files are 2 to 35 MB.
pub(super) const MAX_FILE_BYTES: u64 = u32::MAX as u64;

/// Why a file was not read.
#[derive(Debug)]
pub(super) enum Refused {
    /// The system could not open or read it.
    Io(std::io::Error),
    /// It is not a regular file, or too large; the message says which.
    NotAFile(String),
}

/// The bytes of the regular file at `path`.
pub(super) fn read(path: &Path) -> Result<Vec<u8>, Refused> {
    let file = open(path).map_err(Refused::Io)?;
    let metadata = file.metadata().map_err(Refused::Io)?;
    if !metadata.is_file() {
        return Err(Refused::NotAFile(format!("not a regular file (a {})", kind(&metadata.file_type()))));
    }
    if metadata.len() > MAX_FILE_BYTES {
        return Err(Refused::NotAFile(format!(
            "{} bytes, above the largest tokenizer file read ({MAX_FILE_BYTES} bytes)",
            metadata.len()
        )));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0).saturating_add(1));
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(Refused::Io)?;
    Ok(bytes)
}

/// Opens `path` for reading without waiting for a FIFO's writer.
fn open(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
}

/// What kind of file `file_type` is, in words.
fn kind(file_type: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "FIFO";
        }
        if file_type.is_char_device() || file_type.is_block_device() {
            return "device";
        }
        if file_type.is_socket() {
            return "socket";
        }
    }
    if file_type.is_dir() { "directory" } else { "special file" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_are_read_whole_and_others_refused() {
        let dir = std::env::temp_dir().join(format!("ctxwin-file-bytes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for len in [0, 10, (16 << 20) + 5] {
            let path = dir.join(format!("{len}"));
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            std::fs::write(&path, &bytes).unwrap();
            assert_eq!(read(&path).unwrap(), bytes, "{len}");
        }
        assert!(matches!(read(&dir.join("missing")), Err(Refused::Io(e)) if e.kind() == std::io::ErrorKind::NotFound));
        assert!(matches!(read(&dir), Err(Refused::NotAFile(m)) if m.contains("directory")));
        #[cfg(unix)]
        {
            assert!(matches!(read(Path::new("/dev/zero")), Err(Refused::NotAFile(m)) if m.contains("device")));
            let fifo = dir.join("fifo");
            let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a NUL-terminated path that outlives the call.
            assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
            // Without a writer: refused at once, not blocked.
            assert!(matches!(read(&fifo), Err(Refused::NotAFile(m)) if m.contains("FIFO")));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
