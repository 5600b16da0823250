//! Mutated save documents: a session is built from the input (turns, tool results, counts,
//! compaction, forced drops, summaries, rewinds), exported with `ctxwin_window_export`, and
//! its document is edited as the rest of the input says (digits changed, bytes flipped, cut
//! or repeated), with its checksum removed or kept. Whatever `ctxwin_window_import` accepts
//! must save and load back identically: its export imports to the same export, and
//! `ctxwin_window_save` then `ctxwin_window_load` gives that export again.
#![no_main]
use ctxwin::ffi::error::ctxwin_status;
use ctxwin::ffi::persist::{ctxwin_window_import, ctxwin_window_load, ctxwin_window_save};
use ctxwin::{Count, Kind};
use ctxwin_fuzz::{Input, Window, export, read_everything};
use libfuzzer_sys::fuzz_target;
use std::ptr::null_mut;

fn import(json: &[u8]) -> Result<Window, ctxwin_status> {
    let mut raw = null_mut();
    // SAFETY: the text is valid for its length; `raw` is writable.
    let status = unsafe { ctxwin_window_import(json.as_ptr().cast(), json.len(), &mut raw) };
    match status {
        ctxwin_status::Ok => Ok(Window::adopt(raw)),
        _ => {
            assert!(raw.is_null(), "out written on failure");
            assert_ne!(status, ctxwin_status::Panic);
            Err(status)
        }
    }
}

/// A session the input describes, as a saved document.
fn session(input: &mut Input) -> String {
    let configs = [
        "{}",
        r#"{"history_budget":120}"#,
        r#"{"strategy":"tiered","history_budget":150,"tool_output_max_lines":2}"#,
        r#"{"strategy":"monologue","keep_recent_turns":1}"#,
        r#"{"strategy":"summary","context_limit":400,"summary_budget":40}"#,
        r#"{"retain_text":false,"history_budget":90}"#,
        r#"{"strategy":"drop_oldest","turn_threshold":2}"#,
    ];
    let mut window = ctxwin::Window::new(["gpt-4o", "claude-sonnet-4-5", "my-model"][usize::from(input.byte()) % 3]);
    window.configure(configs[usize::from(input.byte()) % configs.len()]).expect("a valid configuration");
    for _ in 0..input.byte() % 24 {
        let len = usize::from(input.byte() % 40);
        let text = String::from_utf8_lossy(input.take(len)).into_owned();
        let _ = match input.byte() % 12 {
            0..=2 => window.push(Kind::User, &text).map(drop),
            3 | 4 => window.push(Kind::Assistant, &text).map(drop),
            5 => window.push(Kind::ToolResult, &text.repeat(3)).map(drop),
            6 => {
                Ok(window.push_counted(Kind::ToolResult, Count { tokens: u32::from(input.byte()), exact: input.byte() % 2 == 0 }))
            }
            7 => Ok(window.end_turn()).map(|_pruned| ()),
            8 => Ok(window.compact()).map(|_pruned| ()),
            9 => window.drop_oldest_turn(),
            10 => window.summary_request().and_then(|_| window.set_summary(window.generation(), &text, 5)),
            _ => window.truncate(window.message_count().saturating_sub(usize::from(input.byte() % 4))),
        };
    }
    window.end_turn();
    ctxwin::persist::export(&window)
}

/// The document edited as `input` says.
fn mutate(document: String, input: &mut Input) -> Vec<u8> {
    let mut bytes = document.into_bytes();
    if input.byte() % 4 != 0 {
        // As a document edited on purpose: without its checksum.
        let member = bytes.windows(12).rposition(|w| w == b",\"checksum\":").expect("an export ends with its checksum");
        bytes.truncate(member);
        bytes.push(b'}');
    }
    while !input.is_empty() && !bytes.is_empty() {
        let at = (usize::from(input.byte()) << 8 | usize::from(input.byte())) % bytes.len();
        match input.byte() % 6 {
            0 => bytes[at] = b'0' + input.byte() % 10,
            1 => bytes[at] ^= 1 << (input.byte() % 8),
            2 => drop(bytes.remove(at)),
            3 => bytes.insert(at, b'0' + input.byte() % 10),
            4 => {
                // Next digit up or down: the kind of change a checksum must catch.
                if bytes[at].is_ascii_digit() {
                    bytes[at] = if bytes[at] == b'9' { b'0' } else { bytes[at] + 1 };
                }
            }
            _ => {
                let end = (at + usize::from(input.byte() % 32)).min(bytes.len());
                let copy = bytes[at..end].to_vec();
                bytes.splice(at..at, copy);
            }
        }
    }
    bytes
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let document = session(&mut input);
    let damaged = mutate(document, &mut input);
    let Ok(window) = import(&damaged) else { return };
    read_everything(window.raw());
    let first = export(window.raw());
    let again = import(first.as_bytes()).unwrap_or_else(|status| panic!("an accepted document's export is refused: {status:?}"));
    assert_eq!(export(again.raw()), first, "export -> import -> export is not a fixed point");
    let path = std::env::temp_dir().join(format!("ctxwin-fuzz-saved-{}.json", std::process::id()));
    let path = path.to_str().expect("a UTF-8 temporary directory");
    // SAFETY: a live handle and a path valid for its length.
    assert_eq!(unsafe { ctxwin_window_save(window.raw(), path.as_ptr().cast(), path.len()) }, ctxwin_status::Ok);
    let mut raw = null_mut();
    // SAFETY: a path valid for its length; `raw` is writable.
    assert_eq!(
        unsafe { ctxwin_window_load(path.as_ptr().cast(), path.len(), &mut raw) },
        ctxwin_status::Ok,
        "a save does not load"
    );
    let loaded = Window::adopt(raw);
    assert_eq!(export(loaded.raw()), first, "save -> load changed the window");
    let _ = std::fs::remove_file(path);
});
