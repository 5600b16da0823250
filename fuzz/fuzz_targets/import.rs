//! `ctxwin_window_import` and `ctxwin_window_restore` with any bytes as the saved document.
//! A document that imports is a window like any other: its export imports again to the same
//! export (a fixed point), restore builds the same window, and it takes more turns.
#![no_main]
use ctxwin::ffi::error::ctxwin_status;
use ctxwin::ffi::persist::{ctxwin_window_import, ctxwin_window_restore};
use ctxwin::ffi::window::{CTXWIN_KIND_ASSISTANT, CTXWIN_KIND_USER, ctxwin_window_end_turn};
use ctxwin_fuzz::{Input, Window, export, read_everything, seeded_window};
use libfuzzer_sys::fuzz_target;
use std::ptr::{null, null_mut};

fn import(json: &[u8]) -> Result<Window, ctxwin_status> {
    let mut raw = null_mut();
    // SAFETY: the text is valid for its length; `raw` is writable.
    let status = unsafe { ctxwin_window_import(json.as_ptr().cast(), json.len(), &mut raw) };
    if status == ctxwin_status::Ok {
        Ok(Window::adopt(raw))
    } else {
        assert!(raw.is_null(), "out written on failure");
        assert_ne!(status, ctxwin_status::Panic);
        Err(status)
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mut target = seeded_window(&mut input);
    let json = input.rest();

    let imported = import(json);
    // SAFETY: a live handle, a text valid for its length, no ids.
    let restored =
        target.call_adding_messages(|w| unsafe { ctxwin_window_restore(w, json.as_ptr().cast(), json.len(), null(), 0) });
    match &imported {
        Ok(window) => {
            assert_eq!(restored, ctxwin_status::Ok, "import accepts what restore refuses");
            let first = export(window.raw());
            assert_eq!(export(target.raw()), first, "restore and import disagree");
            let again = import(first.as_bytes()).expect("an export imports");
            assert_eq!(export(again.raw()), first, "export -> import -> export is not a fixed point");
        }
        Err(status) => assert_eq!(restored, *status, "import and restore disagree"),
    }
    let Ok(mut window) = imported else { return };
    read_everything(window.raw());
    // The restored window keeps working: another turn, its end, and every reader.
    window.push(CTXWIN_KIND_USER, b"and now?");
    window.push(CTXWIN_KIND_ASSISTANT, b"done");
    // SAFETY: a live handle.
    window.call_keeping_messages(|w| unsafe { ctxwin_window_end_turn(w, null_mut()) });
    read_everything(window.raw());
    let after = export(window.raw());
    assert_eq!(export(import(after.as_bytes()).expect("an export imports").raw()), after);
});
