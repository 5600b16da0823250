//! Asking the CPU to start loading a cache line that a counting loop reads a little
//! later (the memos' lookups, the vocabulary's), so that the read does not wait for memory.

/// Starts loading the cache line holding `data[at]` into the cache, without
/// waiting for it; nothing if `at` is past the end. Reads nothing the program
/// sees, so it never changes a result, only when memory is waited for.
#[inline(always)]
pub(crate) fn prefetch<T>(data: &[T], at: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(item) = data.get(at) {
        // SAFETY: `_mm_prefetch` needs SSE, which every x86_64 CPU has; a
        // prefetch reads nothing the program sees and never faults.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(std::ptr::from_ref(item).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (data, at);
}
