//! Shared machinery for ctxwin's fuzz targets: a window handle driven through the C entry
//! points, a shadow of what it must contain, and the ledger invariants checked after every
//! call. A target for a new entry point that takes text is a few lines:
//!
//! ```ignore
//! fuzz_target!(|data: &[u8]| ctxwin_fuzz::text_entry_point(data, |w, ptr, len| unsafe {
//!     ctxwin_window_push_json(w, ptr, len)
//! }));
//! ```

use ctxwin::ffi::count::ctxwin_count;
use ctxwin::ffi::error::ctxwin_status;
use ctxwin::ffi::handle::ctxwin_window;
use ctxwin::ffi::window::*;
use std::ffi::c_char;
use std::ptr::null_mut;

/// Models the targets pick from: every exact encoding, an estimated model, an unknown name.
pub const MODELS: [&str; 7] = [
    "gpt-4o",
    "gpt-oss-120b",
    "gpt-4",
    "text-davinci-003",
    "gpt2",
    "claude-sonnet-4-5",
    "no-such-model",
];

/// Reads the fuzz input as a stream of small decisions; past the end every read is 0.
pub struct Input<'a> {
    bytes: &'a [u8],
}

impl<'a> Input<'a> {
    /// A reader over `bytes`.
    pub fn new(bytes: &'a [u8]) -> Input<'a> {
        Input { bytes }
    }

    /// True when every byte was read.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The next byte.
    pub fn byte(&mut self) -> u8 {
        let (first, rest) = self.bytes.split_first().map_or((0, &[][..]), |(b, r)| (*b, r));
        self.bytes = rest;
        first
    }

    /// The next four bytes as an `i32`.
    pub fn int(&mut self) -> i32 {
        i32::from_le_bytes([self.byte(), self.byte(), self.byte(), self.byte()])
    }

    /// Up to `len` bytes (fewer at the end of the input).
    pub fn take(&mut self, len: usize) -> &'a [u8] {
        let (taken, rest) = self.bytes.split_at(len.min(self.bytes.len()));
        self.bytes = rest;
        taken
    }

    /// A length-prefixed byte string (one length byte).
    pub fn bytes(&mut self) -> &'a [u8] {
        let len = usize::from(self.byte());
        self.take(len)
    }

    /// Everything not read yet.
    pub fn rest(&mut self) -> &'a [u8] {
        self.take(self.bytes.len())
    }
}

/// A window handle made through the C API, freed on drop, with a shadow of the kinds it
/// holds and of its overhead: the independent reference the invariants are checked against.
pub struct Window {
    raw: *mut ctxwin_window,
    kinds: Vec<i32>,
    overhead: i64,
}

impl Window {
    /// A window for `model`.
    pub fn new(model: &str) -> Window {
        let mut raw = null_mut();
        // SAFETY: a valid (ptr, len) string and a writable out-pointer.
        let status = unsafe { ctxwin_window_new(model.as_ptr().cast(), model.len(), &mut raw) };
        assert_eq!(status, ctxwin_status::Ok);
        assert!(!raw.is_null());
        Window {
            raw,
            kinds: Vec::new(),
            overhead: 0,
        }
    }

    /// The handle, for calls the helpers below do not wrap.
    pub fn raw(&self) -> *mut ctxwin_window {
        self.raw
    }

    /// Pushes `text` (any bytes) as `kind` (any integer) and checks the outcome: success
    /// exactly for a known kind, valid UTF-8 and a size within the limit.
    pub fn push(&mut self, kind: i32, text: &[u8]) -> ctxwin_status {
        let mut count = ctxwin_count { tokens: -1, exact: false };
        // SAFETY: `text` is valid for its length; `count` is writable.
        let status = unsafe { ctxwin_window_push(self.raw, kind, text.as_ptr().cast(), text.len(), &mut count) };
        let valid = (0..=5).contains(&kind) && std::str::from_utf8(text).is_ok();
        // A valid push fails only on a configured max_message_bytes below its size.
        let over_limit = status == ctxwin_status::OutOfRange && self.last_error().contains("max_message_bytes");
        assert_eq!(status == ctxwin_status::Ok, valid && !over_limit, "push of kind {kind}: {status:?}");
        if status == ctxwin_status::Ok {
            assert!(count.tokens >= 0);
            self.kinds.push(kind);
        } else {
            assert_eq!(count.tokens, -1, "out written on failure");
        }
        self.settle(status)
    }

    /// Pushes a caller-counted message.
    pub fn push_counted(&mut self, kind: i32, tokens: i32) -> ctxwin_status {
        let count = ctxwin_count { tokens, exact: tokens % 2 == 0 };
        // SAFETY: the handle is live.
        let status = unsafe { ctxwin_window_push_counted(self.raw, kind, count) };
        let valid = (0..=5).contains(&kind) && tokens >= 0;
        assert_eq!(status == ctxwin_status::Ok, valid, "push_counted({kind}, {tokens}): {status:?}");
        if valid {
            self.kinds.push(kind);
        }
        self.settle(status)
    }

    /// Sets the overhead and records it in the shadow on success.
    pub fn set_overhead(&mut self, system: i32, tools: i32) -> ctxwin_status {
        // SAFETY: the handle is live.
        let status = unsafe { ctxwin_window_set_overhead(self.raw, system, tools) };
        assert_eq!(status == ctxwin_status::Ok, system >= 0 && tools >= 0);
        if status == ctxwin_status::Ok {
            self.overhead = i64::from(system) + i64::from(tools);
        }
        self.settle(status)
    }

    /// Rewinds to `count` messages; succeeds exactly when `count` is not past the end.
    pub fn truncate(&mut self, count: usize) -> ctxwin_status {
        // SAFETY: the handle is live.
        let status = unsafe { ctxwin_window_truncate(self.raw, count) };
        assert_eq!(status == ctxwin_status::Ok, count <= self.kinds.len());
        if status == ctxwin_status::Ok {
            self.kinds.truncate(count);
        }
        self.settle(status)
    }

    /// Clears the window.
    pub fn reset(&mut self) -> ctxwin_status {
        // SAFETY: the handle is live.
        let status = unsafe { ctxwin_window_reset(self.raw) };
        self.kinds.clear();
        self.settle(status)
    }

    /// Runs `call` on the handle when it does not change the messages (configure, set_model,
    /// set_budget, end_turn, drop_oldest_turn…); a failure must leave the window as it was.
    pub fn call_keeping_messages(&mut self, call: impl FnOnce(*mut ctxwin_window) -> ctxwin_status) -> ctxwin_status {
        let before = self.observe();
        let status = call(self.raw);
        if status != ctxwin_status::Ok {
            assert_eq!(self.observe(), before, "a failed call changed the window");
        }
        self.settle(status)
    }

    /// Checks what every call must leave true, and that a failure explained itself.
    fn settle(&self, status: ctxwin_status) -> ctxwin_status {
        assert_ne!(status, ctxwin_status::Panic, "a call panicked: {}", self.last_error());
        if status != ctxwin_status::Ok {
            assert!(!self.last_error().is_empty(), "{status:?} without a last_error");
        }
        self.check_invariants();
        status
    }

    /// The window's explanation of its last failure.
    pub fn last_error(&self) -> String {
        let mut needed = 0;
        let mut buf = vec![0u8; 1024];
        // SAFETY: `buf` is writable for its length.
        let status = unsafe { ctxwin_window_last_error(self.raw, buf.as_mut_ptr().cast::<c_char>(), buf.len(), &mut needed) };
        assert!(status == ctxwin_status::Ok || status == ctxwin_status::BufferTooSmall);
        buf.truncate(needed.min(buf.len() - 1));
        String::from_utf8(buf).expect("last_error is UTF-8")
    }

    /// What the C API reports: messages, turns, start, first live turn, live tokens.
    fn observe(&self) -> (usize, usize, usize, usize, ctxwin_count) {
        let mut live = ctxwin_count::default();
        // SAFETY: the handle is live; `live` is writable.
        unsafe {
            assert_eq!(ctxwin_window_live_tokens(self.raw, &mut live), ctxwin_status::Ok);
            (
                ctxwin_window_message_count(self.raw),
                ctxwin_window_turn_count(self.raw),
                ctxwin_window_start(self.raw),
                ctxwin_window_first_live_turn(self.raw),
                live,
            )
        }
    }

    /// The ledger's invariants, against the shadow: the messages and turns pushed are there,
    /// start ≤ count and on a USER message (or 0), the first live turn exists, live tokens
    /// include the overhead.
    pub fn check_invariants(&self) {
        let (messages, turns, start, first_live, live) = self.observe();
        assert_eq!(messages, self.kinds.len());
        assert_eq!(turns, self.kinds.iter().filter(|&&k| k == CTXWIN_KIND_USER).count());
        assert!(start <= messages);
        assert!(start == 0 || self.kinds[start] == CTXWIN_KIND_USER, "start {start} is not a USER message");
        if turns > 0 {
            assert!(first_live < turns);
        } else {
            assert_eq!(first_live, 0);
        }
        assert!(i64::from(live.tokens) >= self.overhead.min(i64::from(i32::MAX)));
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        // SAFETY: the handle is live and freed once.
        unsafe { ctxwin_window_free(self.raw) };
    }
}

/// A window for a model picked by `input`, with a few messages pushed from `input`.
pub fn seeded_window(input: &mut Input) -> Window {
    let mut window = Window::new(MODELS[usize::from(input.byte()) % MODELS.len()]);
    for _ in 0..input.byte() % 8 {
        let kind = i32::from(input.byte() % 6);
        window.push(kind, input.bytes());
    }
    window
}

/// Fuzzes an entry point that takes a window and a text: a seeded window, then `call` with
/// the rest of the input (any bytes). The call must not panic, must explain a failure and
/// leave the window as it was, and the invariants must hold after it.
pub fn text_entry_point(data: &[u8], call: impl FnOnce(*mut ctxwin_window, *const c_char, usize) -> ctxwin_status) {
    let mut input = Input::new(data);
    let mut window = seeded_window(&mut input);
    let text = input.rest();
    window.call_keeping_messages(|w| call(w, text.as_ptr().cast(), text.len()));
}
