//! The bytes of a tokenizer file: mapped from the page cache when the file is 16 MB or more,
//! read into memory otherwise.
//!
//! Reading Gemma 3's 33 MB `tokenizer.json` into a fresh buffer costs a quarter of its load:
//! the kernel zeroes and maps 8,000 new pages, then copies the file into them (30 to 50 ms
//! against 4 to 8 ms for mapping it and reading it through, in fresh processes). Mapping
//! hands the page cache's pages over instead; a buffer that large is never reused by the
//! allocator (it is above its 32 MB limit for keeping freed memory), so every load paid it.
//!
//! As with any mapped file, another process that truncates the file while it loads makes
//! the reads past the new end fail with `SIGBUS`, and one that rewrites it in place changes
//! the bytes under the reader (which reads them as untrusted input either way, never
//! assuming what it checked earlier). Tools replace such files by renaming a new one over
//! them, which leaves the mapped one intact.

use std::fs::File;
use std::io::Read;
use std::ops::Deref;
use std::path::Path;

/// Files from this size on are mapped. Smaller ones are read: the allocator keeps a freed
/// buffer of up to 32 MB and reuses it for the next load, so in a process that loads several
/// files mapping them gained nothing and changed what the allocator kept for the next file
/// (DeepSeek's load after Llama 3's took 42 ms instead of 35 in `cargo bench --bench loaded`
/// with every file of 1 MB and more mapped).
#[cfg_attr(not(unix), allow(dead_code))]
const MAP_FROM: u64 = 16 << 20;

/// A file's bytes.
pub(super) enum FileBytes {
    #[cfg(unix)]
    Mapped(Mapping),
    Read(Vec<u8>),
}

impl Deref for FileBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            #[cfg(unix)]
            FileBytes::Mapped(mapping) => mapping.bytes(),
            FileBytes::Read(bytes) => bytes,
        }
    }
}

/// The bytes of the file at `path`.
pub(super) fn read(path: &Path) -> std::io::Result<FileBytes> {
    let mut file = File::open(path)?;
    let metadata = file.metadata()?;
    #[cfg(unix)]
    if metadata.is_file() && metadata.len() >= MAP_FROM {
        if let Some(mapping) = Mapping::new(&file, metadata.len()) {
            return Ok(FileBytes::Mapped(mapping));
        }
    }
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0).saturating_add(1));
    file.read_to_end(&mut bytes)?;
    Ok(FileBytes::Read(bytes))
}

/// A read-only private mapping of a whole file, unmapped when dropped.
#[cfg(unix)]
pub(super) struct Mapping {
    start: std::ptr::NonNull<u8>,
    len: usize,
}

#[cfg(unix)]
impl Mapping {
    /// Maps the `len` bytes of `file` (more than 0); `None` when the system refuses.
    fn new(file: &File, len: u64) -> Option<Mapping> {
        use std::os::fd::AsRawFd;
        let len = usize::try_from(len).ok().filter(|&len| len > 0)?;
        // SAFETY: a new mapping chosen by the kernel (no address given), of an open file
        // descriptor, read-only and private: it overlaps no memory Rust knows of. The
        // mapping outlives the descriptor, which the kernel keeps referenced.
        let start = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_PRIVATE, file.as_raw_fd(), 0) };
        if start == libc::MAP_FAILED {
            return None;
        }
        Some(Mapping { start: std::ptr::NonNull::new(start.cast())?, len })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `start` is a live mapping of `len` readable bytes until `drop`, which
        // needs `&mut self`; nothing in this process writes to it (it is read-only). See the
        // module's documentation for other processes changing the file.
        unsafe { std::slice::from_raw_parts(self.start.as_ptr(), self.len) }
    }
}

#[cfg(unix)]
impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once; no slice of it outlives `self`.
        unsafe { libc::munmap(self.start.as_ptr().cast(), self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_files_are_mapped_and_small_ones_read_with_the_same_bytes() {
        let dir = std::env::temp_dir().join(format!("ctxwin-file-bytes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for len in [0, 10, MAP_FROM as usize - 1, MAP_FROM as usize + 5] {
            let path = dir.join(format!("{len}"));
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            std::fs::write(&path, &bytes).unwrap();
            let read = read(&path).unwrap();
            assert_eq!(&read[..], &bytes[..], "{len}");
            #[cfg(unix)]
            assert_eq!(matches!(read, FileBytes::Mapped(_)), len as u64 >= MAP_FROM, "{len}");
        }
        assert_eq!(read(&dir.join("missing")).err().map(|e| e.kind()), Some(std::io::ErrorKind::NotFound));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
