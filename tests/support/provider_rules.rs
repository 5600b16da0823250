//! The providers' documented structural rules for a request body, checked independently of
//! the library's renderer: what OpenAI Chat Completions, OpenAI Responses, Anthropic Messages
//! and Gemini `generateContent` refuse. `check` returns the first broken rule.
#![allow(dead_code)]

use ctxwin::json::Format;
use serde_json::Value;
use std::collections::HashSet;

/// A provider format, as the checker names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rules {
    Chat,
    Responses,
    Anthropic,
    Gemini,
}

impl Rules {
    /// The rules of ctxwin's format `format`.
    pub fn of(format: Format) -> Rules {
        match format {
            Format::OpenAiChat => Rules::Chat,
            Format::OpenAiResponses => Rules::Responses,
            Format::Anthropic => Rules::Anthropic,
            Format::Gemini => Rules::Gemini,
        }
    }
}

fn str_of<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn array<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    value.get(key).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// True for content that says nothing: absent, null, "", [] or only empty text parts.
fn empty_content(content: Option<&Value>) -> bool {
    match content {
        None | Some(Value::Null) => true,
        Some(Value::String(text)) => text.is_empty(),
        Some(Value::Array(parts)) => parts.is_empty(),
        Some(_) => false,
    }
}

/// The first rule `body` breaks, or `Ok`.
pub fn check(rules: Rules, body: &Value) -> Result<(), String> {
    let body = body.as_object().ok_or("the body is not an object")?;
    match rules {
        Rules::Chat => chat(body.get("messages").and_then(Value::as_array).ok_or("no messages array")?),
        Rules::Responses => responses(body.get("input").and_then(Value::as_array).ok_or("no input array")?),
        Rules::Anthropic => {
            if let Some(system) = body.get("system") {
                let blocks = system.as_array().ok_or("system is not an array of blocks")?;
                if blocks.iter().any(|b| str_of(b, "type") != "text" || blank(str_of(b, "text"))) {
                    return Err(format!("system holds a block that is not text with non-whitespace: {system}"));
                }
            }
            anthropic(body.get("messages").and_then(Value::as_array).ok_or("no messages array")?)
        }
        Rules::Gemini => {
            if let Some(instruction) = body.get("systemInstruction") {
                if array(instruction, "parts").is_empty() {
                    return Err("systemInstruction without parts".into());
                }
            }
            gemini(body.get("contents").and_then(Value::as_array).ok_or("no contents array")?)
        }
    }
}

/// Chat: every assistant `tool_calls` id answered by the `tool` messages that immediately
/// follow, no stray `tool` message, ids unique, no empty message.
fn chat(messages: &[Value]) -> Result<(), String> {
    let mut ids = HashSet::new();
    let mut i = 0;
    while i < messages.len() {
        let message = &messages[i];
        let role = str_of(message, "role");
        match role {
            "system" | "developer" | "user" | "assistant" => {}
            "tool" => return Err(format!("message {i}: a tool message that answers no call just before it")),
            other => return Err(format!("message {i}: unknown role '{other}'")),
        }
        let calls = array(message, "tool_calls");
        if empty_content(message.get("content")) && calls.is_empty() {
            return Err(format!("message {i}: empty {role} message"));
        }
        if !calls.is_empty() && role != "assistant" {
            return Err(format!("message {i}: tool_calls on a {role} message"));
        }
        let mut open: Vec<&str> = Vec::new();
        for call in calls {
            let id = str_of(call, "id");
            if id.is_empty() || !ids.insert(id.to_owned()) {
                return Err(format!("message {i}: tool call id '{id}' empty or not unique"));
            }
            if str_of(call, "type") != "function"
                || str_of(&call["function"], "name").is_empty()
                || !call["function"]["arguments"].is_string()
            {
                return Err(format!("message {i}: malformed tool call {call}"));
            }
            open.push(id);
        }
        i += 1;
        while !open.is_empty() {
            let answer = messages.get(i).ok_or_else(|| format!("calls {open:?} unanswered at the end"))?;
            if str_of(answer, "role") != "tool" {
                return Err(format!("message {i}: calls {open:?} not answered by the tool messages that follow"));
            }
            let id = str_of(answer, "tool_call_id");
            let at = open
                .iter()
                .position(|&o| o == id)
                .ok_or_else(|| format!("message {i}: tool message for '{id}', not a call just before"))?;
            open.remove(at);
            if !answer["content"].is_string() {
                return Err(format!("message {i}: tool content is not a string"));
            }
            i += 1;
        }
    }
    Ok(())
}

/// The output item type that answers a Responses call item of type `call`, or `None` for a
/// call OpenAI runs itself (web search, file search, code interpreter, image generation, MCP,
/// ...), which takes no output.
fn responses_output_of(call: &str) -> Option<&'static str> {
    Some(match call {
        "function_call" => "function_call_output",
        "custom_tool_call" => "custom_tool_call_output",
        "computer_call" => "computer_call_output",
        "shell_call" => "shell_call_output",
        "local_shell_call" => "local_shell_call_output",
        "apply_patch_call" => "apply_patch_call_output",
        _ => return None,
    })
}

/// Responses: every call the agent runs (`function_call`, `custom_tool_call`,
/// `computer_call`, ...) answered by one output item of its own type after it, call ids
/// unique, no output for a built-in call (`web_search_call`, `file_search_call`, ...) or for
/// no call, no empty message, a `compaction` item carries its `encrypted_content`, and every
/// item has a `type` or a `role` (a whole `response` object has neither).
fn responses(items: &[Value]) -> Result<(), String> {
    // (call id, the output type it wants or None for a built-in call, answered)
    let mut calls: Vec<(String, Option<&str>, bool)> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let item_type = str_of(item, "type");
        if item_type.is_empty() && item.get("role").is_none() {
            return Err(format!("item {i}: neither a type nor a role (not an item: a whole response?)"));
        }
        match item_type {
            "" | "message" if empty_content(item.get("content")) => return Err(format!("item {i}: empty message")),
            "compaction" if str_of(item, "encrypted_content").is_empty() => {
                return Err(format!("item {i}: compaction without encrypted_content"));
            }
            call if call.ends_with("_call") => {
                let output = responses_output_of(call);
                let id = match str_of(item, "call_id") {
                    "" => str_of(item, "id"),
                    id => id,
                };
                if id.is_empty() || calls.iter().any(|(c, _, _)| c == id) {
                    return Err(format!("item {i}: {call} without a unique id"));
                }
                if matches!(call, "function_call" | "custom_tool_call") && str_of(item, "name").is_empty() {
                    return Err(format!("item {i}: {call} without a name"));
                }
                calls.push((id.to_owned(), output, false));
            }
            output if output.ends_with("_call_output") => {
                let id = str_of(item, "call_id");
                let call = calls
                    .iter_mut()
                    .find(|(c, _, _)| c == id)
                    .ok_or_else(|| format!("item {i}: {output} for '{id}' before or without its call"))?;
                if call.1 != Some(output) {
                    return Err(format!("item {i}: {output} answers '{id}', which wants {:?}", call.1));
                }
                if call.2 {
                    return Err(format!("item {i}: a second output for '{id}'"));
                }
                call.2 = true;
            }
            _ => {}
        }
    }
    match calls.iter().find(|(_, wants, answered)| wants.is_some() && !answered) {
        Some((id, wants, _)) => Err(format!("call '{id}' has no {}", wants.unwrap_or_default())),
        None => Ok(()),
    }
}

/// True for a text Anthropic refuses in a text block: "text content blocks must contain
/// non-whitespace text".
fn blank(text: &str) -> bool {
    text.trim().is_empty()
}

/// Anthropic: a message holds only `role` and `content` ("Extra inputs are not permitted":
/// a response `Message`'s `id`, `type`, `model`, `stop_reason` or `usage` sent back is
/// refused), strict user/assistant alternation starting with user, every `tool_use`
/// answered in the next user message with `tool_result` blocks first, no `system` role, no
/// empty content, no text block (a string content is one) empty or whitespace only, also
/// among a `tool_result`'s blocks.
fn anthropic(messages: &[Value]) -> Result<(), String> {
    let mut expected = "user";
    let mut open: Vec<String> = Vec::new();
    let mut ids = HashSet::new();
    for (i, message) in messages.iter().enumerate() {
        let extra: Vec<&String> =
            message.as_object().into_iter().flat_map(|m| m.keys()).filter(|k| *k != "role" && *k != "content").collect();
        if !extra.is_empty() {
            return Err(format!("message {i}: fields other than role and content: {extra:?}"));
        }
        let role = str_of(message, "role");
        if role != expected {
            return Err(format!("message {i}: role '{role}' where '{expected}' must come"));
        }
        if empty_content(message.get("content")) {
            return Err(format!("message {i}: empty content"));
        }
        let blocks: Vec<Value> = match &message["content"] {
            Value::String(text) => vec![serde_json::json!({"type": "text", "text": text})],
            Value::Array(blocks) => blocks.clone(),
            _ => return Err(format!("message {i}: content is neither a string nor blocks")),
        };
        let nested = blocks.iter().filter(|b| str_of(b, "type") == "tool_result").flat_map(|b| array(b, "content"));
        if blocks.iter().chain(nested).any(|b| str_of(b, "type") == "text" && blank(str_of(b, "text"))) {
            return Err(format!("message {i}: a text block empty or whitespace only"));
        }
        if role == "user" {
            let results = blocks.iter().take_while(|b| str_of(b, "type") == "tool_result").count();
            if blocks[results..].iter().any(|b| str_of(b, "type") == "tool_result") {
                return Err(format!("message {i}: tool_result blocks do not all come first"));
            }
            let answered: Vec<&str> = blocks[..results].iter().map(|b| str_of(b, "tool_use_id")).collect();
            let mut wanted = open.clone();
            for id in &answered {
                let at = wanted
                    .iter()
                    .position(|w| w == id)
                    .ok_or_else(|| format!("message {i}: tool_result for '{id}', not a tool_use just before"))?;
                wanted.remove(at);
            }
            if !wanted.is_empty() {
                return Err(format!("message {i}: tool_use {wanted:?} not answered"));
            }
            open.clear();
            expected = "assistant";
        } else {
            for block in &blocks {
                match str_of(block, "type") {
                    "tool_use" => {
                        let id = str_of(block, "id");
                        if id.is_empty()
                            || !ids.insert(id.to_owned())
                            || !block["input"].is_object()
                            || str_of(block, "name").is_empty()
                        {
                            return Err(format!("message {i}: malformed tool_use {block}"));
                        }
                        open.push(id.to_owned());
                    }
                    "tool_result" => return Err(format!("message {i}: tool_result in an assistant message")),
                    "server_tool_use" => {
                        // Its result comes in the same message, after it.
                        let id = str_of(block, "id");
                        let answered = blocks.iter().any(|b| {
                            str_of(b, "type").ends_with("_tool_result")
                                && str_of(b, "type") != "tool_result"
                                && str_of(b, "tool_use_id") == id
                        });
                        if !answered {
                            return Err(format!("message {i}: server_tool_use '{id}' without its result in the same message"));
                        }
                    }
                    "compaction"
                        if block["content"].as_str() == Some("")
                            || !(block["content"].is_string() || block["content"].is_null()) =>
                    {
                        return Err(format!("message {i}: a compaction block whose content is not a summary or null"));
                    }
                    _ => {}
                }
            }
            expected = "user";
        }
    }
    if !open.is_empty() {
        return Err(format!("tool_use {open:?} unanswered at the end"));
    }
    Ok(())
}

/// Gemini: roles user/model alternating, starting with user ("Please ensure that multiturn
/// requests alternate between user and model"; a function call turn must come right after a
/// user turn or a function response turn), every `functionCall` part answered by a
/// `functionResponse` of the same name in the next content, no response without a call just
/// before, every `response` an object, no empty content, no field but `role` and `parts` (Gemini refuses unknown names:
/// "Invalid JSON payload received. Unknown name").
fn gemini(contents: &[Value]) -> Result<(), String> {
    let mut open: Vec<String> = Vec::new();
    let mut expected = "user";
    for (i, content) in contents.iter().enumerate() {
        let extra: Vec<&String> =
            content.as_object().into_iter().flat_map(|m| m.keys()).filter(|k| *k != "role" && *k != "parts").collect();
        if !extra.is_empty() {
            return Err(format!("content {i}: fields other than role and parts: {extra:?}"));
        }
        let role = str_of(content, "role");
        if role != "user" && role != "model" {
            return Err(format!("content {i}: role '{role}'"));
        }
        if role != expected {
            return Err(format!("content {i}: role '{role}' where '{expected}' must come (user and model alternate)"));
        }
        expected = if role == "user" { "model" } else { "user" };
        let parts = array(content, "parts");
        if parts.is_empty() {
            return Err(format!("content {i}: no parts"));
        }
        if let Some(bad) = parts.iter().filter_map(|p| p.get("functionResponse")).find(|r| !r["response"].is_object()) {
            return Err(format!("content {i}: a functionResponse whose response is not an object (a Struct): {bad}"));
        }
        let responses: Vec<&str> = parts.iter().filter_map(|p| p.get("functionResponse")).map(|r| str_of(r, "name")).collect();
        let mut wanted = open.clone();
        for name in &responses {
            let at = wanted
                .iter()
                .position(|w| w == name)
                .ok_or_else(|| format!("content {i}: functionResponse '{name}' answers no call just before"))?;
            wanted.remove(at);
        }
        if !wanted.is_empty() {
            return Err(format!("content {i}: functionCall {wanted:?} not answered by the next content"));
        }
        if !responses.is_empty() && role != "user" {
            return Err(format!("content {i}: functionResponse in a {role} content"));
        }
        open = parts.iter().filter_map(|p| p.get("functionCall")).map(|c| str_of(c, "name").to_owned()).collect();
        if !open.is_empty() && role != "model" {
            return Err(format!("content {i}: functionCall in a {role} content"));
        }
        if parts.iter().any(|p| p.get("text").is_some_and(|t| t.as_str() == Some(""))) {
            return Err(format!("content {i}: an empty text part"));
        }
    }
    if !open.is_empty() {
        return Err(format!("functionCall {open:?} unanswered at the end"));
    }
    Ok(())
}
