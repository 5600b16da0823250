//! Large buffers of a load backed by huge pages where the system allows it.
//!
//! A load writes 30 to 80 MB of new memory (the file's bytes, the vocabulary and merge
//! tables, the tables kept while reading); the kernel hands it over a 4 KB page at a time,
//! one fault each (13,000 for Gemma 3's file), a fifth of the load in `perf`. On Linux a
//! buffer of several megabytes is marked for transparent huge pages (`madvise` with
//! `MADV_HUGEPAGE`): one fault then maps 2 MB. It is a hint: where huge pages are off or
//! none is free, the kernel uses small pages as before; what the buffer holds and how much
//! of it there is are the same either way.

/// Smallest buffer marked: it surely holds one whole 2 MB page.
const LEAST: usize = 4 << 20;

/// Size and alignment of a huge page (x86-64 and most arm64 kernels).
const HUGE: usize = 2 << 20;

/// An empty vector with room for `len` items, its memory marked for huge pages when large
/// (before anything is written to it, which is when its pages are handed over).
pub(super) fn with_capacity<T>(len: usize) -> Vec<T> {
    let buffer = Vec::with_capacity(len);
    if let Some((start, end)) = whole_pages(buffer.as_ptr() as usize, buffer.capacity().saturating_mul(size_of::<T>())) {
        #[cfg(target_os = "linux")]
        // SAFETY: the range lies inside the vector's allocation (see `whole_pages`), which it
        // owns; the advice changes only the size of the pages the kernel backs it with, never
        // what reading or writing it does. A failure (no huge pages in the kernel) changes
        // nothing.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (start, end);
    }
    buffer
}

/// The whole huge pages of the `bytes` bytes at address `start`, when there are `LEAST`
/// bytes or more: the first and last address of the range (aligned, inside the buffer).
fn whole_pages(start: usize, bytes: usize) -> Option<(usize, usize)> {
    let (first, end) = (start.checked_next_multiple_of(HUGE)?, start.checked_add(bytes)? / HUGE * HUGE);
    (bytes >= LEAST && first < end).then_some((first, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_whole_huge_pages_inside_large_buffers_are_marked() {
        for start in [0, 1, 4096, HUGE - 8, HUGE, 3 * HUGE + 12_345, usize::MAX - LEAST] {
            for bytes in [0, 4096, LEAST - 1, LEAST, LEAST + 1, 5 * HUGE - 1, 5 * HUGE, 40 * HUGE + 7] {
                match whole_pages(start, bytes) {
                    Some((first, end)) => {
                        assert!(bytes >= LEAST && start <= first && first < end && end <= start + bytes, "{start} {bytes}");
                        assert_eq!((first % HUGE, end % HUGE), (0, 0));
                        // Every whole page is in it: less than a page is left at each end.
                        assert!(first - start < HUGE && start + bytes - end < HUGE);
                    }
                    None => assert!(
                        bytes < LEAST || start.checked_add(bytes).is_none_or(|e| e / HUGE * HUGE <= start.next_multiple_of(HUGE))
                    ),
                }
            }
        }
        assert_eq!(whole_pages(HUGE, LEAST), Some((HUGE, HUGE + LEAST)));
        assert_eq!(whole_pages(1, LEAST), Some((HUGE, 2 * HUGE)));
        let buffer: Vec<u64> = with_capacity(1 << 20);
        assert!(buffer.is_empty() && buffer.capacity() >= 1 << 20);
    }
}
