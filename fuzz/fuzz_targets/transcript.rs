//! The `ctxwin` program's transcript reader (`ctxwin::json::transcript::load`) with any
//! bytes as the file: a JSON array, a request body, JSON Lines, or anything else.
#![no_main]
use ctxwin::Window;
use ctxwin::json::transcript;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return; // the program reads the file as UTF-8 first and stops there
    };
    for model in ["gpt-4o", "claude-sonnet-4-5"] {
        let mut window = Window::new(model);
        match transcript::load(&mut window, "t.json", text) {
            Ok(extras) => {
                if let Some(tools) = &extras.tools {
                    let _ = ctxwin::json::count_tools(window.model(), tools);
                }
                window.end_turn();
                assert!(window.start() <= window.message_count());
                if let Ok(rendered) = ctxwin::json::render_json(&window) {
                    serde_json::from_str::<serde_json::Value>(&rendered).expect("render_json is JSON");
                }
            }
            Err(message) => {
                assert!(message.starts_with("t.json"), "{message}");
                assert_eq!(window.message_count(), 0, "a failed read pushed messages");
            }
        }
    }
});
