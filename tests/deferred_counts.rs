//! Counts computed when first needed: `ctxwin_window_push_message` with `out` NULL appends its
//! parts uncounted, and the library counts them only when a count is needed (enforcement, or
//! any call that reads the window), never when the caller's count (`set_count`,
//! `set_turn_count`) comes first. Against a plain reference: the same calls with `out`
//! non-NULL, which counts at once. Random sessions (every strategy, kept texts or counts
//! only, a small context limit so that `prepare` sometimes fails and must change nothing),
//! compared through the C API's reads at random points and at the end: export (every
//! message's count and source, the boundary, the recorded counts), view, live tokens and
//! every turn's tokens.

use ctxwin::ffi::cache::{ctxwin_request_info, ctxwin_window_prepare};
use ctxwin::ffi::count::ctxwin_count;
use ctxwin::ffi::error::ctxwin_status;
use ctxwin::ffi::handle::ctxwin_window;
use ctxwin::ffi::host::{ctxwin_part, ctxwin_window_push_message, ctxwin_window_set_count, ctxwin_window_set_turn_count};
use ctxwin::ffi::persist::ctxwin_window_export;
use ctxwin::ffi::view::{ctxwin_item, ctxwin_window_view_get, ctxwin_window_view_len};
use ctxwin::ffi::window::{
    CTXWIN_KIND_ASSISTANT, CTXWIN_KIND_SYSTEM, CTXWIN_KIND_THINKING, CTXWIN_KIND_TOOL_CALL, CTXWIN_KIND_TOOL_RESULT,
    CTXWIN_KIND_USER, ctxwin_turn_info, ctxwin_window_clone, ctxwin_window_configure, ctxwin_window_end_turn, ctxwin_window_free,
    ctxwin_window_live_tokens, ctxwin_window_message_count, ctxwin_window_new, ctxwin_window_set_model, ctxwin_window_truncate,
    ctxwin_window_turn_count, ctxwin_window_turn_info,
};

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

const STRATEGIES: [&str; 5] = ["sliding", "drop_oldest", "tiered", "monologue", "summary"];

/// A window through the C API.
struct W(*mut ctxwin_window);

impl Drop for W {
    fn drop(&mut self) {
        // SAFETY: a live handle, freed once.
        unsafe { ctxwin_window_free(self.0) };
    }
}

impl W {
    fn new(model: &str) -> W {
        let mut w = std::ptr::null_mut();
        // SAFETY: a valid string and out-pointer.
        assert_eq!(unsafe { ctxwin_window_new(model.as_ptr().cast(), model.len(), &mut w) }, ctxwin_status::Ok);
        W(w)
    }

    fn configure(&self, json: &str) -> ctxwin_status {
        // SAFETY: a live handle and a valid string.
        unsafe { ctxwin_window_configure(self.0, json.as_ptr().cast(), json.len()) }
    }

    /// Pushes a host message; asks for its count when `counted`.
    fn push(&self, parts: &[Part], host_id: i64, counted: bool) -> (ctxwin_status, Option<i32>) {
        let parts: Vec<ctxwin_part> = parts
            .iter()
            .map(|(kind, text, id, name)| ctxwin_part::borrowing(*kind, text.as_bytes(), id.as_bytes(), name.as_bytes()))
            .collect();
        let mut out = ctxwin_count { tokens: -1, exact: false };
        let out_ptr = if counted { &mut out as *mut ctxwin_count } else { std::ptr::null_mut() };
        // SAFETY: a live handle; the parts point into `parts`, alive for the call.
        let status = unsafe { ctxwin_window_push_message(self.0, parts.as_ptr(), parts.len(), host_id, out_ptr) };
        (status, counted.then_some(out.tokens))
    }

    fn messages(&self) -> usize {
        // SAFETY: a live handle.
        unsafe { ctxwin_window_message_count(self.0) }
    }

    fn turns(&self) -> usize {
        // SAFETY: a live handle.
        unsafe { ctxwin_window_turn_count(self.0) }
    }

    /// Everything the window shows: its export, its view, live tokens and turn tokens.
    fn shown(&self) -> String {
        let mut needed = 0;
        // SAFETY: a live handle; NULL/0 asks for the length.
        assert_eq!(unsafe { ctxwin_window_export(self.0, std::ptr::null_mut(), 0, &mut needed) }, ctxwin_status::Ok);
        let mut buf = vec![0u8; needed + 1];
        // SAFETY: `buf` holds `buf.len()` bytes.
        assert_eq!(unsafe { ctxwin_window_export(self.0, buf.as_mut_ptr().cast(), buf.len(), &mut needed) }, ctxwin_status::Ok);
        buf.truncate(needed);
        let mut shown = String::from_utf8(buf).unwrap();
        // SAFETY: live handle and out-pointers.
        unsafe {
            for i in 0..ctxwin_window_view_len(self.0) {
                let mut item: ctxwin_item = std::mem::zeroed();
                assert_eq!(ctxwin_window_view_get(self.0, i, &mut item), ctxwin_status::Ok);
                shown +=
                    &format!("\nitem {} {} {} {} {}", item.r#type, item.kind, item.index, item.tokens.tokens, item.tokens.exact);
            }
            let mut live = ctxwin_count { tokens: 0, exact: false };
            assert_eq!(ctxwin_window_live_tokens(self.0, &mut live), ctxwin_status::Ok);
            shown += &format!("\nlive {} {}", live.tokens, live.exact);
            for turn in 0..self.turns() {
                let mut info: ctxwin_turn_info = std::mem::zeroed();
                assert_eq!(ctxwin_window_turn_info(self.0, turn, &mut info), ctxwin_status::Ok);
                shown += &format!("\nturn {turn} {} {}", info.tokens.tokens, info.tokens.exact);
            }
        }
        shown
    }
}

/// A part: kind, text, call id, tool name ("" for none).
type Part = (i32, String, String, String);

fn text(rng: &mut Rng) -> String {
    let words = ["the", "build", "window", "token", "ledger", "count", "restore", "turn", "message", "λόγος", "数"];
    (0..1 + rng.below(60)).map(|_| rng.pick(&words)).collect::<Vec<_>>().join(if rng.chance(20) { "\n" } else { " " })
}

/// A random host message: a question, an assistant step with thinking and tool calls, the
/// calls' results, or a system note. Tool results answer the open calls of `calls`.
fn message(rng: &mut Rng, calls: &mut Vec<String>, next_call: &mut usize) -> Vec<Part> {
    let none = String::new;
    match rng.below(5) {
        0 | 1 => {
            calls.clear();
            vec![(CTXWIN_KIND_USER, text(rng), none(), none())]
        }
        2 => {
            let mut parts =
                vec![(CTXWIN_KIND_THINKING, text(rng), none(), none()), (CTXWIN_KIND_ASSISTANT, text(rng), none(), none())];
            for _ in 0..rng.below(3) {
                *next_call += 1;
                let id = format!("call_{next_call}");
                calls.push(id.clone());
                parts.push((CTXWIN_KIND_TOOL_CALL, format!("{{\"arg\":\"{}\"}}", text(rng)), id, "shell".into()));
            }
            parts
        }
        3 if !calls.is_empty() => calls.drain(..).map(|id| (CTXWIN_KIND_TOOL_RESULT, text(rng), id, none())).collect(),
        _ => vec![(rng.pick(&[CTXWIN_KIND_ASSISTANT, CTXWIN_KIND_SYSTEM]), text(rng), none(), none())],
    }
}

fn count(rng: &mut Rng) -> ctxwin_count {
    ctxwin_count { tokens: rng.below(400) as i32, exact: rng.chance(70) }
}

/// One random session applied to both windows, compared at random points and at the end.
fn session(seed: u64) {
    let mut rng = Rng::new(seed);
    let model = rng.pick(&["gpt-4o", "gpt-4", "claude-sonnet-4-5"]);
    let (counted, deferred) = (W::new(model), W::new(model));
    let config = format!(
        r#"{{"strategy":"{}","context_limit":{},"output_reserve":100,"history_budget":"auto","retain_text":{},"low_water":{}}}"#,
        rng.pick(&STRATEGIES),
        1500 + rng.below(6000),
        !rng.chance(15),
        rng.pick(&["0.7", "1"]),
    );
    assert_eq!(counted.configure(&config), deferred.configure(&config), "{config}");
    let (mut calls, mut next_call, mut host_id) = (Vec::new(), 0, 0i64);
    for step in 0..rng.between(5, 120) {
        let context = format!("seed {seed} step {step} {config}");
        match rng.below(20) {
            0..=9 => {
                let parts = message(&mut rng, &mut calls, &mut next_call);
                host_id += 1;
                let (status, _) = counted.push(&parts, host_id, true);
                assert_eq!(deferred.push(&parts, host_id, false).0, status, "{context}");
            }
            10 | 11 if counted.turns() > 0 => {
                let (turn, total) = (rng.below(counted.turns()), count(&mut rng));
                // SAFETY: live handles.
                let statuses = unsafe {
                    (ctxwin_window_set_turn_count(counted.0, turn, total), ctxwin_window_set_turn_count(deferred.0, turn, total))
                };
                assert_eq!(statuses.0, statuses.1, "{context}");
            }
            12 if counted.messages() > 0 => {
                let (index, total) = (rng.below(counted.messages()), count(&mut rng));
                // SAFETY: live handles.
                let statuses = unsafe {
                    (ctxwin_window_set_count(counted.0, index, total), ctxwin_window_set_count(deferred.0, index, total))
                };
                assert_eq!(statuses.0, statuses.1, "{context}");
            }
            13..=15 => {
                // SAFETY: live handles.
                unsafe {
                    let (mut a, mut b) = (0, 0);
                    assert_eq!(ctxwin_window_end_turn(counted.0, &mut a), ctxwin_status::Ok);
                    assert_eq!(ctxwin_window_end_turn(deferred.0, &mut b), ctxwin_status::Ok);
                    assert_eq!(a, b, "{context}");
                }
            }
            16 => {
                // SAFETY: live handles and out-pointers.
                unsafe {
                    let (mut a, mut b): (ctxwin_request_info, ctxwin_request_info) = (std::mem::zeroed(), std::mem::zeroed());
                    let statuses = (ctxwin_window_prepare(counted.0, &mut a), ctxwin_window_prepare(deferred.0, &mut b));
                    assert_eq!(statuses.0, statuses.1, "{context}");
                    assert_eq!(format!("{a:?}"), format!("{b:?}"), "{context}");
                }
            }
            17 if counted.messages() > 0 => {
                let keep = counted.messages() - rng.below(counted.messages().min(12));
                // SAFETY: live handles.
                unsafe {
                    assert_eq!(ctxwin_window_truncate(counted.0, keep), ctxwin_window_truncate(deferred.0, keep), "{context}");
                }
                calls.clear();
            }
            18 if rng.chance(30) => {
                let next = rng.pick(&["gpt-4o", "gpt-4", "claude-sonnet-4-5"]);
                // SAFETY: live handles and a valid string.
                unsafe {
                    let a = ctxwin_window_set_model(counted.0, next.as_ptr().cast(), next.len());
                    assert_eq!(a, ctxwin_window_set_model(deferred.0, next.as_ptr().cast(), next.len()), "{context}");
                }
            }
            _ => {
                if rng.chance(30) {
                    // A fork of the deferred window carries on (clone reads: counts resolved).
                    let mut fork = std::ptr::null_mut();
                    // SAFETY: a live handle and an out-pointer.
                    assert_eq!(unsafe { ctxwin_window_clone(deferred.0, &mut fork) }, ctxwin_status::Ok);
                    assert_eq!(W(fork).shown(), counted.shown(), "{context}");
                } else {
                    assert_eq!(deferred.shown(), counted.shown(), "{context}");
                }
            }
        }
    }
    assert_eq!(deferred.shown(), counted.shown(), "seed {seed} at the end, {config}");
}

#[test]
fn pushing_without_asking_for_the_count_changes_nothing_visible() {
    for seed in 0..400 {
        session(seed);
    }
}

/// A host message whose provider count arrives before the turn ends is never counted: its
/// count is the caller's, and the window's sums are the caller's from the start.
#[test]
fn a_count_recorded_before_it_is_needed_replaces_it_without_counting() {
    let w = W::new("gpt-4o");
    // The turn's only message is the task, pinned by default: unpinned, the turn holds it.
    assert_eq!(w.configure(r#"{"pin_task":false}"#), ctxwin_status::Ok);
    let parts =
        vec![(CTXWIN_KIND_USER, "a question the library does not need to count".to_owned(), String::new(), String::new())];
    assert_eq!(w.push(&parts, 1, false).0, ctxwin_status::Ok);
    // SAFETY: a live handle and out-pointers.
    unsafe {
        assert_eq!(ctxwin_window_set_turn_count(w.0, 0, ctxwin_count { tokens: 1234, exact: true }), ctxwin_status::Ok);
        assert_eq!(ctxwin_window_end_turn(w.0, std::ptr::null_mut()), ctxwin_status::Ok);
        let mut info: ctxwin_turn_info = std::mem::zeroed();
        assert_eq!(ctxwin_window_turn_info(w.0, 0, &mut info), ctxwin_status::Ok);
        assert_eq!((info.tokens.tokens, info.tokens.exact), (1234, true));
    }
    // Read before the caller's count arrives: the library's count shows, then the caller's.
    let w = W::new("gpt-4o");
    assert_eq!(w.push(&parts, 1, false).0, ctxwin_status::Ok);
    let library = ctxwin::Model::resolve("gpt-4o").count(&parts[0].1).tokens as i32;
    // SAFETY: a live handle and out-pointers.
    unsafe {
        let mut live = ctxwin_count { tokens: 0, exact: false };
        assert_eq!(ctxwin_window_live_tokens(w.0, &mut live), ctxwin_status::Ok);
        assert_eq!((live.tokens, live.exact), (library, true));
        assert_eq!(ctxwin_window_set_count(w.0, 0, ctxwin_count { tokens: 7, exact: true }), ctxwin_status::Ok);
        assert_eq!(ctxwin_window_live_tokens(w.0, &mut live), ctxwin_status::Ok);
        assert_eq!(live.tokens, library, "a recorded count moves nothing before the next end_turn");
        assert_eq!(ctxwin_window_end_turn(w.0, std::ptr::null_mut()), ctxwin_status::Ok);
        assert_eq!(ctxwin_window_live_tokens(w.0, &mut live), ctxwin_status::Ok);
        assert_eq!(live.tokens, 7);
    }
}
