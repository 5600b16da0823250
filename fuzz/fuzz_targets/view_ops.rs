//! A window driven through the view's operations: tool calls with ids (parallel, answered,
//! unanswered, orphan), every strategy with random thresholds, compact, recover from a
//! classified overflow, summaries (standalone, and as the conversation in each request
//! format: a JSON array ending with the instruction), rewinds and turn ends. After each operation the ledger's
//! invariants (`ctxwin_fuzz::Window`) and the view's are checked:
//! - every item reads back, with a ledger index and its text (`ctxwin_fuzz::view`);
//! - a tool result is sent only after its call (a synthetic cancelled result after the call
//!   it answers);
//! - the first item after the pinned ones is a USER item (a message, a truncated one, a
//!   summary or the compaction marker);
//! - the generation changes whenever the view of the messages that were already there
//!   changes (a summarizer relies on it to know its request is stale).
#![no_main]
use ctxwin::ffi::classify::{ctxwin_classify_error, ctxwin_error_info};
use ctxwin::ffi::compaction::{ctxwin_window_compact, ctxwin_window_recover};
use ctxwin::ffi::error::ctxwin_status;
use ctxwin::ffi::summary::{ctxwin_window_set_summary, ctxwin_window_summary_request};
use ctxwin::ffi::view::CTXWIN_ITEM_SYNTHETIC;
use ctxwin::ffi::window::*;
use ctxwin_fuzz::{Input, Item, MODELS, Window, view};
use libfuzzer_sys::fuzz_target;
use std::ptr::null_mut;

const STRATEGIES: [&str; 5] = ["sliding", "drop_oldest", "tiered", "monologue", "summary"];

/// Keys a configure may set, with the largest value drawn for each.
const KEYS: [(&str, u32); 13] = [
    ("history_budget", 400),
    ("summary_budget", 600),
    ("output_reserve", 400),
    ("context_limit", 2000),
    ("token_threshold", 400),
    ("message_threshold", 30),
    ("turn_threshold", 8),
    ("keep_first", 4),
    ("keep_recent", 8),
    ("keep_recent_turns", 4),
    ("tool_output_max_lines", 6),
    ("max_message_bytes", 300),
    ("retain_text", 1),
];

const IDS: [&str; 4] = ["call_a", "call_b", "toolu_c", "d"];

/// Request formats a configure may set.
const FORMATS: [&str; 4] = ["openai_chat", "openai_responses", "anthropic", "gemini"];

/// Provider errors `recover` is handed (through `ctxwin_classify_error`).
fn error_text(input: &mut Input) -> String {
    let limit = u32::from(u16::from_le_bytes([input.byte(), input.byte()]));
    let actual = limit + u32::from(input.byte()) * 7;
    match input.byte() % 5 {
        0 => {
            format!("This model's maximum context length is {limit} tokens. However, your messages resulted in {actual} tokens.")
        }
        1 => format!("prompt is too long: {actual} tokens > {limit} maximum"),
        2 => "context_length_exceeded: the input is too long for the model".to_owned(),
        3 => "Rate limit exceeded, retry in 20s".to_owned(),
        _ => format!("input length and max_tokens exceed context limit: {actual} + 4096 > {limit}"),
    }
}

/// The view of the ledger's first `messages` messages, as compared across an operation.
fn view_before(items: &[Item], messages: usize) -> Vec<(i32, i32, usize, Option<String>)> {
    items
        .iter()
        .filter(|item| item.index < messages)
        .map(|item| (item.item_type, item.kind, item.index, item.text.clone()))
        .collect()
}

/// The view's invariants, given the call id of each message (None without one).
fn check_view(window: &Window, ids: &[Option<&str>]) -> Vec<Item> {
    let items = view(window.raw());
    let kinds = window.kinds();
    assert_eq!(ids.len(), kinds.len());
    let first_user = kinds.iter().position(|&k| k == CTXWIN_KIND_USER);
    let pinned = |item: &Item| {
        item.kind == CTXWIN_KIND_SYSTEM || (item.item_type != CTXWIN_ITEM_SYNTHETIC && first_user.is_none_or(|f| item.index < f))
    };
    if let Some(first) = items.iter().find(|item| !pinned(item)) {
        assert_eq!(first.kind, CTXWIN_KIND_USER, "the first item after the pinned ones: {first:?}\n{items:#?}");
    }
    for (i, item) in items.iter().enumerate() {
        if item.item_type != CTXWIN_ITEM_SYNTHETIC {
            assert_eq!(item.kind, kinds[item.index], "item {i} has another kind than its message");
        }
        if item.kind != CTXWIN_KIND_TOOL_RESULT {
            continue;
        }
        let earlier = &items[..i];
        if item.item_type == CTXWIN_ITEM_SYNTHETIC {
            assert_eq!(kinds[item.index], CTXWIN_KIND_TOOL_CALL, "a cancelled result for a non-call: {items:#?}");
            assert!(
                earlier
                    .iter()
                    .any(|e| e.kind == CTXWIN_KIND_TOOL_CALL && e.index == item.index && e.item_type != CTXWIN_ITEM_SYNTHETIC),
                "cancelled result {i} before its call: {items:#?}"
            );
        } else if let Some(id) = ids[item.index] {
            assert!(
                earlier
                    .iter()
                    .any(|e| e.kind == CTXWIN_KIND_TOOL_CALL && e.item_type != CTXWIN_ITEM_SYNTHETIC && ids[e.index] == Some(id)),
                "tool result {i} ({id}) without its call earlier in the view: {items:#?}"
            );
        }
    }
    items
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mut window = Window::new(MODELS[usize::from(input.byte()) % MODELS.len()]);
    let mut ids: Vec<Option<&str>> = Vec::new();
    let mut items = check_view(&window, &ids);
    while !input.is_empty() {
        // SAFETY (every call below): the handle is live; pointers are NULL or valid.
        let generation = unsafe { ctxwin_window_generation(window.raw()) };
        let count = ids.len();
        match input.byte() % 16 {
            0 | 1 => {
                let kind = [CTXWIN_KIND_USER, CTXWIN_KIND_ASSISTANT, CTXWIN_KIND_THINKING, CTXWIN_KIND_SYSTEM]
                    [usize::from(input.byte() % 4)];
                let text = input.bytes();
                if window.push(kind, text) == ctxwin_status::Ok {
                    ids.push(None);
                }
            }
            2 | 3 => {
                let kind = if input.byte() % 2 == 0 { CTXWIN_KIND_TOOL_CALL } else { CTXWIN_KIND_TOOL_RESULT };
                let id = IDS[usize::from(input.byte()) % IDS.len()];
                let text = input.bytes();
                let status = window.call_adding_messages(|w| unsafe {
                    ctxwin_window_push_tool(w, kind, id.as_ptr().cast(), id.len(), text.as_ptr().cast(), text.len(), null_mut())
                });
                if status == ctxwin_status::Ok {
                    ids.push(Some(id));
                }
            }
            4 => {
                let text = input.bytes();
                if window.push(CTXWIN_KIND_TOOL_RESULT, text) == ctxwin_status::Ok {
                    ids.push(None);
                }
            }
            5 | 6 => {
                window.call_keeping_messages(|w| unsafe { ctxwin_window_end_turn(w, null_mut()) });
            }
            7 => {
                let mut removed = usize::MAX;
                let status = window.call_keeping_messages(|w| unsafe { ctxwin_window_compact(w, &mut removed) });
                assert!(status != ctxwin_status::Ok || removed <= count);
            }
            8 => {
                let text = error_text(&mut input);
                let mut info = ctxwin_error_info { category: 0, limit: -1, actual: -1, excess: -1 };
                assert_eq!(unsafe { ctxwin_classify_error(text.as_ptr().cast(), text.len(), &mut info) }, ctxwin_status::Ok);
                if input.byte() % 8 == 0 {
                    info.category = i32::from(input.byte() % 7) - 1;
                }
                let mut removed = usize::MAX;
                let status = window.call_keeping_messages(|w| unsafe { ctxwin_window_recover(w, &info, &mut removed) });
                assert!(status != ctxwin_status::Ok || removed <= count);
            }
            9 => {
                let mut json = format!(r#"{{"strategy":"{}""#, STRATEGIES[usize::from(input.byte()) % STRATEGIES.len()]);
                for _ in 0..input.byte() % 4 {
                    let (key, max) = KEYS[usize::from(input.byte()) % KEYS.len()];
                    let value = u32::from(u16::from_le_bytes([input.byte(), input.byte()])) % (max + 1);
                    match key {
                        "retain_text" => json += &format!(r#","{key}":{}"#, value == 1),
                        _ => json += &format!(r#","{key}":{value}"#),
                    }
                }
                if input.byte() % 4 == 0 {
                    json += &format!(r#","threshold":{}"#, f64::from(input.byte()) / 200.0);
                }
                // The summary request as the conversation itself, in the request formats.
                match input.byte() % 4 {
                    0 => json += r#","summary_request":"standalone""#,
                    1 => json += r#","summary_request":"conversation""#,
                    _ => {}
                }
                if input.byte() % 4 == 0 {
                    json += &format!(r#","format":"{}""#, FORMATS[usize::from(input.byte()) % FORMATS.len()]);
                }
                json.push('}');
                window.call_keeping_messages(|w| unsafe { ctxwin_window_configure(w, json.as_ptr().cast(), json.len()) });
            }
            10 => {
                let mut needed = 0;
                let status =
                    window.call_keeping_messages(|w| unsafe { ctxwin_window_summary_request(w, null_mut(), 0, &mut needed) });
                if status == ctxwin_status::Ok {
                    let mut prompt = vec![0u8; needed + 1];
                    let status = window.call_keeping_messages(|w| unsafe {
                        ctxwin_window_summary_request(w, prompt.as_mut_ptr().cast(), prompt.len(), null_mut())
                    });
                    assert_eq!(status, ctxwin_status::Ok, "the summary request did not fit its own length");
                    let text = std::str::from_utf8(&prompt[..needed]).expect("the summary request is UTF-8");
                    // A conversation request is a JSON array of messages ending with the instruction.
                    if text.starts_with('[') {
                        let messages: Vec<serde_json::Value> = serde_json::from_str(text).expect("a JSON array");
                        let last = messages.last().expect("the instruction").to_string();
                        assert!(last.contains("Stop working on the task now"), "{last}");
                    }
                }
            }
            11 => {
                let stale = input.byte() % 8 == 0;
                let at = unsafe { ctxwin_window_generation(window.raw()) }.wrapping_add(u32::from(stale));
                let text: &[u8] = match input.byte() % 3 {
                    0 => input.bytes(),
                    1 => b"Original task: fix src/lib.rs. [done] read it. [pending] tests.",
                    _ => b"Short.",
                };
                let status = window
                    .call_keeping_messages(|w| unsafe { ctxwin_window_set_summary(w, at, text.as_ptr().cast(), text.len()) });
                assert!(!stale || status != ctxwin_status::Ok, "a stale summary was taken");
            }
            12 => {
                let keep = usize::from(input.byte()) % (count + 2);
                if window.truncate(keep) == ctxwin_status::Ok {
                    ids.truncate(keep);
                }
            }
            13 => {
                let budget = i32::from(u16::from_le_bytes([input.byte(), input.byte()])) % 600;
                window.call_keeping_messages(|w| unsafe { ctxwin_window_set_budget(w, budget) });
            }
            14 => {
                let (system, tools) = (i32::from(input.byte()), i32::from(input.byte()));
                window.set_overhead(system, tools);
            }
            _ => {
                if input.byte() % 16 == 0 {
                    window.reset();
                    ids.clear();
                } else {
                    window.call_keeping_messages(|w| unsafe { ctxwin_window_drop_oldest_turn(w) });
                }
            }
        }
        let after = check_view(&window, &ids);
        let kept = count.min(ids.len());
        if view_before(&items, kept) != view_before(&after, kept) {
            assert_ne!(
                unsafe { ctxwin_window_generation(window.raw()) },
                generation,
                "the view changed but the generation did not\nbefore: {items:#?}\nafter: {after:#?}"
            );
        }
        items = after;
    }
});
