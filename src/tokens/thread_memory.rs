//! Giving back the memory a thread keeps to count faster.

use super::{bpe, lines, loaded};

/// Frees the memos the calling thread keeps to count faster (the counts of pieces and of
/// lines it has seen, and those of a loaded tokenizer: up to about 7 MB, 12.6 MB with a
/// loaded tokenizer) and returns about how many bytes they held (their tables' sizes,
/// without the allocator's overhead); 0 when the thread has none.
///
/// Counts stay exact: the next count on the thread allocates its tables again (the memo of
/// lines starting small), and text it had seen is counted as new text until it is seen
/// again. Other threads' memos are untouched. A thread's memos are also freed when it
/// exits; this is for a thread that stays, such as a pool's worker going idle, and for a
/// thread whose first count comes from a thread-exit destructor (see `ctxwin_release_thread_memory`).
pub fn release_thread_memory() -> usize {
    bpe::release_memo() + lines::release() + loaded::release_memo()
}

#[cfg(all(test, feature = "o200k"))]
mod tests {
    use super::*;
    use crate::tokens::{Encoding, Tokenizer};

    /// The tokenizer of `a`, `b` and `ab`.
    fn ab() -> Tokenizer {
        let file =
            br#"{"pre_tokenizer": null, "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]}}"#;
        Tokenizer::from_bytes(file, "").unwrap()
    }

    /// Counts a thread makes from a thread-local destructor that runs after the memos are
    /// gone (destructors run in the reverse order of first use here) are exact, without them.
    #[test]
    fn counts_after_the_memos_are_gone_are_exact() {
        /// What the destructor counts with, and where it sends the counts.
        type Job = (Tokenizer, std::sync::mpsc::Sender<(usize, usize)>);
        struct CountsAtExit(std::cell::RefCell<Option<Job>>);
        impl Drop for CountsAtExit {
            fn drop(&mut self) {
                if let Some((tokenizer, sender)) = self.0.take() {
                    let counts = (tokenizer.count("abababa").unwrap(), Encoding::O200kBase.count("hello world"));
                    sender.send(counts).unwrap();
                }
            }
        }
        thread_local! {
            static AT_EXIT: CountsAtExit = const { CountsAtExit(std::cell::RefCell::new(None)) };
        }
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            AT_EXIT.with(|_| ());
            let tokenizer = ab();
            assert_eq!(tokenizer.count("abab").unwrap(), 2);
            assert_eq!(Encoding::O200kBase.count("hello"), 1);
            AT_EXIT.with(|at_exit| *at_exit.0.borrow_mut() = Some((tokenizer, sender)));
        })
        .join()
        .unwrap();
        assert_eq!(receiver.recv().unwrap(), (4, 2));
    }

    /// Text of `lines` numbered lines, new to the thread.
    fn lines(lines: usize) -> String {
        (0..lines).map(|i| format!("line {i}: the quick brown fox {}\n", i * 7919 % 1000)).collect()
    }

    /// A thread's memos are freed and reported, once; counts are the same after; a loaded
    /// tokenizer's memo is freed too; another thread's are not.
    #[test]
    fn released_memos_are_the_callers_and_counts_stay() {
        let text = lines(4000);
        assert!(text.len() > 100_000);
        let tokenizer = ab();
        let (counted, go) = (std::sync::Barrier::new(2), std::sync::Barrier::new(2));
        std::thread::scope(|scope| {
            let worker = scope.spawn(|| {
                assert_eq!(release_thread_memory(), 0, "a new thread keeps nothing");
                let before = Encoding::O200kBase.count(&text);
                counted.wait();
                go.wait();
                let freed = release_thread_memory();
                // The memo of pieces (2 MiB of entries) and, past 64 KB of text, the large
                // tables of lines (4 MiB).
                assert!(freed >= 6 << 20, "{freed}");
                assert_eq!(release_thread_memory(), 0);
                assert_eq!(Encoding::O200kBase.count(&text), before);
                assert_eq!(Encoding::O200kBase.count("hello"), 1);
                let recounted = release_thread_memory();
                assert!(recounted >= 6 << 20, "{recounted}");
                assert_eq!(tokenizer.count("abababa").unwrap(), 4);
                let loaded = release_thread_memory();
                // The loaded tokenizer's memo (its join cache alone is 256 KB) and the small
                // tables of lines its text went to.
                assert!(loaded > 256 << 10, "{loaded}");
                assert_eq!(tokenizer.count("abababa").unwrap(), 4);
            });
            counted.wait();
            release_thread_memory();
            go.wait();
            worker.join().unwrap();
        });
    }
}
