//! `ctxwin_window_set_model` with any bytes as the model name.
#![no_main]
use ctxwin::ffi::window::ctxwin_window_set_model;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // SAFETY: the helper passes a live handle and a text valid for its length.
    ctxwin_fuzz::text_entry_point(data, |w, model, len| unsafe { ctxwin_window_set_model(w, model, len) });
});
