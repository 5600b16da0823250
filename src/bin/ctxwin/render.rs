//! `ctxwin inspect --render`: the request body that would be sent, the view spliced into the
//! rest of the body under the key of the window's provider format.

use ctxwin::Window;
use ctxwin::json::{Format, render_json};
use serde_json::{Map, Value};

/// The key of the message array in a request body of `format`.
fn messages_key(format: Format) -> &'static str {
    match format {
        Format::OpenAiChat | Format::Anthropic => "messages",
        Format::OpenAiResponses => "input",
        Format::Gemini => "contents",
    }
}

/// `base` (a JSON object: the rest of the request body) with the window's view under its
/// format's message key, replacing what the key held.
pub fn request_body(window: &Window, base: Option<Value>) -> Result<String, String> {
    let mut body = match base.unwrap_or_else(|| Value::Object(Map::new())) {
        Value::Object(body) => body,
        _ => return Err("the base request body must be a JSON object".to_owned()),
    };
    let format = window.wire_formats().preferred().unwrap_or(Format::OpenAiChat);
    let rendered = render_json(window).map_err(|e| format!("rendering the view: {e}"))?;
    let messages: Value = serde_json::from_str(&rendered).map_err(|e| format!("rendering the view: {e}"))?;
    for key in ["messages", "input", "contents"] {
        body.remove(key);
    }
    body.insert(messages_key(format).to_owned(), messages);
    Ok(Value::Object(body).to_string())
}
