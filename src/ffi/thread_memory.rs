//! Giving back the memory the calling thread keeps to count faster.

use super::boundary::ffi_boundary;

/// Frees the memory the calling thread keeps to count faster and returns about how many
/// bytes it freed (the tables' sizes, without the allocator's overhead; 0 when the thread
/// has counted nothing since it started or since the last call).
///
/// Each thread that counts keeps memos of the text it has counted: up to about 7 MB, and
/// about 5.6 MB more once it has counted with a loaded tokenizer (docs/reliability.md).
/// They are freed when the thread exits. A thread that stays but will not count for a
/// while, such as a pool's worker going idle, can give them back with this call. Counts
/// stay exact: the next count on the thread allocates its tables again, and counts text it
/// had seen as new text until it is seen again.
///
/// One case needs it: a thread whose first call to the library comes from a thread-exit
/// destructor (a `pthread_key_create` destructor runs after the library's own per-thread
/// cleanup) keeps what that call allocated past its exit, unless the destructor ends with
/// this call.
///
/// Thread-safety: safe to call from any thread; it frees only the calling thread's memos.
///
/// Since: 0.3
#[unsafe(no_mangle)]
pub extern "C" fn ctxwin_release_thread_memory() -> usize {
    ffi_boundary! { crate::tokens::release_thread_memory() }
}
