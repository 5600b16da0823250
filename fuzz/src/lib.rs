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
use ctxwin::ffi::json::ctxwin_window_render_json;
use ctxwin::ffi::persist::ctxwin_window_export;
use ctxwin::ffi::settings::{CTXWIN_RESET_CALIBRATION, CTXWIN_RESET_OVERHEAD, ctxwin_window_reset_with};
use ctxwin::ffi::view::{ctxwin_item, ctxwin_window_validate, ctxwin_window_view_get, ctxwin_window_view_len};
use ctxwin::ffi::window::*;
use serde_json::Value;
use std::ffi::c_char;
use std::ptr::null_mut;

/// Models the targets pick from: every exact encoding, an estimated model, an unknown name.
pub const MODELS: [&str; 7] =
    ["gpt-4o", "gpt-oss-120b", "gpt-4", "text-davinci-003", "gpt2", "claude-sonnet-4-5", "no-such-model"];

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
        Window { raw, kinds: Vec::new(), overhead: 0 }
    }

    /// Takes ownership of a live handle made elsewhere (an import), with the shadow read
    /// from its export: the kinds of its messages and its overhead.
    pub fn adopt(raw: *mut ctxwin_window) -> Window {
        assert!(!raw.is_null());
        let mut window = Window { raw, kinds: Vec::new(), overhead: 0 };
        window.resync();
        window.check_invariants();
        window
    }

    /// Rereads the shadow from the window's export, after a call that added messages the
    /// caller cannot predict (push_json, restore).
    pub fn resync(&mut self) {
        let saved: Value = serde_json::from_str(&export(self.raw)).expect("export is JSON");
        self.kinds = saved["messages"]
            .as_array()
            .expect("export has messages")
            .iter()
            .map(|m| m["kind"].as_i64().expect("a message has a kind") as i32)
            .collect();
        let overhead = &saved["overhead"];
        self.overhead = overhead["system"].as_i64().unwrap_or(0) + overhead["tools"].as_i64().unwrap_or(0);
    }

    /// The kinds of the messages the window holds (the shadow).
    pub fn kinds(&self) -> &[i32] {
        &self.kinds
    }

    /// Runs `call`, which may add messages (push_json, push_tool, restore): on failure the
    /// window must be as it was, on success the shadow is reread from the export.
    pub fn call_adding_messages(&mut self, call: impl FnOnce(*mut ctxwin_window) -> ctxwin_status) -> ctxwin_status {
        let before = self.observe();
        let status = call(self.raw);
        if status == ctxwin_status::Ok {
            self.resync();
        } else {
            assert_eq!(self.observe(), before, "a failed call changed the window");
        }
        self.settle(status)
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
        // A valid push fails only on a configured max_message_bytes below its size, or, for a
        // TOOL_CALL, on a text that names no tool (INVALID_ARG pointing to push_tool_call).
        let over_limit = status == ctxwin_status::OutOfRange && self.last_error().contains("max_message_bytes");
        let unnamed = kind == CTXWIN_KIND_TOOL_CALL
            && status == ctxwin_status::InvalidArg
            && self.last_error().contains("this text has no name");
        assert_eq!(status == ctxwin_status::Ok, valid && !over_limit && !unnamed, "push of kind {kind}: {status:?}");
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

    /// `ctxwin_window_reset_with(flags)`: succeeds exactly for known flag bits; then the
    /// window is empty, and its overhead 0 when `CTXWIN_RESET_OVERHEAD` is set.
    pub fn reset_with(&mut self, flags: u32) -> ctxwin_status {
        let known = CTXWIN_RESET_OVERHEAD | CTXWIN_RESET_CALIBRATION;
        let before = self.observe();
        // SAFETY: the handle is live.
        let status = unsafe { ctxwin_window_reset_with(self.raw, flags) };
        assert_eq!(status == ctxwin_status::Ok, flags & !known == 0, "reset_with({flags:#x}): {status:?}");
        if status == ctxwin_status::Ok {
            self.kinds.clear();
            if flags & CTXWIN_RESET_OVERHEAD != 0 {
                self.overhead = 0;
            }
        } else {
            assert_eq!(self.observe(), before, "a failed reset_with changed the window");
        }
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
    /// start ≤ count and on a USER message, the first message of a step, or 0, the first live turn exists, live tokens
    /// include the overhead.
    pub fn check_invariants(&self) {
        let (messages, turns, start, first_live, live) = self.observe();
        assert_eq!(messages, self.kinds.len());
        assert_eq!(turns, self.kinds.iter().filter(|&&k| k == CTXWIN_KIND_USER).count());
        assert!(start <= messages);
        // On a USER message, or (the steps planner) on the first message of a step: what the
        // model said right after an input (a USER message or a tool result). The step may be
        // of the turn before the newest: a USER message pushed does not move the boundary
        // before end_turn.
        let input = |kind: i32| kind == CTXWIN_KIND_USER || kind == CTXWIN_KIND_TOOL_RESULT;
        let step_start = start > 0 && start < messages && !input(self.kinds[start]) && input(self.kinds[start - 1]);
        assert!(
            start == 0 || self.kinds.get(start) == Some(&CTXWIN_KIND_USER) || step_start,
            "start {start} is neither a USER message nor the first message of a step: kinds {:?}",
            self.kinds
        );
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

/// A string-out call (`buf, cap, needed`) made twice, as the README shows: the length, then
/// the text. Checks the contract: the query succeeds, `needed` is the same both times, the
/// text fits in `needed + 1` bytes, is NUL-terminated and UTF-8; a buffer one byte short is
/// BUFFER_TOO_SMALL. `None` when the call fails (its status is returned).
pub fn text_out(call: impl Fn(*mut c_char, usize, *mut usize) -> ctxwin_status) -> Result<String, ctxwin_status> {
    let mut needed = usize::MAX;
    let status = call(std::ptr::null_mut(), 0, &mut needed);
    if status != ctxwin_status::Ok {
        return Err(status);
    }
    assert_ne!(needed, usize::MAX, "needed not written");
    let mut buf = vec![0xffu8; needed + 1];
    let mut again = usize::MAX;
    let status = call(buf.as_mut_ptr().cast(), buf.len(), &mut again);
    assert_eq!(status, ctxwin_status::Ok, "the text did not fit in needed + 1 bytes");
    assert_eq!(again, needed, "needed changed between the query and the call");
    assert_eq!(buf[needed], 0, "not NUL-terminated");
    buf.truncate(needed);
    if needed > 0 {
        let mut short = vec![0u8; needed];
        let mut third = 0;
        assert_eq!(call(short.as_mut_ptr().cast(), short.len(), &mut third), ctxwin_status::BufferTooSmall);
        assert_eq!(third, needed);
    }
    Ok(String::from_utf8(buf).expect("text out is UTF-8"))
}

/// The window's export (`ctxwin_window_export`), which must succeed and be JSON.
pub fn export(w: *const ctxwin_window) -> String {
    // SAFETY: a live handle; the buffers are the helper's.
    let text = text_out(|buf, cap, needed| unsafe { ctxwin_window_export(w, buf, cap, needed) }).expect("export succeeds");
    serde_json::from_str::<Value>(&text).expect("export is valid JSON");
    text
}

/// `ctxwin_window_render_json`: when it succeeds, a JSON array.
pub fn render_json(w: *const ctxwin_window) -> Result<Value, ctxwin_status> {
    // SAFETY: a live handle; the buffers are the helper's.
    let text = text_out(|buf, cap, needed| unsafe { ctxwin_window_render_json(w, buf, cap, needed) })?;
    let value: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("render_json is not JSON ({e}): {text}"));
    assert!(value.is_array(), "render_json is not an array: {text}");
    Ok(value)
}

/// `ctxwin_window_validate`, which must succeed and write a JSON report.
pub fn validate(w: *const ctxwin_window) -> Value {
    // SAFETY: a live handle; the buffers are the helper's.
    let text = text_out(|buf, cap, needed| unsafe { ctxwin_window_validate(w, buf, cap, needed) }).expect("validate succeeds");
    let report: Value = serde_json::from_str(&text).expect("validate writes JSON");
    assert!(report["valid"].is_boolean() && report["problems"].is_array(), "{text}");
    report
}

/// One item of the view, copied out of the window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    /// `CTXWIN_ITEM_*`.
    pub item_type: i32,
    /// `CTXWIN_KIND_*`.
    pub kind: i32,
    /// The ledger index it stands for.
    pub index: usize,
    /// Its text, or `None` when the window kept none.
    pub text: Option<String>,
    /// Its tokens.
    pub tokens: i32,
}

/// Every item of the view through `view_len`/`view_get`, checked: each read succeeds, the
/// one past the end is OUT_OF_RANGE, types and kinds are known, every index is a ledger
/// index, `text` is NULL exactly with no text and otherwise `text_len` bytes of UTF-8, and
/// tokens are not negative.
pub fn view(w: *const ctxwin_window) -> Vec<Item> {
    // SAFETY (every call below): a live handle, a writable item.
    let (len, count) = unsafe { (ctxwin_window_view_len(w), ctxwin_window_message_count(w)) };
    let mut items = Vec::with_capacity(len);
    for i in 0..len {
        let mut raw = ctxwin_item {
            r#type: -1,
            kind: -1,
            index: usize::MAX,
            text: std::ptr::null(),
            text_len: usize::MAX,
            tokens: ctxwin_count { tokens: -1, exact: false },
        };
        assert_eq!(unsafe { ctxwin_window_view_get(w, i, &mut raw) }, ctxwin_status::Ok, "view_get({i}) of {len}");
        assert!((0..=2).contains(&raw.r#type), "item {i}: type {}", raw.r#type);
        assert!((0..=5).contains(&raw.kind), "item {i}: kind {}", raw.kind);
        assert!(raw.index < count, "item {i}: index {} of {count} messages", raw.index);
        assert!(raw.tokens.tokens >= 0, "item {i}: {} tokens", raw.tokens.tokens);
        let text = if raw.text.is_null() {
            assert_eq!(raw.text_len, 0, "item {i}: NULL text with a length");
            None
        } else {
            assert!(raw.text_len <= isize::MAX as usize);
            // SAFETY: the item's text is valid for text_len bytes until the next mutating call.
            let bytes = unsafe { std::slice::from_raw_parts(raw.text.cast::<u8>(), raw.text_len) };
            Some(std::str::from_utf8(bytes).expect("item text is UTF-8").to_owned())
        };
        items.push(Item { item_type: raw.r#type, kind: raw.kind, index: raw.index, text, tokens: raw.tokens.tokens });
    }
    let mut past =
        ctxwin_item { r#type: -1, kind: -1, index: 0, text: std::ptr::null(), text_len: 0, tokens: ctxwin_count::default() };
    assert_eq!(unsafe { ctxwin_window_view_get(w, len, &mut past) }, ctxwin_status::OutOfRange);
    assert_eq!(past.r#type, -1, "view_get wrote its out on failure");
    items
}

/// Everything a caller can read about a window, checked: the view, render_json (JSON when it
/// succeeds), validate and export.
pub fn read_everything(w: *const ctxwin_window) -> Vec<Item> {
    let items = view(w);
    let _ = render_json(w);
    validate(w);
    export(w);
    items
}
