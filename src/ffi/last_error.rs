//! The calling thread's last error: the explanation of a failure that has no window to hold
//! it (a constructor, a stateless function, a NULL handle).
//!
//! Every failing call records its message here, calls on a window also on the window, so
//! `ctxwin_last_error` (in `window.rs`, next to `ctxwin_window_last_error`) always explains the most recent failure of this thread.

use super::error::{FfiError, ctxwin_status};
use std::cell::RefCell;

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Records `message` as this thread's last error. Once the thread's slot is gone (a call
/// from a thread-exit destructor that runs after it, as a C program's `pthread_key_create`
/// destructors do), the message is dropped: the call's status still tells what failed.
// One copy, not inlined: it is on every function's failure path, and `try_with` inlined
// made each function a few hundred bytes larger (20 KB in all).
#[cold]
#[inline(never)]
pub(crate) fn record(message: &str) {
    let _ = LAST_ERROR.try_with(|last| {
        let mut last = last.borrow_mut();
        last.clear();
        last.push_str(message);
    });
}

/// The status of a call that has no window: a failure's message is recorded for this thread.
pub(crate) fn settle(outcome: Result<(), FfiError>) -> ctxwin_status {
    match outcome {
        Ok(()) => ctxwin_status::Ok,
        Err(error) => {
            record(&error.message);
            error.status
        }
    }
}

/// This thread's last error (empty before any failure, and once the thread's slot is gone).
pub(crate) fn message() -> String {
    LAST_ERROR.try_with(|last| last.borrow().clone()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::window::ctxwin_last_error;
    use libc::c_char;

    fn read() -> String {
        let mut buf = [0 as c_char; 128];
        let mut needed = 0;
        // SAFETY: a local buffer of its stated size and a local `needed`.
        assert_eq!(unsafe { ctxwin_last_error(buf.as_mut_ptr(), buf.len(), &mut needed) }, ctxwin_status::Ok);
        // SAFETY: the call wrote a NUL-terminated string into `buf`.
        unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap().to_owned()
    }

    #[test]
    fn each_thread_reads_its_own_failure() {
        settle(Err(FfiError::new(ctxwin_status::InvalidArg, "main thread's failure")));
        std::thread::spawn(|| {
            assert_eq!(read(), "");
            settle(Err(FfiError::new(ctxwin_status::Parse, "other thread's failure")));
            assert_eq!(read(), "other thread's failure");
        })
        .join()
        .unwrap();
        assert_eq!(read(), "main thread's failure");
        assert_eq!(settle(Ok(())), ctxwin_status::Ok);
        assert_eq!(read(), "main thread's failure", "a success does not clear it");
    }
}
