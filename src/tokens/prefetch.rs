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
    #[cfg(target_arch = "aarch64")]
    if let Some(item) = data.get(at) {
        // SAFETY: `prfm` (prefetch for a load, into L1, kept) is in every AArch64
        // processor; it reads nothing the program sees, writes nothing and never
        // faults, and touches no register but its address operand.
        unsafe {
            std::arch::asm!("prfm pldl1keep, [{address}]", address = in(reg) std::ptr::from_ref(item), options(nostack, preserves_flags, readonly));
        }
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = (data, at);
}
