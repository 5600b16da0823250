//! What `replay` reads: an agent's recorded session turned into what its host did, in order:
//! the messages it pushed (as provider JSON `push_json` reads) and the model calls it made,
//! each with the provider's usage when the log holds it.
//!
//! Formats (one JSON object per line unless said otherwise):
//! - **Claude Code** stream-json output (`claude -p --output-format stream-json --verbose`)
//!   and session files (`~/.claude/projects/<project>/<session>.jsonl`): `user` and
//!   `assistant` events whose `message` holds Anthropic content blocks and, on assistant
//!   events, the call's `usage`. One response may be written as several `assistant` lines
//!   with the same `message.id` (a block each), the tool results between them: they are one
//!   model call. Sub-agent events (`isSidechain`) and synthetic assistant messages
//!   (`"model": "<synthetic>"`) are not the session's calls; other event types are skipped.
//! - **Codex** rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`, written since
//!   Codex 0.3x): `{"type": "response_item", "payload": <Responses item>}` lines, one model
//!   call per run of output items (reasoning, assistant message, tool calls), its usage in the
//!   `event_msg` `token_count` line that follows (`info.last_token_usage`).
//! - **Provider messages**, as `ctxwin inspect` reads them: a JSON array or one message per
//!   line, in any format `push_json` takes; a model call before each assistant message.
//! - **ctxwin saves** (`ctxwin_window_save` / `export`): the provider JSON each message was
//!   pushed as, in order, a model call before each run of assistant-side messages; the
//!   save's overhead is the overhead.

use serde_json::{Map, Value, json};

/// The formats `--format` names.
pub const FORMATS: [&str; 4] = ["claude", "codex", "messages", "save"];

/// What the provider reported for one model call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoggedUsage {
    /// Every input token of the call, cached ones included.
    pub prompt: u64,
    /// Input tokens read from the provider's cache.
    pub cached: u64,
    /// Input tokens written to the provider's cache (Anthropic's cache creation).
    pub written: u64,
}

/// One thing the agent's host did.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// Pushed a message: provider JSON, from `line` of the log.
    Push { line: usize, json: String, starts_turn: bool },
    /// Called the model (before pushing its answer), the call's answer starting at `line`.
    Request { line: usize, usage: Option<LoggedUsage> },
}

/// A session read from a log.
#[derive(Debug, Default)]
pub struct AgentLog {
    /// The format read, as `--format` names it.
    pub format: &'static str,
    /// The model the log names, if it does.
    pub model: Option<String>,
    /// What the host did, in order.
    pub events: Vec<Event>,
    /// The event that pushed the task (the session's first user message), if any.
    pub task: Option<usize>,
    /// The log records no prompt before the first model call (`claude -p`'s stream-json
    /// output does not): a one-line stand-in task was pushed first, the prompt's tokens are
    /// in what the first call's usage holds beyond its messages.
    pub stand_in_task: bool,
    /// The overhead the log states (a save's system prompt and tools), if it does.
    pub overhead: Option<u64>,
}

/// The user message pushed for a prompt the log does not record.
pub const STAND_IN_TASK: &str = "[the task: the log does not record the prompt]";

impl AgentLog {
    fn push(&mut self, line: usize, message: Value, starts_turn: bool) {
        if starts_turn && self.task.is_none() {
            self.task = Some(self.events.len());
        }
        self.events.push(Event::Push { line, json: message.to_string(), starts_turn });
    }

    /// The model calls in the log.
    pub fn requests(&self) -> usize {
        self.events.iter().filter(|e| matches!(e, Event::Request { .. })).count()
    }
}

/// Reads `text` in `format` (detected from its first line when `None`).
pub fn read(text: &str, format: Option<&str>) -> Result<AgentLog, String> {
    let format = match format {
        Some(name) => FORMATS
            .iter()
            .copied()
            .find(|f| *f == name)
            .ok_or_else(|| format!("--format must be one of {}, not '{name}'", FORMATS.join(", ")))?,
        None => detect(text)?,
    };
    let mut log = AgentLog { format, ..AgentLog::default() };
    match format {
        "claude" => claude(text, &mut log)?,
        "codex" => codex(text, &mut log)?,
        "save" => save(text, &mut log)?,
        _ => messages(text, &mut log)?,
    }
    if log.requests() == 0 {
        return Err(format!("the log holds no model call ({} format: {})", format, what_calls(format)));
    }
    Ok(log)
}

fn what_calls(format: &str) -> &'static str {
    match format {
        "claude" => "no \"assistant\" event",
        "codex" => "no response_item the model wrote",
        "save" => "no assistant-side message",
        _ => "no assistant message",
    }
}

/// The lines of `text` that hold something, numbered from 1.
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, line)| (i + 1, line.trim())).filter(|(_, line)| !line.is_empty())
}

/// Line `number` as a JSON object.
fn object(number: usize, line: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(other) => Err(format!("line {number}: expected a JSON object, found {}", kind_of(&other))),
        Err(e) => {
            let why = e.to_string();
            let why = why.split(" at line ").next().unwrap_or_default();
            Err(format!("line {number}, column {}: not JSON ({why})", e.column()))
        }
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Event types Claude Code writes in stream-json output and session files.
const CLAUDE_TYPES: [&str; 9] =
    ["user", "assistant", "system", "result", "summary", "file-history-snapshot", "queue-operation", "progress", "custom-title"];

/// The format of `text`, from its first line (or the whole text, for a JSON array).
fn detect(text: &str) -> Result<&'static str, String> {
    if text.trim_start().starts_with('[') {
        return Ok("messages");
    }
    let Some((number, first)) = lines(text).next() else {
        return Err("the log is empty".to_owned());
    };
    let first = object(number, first)?;
    if first.get("format").and_then(Value::as_str) == Some(ctxwin::persist::FORMAT) {
        return Ok("save");
    }
    let kind = first.get("type").and_then(Value::as_str).unwrap_or_default();
    if first.contains_key("payload")
        && ["session_meta", "response_item", "event_msg", "turn_context", "compacted"].contains(&kind)
    {
        return Ok("codex");
    }
    if first.contains_key("role")
        || first.contains_key("parts")
        || ["function_call", "function_call_output", "reasoning", "message"].contains(&kind)
    {
        return Ok("messages");
    }
    if CLAUDE_TYPES.contains(&kind) {
        return Ok("claude");
    }
    Err(format!(
        "line {number}: not a Claude Code event, a Codex rollout line or a provider message (\"type\": {}); name the format with --format",
        first.get("type").map_or("absent".to_owned(), Value::to_string)
    ))
}

/// A field of line `number` that must be there.
fn field<'a>(number: usize, object: &'a Map<String, Value>, path: &str) -> Result<&'a Value, String> {
    object.get(path).ok_or_else(|| format!("line {number}: \"{path}\" is missing"))
}

/// The Claude Code assistant message being read: its lines may be several.
struct Answer {
    id: Option<String>,
    line: usize,
    blocks: Vec<Value>,
    usage: Option<LoggedUsage>,
}

/// The user content read since the last flush.
#[derive(Default)]
struct UserContent {
    line: usize,
    blocks: Vec<Value>,
    starts_turn: bool,
}

fn claude(text: &str, log: &mut AgentLog) -> Result<(), String> {
    let mut answer: Option<Answer> = None;
    let mut user = UserContent::default();
    for (number, line) in lines(text) {
        let event = object(number, line)?;
        let kind = match field(number, &event, "type")? {
            Value::String(kind) => kind.as_str(),
            other => return Err(format!("line {number}: \"type\" must be a string, found {}", kind_of(other))),
        };
        if event.contains_key("payload") && !event.contains_key("message") {
            return Err(format!("line {number}: a Codex rollout line (\"payload\"), not a Claude Code event"));
        }
        if event.get("isSidechain").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        match kind {
            "system" => {
                if let Some(model) = event.get("model").and_then(Value::as_str) {
                    log.model.get_or_insert_with(|| model.to_owned());
                }
            }
            "assistant" => {
                let message = message_of(number, &event)?;
                if message.get("model").and_then(Value::as_str) == Some("<synthetic>") {
                    continue;
                }
                if let Some(model) = message.get("model").and_then(Value::as_str) {
                    log.model.get_or_insert_with(|| model.to_owned());
                }
                let blocks = content_blocks(number, message)?;
                let usage = match message.get("usage") {
                    Some(usage) => Some(anthropic_usage(number, usage)?),
                    None => None,
                };
                let id = message.get("id").and_then(Value::as_str).map(str::to_owned);
                match &mut answer {
                    Some(open) if id.is_some() && open.id == id => {
                        open.blocks.extend(blocks);
                        open.usage = usage.or(open.usage);
                    }
                    _ => {
                        flush_answer(log, answer.take());
                        flush_user(log, &mut user);
                        answer = Some(Answer { id, line: number, blocks, usage });
                    }
                }
            }
            "user" => {
                let message = message_of(number, &event)?;
                let blocks = content_blocks(number, message)?;
                let prompt = blocks.iter().any(|b| b.get("type").and_then(Value::as_str) != Some("tool_result"));
                if prompt {
                    // A prompt never comes inside an answer: the answer before it is whole.
                    flush_answer(log, answer.take());
                }
                if user.blocks.is_empty() {
                    user.line = number;
                }
                user.starts_turn |= prompt;
                user.blocks.extend(blocks);
            }
            _ => {}
        }
    }
    flush_answer(log, answer);
    flush_user(log, &mut user);
    if matches!(log.events.first(), Some(Event::Request { .. })) {
        log.events.insert(
            0,
            Event::Push { line: 0, json: json!({"role": "user", "content": STAND_IN_TASK}).to_string(), starts_turn: true },
        );
        log.task = Some(0);
        log.stand_in_task = true;
    }
    Ok(())
}

fn message_of(number: usize, event: &Map<String, Value>) -> Result<&Map<String, Value>, String> {
    field(number, event, "message")?.as_object().ok_or_else(|| format!("line {number}: \"message\" must be an object"))
}

/// A message's content as blocks: a string is one text block.
fn content_blocks(number: usize, message: &Map<String, Value>) -> Result<Vec<Value>, String> {
    match field(number, message, "content").map_err(|e| e.replace("\"content\"", "\"message.content\""))? {
        Value::String(text) => Ok(vec![json!({"type": "text", "text": text})]),
        Value::Array(blocks) => {
            for (i, block) in blocks.iter().enumerate() {
                if block.get("type").and_then(Value::as_str).is_none() {
                    return Err(format!("line {number}: message.content[{i}] has no \"type\""));
                }
            }
            Ok(blocks.clone())
        }
        other => Err(format!("line {number}: message.content must be a string or an array, found {}", kind_of(other))),
    }
}

fn count_at(number: usize, usage: &Map<String, Value>, key: &str, prefix: &str) -> Result<u64, String> {
    match usage.get(key) {
        None | Some(Value::Null) => Ok(0),
        Some(value) => {
            value.as_u64().ok_or_else(|| format!("line {number}: {prefix}{key} must be a whole number, found {value}"))
        }
    }
}

/// An Anthropic usage object: the prompt is its input, cache-creation and cache-read tokens.
fn anthropic_usage(number: usize, usage: &Value) -> Result<LoggedUsage, String> {
    let usage = usage.as_object().ok_or_else(|| format!("line {number}: message.usage must be an object"))?;
    let count = |key| count_at(number, usage, key, "message.usage.");
    let (input, written, cached) =
        (count("input_tokens")?, count("cache_creation_input_tokens")?, count("cache_read_input_tokens")?);
    Ok(LoggedUsage { prompt: input + written + cached, cached, written })
}

fn flush_answer(log: &mut AgentLog, answer: Option<Answer>) {
    if let Some(answer) = answer {
        log.events.push(Event::Request { line: answer.line, usage: answer.usage });
        log.push(answer.line, json!({"role": "assistant", "content": answer.blocks}), false);
    }
}

fn flush_user(log: &mut AgentLog, user: &mut UserContent) {
    let user = std::mem::take(user);
    if !user.blocks.is_empty() {
        log.push(user.line, json!({"role": "user", "content": user.blocks}), user.starts_turn);
    }
}

/// Response items a model writes.
fn is_output(item: &Map<String, Value>) -> bool {
    match item.get("type").and_then(Value::as_str) {
        Some("message") => item.get("role").and_then(Value::as_str) == Some("assistant"),
        Some(kind) => ["reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call"].contains(&kind),
        None => false,
    }
}

/// A Codex item as a Responses item `push_json` reads: custom and shell tool calls become
/// function calls (their input the arguments), their outputs function call outputs.
fn responses_item(number: usize, mut item: Map<String, Value>) -> Result<Value, String> {
    let kind = item.get("type").and_then(Value::as_str).unwrap_or_default().to_owned();
    match kind.as_str() {
        "custom_tool_call" => {
            let input = item.remove("input").unwrap_or(Value::String(String::new()));
            let input = input.as_str().map_or_else(|| input.to_string(), str::to_owned);
            item.insert("type".to_owned(), json!("function_call"));
            item.insert("arguments".to_owned(), json!(json!({ "input": input }).to_string()));
        }
        "local_shell_call" => {
            let action = item.remove("action").unwrap_or(Value::Null);
            item.insert("type".to_owned(), json!("function_call"));
            item.insert("name".to_owned(), json!("shell"));
            item.insert("arguments".to_owned(), json!(action.to_string()));
            item.remove("status");
        }
        "custom_tool_call_output" => {
            item.insert("type".to_owned(), json!("function_call_output"));
        }
        "function_call_output" => {}
        "message" | "reasoning" | "function_call" => {}
        "" => return Err(format!("line {number}: payload.type is missing")),
        _ => return Ok(Value::Null),
    }
    if let Some(output) = item.get("output").filter(|o| !o.is_string()) {
        // Codex writes some outputs as {"output": ..., "metadata": ...} objects.
        let text = output.get("output").and_then(Value::as_str).map_or_else(|| output.to_string(), str::to_owned);
        item.insert("output".to_owned(), json!(text));
    }
    Ok(Value::Object(item))
}

fn codex(text: &str, log: &mut AgentLog) -> Result<(), String> {
    // The call whose usage is awaited: from the first output item to its token_count.
    let mut in_answer = false;
    let mut awaiting_usage: Option<usize> = None;
    let mut first_prompt: Option<String> = None;
    let mut last_total: Option<Value> = None;
    let mut user_messages: Vec<(usize, String)> = Vec::new();
    for (number, line) in lines(text) {
        let entry = object(number, line)?;
        let kind = match field(number, &entry, "type")? {
            Value::String(kind) => kind.as_str(),
            other => return Err(format!("line {number}: \"type\" must be a string, found {}", kind_of(other))),
        };
        let payload = field(number, &entry, "payload")?;
        let payload = payload.as_object().ok_or_else(|| format!("line {number}: \"payload\" must be an object"))?;
        match kind {
            "turn_context" => {
                if let Some(model) = payload.get("model").and_then(Value::as_str) {
                    log.model.get_or_insert_with(|| model.to_owned());
                }
            }
            "event_msg" => match payload.get("type").and_then(Value::as_str) {
                Some("user_message") if first_prompt.is_none() => {
                    first_prompt = payload.get("message").and_then(Value::as_str).map(str::to_owned);
                }
                Some("token_count") => {
                    let Some(info) = payload.get("info").filter(|i| !i.is_null()) else { continue };
                    // Codex writes some token_count events twice: the same running total.
                    let total = info.get("total_token_usage").cloned();
                    if total.is_some() && total == last_total {
                        continue;
                    }
                    last_total = total;
                    let last = info
                        .get("last_token_usage")
                        .and_then(Value::as_object)
                        .ok_or_else(|| format!("line {number}: payload.info.last_token_usage must be an object"))?;
                    let prefix = "payload.info.last_token_usage.";
                    let prompt = count_at(number, last, "input_tokens", prefix)?;
                    let cached = count_at(number, last, "cached_input_tokens", prefix)?;
                    if let Some(Event::Request { usage, .. }) = awaiting_usage.take().and_then(|i| log.events.get_mut(i)) {
                        *usage = Some(LoggedUsage { prompt, cached, written: 0 });
                    }
                }
                _ => {}
            },
            "response_item" => {
                let output = is_output(payload);
                let item = responses_item(number, payload.clone())?;
                if item.is_null() {
                    continue;
                }
                if output && !in_answer {
                    log.events.push(Event::Request { line: number, usage: None });
                    awaiting_usage = Some(log.events.len() - 1);
                }
                in_answer = output;
                let user_text = (payload.get("type").and_then(Value::as_str) == Some("message")
                    && payload.get("role").and_then(Value::as_str) == Some("user"))
                .then(|| item_text(payload));
                if let Some(text) = &user_text {
                    user_messages.push((log.events.len(), text.clone()));
                }
                log.events.push(Event::Push { line: number, json: item.to_string(), starts_turn: user_text.is_some() });
            }
            _ => {}
        }
    }
    // The task is the first message the user typed (Codex also sends its environment and
    // instructions as user messages, before it); without a user_message event, the first
    // user message.
    let typed = user_messages.iter().find(|(_, text)| first_prompt.as_deref().is_some_and(|p| p.trim() == text.trim()));
    log.task = typed.or(user_messages.first()).map(|(event, _)| *event);
    Ok(())
}

/// The text of a Responses message item's content parts.
fn item_text(item: &Map<String, Value>) -> String {
    match item.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => {
            parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("")
        }
        _ => String::new(),
    }
}

/// A ctxwin save: each wire message as it was pushed ("line" is its first ledger index).
fn save(text: &str, log: &mut AgentLog) -> Result<(), String> {
    let window = ctxwin::persist::import(text).map_err(|e| format!("not a ctxwin save this version reads: {e}"))?;
    log.model = Some(window.model().name().to_owned());
    let overhead = window.overhead();
    log.overhead = Some(u64::from(overhead.system) + u64::from(overhead.tools));
    let mut in_answer = false;
    for index in 0..window.message_count() {
        let Some(message) = window.message(index) else { break };
        if message.extras().and_then(|e| e.wire).is_some_and(|wire| wire.index > 0) {
            continue;
        }
        let json = message.raw_json().ok_or_else(|| {
            format!(
                "message {index} holds no provider JSON (pushed as text, or saved with \"retain_text\": false): \
                 replay reads saves of messages pushed with push_json"
            )
        })?;
        let value: Value =
            serde_json::from_str(json).map_err(|e| format!("message {index}: its provider JSON does not parse ({e})"))?;
        let output = matches!(message.kind(), ctxwin::Kind::Assistant | ctxwin::Kind::ToolCall | ctxwin::Kind::Thinking);
        if output && !in_answer {
            log.events.push(Event::Request { line: index, usage: None });
        }
        in_answer = output;
        log.push(index, value, message.kind() == ctxwin::Kind::User);
    }
    Ok(())
}

/// Provider messages: a model call before each run of assistant messages.
fn messages(text: &str, log: &mut AgentLog) -> Result<(), String> {
    let elements: Vec<(usize, Map<String, Value>)> = if text.trim_start().starts_with('[') {
        let array: Vec<Value> = serde_json::from_str(text).map_err(|e| format!("line {}: not a JSON array ({e})", e.line()))?;
        array
            .into_iter()
            .enumerate()
            .map(|(i, value)| match value {
                Value::Object(object) => Ok((i, object)),
                other => Err(format!("element {i}: expected a message object, found {}", kind_of(&other))),
            })
            .collect::<Result<_, _>>()?
    } else {
        lines(text).map(|(number, line)| object(number, line).map(|o| (number, o))).collect::<Result<_, _>>()?
    };
    let mut in_answer = false;
    for (number, message) in elements {
        let role = message.get("role").and_then(Value::as_str);
        let output = matches!(role, Some("assistant" | "model")) || (role.is_none() && is_output(&message));
        if output && !in_answer {
            log.events.push(Event::Request { line: number, usage: None });
        }
        in_answer = output;
        let starts_turn = role == Some("user")
            && match message.get("content").or(message.get("parts")) {
                Some(Value::Array(parts)) => parts.iter().any(|p| {
                    !matches!(p.get("type").and_then(Value::as_str), Some("tool_result")) && p.get("functionResponse").is_none()
                }),
                _ => true,
            };
        log.push(number, Value::Object(message), starts_turn);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pushes(log: &AgentLog) -> Vec<Value> {
        log.events
            .iter()
            .filter_map(|e| match e {
                Event::Push { json, .. } => Some(serde_json::from_str(json).unwrap()),
                Event::Request { .. } => None,
            })
            .collect()
    }

    #[test]
    fn claude_answers_split_over_lines_are_one_call() {
        let log = read(
            concat!(
                r#"{"type":"system","subtype":"init","session_id":"s","model":"claude-sonnet-4-5"}"#,
                "\n",
                r#"{"type":"user","message":{"role":"user","content":"fix the bug"},"session_id":"s"}"#,
                "\n",
                r#"{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"a","name":"Read","input":{}}],"usage":{"input_tokens":5,"cache_creation_input_tokens":100,"cache_read_input_tokens":0}},"session_id":"s"}"#,
                "\n",
                r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"x"}]},"session_id":"s"}"#,
                "\n",
                r#"{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"b","name":"Read","input":{}}],"usage":{"input_tokens":5,"cache_creation_input_tokens":100,"cache_read_input_tokens":0}},"session_id":"s"}"#,
                "\n",
                r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"b","content":"y"}]},"session_id":"s"}"#,
                "\n",
                r#"{"type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"done"}],"usage":{"input_tokens":1,"cache_creation_input_tokens":20,"cache_read_input_tokens":100}},"session_id":"s"}"#,
                "\n",
                r#"{"type":"result","subtype":"success","session_id":"s"}"#,
            ),
            None,
        )
        .unwrap();
        assert_eq!(
            (log.format, log.model.as_deref(), log.requests(), log.task),
            ("claude", Some("claude-sonnet-4-5"), 2, Some(0))
        );
        let pushed = pushes(&log);
        assert_eq!(pushed.len(), 4, "{pushed:?}");
        assert_eq!(pushed[1]["content"].as_array().unwrap().len(), 2, "both tool uses in one answer");
        assert_eq!(pushed[2]["content"].as_array().unwrap().len(), 2, "both results in one user message");
        let usages: Vec<_> =
            log.events.iter().filter_map(|e| if let Event::Request { usage, .. } = e { *usage } else { None }).collect();
        assert_eq!(
            usages,
            [LoggedUsage { prompt: 105, cached: 0, written: 100 }, LoggedUsage { prompt: 121, cached: 100, written: 20 }]
        );
    }

    #[test]
    fn a_stream_without_the_prompt_gets_a_stand_in_task() {
        let text = concat!(
            r#"{"type":"system","subtype":"init","session_id":"s","model":"claude-sonnet-4-6"}"#,
            "\n",
            r#"{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"hi"}]},"session_id":"s"}"#,
        );
        let log = read(text, None).unwrap();
        assert!(log.stand_in_task);
        assert_eq!(log.task, Some(0));
        assert_eq!(pushes(&log)[0], json!({"role": "user", "content": STAND_IN_TASK}));
        assert!(matches!(log.events[1], Event::Request { line: 2, usage: None }));
    }

    #[test]
    fn a_save_replays_the_json_it_was_pushed_as() {
        let mut window = ctxwin::Window::new("gpt-4o");
        window.set_overhead(120, 30).unwrap();
        let chat = [
            json!({"role": "user", "content": "hello"}),
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}, {"id": "c2", "type": "function", "function": {"name": "g", "arguments": "{}"}}]}),
            json!({"role": "tool", "tool_call_id": "c1", "content": "1"}),
            json!({"role": "tool", "tool_call_id": "c2", "content": "2"}),
            json!({"role": "assistant", "content": "1 and 2"}),
        ];
        for message in &chat {
            ctxwin::json::push_json(&mut window, &message.to_string()).unwrap();
        }
        let log = read(&ctxwin::persist::export(&window), None).unwrap();
        assert_eq!(
            (log.format, log.model.as_deref(), log.overhead, log.requests(), log.task),
            ("save", Some("gpt-4o"), Some(150), 2, Some(0))
        );
        let pushed: Vec<Value> = pushes(&log);
        assert_eq!(pushed, chat, "each wire message once, as pushed");
        window.push(ctxwin::Kind::User, "typed").unwrap();
        let err = read(&ctxwin::persist::export(&window), None).unwrap_err();
        assert!(err.contains("message 6 holds no provider JSON"), "{err}");
    }

    #[test]
    fn bad_lines_are_named() {
        for (text, format, needle) in [
            ("{\"type\":\"system\"}\n{oops", Some("claude"), "line 2, column 2: not JSON (key must be a string)"),
            ("{\"type\":\"user\",\"session_id\":\"s\"}", None, "line 1: \"message\" is missing"),
            (
                "{\"type\":\"assistant\",\"message\":{\"content\":7},\"session_id\":\"s\"}",
                None,
                "line 1: message.content must be",
            ),
            (
                "\n\n{\"type\":\"assistant\",\"message\":{\"content\":[],\"usage\":{\"input_tokens\":-1}},\"uuid\":\"u\"}",
                None,
                "line 3: message.usage.input_tokens",
            ),
            (
                "{\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"role\":\"user\",\"content\":[]}}",
                Some("claude"),
                "line 1: a Codex rollout line",
            ),
            (
                "{\"type\":\"assistant\",\"message\":{\"content\":[]},\"session_id\":\"s\"}",
                Some("codex"),
                "line 1: \"payload\" is missing",
            ),
            ("[1]", None, "element 0"),
            ("{\"hello\":1}", None, "name the format with --format"),
            ("{\"type\":\"user\",\"session_id\":\"s\",\"message\":{\"content\":\"hi\"}}", None, "no model call"),
            ("", None, "empty"),
            ("x", Some("yaml"), "--format must be one of"),
        ] {
            let err = read(text, format).unwrap_err();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }

    #[test]
    fn codex_calls_take_the_token_count_after_them() {
        let lines = [
            json!({"type":"session_meta","payload":{"id":"x"}}),
            json!({"type":"turn_context","payload":{"model":"gpt-5-codex"}}),
            json!({"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>cwd</environment_context>"}]}}),
            json!({"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"add a test"}]}}),
            json!({"type":"event_msg","payload":{"type":"user_message","message":"add a test"}}),
            json!({"type":"response_item","payload":{"type":"reasoning","id":"r","summary":[]}}),
            json!({"type":"response_item","payload":{"type":"custom_tool_call","call_id":"c1","name":"apply_patch","input":"*** Begin Patch"}}),
            json!({"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":900},"last_token_usage":{"input_tokens":900,"cached_input_tokens":0}}}}),
            json!({"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":900},"last_token_usage":{"input_tokens":900,"cached_input_tokens":0}}}}),
            json!({"type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"c1","output":"{\"output\":\"ok\",\"metadata\":{}}"}}),
            json!({"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}),
            json!({"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1900},"last_token_usage":{"input_tokens":1000,"cached_input_tokens":800}}}}),
        ];
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let log = read(&text, None).unwrap();
        assert_eq!((log.format, log.model.as_deref(), log.requests()), ("codex", Some("gpt-5-codex"), 2));
        assert_eq!(log.task, Some(1), "the typed task, not the environment context");
        let usages: Vec<_> =
            log.events.iter().filter_map(|e| if let Event::Request { usage, .. } = e { *usage } else { None }).collect();
        assert_eq!(
            usages,
            [LoggedUsage { prompt: 900, cached: 0, written: 0 }, LoggedUsage { prompt: 1000, cached: 800, written: 0 }]
        );
        let pushed = pushes(&log);
        assert_eq!(pushed[3]["type"], "function_call");
        assert_eq!(pushed[4]["type"], "function_call_output");
    }
}
