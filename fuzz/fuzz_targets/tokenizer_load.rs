//! `ctxwin_tokenizer_from_bytes` with any bytes as the file and options the input picks.
//! A refusal is a status other than PANIC with nothing written; a tokenizer that loads
//! counts any text, the same twice, and a window counts with it after its handle is freed.
#![no_main]
use ctxwin::ffi::count::ctxwin_count;
use ctxwin::ffi::error::ctxwin_status;
use ctxwin::ffi::tokenizer::{
    ctxwin_tokenizer_count, ctxwin_tokenizer_free, ctxwin_tokenizer_from_bytes, ctxwin_window_set_tokenizer,
};
use ctxwin::ffi::window::CTXWIN_KIND_USER;
use ctxwin_fuzz::{Input, seeded_window};
use libfuzzer_sys::fuzz_target;
use std::ptr::null_mut;

const OPTIONS: &[&str] =
    &["", r#"{"pre_tokenizer":"llama3"}"#, r#"{"pre_tokenizer":"tekken"}"#, r#"{"pattern":"\\s+|\\S+","nfc":true}"#];

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let options = OPTIONS[usize::from(input.byte()) % OPTIONS.len()];
    let text_len = usize::from(input.byte());
    let file = input.rest();
    let mut t = null_mut();
    // SAFETY: both slices are valid for their lengths; `t` is writable.
    let status =
        unsafe { ctxwin_tokenizer_from_bytes(file.as_ptr().cast(), file.len(), options.as_ptr().cast(), options.len(), &mut t) };
    assert_ne!(status, ctxwin_status::Panic);
    if status != ctxwin_status::Ok {
        assert!(t.is_null(), "out written on failure");
        return;
    }
    let text = String::from_utf8_lossy(&file[..text_len.min(file.len())]).into_owned();
    let count = |text: &str| {
        let mut out = ctxwin_count { tokens: -1, exact: false };
        // SAFETY: a live tokenizer, a text valid for its length, a writable count.
        let status = unsafe { ctxwin_tokenizer_count(t, text.as_ptr().cast(), text.len(), &mut out) };
        assert_eq!(status, ctxwin_status::Ok);
        assert!(out.tokens >= 0 && (!text.is_empty() || out.tokens == 0));
        out
    };
    let first = count(&text);
    assert_eq!(count(&text), first, "the same text counts differently");
    let mut window = seeded_window(&mut Input::new(b""));
    // SAFETY: live handles.
    assert_eq!(unsafe { ctxwin_window_set_tokenizer(window.raw(), t) }, ctxwin_status::Ok);
    // SAFETY: a live tokenizer, freed once; the window keeps its own reference.
    unsafe { ctxwin_tokenizer_free(t) };
    assert_eq!(window.push(CTXWIN_KIND_USER, text.as_bytes()), ctxwin_status::Ok);
});
