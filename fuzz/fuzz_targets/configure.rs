//! `ctxwin_window_configure` with any bytes as the JSON.
#![no_main]
use ctxwin::ffi::window::ctxwin_window_configure;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // SAFETY: the helper passes a live handle and a text valid for its length.
    ctxwin_fuzz::text_entry_point(data, |w, json, len| unsafe { ctxwin_window_configure(w, json, len) });
});
