//! A window fed provider JSON survives export and import: the restored window renders the
//! same request body, keeps its format, and goes on accepting the same format.

use ctxwin::{Window, json, persist};

#[test]
fn every_fixture_renders_the_same_after_a_restart() {
    for name in ["anthropic", "gemini", "openai_chat", "openai_responses"] {
        let path = format!("{}/tests/fixtures/{name}.json", env!("CARGO_MANIFEST_DIR"));
        let fixture = std::fs::read_to_string(&path).unwrap();
        let mut window = Window::new("gpt-4o");
        window.set_budget(400).unwrap();
        json::push_json(&mut window, &fixture).unwrap_or_else(|e| panic!("{name}: {e}"));
        window.end_turn();
        let restored = persist::import(&persist::export(&window)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(json::render_json(&restored).unwrap(), json::render_json(&window).unwrap(), "{name}");
        assert_eq!(restored.wire_formats(), window.wire_formats(), "{name}");
        assert_eq!(restored.live_tokens(), window.live_tokens(), "{name}");
        assert_eq!(restored.start(), window.start(), "{name}");
    }
}
