//! The `ctxwin_window` handle: the window, its last error, and its poisoned flag; and the
//! `ctxwin_tokenizer` handle. All boxing and unboxing of handles lives here.

use super::boundary::Fallback;
use super::buffer::OutBuffer;
use super::error::{FfiError, ctxwin_status};
use crate::tokens::Tokenizer;
use crate::window::Window;
use libc::c_char;
use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

/// A conversation window (the ledger). Opaque: create it with `ctxwin_window_new` or
/// `ctxwin_window_clone` and release it with `ctxwin_window_free`.
///
/// Thread-safety: not safe to use from two threads at once. A window may move between
/// threads; use it from one thread at a time (functions taking `const ctxwin_window *` are
/// no exception: they record `last_error`). Separate windows are independent.
pub struct ctxwin_window {
    /// In a cell because reading calls resolve uncounted messages first
    /// ([`Window::resolve_counts`]): a window is used by one thread at a time.
    window: RefCell<Window>,
    last_error: RefCell<String>,
    poisoned: Cell<bool>,
}

impl ctxwin_window {
    /// Boxes `window` into a new handle for C.
    pub(crate) fn into_raw(window: Window) -> *mut ctxwin_window {
        Box::into_raw(Box::new(ctxwin_window {
            window: RefCell::new(window),
            last_error: RefCell::new(String::new()),
            poisoned: Cell::new(false),
        }))
    }

    /// Frees a handle made by [`ctxwin_window::into_raw`]; NULL is a no-op.
    ///
    /// # Safety
    /// `handle` is NULL or came from `into_raw` and has not been freed.
    pub(crate) unsafe fn free(handle: *mut ctxwin_window) {
        if !handle.is_null() {
            // SAFETY: per this function's contract the box is live and owned by the caller.
            drop(unsafe { Box::from_raw(handle) });
        }
    }

    /// The last failure's explanation.
    pub(crate) fn last_error(&self) -> String {
        self.last_error.borrow().clone()
    }

    /// Runs `f` on the window for a mutating call: a failure's message is recorded, a panic
    /// poisons the handle. A poisoned handle refuses with PANIC. Messages still uncounted
    /// are counted first ([`Window::resolve_counts`]).
    pub(crate) fn update(&mut self, f: impl FnOnce(&mut Window) -> Result<(), FfiError>) -> ctxwin_status {
        self.update_uncounted(|window| {
            window.resolve_counts();
            f(window)
        })
    }

    /// [`ctxwin_window::update`] for the calls that leave uncounted messages uncounted: the
    /// pushes that do not ask for the count, `set_count`, `set_turn_count`, and `end_turn` and
    /// `prepare`, whose enforcement resolves them itself (taking a count the caller recorded
    /// without counting).
    pub(crate) fn update_uncounted(&mut self, f: impl FnOnce(&mut Window) -> Result<(), FfiError>) -> ctxwin_status {
        let window = self.window.get_mut();
        let outcome = guard(&self.poisoned, || f(window));
        self.settle(outcome)
    }

    /// Runs `f` on the window for a reading call, with [`ctxwin_window::update`]'s rules:
    /// every count `f` reads is resolved.
    pub(crate) fn inspect(&self, f: impl FnOnce(&Window) -> Result<(), FfiError>) -> ctxwin_status {
        let outcome = guard(&self.poisoned, || f(&self.resolved()));
        self.settle(outcome)
    }

    /// The window for reading, its uncounted messages counted first.
    fn resolved(&self) -> std::cell::Ref<'_, Window> {
        if self.window.borrow().has_uncounted() {
            self.window.borrow_mut().resolve_counts();
        }
        self.window.borrow()
    }

    /// Runs `f` for a reading call that answers with text, written to the caller's buffer
    /// `(buf, cap, needed)`, which is checked before `f` runs.
    ///
    /// # Safety
    /// `buf` is NULL or valid for `cap` bytes; `needed` is NULL or writable.
    pub(crate) unsafe fn inspect_text<T: AsRef<str>>(
        &self,
        buf: *mut c_char,
        cap: usize,
        needed: *mut usize,
        f: impl FnOnce(&Window) -> Result<T, FfiError>,
    ) -> ctxwin_status {
        self.inspect(|window| {
            // SAFETY: forwarded from this function's contract.
            let out = unsafe { OutBuffer::new(buf, cap, needed) }?;
            out.write(f(window)?.as_ref())
        })
    }

    /// Reads a plain value; a poisoned handle gives the type's fallback (0, false).
    pub(crate) fn value<T: Fallback>(&self, f: impl FnOnce(&Window) -> T) -> T {
        guard(&self.poisoned, || Ok(f(&self.resolved()))).unwrap_or_else(|_| T::panicked())
    }

    fn settle(&self, outcome: Result<(), FfiError>) -> ctxwin_status {
        match outcome {
            Ok(()) => ctxwin_status::Ok,
            Err(error) => {
                super::last_error::record(&error.message);
                *self.last_error.borrow_mut() = error.message;
                error.status
            }
        }
    }
}

/// A tokenizer loaded from a file (`ctxwin_tokenizer_load`, `ctxwin_tokenizer_from_bytes`).
/// Opaque and immutable; release it with `ctxwin_tokenizer_free`.
///
/// Thread-safety: safe to use from several threads at once (every function takes it
/// `const`). Windows that count with it share it: freeing the handle does not end their use.
pub struct ctxwin_tokenizer {
    tokenizer: Arc<Tokenizer>,
}

impl ctxwin_tokenizer {
    /// Boxes `tokenizer` into a new handle for C.
    pub(crate) fn into_raw(tokenizer: Tokenizer) -> *mut ctxwin_tokenizer {
        Box::into_raw(Box::new(ctxwin_tokenizer { tokenizer: Arc::new(tokenizer) }))
    }

    /// Frees a handle made by [`ctxwin_tokenizer::into_raw`]; NULL is a no-op. Windows that
    /// share the tokenizer keep it.
    ///
    /// # Safety
    /// `handle` is NULL or came from `into_raw` and has not been freed.
    pub(crate) unsafe fn free(handle: *mut ctxwin_tokenizer) {
        if !handle.is_null() {
            // SAFETY: per this function's contract the box is live and owned by the caller.
            drop(unsafe { Box::from_raw(handle) });
        }
    }

    /// The tokenizer, shared.
    pub(crate) fn shared(&self) -> &Arc<Tokenizer> {
        &self.tokenizer
    }
}

/// Runs `f` unless `poisoned`; a panic in `f` sets `poisoned` and becomes a PANIC error.
fn guard<T>(poisoned: &Cell<bool>, f: impl FnOnce() -> Result<T, FfiError>) -> Result<T, FfiError> {
    if poisoned.get() {
        return Err(FfiError::new(
            ctxwin_status::Panic,
            "the window was poisoned by an earlier internal error; only ctxwin_window_free works",
        ));
    }
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        poisoned.set(true);
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(FfiError::new(ctxwin_status::Panic, format!("internal error (panic): {what}")))
    })
}
