//! Zeroed memory for a per-thread memo, which the kernel may back with huge pages.
//!
//! The memo of lines writes its chunks' bytes in order, megabytes of them, and its entries
//! anywhere in two more. In pages of 4 KB each first write of a page is a page fault: the
//! first megabytes of text a thread counted cost about 7% more for the faults alone
//! (docs/speed.md). On Linux the memory is mapped on its own and the kernel asked for
//! transparent huge pages (`madvise(MADV_HUGEPAGE)`, effective where they are set to
//! `madvise` or `always`): one fault then maps 2 MiB, and lookups miss the TLB less.
//! Elsewhere, or if the mapping fails, it is a plain zeroed heap allocation.

/// Zeroed 64-bit words, see the module's documentation.
pub(crate) struct ZeroedPages {
    #[cfg(target_os = "linux")]
    mapping: Option<Mapping>,
    heap: Vec<u64>,
}

/// A private anonymous mapping, and the words used in it (starting on a huge page).
#[cfg(target_os = "linux")]
struct Mapping {
    base: *mut libc::c_void,
    mapped: usize,
    words: *mut u64,
    len: usize,
}

/// Size of a huge page on x86_64 (and of the usual one on aarch64).
#[cfg(target_os = "linux")]
const HUGE_PAGE: usize = 2 << 20;

impl ZeroedPages {
    /// No words.
    pub(crate) const fn empty() -> Self {
        ZeroedPages {
            #[cfg(target_os = "linux")]
            mapping: None,
            heap: Vec::new(),
        }
    }

    /// `len` zeroed words: mapped on their own if they fill a huge page.
    pub(crate) fn new(len: usize) -> Self {
        #[cfg(target_os = "linux")]
        if let Some(mapping) = (len * 8 >= HUGE_PAGE).then(|| Mapping::new(len)).flatten() {
            return ZeroedPages { mapping: Some(mapping), heap: Vec::new() };
        }
        ZeroedPages { heap: vec![0; len], ..ZeroedPages::empty() }
    }

    /// The words.
    #[inline(always)]
    pub(crate) fn words(&self) -> &[u64] {
        #[cfg(target_os = "linux")]
        if let Some(mapping) = &self.mapping {
            // SAFETY: `len` words of the mapping, aligned (on a huge page), readable,
            // zeroed or written since, and borrowed no longer than `self`.
            return unsafe { std::slice::from_raw_parts(mapping.words, mapping.len) };
        }
        &self.heap
    }

    /// The words, to write.
    #[inline(always)]
    pub(crate) fn words_mut(&mut self) -> &mut [u64] {
        #[cfg(target_os = "linux")]
        if let Some(mapping) = &mut self.mapping {
            // SAFETY: as in `words`, and borrowed mutably from `self` alone.
            return unsafe { std::slice::from_raw_parts_mut(mapping.words, mapping.len) };
        }
        &mut self.heap
    }

    /// The words' bytes, in memory order.
    #[inline(always)]
    pub(crate) fn bytes(&self) -> &[u8] {
        let words = self.words();
        // SAFETY: the same memory as `words`, every byte of which is initialised, seen as
        // bytes (which have no alignment or validity requirement), for as long.
        unsafe { std::slice::from_raw_parts(words.as_ptr().cast(), std::mem::size_of_val(words)) }
    }

    /// The words' bytes, in memory order, to write.
    #[inline(always)]
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        let words = self.words_mut();
        // SAFETY: as in `bytes`, borrowed mutably from `self` alone; any byte values make
        // valid words.
        unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast(), std::mem::size_of_val(words)) }
    }
}

#[cfg(target_os = "linux")]
impl Mapping {
    fn new(len: usize) -> Option<Mapping> {
        let mapped = len.checked_mul(8)?.checked_add(HUGE_PAGE)?;
        // SAFETY: a new private anonymous mapping, at an address the kernel chooses: it
        // touches no memory the program has.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                mapped,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return None;
        }
        let skip = (base as usize).next_multiple_of(HUGE_PAGE) - base as usize;
        // SAFETY: `skip < HUGE_PAGE`, so the `len` words from there are inside the mapping.
        let words = unsafe { base.cast::<u8>().add(skip) }.cast::<u64>();
        // SAFETY: advice on a range of the mapping just made, which changes no contents.
        // Refused (a kernel without transparent huge pages), the pages stay small ones.
        unsafe { libc::madvise(words.cast(), len * 8, libc::MADV_HUGEPAGE) };
        Some(Mapping { base, mapped, words, len })
    }
}

#[cfg(target_os = "linux")]
impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `Mapping::new`, unmapped once; no slice of it
        // outlives `self` (they borrow the `ZeroedPages`).
        unsafe { libc::munmap(self.base, self.mapped) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// New memory reads as zeros; bytes written read back in place and nothing else
    /// changes: every length from 0 to 40, at byte 0 and unaligned in the middle, mapped
    /// and on the heap.
    #[test]
    fn written_bytes_read_back_in_place() {
        for mut pages in [ZeroedPages::new(1 << 18), ZeroedPages::new(1 << 16)] {
            assert!(pages.words().iter().all(|&w| w == 0));
            for len in 0..=40_usize {
                for from in [0, 6213] {
                    let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + len) as u8 | 1).collect();
                    let before = pages.bytes().to_vec();
                    pages.bytes_mut()[from..from + len].copy_from_slice(&bytes);
                    let after = pages.bytes();
                    assert_eq!(&after[from..from + len], &bytes[..]);
                    assert_eq!(&after[..from], &before[..from]);
                    assert_eq!(&after[from + len..], &before[from + len..]);
                }
            }
        }
        assert!(ZeroedPages::empty().words().is_empty());
    }
}
