//! A window poisoned by a caught panic refuses every later call with PANIC (or 0), keeps its
//! last error readable, and still frees cleanly. The panic is injected through the same
//! `update` / `inspect` / `value` paths the shims use.

use super::count::ctxwin_count;
use super::error::ctxwin_status;
use super::handle::ctxwin_window;
use super::window::*;
use std::ptr::{null, null_mut};

/// A window with one completed turn, so every shim has something to work on.
fn live_window() -> *mut ctxwin_window {
    let mut w = null_mut();
    // SAFETY: valid (ptr, len) pairs and a writable out-pointer.
    unsafe {
        assert_eq!(ctxwin_window_new(c"gpt-4o".as_ptr(), 6, &mut w), ctxwin_status::Ok);
        assert_eq!(ctxwin_window_push(w, CTXWIN_KIND_USER, c"hi".as_ptr(), 2, null_mut()), ctxwin_status::Ok);
        assert_eq!(ctxwin_window_end_turn(w, null_mut()), ctxwin_status::Ok);
    }
    w
}

fn last_error(w: *const ctxwin_window) -> String {
    let mut buf = [0u8; 256];
    let mut needed = 0;
    // SAFETY: `buf` holds 256 writable bytes; `w` is live.
    let status = unsafe { ctxwin_window_last_error(w, buf.as_mut_ptr().cast(), buf.len(), &mut needed) };
    assert_eq!(status, ctxwin_status::Ok, "last_error works on a poisoned window");
    String::from_utf8_lossy(&buf[..needed.min(buf.len() - 1)]).into_owned()
}

/// Every shim on `w` refuses: statuses are PANIC, values are 0, out-parameters are untouched.
fn assert_refuses_everything(w: *mut ctxwin_window) {
    let untouched = ctxwin_count { tokens: -7, exact: true };
    let mut count = untouched;
    let mut info = ctxwin_turn_info::default();
    let mut pruned = 99usize;
    let mut clone = null_mut();
    let one = ctxwin_count { tokens: 1, exact: true };
    // SAFETY: `w` is a live (poisoned) handle and every other pointer is valid.
    let statuses = unsafe {
        [
            ("clone", ctxwin_window_clone(w, &mut clone)),
            ("configure", ctxwin_window_configure(w, c"{}".as_ptr(), 2)),
            ("set_budget", ctxwin_window_set_budget(w, 10)),
            ("set_overhead", ctxwin_window_set_overhead(w, 1, 1)),
            ("set_model", ctxwin_window_set_model(w, c"gpt-4".as_ptr(), 5)),
            ("push", ctxwin_window_push(w, CTXWIN_KIND_USER, c"x".as_ptr(), 1, &mut count)),
            ("push_counted", ctxwin_window_push_counted(w, CTXWIN_KIND_USER, one)),
            ("end_turn", ctxwin_window_end_turn(w, &mut pruned)),
            ("turn_info", ctxwin_window_turn_info(w, 0, &mut info)),
            ("live_tokens", ctxwin_window_live_tokens(w, &mut count)),
            ("truncate", ctxwin_window_truncate(w, 0)),
            ("reset", ctxwin_window_reset(w)),
            ("drop_oldest_turn", ctxwin_window_drop_oldest_turn(w)),
        ]
    };
    for (name, status) in statuses {
        assert_eq!(status, ctxwin_status::Panic, "{name} on a poisoned window");
    }
    assert!(clone.is_null() && count == untouched && pruned == 99);
    assert_eq!(info, ctxwin_turn_info::default());
    // SAFETY: `w` is a live (poisoned) handle.
    unsafe {
        assert_eq!(ctxwin_window_start(w), 0);
        assert_eq!(ctxwin_window_generation(w), 0);
        assert_eq!(ctxwin_window_message_count(w), 0);
        assert_eq!(ctxwin_window_turn_count(w), 0);
        assert_eq!(ctxwin_window_first_live_turn(w), 0);
    }
    assert!(last_error(w).contains("poisoned"), "{}", last_error(w));
}

#[test]
fn a_panic_in_update_poisons_the_window() {
    let w = live_window();
    // SAFETY: `w` is live and used by this thread only.
    let status = unsafe { &mut *w }.update(|_| panic!("injected by the test"));
    assert_eq!(status, ctxwin_status::Panic);
    assert!(last_error(w).contains("injected by the test"), "{}", last_error(w));
    assert_refuses_everything(w);
    // SAFETY: `w` is live; freed once.
    unsafe { ctxwin_window_free(w) };
}

#[test]
fn a_panic_in_inspect_or_value_poisons_the_window_too() {
    for path in ["inspect", "value"] {
        let w = live_window();
        // SAFETY: `w` is live and used by this thread only.
        let handle = unsafe { &*w };
        match path {
            "inspect" => assert_eq!(handle.inspect(|_| panic!("injected")), ctxwin_status::Panic),
            _ => assert_eq!(handle.value::<usize>(|_| panic!("injected")), 0),
        }
        assert_refuses_everything(w);
        // SAFETY: `w` is live; freed once.
        unsafe { ctxwin_window_free(w) };
    }
}

#[test]
fn a_healthy_window_answers_the_same_calls() {
    // The reference for the tests above: the refusals come from the poison, not the calls.
    let w = live_window();
    let mut count = ctxwin_count::default();
    // SAFETY: `w` is live; every pointer is valid.
    unsafe {
        assert_eq!(ctxwin_window_message_count(w), 1);
        assert_eq!(ctxwin_window_push(w, CTXWIN_KIND_USER, c"x".as_ptr(), 1, &mut count), ctxwin_status::Ok);
        assert_eq!(ctxwin_window_live_tokens(w, &mut count), ctxwin_status::Ok);
        assert_eq!(ctxwin_window_configure(w, c"{}".as_ptr(), 2), ctxwin_status::Ok);
        assert_eq!(ctxwin_window_drop_oldest_turn(w), ctxwin_status::Ok);
        assert_eq!(ctxwin_window_first_live_turn(w), 1);
        ctxwin_window_free(w);
        ctxwin_window_free(null_mut());
        assert_eq!(ctxwin_window_start(null()), 0);
    }
}
