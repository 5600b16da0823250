//! What `inspect` reads: a ctxwin save file, or a transcript pushed into a new window with the
//! command line's settings, ready to inspect.

use crate::args::Args;
use ctxwin::Window;
use ctxwin::json::transcript;
use serde_json::Value;

/// The window to inspect and what else the file held.
pub struct Source {
    /// The window, its strategy enforced.
    pub window: Window,
    /// `ctxwin save file` or the transcript's provider format.
    pub kind: String,
    /// The request body the file was, if it was one: the rest of the body `--render` sends.
    pub body: Option<Value>,
}

/// True when `text` is a document `ctxwin_window_save` / `ctxwin_window_export` wrote.
fn is_save_file(text: &str) -> bool {
    text.trim_start().starts_with('{')
        && serde_json::from_str::<Value>(text).is_ok_and(|doc| doc.get("format").and_then(Value::as_str) == Some("ctxwin-window"))
}

/// Opens `text` (the contents of `name`) with the settings of `args`.
pub fn open(args: &Args, name: &str, text: &str) -> Result<Source, String> {
    if is_save_file(text) {
        let mut window = ctxwin::persist::import(text).map_err(|e| format!("{name}: {e}"))?;
        if let Some(model) = &args.model {
            window.set_model(model);
        }
        configure(&mut window, args.strategy(), args.config.as_deref(), args.budget())?;
        return Ok(Source { window, kind: "ctxwin save file".to_owned(), body: None });
    }
    let model =
        args.model.as_deref().ok_or_else(|| format!("{name} is a transcript, not a ctxwin save file: inspect needs --model"))?;
    let mut window = Window::new(model);
    configure(&mut window, args.strategy(), args.config.as_deref(), args.budget())?;
    let extras = transcript::load(&mut window, name, text)?;
    let system = window.model().count(&extras.system).tokens;
    let tools = match &extras.tools {
        Some(tools) => ctxwin::json::count_tools(window.model(), tools).map_err(|e| format!("{name}: {e}"))?.tokens,
        None => 0,
    };
    let clamp = |n: u32| i32::try_from(n).unwrap_or(i32::MAX);
    window.set_overhead(clamp(system), clamp(tools)).map_err(|e| e.to_string())?;
    window.end_turn();
    let kind = window.wire_formats().preferred().map_or("plain", |f| f.name()).to_owned();
    let body = serde_json::from_str::<Value>(text).ok().filter(|body| {
        body.as_object().is_some_and(|body| ["messages", "input", "contents"].iter().any(|key| body.contains_key(*key)))
    });
    Ok(Source { window, kind, body })
}

/// Applies `--strategy`, `--config` and `--budget`, in that order.
pub fn configure(window: &mut Window, strategy: Option<&str>, config: Option<&str>, budget: Option<i32>) -> Result<(), String> {
    if let Some(strategy) = strategy {
        let config = serde_json::json!({ "strategy": strategy }).to_string();
        window.configure(&config).map_err(|e| format!("--strategy: {e}"))?;
    }
    if let Some(config) = config {
        window.configure(config).map_err(|e| format!("--config: {e}"))?;
    }
    if let Some(budget) = budget {
        window.set_budget(budget).map_err(|e| format!("--budget: {e}"))?;
    }
    Ok(())
}
