//! A window driven by any sequence of operations decoded from the input; the ledger's
//! invariants are checked after each one (see `ctxwin_fuzz::Window::check_invariants`).
//! Host state included: `push_message` with host ids, `set_count` / `set_turn_count`
//! recorded and applied later, `host_index` / `host_id` round trips, usage of the last
//! rendered request, `reset_with`.
#![no_main]
use ctxwin::ffi::count::ctxwin_count;
use ctxwin::ffi::error::ctxwin_status;
use ctxwin::ffi::host::*;
use ctxwin::ffi::window::*;
use ctxwin_fuzz::{Input, MODELS, Window};
use libfuzzer_sys::fuzz_target;
use std::ptr::null_mut;

/// Small settings documents, so the fuzzer reaches their effects without having to invent
/// JSON (the configure target fuzzes the parser itself).
const SETTINGS: [&str; 6] = [
    r#"{"retain_text":false}"#,
    r#"{"retain_text":true}"#,
    r#"{"budget_includes_overhead":true}"#,
    r#"{"budget_includes_overhead":false}"#,
    r#"{"max_message_bytes":16}"#,
    r#"{"max_message_bytes":0}"#,
];

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mut window = Window::new(MODELS[usize::from(input.byte()) % MODELS.len()]);
    while !input.is_empty() {
        match input.byte() % 20 {
            0 => {
                let kind = i32::from(input.byte()) - 1;
                window.push(kind, input.bytes());
            }
            1 => {
                let (kind, tokens) = (i32::from(input.byte() % 7), input.int());
                window.push_counted(kind, tokens);
            }
            2 => {
                // SAFETY (all calls below): the handle is live; pointers are NULL or valid.
                window.call_keeping_messages(|w| unsafe { ctxwin_window_end_turn(w, null_mut()) });
            }
            3 => {
                let budget = input.int() >> (input.byte() % 32);
                window.call_keeping_messages(|w| unsafe { ctxwin_window_set_budget(w, budget) });
            }
            4 => {
                let (system, tools) = (input.int() >> 8, input.int() >> 8);
                window.set_overhead(system, tools);
            }
            5 => {
                let model = MODELS[usize::from(input.byte()) % MODELS.len()];
                window.call_keeping_messages(|w| unsafe { ctxwin_window_set_model(w, model.as_ptr().cast(), model.len()) });
            }
            6 => {
                let json = SETTINGS[usize::from(input.byte()) % SETTINGS.len()];
                window.call_keeping_messages(|w| unsafe { ctxwin_window_configure(w, json.as_ptr().cast(), json.len()) });
            }
            7 => {
                let count = usize::from(input.byte());
                window.truncate(count);
            }
            8 => {
                window.call_keeping_messages(|w| unsafe { ctxwin_window_drop_oldest_turn(w) });
            }
            9 => {
                window.reset();
            }
            10 => {
                let turn = usize::from(input.byte());
                let mut info = ctxwin_turn_info::default();
                window.call_keeping_messages(|w| unsafe { ctxwin_window_turn_info(w, turn, &mut info) });
            }
            11 => push_message(&mut window, &mut input),
            12 => {
                let (index, count) = (usize::from(input.byte()), count(&mut input));
                let status = window.call_keeping_messages(|w| unsafe { ctxwin_window_set_count(w, index, count) });
                assert_eq!(
                    status == ctxwin_status::Ok,
                    index < window.kinds().len() && count.tokens >= 0,
                    "set_count: {status:?}"
                );
            }
            13 => {
                let (turn, count) = (usize::from(input.byte()), count(&mut input));
                let turns = window.kinds().iter().filter(|&&k| k == CTXWIN_KIND_USER).count();
                let status = window.call_keeping_messages(|w| unsafe { ctxwin_window_set_turn_count(w, turn, count) });
                assert_eq!(status == ctxwin_status::Ok, turn < turns && count.tokens >= 0, "set_turn_count: {status:?}");
            }
            14 => host_lookups(&mut window, i64::from(input.byte() % 8), usize::from(input.byte())),
            15 => {
                let _ = ctxwin_fuzz::render_json(window.raw());
            }
            16 => {
                let prompt = i64::from(input.int()) >> (input.byte() % 32);
                window.call_keeping_messages(|w| unsafe { ctxwin_window_observe_last_usage(w, prompt) });
            }
            17 => {
                window.reset_with(u32::from(input.byte() % 5));
            }
            18 => {
                let mut start = -1;
                let status = window.call_keeping_messages(|w| unsafe { ctxwin_window_start_host_id(w, &mut start) });
                if status == ctxwin_status::Ok {
                    host_lookups(&mut window, start, 0);
                }
            }
            _ => {
                let mut copy = null_mut();
                window.call_keeping_messages(|w| unsafe { ctxwin_window_clone(w, &mut copy) });
                unsafe { ctxwin_window_free(copy) };
            }
        }
    }
});

/// A count from the input: negative ones must be refused.
fn count(input: &mut Input) -> ctxwin_count {
    let tokens = input.int() >> (input.byte() % 32);
    ctxwin_count { tokens, exact: tokens % 2 == 0 }
}

/// Call ids and tool names the parts pick from: a few, so pairs and duplicates happen.
const IDS: [&str; 4] = ["", "a", "b", "c"];
const NAMES: [&str; 3] = ["", "shell", " "];

/// A host message of 0 to 4 parts from the input (any kind number, any text bytes, ids and
/// names from small sets) under a host id from a small set. All or nothing: on failure the
/// window is unchanged (checked by `call_adding_messages`); on success it holds one more
/// message per part, and the host id maps to the first of them and back.
fn push_message(window: &mut Window, input: &mut Input) {
    let n = usize::from(input.byte() % 5);
    let host_id = i64::from(input.byte() % 8);
    let mut texts = Vec::with_capacity(n);
    let mut shapes = Vec::with_capacity(n);
    for _ in 0..n {
        shapes.push((
            i32::from(input.byte() % 7),
            IDS[usize::from(input.byte()) % IDS.len()],
            NAMES[usize::from(input.byte()) % NAMES.len()],
        ));
        texts.push(input.bytes());
    }
    let parts: Vec<ctxwin_part> = shapes
        .iter()
        .zip(&texts)
        .map(|(&(kind, id, name), text)| ctxwin_part::borrowing(kind, text, id.as_bytes(), name.as_bytes()))
        .collect();
    let first = window.kinds().len();
    let mut total = ctxwin_count { tokens: -1, exact: false };
    // SAFETY: the handle is live; the parts point into `shapes` and `texts`.
    let status = window
        .call_adding_messages(|w| unsafe { ctxwin_window_push_message(w, parts.as_ptr(), parts.len(), host_id, &mut total) });
    if n == 0 {
        assert_ne!(status, ctxwin_status::Ok, "a host message of no parts");
    }
    if status == ctxwin_status::Ok {
        assert_eq!(window.kinds().len(), first + n, "one ledger message per part");
        assert!(total.tokens >= 0);
        host_lookups(window, host_id, first);
    } else {
        assert_eq!(total.tokens, -1, "out written on failure");
    }
}

/// `host_index(id)` and `host_id(index)`: each succeeds or explains itself, and they agree
/// (the host id of a host message's first part is its id).
fn host_lookups(window: &mut Window, id: i64, index: usize) {
    let mut at = usize::MAX;
    if window.call_keeping_messages(|w| unsafe { ctxwin_window_host_index(w, id, &mut at) }) == ctxwin_status::Ok {
        assert!(at < window.kinds().len(), "host_index {at} past the ledger");
        let mut back = -1;
        let status = window.call_keeping_messages(|w| unsafe { ctxwin_window_host_id(w, at, &mut back) });
        assert_eq!((status, back), (ctxwin_status::Ok, id), "host_id(host_index({id}))");
    }
    let mut owner = -1;
    let status = window.call_keeping_messages(|w| unsafe { ctxwin_window_host_id(w, index, &mut owner) });
    if index >= window.kinds().len() {
        assert_eq!(status, ctxwin_status::OutOfRange);
    } else if status == ctxwin_status::Ok {
        // Rewinds remove parts from the end, so a host message keeps its first part.
        let mut first = usize::MAX;
        let status = window.call_keeping_messages(|w| unsafe { ctxwin_window_host_index(w, owner, &mut first) });
        assert_eq!(status, ctxwin_status::Ok, "host id {owner} of message {index} has no first part");
        assert!(first <= index, "host message {owner} starts at {first}, after its part {index}");
    }
}
