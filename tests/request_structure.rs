//! Every request body the window renders passes its provider's structural rules
//! (tests/support/provider_rules.rs), over random sessions of every format and strategy:
//! parallel calls answered in any order, text and thinking in the same step as calls,
//! interrupted calls (never answered) and requests rendered while calls are still open,
//! every route of pushing (text, `push_tool`, `push_tool_call`, id-less `push`, JSON),
//! Responses calls OpenAI runs itself (no output) and custom and computer calls, provider
//! compaction (Anthropic `compaction` blocks, Responses `compaction` items), summaries, cuts (tiny budgets, thresholds, `compact`, `drop_oldest_turn`), `recover` and
//! rewinds.
//!
//! 10,000 sessions per format and strategy by default; `CTXWIN_REQUEST_SESSIONS=n` runs n.
//! A failure names the seed: `CTXWIN_REQUEST_SEED=s` replays that one session.
//! `CTXWIN_REQUEST_BODIES=file` appends every body checked to `file` as JSON Lines
//! (`{"format": ..., "body": ...}`), which `make sdk-types` validates with the providers' own
//! SDK types (tests/sdk_types.py).

#[path = "support/provider_rules.rs"]
mod provider_rules;
#[path = "support/rng.rs"]
mod rng;

use ctxwin::classify::{ErrorCategory, ErrorInfo};
use ctxwin::json::{self, Format};
use ctxwin::pairing::CallForm as WireCallForm;
use ctxwin::view::ItemType;
use ctxwin::view::text::CANCELLED_RESULT;
use ctxwin::{Kind, Window};
use provider_rules::{Rules, check};
use rng::Rng;
use serde_json::{Value, json};

const WORDS: [&str; 12] = ["read", "the", "file", "src/main.c", "ok", "done", "é", "中文", "line\nbreak", "{", "\"q\"", "42"];
const TOOLS: [&str; 4] = ["read_file", "ls", "grep", "run"];

/// Texts that say nothing but are not empty (Anthropic refuses them in text blocks).
const BLANKS: [&str; 3] = [" ", "\n", " \n\t "];

fn text(rng: &mut Rng) -> String {
    if rng.chance(3) {
        return String::new();
    }
    if rng.chance(3) {
        return rng.pick(&BLANKS).to_owned();
    }
    (0..rng.between(1, 8)).map(|_| rng.pick(&WORDS)).collect::<Vec<_>>().join(" ")
}

/// How one tool call of a step is pushed.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Route {
    /// `push_tool_call`, answered with `push_tool`.
    Call,
    /// `push_tool` with `name\narguments`, answered with `push_tool`.
    LegacyText,
    /// Plain `push` without ids, call and result.
    IdLess,
    /// The step's calls in one provider JSON message, the results in JSON too.
    Json,
}

/// How a Responses call item is made.
#[derive(Clone, Copy, Debug, PartialEq)]
enum CallForm {
    Function,
    /// `custom_tool_call`, answered by `custom_tool_call_output`.
    Custom,
    /// `computer_call`, answered by `computer_call_output` (a screenshot).
    Computer,
}

struct Session {
    rng: Rng,
    format: Format,
    window: Window,
    next_id: usize,
    /// Strings unique to one ledger message that every request sending it must hold once:
    /// a Gemini call's arguments and the thought signatures of its parts (by ledger index).
    needles: std::collections::HashMap<usize, Vec<String>>,
    /// Whether the last Gemini step's calls carried ids.
    gemini_ids: bool,
}

impl Session {
    fn new(seed: u64, format: Format, strategy: &str) -> Session {
        let mut rng = Rng::new(seed);
        let model = match format {
            Format::Anthropic => "claude-sonnet-4-5",
            Format::Gemini => "gemini-2.5-pro",
            _ => "gpt-4o",
        };
        let mut window = Window::new(model);
        let budget = rng.between(40, 900);
        let settings = json!({
            "format": format.key(),
            "strategy": strategy,
            "history_budget": budget,
            "tool_output_max_lines": rng.between(1, 4),
            "keep_recent_turns": rng.between(0, 2),
            "keep_first": rng.between(0, 2),
            "keep_recent": rng.between(1, 4),
            "message_threshold": if rng.chance(50) { json!(rng.between(6, 20)) } else { Value::Null },
            "context_limit": rng.between(1500, 6000),
            // Below every context_limit drawn: the summary strategy refuses a larger slot.
            "summary_budget": 1000,
            "output_reserve": 0,
        });
        window.configure(&settings.to_string()).unwrap_or_else(|e| panic!("{settings}: {e}"));
        Session { rng, format, window, next_id: 0, needles: Default::default(), gemini_ids: false }
    }

    fn push_json(&mut self, value: Value) {
        json::push_json(&mut self.window, &value.to_string()).unwrap_or_else(|e| panic!("{:?}: {e}\n{value}", self.format));
    }

    /// Pushes a model's answer (a message, or Responses output items), often as the whole
    /// response object the provider returned it in, which push_json reads as the answer.
    fn push_answer(&mut self, answer: Value) {
        if !self.rng.chance(40) {
            return self.push_json(answer);
        }
        let usage = json!({"input_tokens": 11, "output_tokens": 7});
        self.push_json(match self.format {
            Format::OpenAiChat => json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o",
                "choices": [{"index": 0, "message": answer, "logprobs": null, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}}),
            Format::OpenAiResponses => json!({"id": "resp_1", "object": "response", "created_at": 1, "status": "completed",
                "model": "gpt-5", "output": answer, "usage": usage}),
            Format::Anthropic => json!({"id": "msg_1", "type": "message", "role": answer["role"], "model": "claude-sonnet-4-5",
                "content": answer["content"], "stop_reason": "tool_use", "stop_sequence": null, "usage": usage}),
            Format::Gemini => json!({"candidates": [{"content": answer, "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 11, "candidatesTokenCount": 7}, "modelVersion": "gemini-2.5-pro"}),
        });
    }

    /// A user message; one whose text is blank is pushed as text, except in Anthropic's
    /// format, whose renders leave out a JSON message's blank text (Anthropic answers with
    /// it but refuses it sent back); the other formats send the caller's JSON as it is.
    fn user(&mut self) {
        let text = self.text_nonempty();
        if (!text.trim().is_empty() || self.format == Format::Anthropic) && self.rng.chance(30) {
            let message = match self.format {
                Format::Gemini => json!({"role": "user", "parts": [{"text": text}]}),
                _ => json!({"role": "user", "content": text}),
            };
            self.push_json(message);
        } else {
            self.window.push(Kind::User, &text).unwrap();
        }
    }

    fn text_nonempty(&mut self) -> String {
        let text = text(&mut self.rng);
        if text.is_empty() { "hi".to_owned() } else { text }
    }

    /// One assistant step: thinking and text, 0 to 3 calls by one route, their results in a
    /// random order, some never.
    fn step(&mut self) {
        if self.rng.chance(30) {
            let thought = text(&mut self.rng);
            self.window.push(Kind::Thinking, &thought).unwrap();
        }
        let said = if self.rng.chance(60) { Some(text(&mut self.rng)) } else { None };
        let route = [Route::Call, Route::LegacyText, Route::IdLess, Route::Json][self.rng.below(4)];
        // Half the steps call one function only (three read_file calls at once, say).
        let only = self.rng.chance(50).then(|| self.rng.pick(&TOOLS));
        let calls: Vec<(String, &str, String)> = (0..self.rng.between(0, 3))
            .map(|_| {
                self.next_id += 1;
                let args = json!({"q": text(&mut self.rng)}).to_string();
                let name = self.rng.pick(&TOOLS);
                (format!("id_{}", self.next_id), only.unwrap_or(name), args)
            })
            .collect();
        // How each call is made on the wire (Responses JSON only: the other routes make functions).
        let forms: Vec<CallForm> = calls
            .iter()
            .map(|_| match (self.format, route, self.rng.below(6)) {
                (Format::OpenAiResponses, Route::Json, 0) => CallForm::Custom,
                (Format::OpenAiResponses, Route::Json, 1) => CallForm::Computer,
                _ => CallForm::Function,
            })
            .collect();
        if route == Route::Json {
            self.json_step(said.as_deref(), &calls, &forms);
        } else {
            if let Some(said) = &said {
                self.window.push(Kind::Assistant, said).unwrap();
            }
            for (id, name, args) in &calls {
                match route {
                    Route::Call => drop(self.window.push_tool_call(id, name, args).unwrap()),
                    Route::LegacyText => drop(self.window.push_tool(Kind::ToolCall, id, &format!("{name}\n{args}")).unwrap()),
                    _ => drop(self.window.push(Kind::ToolCall, &format!("{name}\n{args}")).unwrap()),
                }
            }
        }
        if self.rng.chance(10) {
            self.render_and_check("calls open"); // a request rendered while calls still run
        }
        let mut order: Vec<usize> = (0..calls.len()).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, self.rng.below(i + 1));
        }
        let mut answered: Vec<usize> = order.into_iter().filter(|_| !self.rng.chance(15)).collect();
        if self.format == Format::Gemini && route == Route::Json && !self.gemini_ids {
            answered.sort(); // without ids, Gemini wants the responses in the order of the calls
        }
        if route == Route::Json {
            self.json_results(&calls, &forms, &answered);
        } else {
            for &c in &answered {
                let (id, _, _) = &calls[c];
                let output = text(&mut self.rng);
                match route {
                    Route::IdLess => drop(self.window.push(Kind::ToolResult, &output).unwrap()),
                    _ => drop(self.window.push_tool(Kind::ToolResult, id, &output).unwrap()),
                }
            }
        }
    }

    fn json_step(&mut self, said: Option<&str>, calls: &[(String, &str, String)], forms: &[CallForm]) {
        // Blank text stays in Anthropic's messages, as Anthropic's answers hold it: see `user`.
        let said = said.filter(|s| !s.trim().is_empty() || self.format == Format::Anthropic);
        match self.format {
            Format::OpenAiChat => {
                if said.is_none() && calls.is_empty() {
                    return;
                }
                let tool_calls: Vec<Value> = calls
                    .iter()
                    .map(|(id, name, args)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}}))
                    .collect();
                let mut message = json!({"role": "assistant", "content": said});
                if !tool_calls.is_empty() {
                    message["tool_calls"] = json!(tool_calls);
                }
                self.push_answer(message);
            }
            Format::OpenAiResponses => {
                let mut items = Vec::new();
                if self.rng.chance(8) {
                    // The provider compacted: everything before this item is archived.
                    items.push(
                        json!({"type": "compaction", "id": "cmp", "encrypted_content": "gAAAA".repeat(self.rng.between(1, 40))}),
                    );
                }
                if let Some(said) = said {
                    // An output message as the API returns it (the SDK's type for an output
                    // message in `input` requires its `id` and `status`).
                    self.next_id += 1;
                    items.push(json!({"type": "message", "id": format!("msg_{}", self.next_id), "role": "assistant",
                        "status": "completed", "content": [{"type": "output_text", "text": said, "annotations": []}]}));
                }
                if self.rng.chance(25) {
                    // A call OpenAI runs itself: it takes no output.
                    self.next_id += 1;
                    let id = format!("ws_{}", self.next_id);
                    items.push(match self.rng.below(3) {
                        0 => json!({"type": "web_search_call", "id": id, "status": "completed", "action": {"type": "search", "query": "q"}}),
                        1 => json!({"type": "file_search_call", "id": id, "status": "completed", "queries": ["q"]}),
                        _ => json!({"type": "code_interpreter_call", "id": id, "status": "completed", "container_id": "c", "code": "1+1", "outputs": []}),
                    });
                }
                for ((id, name, args), form) in calls.iter().zip(forms) {
                    items.push(match form {
                        CallForm::Function => json!({"type": "function_call", "call_id": id, "name": name, "arguments": args}),
                        CallForm::Custom => json!({"type": "custom_tool_call", "call_id": id, "name": name, "input": args}),
                        CallForm::Computer => json!({"type": "computer_call", "id": format!("cu_{id}"), "call_id": id,
                            "action": {"type": "screenshot"}, "pending_safety_checks": [], "status": "completed"}),
                    });
                }
                if !items.is_empty() {
                    self.push_answer(Value::Array(items));
                }
            }
            Format::Anthropic => {
                let mut blocks = Vec::new();
                if self.rng.chance(8) {
                    // The provider compacted (a null content is a failed compaction).
                    let mut block = match self.rng.chance(15) {
                        true => json!({"type": "compaction", "content": null}),
                        false => json!({"type": "compaction", "content": format!("Summary: {}", self.text_nonempty())}),
                    };
                    if self.rng.chance(50) {
                        block["cache_control"] = json!({"type": "ephemeral"});
                    }
                    blocks.push(block);
                }
                // Thinking, then a server tool Anthropic ran (its use and result), beside the
                // text and client calls: one message as the API returns it.
                let mut needles = Vec::new();
                if blocks.is_empty() && self.rng.chance(30) {
                    self.next_id += 1;
                    let n = self.next_id;
                    blocks.push(json!({"type": "thinking", "thinking": self.text_nonempty(), "signature": format!("asig_{n}")}));
                    blocks.push(json!({"type": "server_tool_use", "id": format!("srvtoolu_{n}"), "name": "web_search", "input": {"query": "q"}}));
                    blocks.push(json!({"type": "web_search_tool_result", "tool_use_id": format!("srvtoolu_{n}"), "content": []}));
                    needles = vec![vec![format!("\"asig_{n}\"")], vec![format!("\"id\":\"srvtoolu_{n}\"")]];
                }
                if let Some(said) = said {
                    blocks.push(json!({"type": "text", "text": said}));
                }
                for (id, name, args) in calls {
                    blocks.push(json!({"type": "tool_use", "id": id, "name": name, "input": serde_json::from_str::<Value>(args).unwrap()}));
                }
                if !blocks.is_empty() {
                    let first = self.window.message_count();
                    self.push_answer(json!({"role": "assistant", "content": blocks}));
                    for (i, needle) in needles.into_iter().enumerate() {
                        self.needles.insert(first + i, needle);
                    }
                }
            }
            Format::Gemini => {
                // Gemini sends calls without ids (Gemini 3 with them), and one thought
                // signature per step, on its first call (or on its text when it calls
                // nothing); agents call one function several times in a step and step
                // after step.
                let with_ids = self.rng.chance(25);
                let mut parts = Vec::new();
                let mut needles = Vec::new();
                self.next_id += 1;
                // Base64, as Gemini's are (the SDK types check it), and unique.
                let signature = format!("U0lH{:08}", self.next_id);
                let signed = self.rng.chance(60);
                if let Some(said) = said {
                    let mut part = json!({"text": said});
                    if signed && calls.is_empty() {
                        part["thoughtSignature"] = json!(signature);
                        needles.push(vec![format!("\"{signature}\"")]);
                    }
                    parts.push(part);
                }
                for (i, (id, name, args)) in calls.iter().enumerate() {
                    let mut args: Value = serde_json::from_str(args).unwrap();
                    args["k"] = json!(id); // unique: the needle of this call
                    let mut call = json!({"name": name, "args": args});
                    if with_ids {
                        call["id"] = json!(id);
                    }
                    let mut part = json!({"functionCall": call});
                    let mut needle = vec![format!("\"k\":\"{id}\"")];
                    if signed && i == 0 {
                        part["thoughtSignature"] = json!(signature);
                        needle.push(format!("\"{signature}\""));
                    }
                    needles.push(needle);
                    parts.push(part);
                }
                if !parts.is_empty() {
                    let first = self.window.message_count();
                    self.push_answer(json!({"role": "model", "parts": parts}));
                    // One ledger message per part here (text, then calls).
                    for (i, needle) in needles.into_iter().enumerate() {
                        let index = first + i + usize::from(said.is_some() && !calls.is_empty());
                        self.needles.insert(index, needle);
                    }
                    self.gemini_ids = with_ids;
                }
            }
        }
    }

    fn json_results(&mut self, calls: &[(String, &str, String)], forms: &[CallForm], answered: &[usize]) {
        if answered.is_empty() {
            return;
        }
        let outputs: Vec<String> = answered.iter().map(|_| text(&mut self.rng)).collect();
        let pairs = answered.iter().zip(&outputs).map(|(&c, output)| (&calls[c], output));
        match self.format {
            Format::OpenAiChat => {
                let messages: Vec<Value> =
                    pairs.map(|((id, _, _), out)| json!({"role": "tool", "tool_call_id": id, "content": out})).collect();
                self.push_json(Value::Array(messages));
            }
            Format::OpenAiResponses => {
                let items: Vec<Value> = answered
                    .iter()
                    .zip(pairs)
                    .map(|(&c, ((id, _, _), out))| match forms[c] {
                        CallForm::Function => json!({"type": "function_call_output", "call_id": id, "output": out}),
                        CallForm::Custom => json!({"type": "custom_tool_call_output", "call_id": id, "output": out}),
                        CallForm::Computer => json!({"type": "computer_call_output", "call_id": id,
                            "output": {"type": "computer_screenshot", "image_url": "https://example.com/s.png"}}),
                    })
                    .collect();
                self.push_json(Value::Array(items));
            }
            Format::Anthropic => {
                let blocks: Vec<Value> =
                    pairs.map(|((id, _, _), out)| json!({"type": "tool_result", "tool_use_id": id, "content": out})).collect();
                self.push_json(json!({"role": "user", "content": blocks}));
            }
            Format::Gemini => {
                let with_ids = self.gemini_ids;
                let parts: Vec<Value> = pairs
                    .map(|((id, name, _), out)| {
                        let mut response = json!({"name": name, "response": {"r": out}});
                        if with_ids {
                            response["id"] = json!(id);
                        }
                        json!({"functionResponse": response})
                    })
                    .collect();
                self.push_json(json!({"role": "user", "parts": parts}));
            }
        }
    }

    /// Something a long session does between turns: compaction, summaries, cuts, rewinds.
    fn maintenance(&mut self) {
        match self.rng.below(12) {
            0 => drop(self.window.compact()),
            1 => {
                let info = ErrorInfo {
                    category: ErrorCategory::ContextOverflow,
                    limit: None,
                    actual: None,
                    excess: Some(self.rng.between(1, 300) as i64),
                };
                let _ = self.window.recover(&info);
            }
            2 => {
                let _ = self.window.drop_oldest_turn();
            }
            3 => {
                let count = self.window.message_count();
                let keep = self.rng.between(count / 2, count);
                self.window.truncate(keep).unwrap();
                self.needles.retain(|&index, _| index < keep);
            }
            4 | 5 if (self.window.needs_summary() || self.rng.chance(50)) && self.window.summary_request().is_ok() => {
                let summary = format!("Summary: {}", self.text_nonempty());
                let _ = self.window.set_summary(self.window.generation(), &summary, 0);
            }
            _ => {}
        }
    }

    fn render_and_check(&self, when: &str) {
        let rules = Rules::of(self.format);
        let body = match json::render_request(&self.window, r#"{"model":"m","max_tokens":256}"#) {
            Ok(body) => body,
            Err(e) => {
                // Refused only when there is nothing to send.
                assert_eq!(e.kind(), ctxwin::ErrorKind::OutOfRange, "{when}: {e}");
                let sent = json::render_json(&self.window).unwrap();
                assert!(sent == "[]" || sent.starts_with("[{\"role\":\"system\""), "{when}: refused though {sent} is sent");
                return;
            }
        };
        let value: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{when}: not JSON ({e}): {body}"));
        if let Err(broken) = check(rules, &value) {
            panic!("{:?} {when}: {broken}\n{}", self.format, serde_json::to_string_pretty(&value).unwrap());
        }
        assert_eq!(value["model"], "m", "the base's keys are kept");
        if let Some(path) = std::env::var_os("CTXWIN_REQUEST_BODIES") {
            use std::io::Write;
            let line = json!({"format": self.format.key(), "body": value}).to_string() + "\n";
            let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).unwrap();
            file.write_all(line.as_bytes()).unwrap();
        }
        // Nothing is lost: the generator pushes well-formed steps, so the view leaves out no
        // call or result as a pairing defect, and every message it sends brings what is
        // unique to it (a Gemini call's arguments, a step's thought signature) to the body,
        // once.
        let lost: Vec<_> = self.window.pairing_defects().into_iter().filter(|d| d.problem.leaves_out()).collect();
        assert!(lost.is_empty(), "{:?} {when}: pairing defects {lost:?}", self.format);
        for item in (0..self.window.view_len()).filter_map(|i| self.window.view_item(i)) {
            let needles = self.needles.get(&item.index).filter(|_| item.item_type == ItemType::Message);
            for needle in needles.into_iter().flatten() {
                assert_eq!(
                    body.matches(needle.as_str()).count(),
                    1,
                    "{when}: {needle} of message {} sent once\n{body}",
                    item.index
                );
            }
        }
        // A compaction (the provider's or ours) archives: nothing it covers is sent but the
        // pinned messages.
        if let Some(record) = self.window.summary() {
            for item in (0..self.window.view_len()).filter_map(|i| self.window.view_item(i)) {
                let archived = (record.first_archived..=record.last_archived).contains(&item.index);
                let summary_item = item.item_type == ItemType::Synthetic && item.kind == Kind::User;
                assert!(
                    !archived || summary_item || self.window.is_pinned_at(item.index),
                    "{when}: archived {} sent",
                    item.index
                );
            }
        }
        // Every cancelled result sent is counted: the view's own (for calls that take an
        // answer) and those the render adds for the running turn's open calls.
        let sent = body.matches(CANCELLED_RESULT).count();
        let in_view = (0..self.window.view_len())
            .filter_map(|i| self.window.view_item(i))
            .filter(|item| item.item_type == ItemType::Synthetic && item.text == Some(CANCELLED_RESULT))
            .filter(|item| self.window.message(item.index).is_some_and(|call| WireCallForm::of(call).cancellable()))
            .count();
        assert_eq!(
            sent,
            in_view + self.window.running_cancelled(),
            "{:?} {when}: cancelled results sent vs counted\n{body}",
            self.format
        );
    }
}

/// Sessions whose provider compacted (an Anthropic `compaction` block or a Responses
/// `compaction` item archived turns), so the generator is seen to cover them.
static PROVIDER_COMPACTIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn run_session(seed: u64, format: Format, strategy: &str) {
    let mut session = Session::new(seed, format, strategy);
    if session.rng.chance(50) {
        let prompt = session.text_nonempty();
        session.window.push(Kind::System, &prompt).unwrap();
    }
    for _ in 0..session.rng.between(1, 7) {
        session.user();
        for _ in 0..session.rng.between(0, 3) {
            session.step();
        }
        if session.rng.chance(60) {
            let answer = text(&mut session.rng);
            session.window.push(Kind::Assistant, &answer).unwrap();
        }
        session.window.end_turn();
        session.maintenance();
        session.render_and_check("after a turn");
    }
    if session.window.compactions().iter().any(|record| record.provider) {
        PROVIDER_COMPACTIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

fn sessions(format: Format, strategy: &str) {
    if let Some(seed) = std::env::var("CTXWIN_REQUEST_SEED").ok().and_then(|s| s.parse().ok()) {
        return run_session(seed, format, strategy);
    }
    let count: u64 = std::env::var("CTXWIN_REQUEST_SESSIONS").ok().and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let base = (format as u64) << 40 | (strategy.len() as u64) << 32;
    for i in 0..count {
        let seed = base | i;
        let outcome = std::panic::catch_unwind(|| run_session(seed, format, strategy));
        if let Err(panic) = outcome {
            eprintln!("failing session: CTXWIN_REQUEST_SEED={seed} ({format:?}, {strategy})");
            std::panic::resume_unwind(panic);
        }
    }
    if count >= 1000 && matches!(format, Format::Anthropic | Format::OpenAiResponses) {
        assert!(PROVIDER_COMPACTIONS.load(std::sync::atomic::Ordering::Relaxed) > 0, "no session compacted");
    }
}

macro_rules! combinations {
    ($($name:ident: $format:expr, $strategy:expr;)*) => {$(
        #[test]
        fn $name() {
            sessions($format, $strategy);
        }
    )*};
}

combinations! {
    chat_sliding: Format::OpenAiChat, "sliding";
    chat_drop_oldest: Format::OpenAiChat, "drop_oldest";
    chat_tiered: Format::OpenAiChat, "tiered";
    chat_monologue: Format::OpenAiChat, "monologue";
    chat_summary: Format::OpenAiChat, "summary";
    responses_sliding: Format::OpenAiResponses, "sliding";
    responses_drop_oldest: Format::OpenAiResponses, "drop_oldest";
    responses_tiered: Format::OpenAiResponses, "tiered";
    responses_monologue: Format::OpenAiResponses, "monologue";
    responses_summary: Format::OpenAiResponses, "summary";
    anthropic_sliding: Format::Anthropic, "sliding";
    anthropic_drop_oldest: Format::Anthropic, "drop_oldest";
    anthropic_tiered: Format::Anthropic, "tiered";
    anthropic_monologue: Format::Anthropic, "monologue";
    anthropic_summary: Format::Anthropic, "summary";
    gemini_sliding: Format::Gemini, "sliding";
    gemini_drop_oldest: Format::Gemini, "drop_oldest";
    gemini_tiered: Format::Gemini, "tiered";
    gemini_monologue: Format::Gemini, "monologue";
    gemini_summary: Format::Gemini, "summary";
}

/// The checker refuses what the providers refuse: the bodies the issue found, and one
/// broken rule of each kind, while the fixed forms pass.
#[test]
fn the_checker_refuses_what_providers_refuse() {
    let call = |id: &str| json!({"id": id, "type": "function", "function": {"name": "read", "arguments": "{}"}});
    let tool = |id: &str| json!({"role": "tool", "tool_call_id": id, "content": "x"});
    let user = json!({"role": "user", "content": "hi"});
    let split = json!({"messages": [user, {"role": "assistant", "content": null, "tool_calls": [call("t1")]},
        {"role": "assistant", "content": null, "tool_calls": [call("t2")]}, tool("t1"), tool("t2")]});
    assert!(check(Rules::Chat, &split).is_err());
    let whole = json!({"messages": [user, {"role": "assistant", "content": null, "tool_calls": [call("t1"), call("t2")]}, tool("t2"), tool("t1")]});
    assert_eq!(check(Rules::Chat, &whole), Ok(()));
    let empty_id = json!({"messages": [user, {"role": "assistant", "content": null, "tool_calls": [call("")]}, tool("")]});
    assert!(check(Rules::Chat, &empty_id).is_err());
    assert!(check(Rules::Chat, &json!({"messages": [user, tool("t1")]})).is_err());
    assert!(check(Rules::Chat, &json!({"messages": [{"role": "assistant", "content": ""}]})).is_err());

    let use_block = |id: &str| json!({"type": "tool_use", "id": id, "name": "read", "input": {}});
    let result_block = |id: &str| json!({"type": "tool_result", "tool_use_id": id, "content": "x"});
    let two_assistants = json!({"messages": [{"role": "user", "content": "hi"},
        {"role": "assistant", "content": [use_block("t1")]}, {"role": "assistant", "content": [use_block("t2")]},
        {"role": "user", "content": [result_block("t1"), result_block("t2")]}]});
    assert!(check(Rules::Anthropic, &two_assistants).is_err());
    let text_first = json!({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [use_block("t1")]},
        {"role": "user", "content": [{"type": "text", "text": "and"}, result_block("t1")]}]});
    assert!(check(Rules::Anthropic, &text_first).is_err());
    let fine = json!({"system": [{"type": "text", "text": "Be brief."}], "messages": [{"role": "user", "content": "hi"},
        {"role": "assistant", "content": [use_block("t1")]}, {"role": "user", "content": [result_block("t1"), {"type": "text", "text": "and"}]}]});
    assert_eq!(check(Rules::Anthropic, &fine), Ok(()));
    assert!(check(Rules::Anthropic, &json!({"messages": [{"role": "system", "content": "x"}]})).is_err());
    assert!(check(Rules::Anthropic, &json!({"messages": [{"role": "assistant", "content": "x"}]})).is_err());
    // "text content blocks must contain non-whitespace text": a string content, a text block,
    // a tool result's text block and a system block alike.
    let hi = json!({"role": "user", "content": "hi"});
    for blank in ["", " ", "\n\t "] {
        let said = |content: Value| json!({"messages": [hi, {"role": "assistant", "content": content}]});
        assert!(check(Rules::Anthropic, &said(json!(blank))).is_err(), "{blank:?}");
        assert!(check(Rules::Anthropic, &said(json!([{"type": "text", "text": blank}, use_block("t")]))).is_err(), "{blank:?}");
        let result = json!({"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": blank}]});
        let answered =
            json!({"messages": [hi, {"role": "assistant", "content": [use_block("t")]}, {"role": "user", "content": [result]}]});
        assert!(check(Rules::Anthropic, &answered).is_err(), "{blank:?}");
        assert!(check(Rules::Anthropic, &json!({"system": [{"type": "text", "text": blank}], "messages": [hi]})).is_err());
    }
    assert_eq!(check(Rules::Anthropic, &json!({"messages": [{"role": "user", "content": " hi "}]})), Ok(()));

    let model = |name: &str| json!({"role": "model", "parts": [{"functionCall": {"name": name, "args": {}}}]});
    let response = |name: &str| json!({"role": "user", "parts": [{"functionResponse": {"name": name, "response": {}}}]});
    let hi = json!({"role": "user", "parts": [{"text": "hi"}]});
    assert_eq!(check(Rules::Gemini, &json!({"contents": [hi, model("ls"), response("ls")]})), Ok(()));
    assert!(check(Rules::Gemini, &json!({"contents": [model("ls"), response("ls")]})).is_err(), "starts with the model");
    assert!(check(Rules::Gemini, &json!({"contents": [hi, model("ls"), response("cat")]})).is_err());
    assert!(check(Rules::Gemini, &json!({"contents": [model("ls"), model("cat"), response("ls"), response("cat")]})).is_err());
    let user_text = json!({"role": "user", "parts": [{"text": "and"}]});
    assert!(
        check(Rules::Gemini, &json!({"contents": [user_text, model("ls"), response("ls"), user_text]})).is_err(),
        "two user contents in a row"
    );
    assert!(check(Rules::Gemini, &json!({"contents": [user_text, user_text]})).is_err());
    let answered_and_said =
        json!({"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {}}}, {"text": "and"}]});
    assert_eq!(check(Rules::Gemini, &json!({"contents": [user_text, model("ls"), answered_and_said]})), Ok(()));

    let function_call = json!({"type": "function_call", "call_id": "c", "name": "ls", "arguments": "{}"});
    let output = json!({"type": "function_call_output", "call_id": "c", "output": "x"});
    assert_eq!(check(Rules::Responses, &json!({"input": [function_call, output]})), Ok(()));
    assert!(check(Rules::Responses, &json!({"input": [output, function_call]})).is_err());
    assert!(check(Rules::Responses, &json!({"input": [function_call, output, output]})).is_err());
    assert!(check(Rules::Responses, &json!({"input": [function_call]})).is_err());
    let web_search = json!({"type": "web_search_call", "id": "ws", "status": "completed"});
    assert_eq!(check(Rules::Responses, &json!({"input": [web_search]})), Ok(()), "a built-in call takes no output");
    let ws_output = json!({"type": "function_call_output", "call_id": "ws", "output": "x"});
    assert!(check(Rules::Responses, &json!({"input": [web_search, ws_output]})).is_err(), "an output for a built-in call");
    let custom = json!({"type": "custom_tool_call", "call_id": "k", "name": "patch", "input": "x"});
    let custom_output = json!({"type": "custom_tool_call_output", "call_id": "k", "output": "x"});
    let wrong_output = json!({"type": "function_call_output", "call_id": "k", "output": "x"});
    assert_eq!(check(Rules::Responses, &json!({"input": [custom, custom_output]})), Ok(()));
    assert!(check(Rules::Responses, &json!({"input": [custom, wrong_output]})).is_err(), "the output type must match the call");
    assert!(
        check(
            Rules::Responses,
            &json!({"input": [{"type": "computer_call", "id": "cu", "call_id": "cc", "status": "completed"}]})
        )
        .is_err()
    );
    assert!(check(Rules::Responses, &json!({"input": [{"type": "compaction", "encrypted_content": ""}]})).is_err());

    // A whole response object sent back as a message (issue 26 item 2).
    let said = json!({"role": "user", "content": "hi"});
    let message = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "x"}], "stop_reason": "end_turn", "usage": {}});
    assert!(check(Rules::Anthropic, &json!({"messages": [said, message]})).is_err());
    let gemini_response = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "x"}]}}], "role": "model", "parts": [{"text": "x"}]});
    assert!(check(Rules::Gemini, &json!({"contents": [user_text, gemini_response]})).is_err());
    let response =
        json!({"id": "resp_1", "object": "response", "output": [{"type": "message", "role": "assistant", "content": "x"}]});
    assert!(check(Rules::Responses, &json!({"input": [said, response]})).is_err());
}
