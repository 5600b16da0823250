//! `ctxwin_count_text` with any bytes as the model name and the text.
#![no_main]
use ctxwin::ffi::count::{ctxwin_count, ctxwin_count_text};
use ctxwin::ffi::error::ctxwin_status;
use ctxwin_fuzz::{Input, MODELS};
use libfuzzer_sys::fuzz_target;

fn count(model: &[u8], text: &[u8]) -> (ctxwin_status, ctxwin_count) {
    let mut out = ctxwin_count { tokens: -1, exact: false };
    // SAFETY: both slices are valid for their lengths; `out` is writable.
    let status = unsafe { ctxwin_count_text(model.as_ptr().cast(), model.len(), text.as_ptr().cast(), text.len(), &mut out) };
    (status, out)
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let choice = usize::from(input.byte());
    let model = match MODELS.get(choice) {
        Some(name) => name.as_bytes(),
        None => input.bytes(),
    };
    let text = input.rest();
    let (status, counted) = count(model, text);
    let valid = std::str::from_utf8(model).is_ok() && std::str::from_utf8(text).is_ok();
    assert_eq!(status == ctxwin_status::Ok, valid, "{status:?}");
    if valid {
        assert!(counted.tokens >= 0 && (text.is_empty() || counted.tokens > 0));
        assert!(counted.tokens as usize <= text.len(), "more tokens than bytes");
        assert_eq!(count(model, text), (status, counted), "counting is deterministic");
    } else {
        assert_eq!(status, ctxwin_status::InvalidUtf8);
        assert_eq!(counted.tokens, -1, "out written on failure");
    }
});
