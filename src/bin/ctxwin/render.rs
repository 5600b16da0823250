//! `ctxwin inspect --render`: the request body that would be sent, as the library's
//! `render_request` writes it from the window and the rest of the body.

use ctxwin::Window;
use ctxwin::json::render_request;
use serde_json::{Map, Value};

/// The request body for `window`: `base` (the rest of the body, a JSON object; `{}` when
/// absent) without the conversation it held, which the window renders in its place with the
/// system prompt where the format wants it.
pub fn request_body(window: &Window, base: Option<Value>) -> Result<String, String> {
    let mut body = match base.unwrap_or_else(|| Value::Object(Map::new())) {
        Value::Object(body) => body,
        _ => return Err("the base request body must be a JSON object".to_owned()),
    };
    for key in ["messages", "input", "contents"] {
        body.remove(key);
    }
    render_request(window, &Value::Object(body).to_string()).map_err(|e| format!("rendering the request: {e}"))
}
