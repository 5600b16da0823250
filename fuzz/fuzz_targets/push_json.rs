//! `ctxwin_window_push_json` with any bytes as the provider JSON, on windows of several
//! models and settings, some already holding messages of a format. After the push, every
//! reader of the window (view, render_json, validate, export) is run and checked.
#![no_main]
use ctxwin::ffi::error::ctxwin_status;
use ctxwin::ffi::json::ctxwin_window_push_json;
use ctxwin::ffi::window::{
    ctxwin_window_configure, ctxwin_window_end_turn, ctxwin_window_message_count, ctxwin_window_turn_count,
};
use ctxwin_fuzz::{Input, MODELS, Window, read_everything, render_json};
use libfuzzer_sys::fuzz_target;
use std::ptr::null_mut;

/// Settings the window may start with: counts only, a strategy that rewrites the view, a
/// small budget that prunes, a small size limit.
const SETTINGS: [&str; 6] = [
    "{}",
    r#"{"retain_text":false}"#,
    r#"{"strategy":"tiered","tool_output_max_lines":2,"history_budget":200}"#,
    r#"{"strategy":"monologue","keep_recent_turns":1}"#,
    r#"{"history_budget":40}"#,
    r#"{"max_message_bytes":64}"#,
];

/// A message of each format pushed first, so the fuzzed push meets a window that already
/// speaks one (and a different format is a MISMATCH).
const FIRST: [&str; 5] = [
    "",
    r#"{"role":"user","content":"hi"}"#,
    r#"[{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"ls","input":{}}]}]"#,
    r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}"#,
    r#"{"role":"user","parts":[{"text":"hi"}]}"#,
];

/// Pushes `json`; a success must render as JSON (a counts-only window has no text to
/// rebuild a message from, and may answer UNSUPPORTED instead, as documented).
fn push_json(window: &mut Window, json: &[u8], counts_only: bool) -> ctxwin_status {
    let before = window.kinds().len();
    // SAFETY: a live handle and a text valid for its length.
    let status = window.call_adding_messages(|w| unsafe { ctxwin_window_push_json(w, json.as_ptr().cast(), json.len()) });
    if status == ctxwin_status::Ok {
        assert!(window.kinds().len() >= before, "a push removed messages");
        match render_json(window.raw()) {
            Ok(_) => {}
            Err(ctxwin_status::Unsupported) if counts_only => {}
            Err(status) => panic!("render_json after a successful push_json: {status:?}"),
        }
    } else {
        // SAFETY: a live handle.
        assert_eq!(unsafe { ctxwin_window_message_count(window.raw()) }, before);
    }
    status
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mut window = Window::new(MODELS[usize::from(input.byte()) % MODELS.len()]);
    let settings = SETTINGS[usize::from(input.byte()) % SETTINGS.len()];
    let counts_only = settings.contains(r#""retain_text":false"#);
    // SAFETY: a live handle and a valid JSON text.
    let status = unsafe { ctxwin_window_configure(window.raw(), settings.as_ptr().cast(), settings.len()) };
    assert_eq!(status, ctxwin_status::Ok, "{settings}");
    let first = FIRST[usize::from(input.byte()) % FIRST.len()];
    if !first.is_empty() {
        push_json(&mut window, first.as_bytes(), counts_only);
    }
    let json = input.rest();
    // SAFETY: a live handle.
    let had_turns = unsafe { ctxwin_window_turn_count(window.raw()) } > 0;
    if push_json(&mut window, json, counts_only) == ctxwin_status::Ok {
        read_everything(window.raw());
        // SAFETY: a live handle.
        window.call_keeping_messages(|w| unsafe { ctxwin_window_end_turn(w, null_mut()) });
        // The same document again: the window accepts its own format twice. A tool result
        // whose call never came is kept before the first turn (a log cut before its call)
        // and refused inside one, so a document holding one before its first USER message,
        // pushed first, is refused the second time, naming it.
        let again = push_json(&mut window, json, counts_only);
        let orphan_in_a_turn = !had_turns
            && again == ctxwin_status::InvalidArg
            && window.last_error().contains("no call with this id was pushed in this turn");
        assert!(
            again == ctxwin_status::Ok
                || again == ctxwin_status::OutOfRange
                || again == ctxwin_status::Mismatch
                || orphan_in_a_turn,
            "{again:?}: {}",
            window.last_error()
        );
    }
    read_everything(window.raw());
});
