//! `ctxwin_classify_error` with any bytes as the provider's error text.
#![no_main]
use ctxwin::ffi::classify::{ctxwin_classify_error, ctxwin_error_info};
use ctxwin::ffi::error::ctxwin_status;
use libfuzzer_sys::fuzz_target;

fn classify(text: &[u8]) -> (ctxwin_status, ctxwin_error_info) {
    let mut info = ctxwin_error_info { category: -7, limit: -7, actual: -7, excess: -7 };
    // SAFETY: the text is valid for its length; `info` is writable.
    let status = unsafe { ctxwin_classify_error(text.as_ptr().cast(), text.len(), &mut info) };
    (status, info)
}

fuzz_target!(|data: &[u8]| {
    let (status, info) = classify(data);
    let valid = std::str::from_utf8(data).is_ok();
    assert_eq!(status == ctxwin_status::Ok, valid, "{status:?}");
    if !valid {
        assert_eq!(status, ctxwin_status::InvalidUtf8);
        assert_eq!(info.category, -7, "out written on failure");
        return;
    }
    assert!((0..=5).contains(&info.category), "{info:?}");
    for n in [info.limit, info.actual, info.excess] {
        assert!(n >= -1, "{info:?}");
    }
    if info.limit != -1 && info.actual != -1 && info.excess != -1 {
        assert_eq!(info.excess, info.actual - info.limit, "{info:?}");
    }
    // Only overflows and output limits carry numbers.
    if info.category != 1 && info.category != 2 {
        assert_eq!((info.limit, info.actual, info.excess), (-1, -1, -1), "{info:?}");
    }
    assert_eq!(classify(data), (status, info), "classifying is deterministic");
});
