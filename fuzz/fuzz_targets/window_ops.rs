//! A window driven by any sequence of operations decoded from the input; the ledger's
//! invariants are checked after each one (see `ctxwin_fuzz::Window::check_invariants`).
#![no_main]
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
        match input.byte() % 12 {
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
            _ => {
                let mut copy = null_mut();
                window.call_keeping_messages(|w| unsafe { ctxwin_window_clone(w, &mut copy) });
                unsafe { ctxwin_window_free(copy) };
            }
        }
    }
});
