//! Anthropic cache breakpoints (`cache_breakpoints: true`): `cache_control` on the last
//! block of the last message wholly inside the stable prefix (what the previous prepared
//! request sent identically, read from the cache) and on the newest message (written for
//! the next request), within Anthropic's limit of four breakpoints per request, the caller's
//! own included. The newest message comes first when only one slot is left: Anthropic
//! looks for cache hits up to 20 blocks before a breakpoint. Thinking blocks cannot carry
//! `cache_control`, so the last other block is marked.

use serde_json::{Map, Value, json};

/// Anthropic's limit of `cache_control` breakpoints per request.
pub const MAX_BREAKPOINTS: usize = 4;

/// Marks `rendered` (one JSON message each) with breakpoints on message `stable_end` (the
/// last one inside the stable prefix, if any) and on the newest message, leaving room for
/// the caller's own (those already in the messages, and `caller` more elsewhere in the
/// request: system blocks, tools).
pub fn place(rendered: &mut [String], stable_end: Option<usize>, caller: usize) {
    let mut messages: Vec<Option<Map<String, Value>>> = rendered
        .iter()
        .map(|message| match serde_json::from_str(message) {
            Ok(Value::Object(object)) => Some(object),
            _ => None,
        })
        .collect();
    let existing: usize = messages.iter().flatten().map(count_marks).sum();
    let mut slots = MAX_BREAKPOINTS.saturating_sub(existing + caller);
    let newest = rendered.len().checked_sub(1);
    let stable_end = stable_end.filter(|&i| Some(i) != newest);
    for target in [newest, stable_end].into_iter().flatten() {
        if slots == 0 {
            break;
        }
        let Some(message) = messages[target].as_mut() else { continue };
        if count_marks(message) == 0 && mark(message) {
            rendered[target] = Value::Object(message.clone()).to_string();
            slots -= 1;
        }
    }
}

/// Blocks of `message` carrying `cache_control`.
fn count_marks(message: &Map<String, Value>) -> usize {
    match message.get("content") {
        Some(Value::Array(blocks)) => blocks.iter().filter(|block| block.get("cache_control").is_some()).count(),
        _ => 0,
    }
}

/// Puts `cache_control` on the last block of `message` that may carry it (a string content
/// becomes one text block); false when none may.
fn mark(message: &mut Map<String, Value>) -> bool {
    let control = json!({"type": "ephemeral"});
    match message.get_mut("content") {
        Some(Value::String(text)) => {
            let block = json!([{"type": "text", "text": std::mem::take(text), "cache_control": control}]);
            message.insert("content".into(), block);
            true
        }
        Some(Value::Array(blocks)) => {
            let markable = blocks
                .iter_mut()
                .rev()
                .find(|block| !matches!(block.get("type").and_then(Value::as_str), Some("thinking" | "redacted_thinking")));
            match markable.and_then(Value::as_object_mut) {
                Some(block) => {
                    block.insert("cache_control".into(), control);
                    true
                }
                None => false,
            }
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(messages: &[&str], stable_end: Option<usize>, caller: usize) -> Vec<String> {
        let mut rendered: Vec<String> = messages.iter().map(|m| m.to_string()).collect();
        place(&mut rendered, stable_end, caller);
        rendered
    }

    #[test]
    fn marks_the_stable_end_and_the_newest_message() {
        let messages = [
            r#"{"role":"user","content":"one"}"#,
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"text","text":"two"}]}"#,
            r#"{"role":"user","content":"three"}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"four"},{"type":"thinking","thinking":"t","signature":"s"}]}"#,
        ];
        let out = run(&messages, Some(1), 0);
        assert_eq!(out[0], messages[0]);
        assert_eq!(
            out[1],
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"text","text":"two","cache_control":{"type":"ephemeral"}}]}"#
        );
        assert_eq!(out[2], messages[2]);
        assert_eq!(
            out[3],
            r#"{"role":"assistant","content":[{"type":"text","text":"four","cache_control":{"type":"ephemeral"}},{"type":"thinking","thinking":"t","signature":"s"}]}"#
        );
        // A string content becomes a text block.
        let out = run(&messages[..3], Some(0), 0);
        assert_eq!(out[0], r#"{"role":"user","content":[{"type":"text","text":"one","cache_control":{"type":"ephemeral"}}]}"#);
        assert_eq!(out[2], r#"{"role":"user","content":[{"type":"text","text":"three","cache_control":{"type":"ephemeral"}}]}"#);
    }

    #[test]
    fn never_more_than_four_with_the_callers_own() {
        let marked = r#"{"role":"user","content":[{"type":"text","text":"x","cache_control":{"type":"ephemeral"}}]}"#;
        let plain = r#"{"role":"user","content":"y"}"#;
        let messages = [marked, marked, plain, plain];
        // Two in the messages, one in the system prompt: one slot, for the newest message.
        let out = run(&messages, Some(2), 1);
        assert_eq!(out[2], plain);
        assert!(out[3].contains("cache_control"));
        let out = run(&messages, Some(2), 2);
        assert_eq!(out[3], plain, "no slot left");
        // Nothing stable yet: only the newest message.
        let out = run(&[plain, plain], None, 0);
        assert_eq!(out[0], plain);
        assert!(out[1].contains("cache_control"));
    }
}
