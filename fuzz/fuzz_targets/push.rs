//! `ctxwin_window_push` of any bytes with any kind, many times on one window.
#![no_main]
use ctxwin_fuzz::{Input, seeded_window};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mut window = seeded_window(&mut input);
    while !input.is_empty() {
        let kind = input.int();
        window.push(kind, input.bytes());
    }
});
