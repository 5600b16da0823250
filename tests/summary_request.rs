//! `summary_request: "conversation"`: the summary request is the conversation the agent last
//! sent (so a provider serves it from its prompt cache) and one final user instruction, in
//! every format, valid by each provider's structural rules (tests/support/provider_rules.rs),
//! and `set_summary` answers it exactly as it answers the standalone request.

#[path = "support/provider_rules.rs"]
mod provider_rules;

use ctxwin::error::ErrorKind;
use ctxwin::json::{render_json, summary_request};
use ctxwin::summary::conversation::{Kept, instruction};
use ctxwin::{Kind, Window};
use provider_rules::{Rules, check};
use serde_json::{Value, json};

const FORMATS: [(&str, Rules, &str); 4] = [
    ("openai_chat", Rules::Chat, "messages"),
    ("openai_responses", Rules::Responses, "input"),
    ("anthropic", Rules::Anthropic, "messages"),
    ("gemini", Rules::Gemini, "contents"),
];

fn window(config: &str, format: &str, mode: &str) -> Window {
    let mut window = Window::new("gpt-4o");
    let config = format!(r#"{{"format":"{format}","summary_request":"{mode}",{config}}}"#);
    window.configure(&config).unwrap();
    window
}

/// One tool-using turn; the agent prepares and renders before each request. Returns the
/// last request rendered.
fn turn(window: &mut Window, turn: usize, lines: usize) -> Vec<Value> {
    window.push(Kind::User, &format!("Task {turn}: make test_{turn} pass.")).unwrap();
    window.prepare().unwrap();
    window.push_tool(Kind::ToolCall, &format!("c{turn}"), &format!("read_file\n{{\"path\":\"src/m{turn}.rs\"}}")).unwrap();
    let output: String = (0..lines).map(|l| format!("{l:>4} | let v{l} = f({turn});\n")).collect();
    window.push_tool(Kind::ToolResult, &format!("c{turn}"), &output).unwrap();
    window.prepare().unwrap();
    let sent: Vec<Value> = serde_json::from_str(&render_json(window).unwrap()).unwrap();
    window.push(Kind::Assistant, &format!("Fixed task {turn}.")).unwrap();
    window.end_turn();
    sent
}

fn text_of(message: &Value) -> String {
    message.to_string()
}

#[test]
fn the_conversation_then_one_instruction_in_every_format() {
    for (format, rules, key) in FORMATS {
        let config = r#""strategy":"summary","context_limit":6000,"output_reserve":800,"summary_budget":400"#;
        let (mut conversation, mut standalone) = (window(config, format, "conversation"), window(config, format, "standalone"));
        let mut sent = Vec::new();
        let mut turns = 0;
        while !conversation.needs_summary() {
            sent = turn(&mut conversation, turns, 12);
            turn(&mut standalone, turns, 12);
            turns += 1;
            assert!(turns < 100, "{format}: the summary never became due");
        }
        assert!(standalone.needs_summary());
        let now: Vec<Value> = serde_json::from_str(&render_json(&conversation).unwrap()).unwrap();
        let request: Vec<Value> = serde_json::from_str(&summary_request(&mut conversation).unwrap()).unwrap();
        // The last request sent is a prefix, byte for byte: the provider's cache serves it.
        assert!(sent.len() < request.len(), "{format}");
        assert_eq!(request[..sent.len()], sent[..], "{format}: the request starts with the last request sent");
        assert_eq!(request[..now.len()], now[..], "{format}: then the conversation as it stands");
        assert_eq!(request.len(), now.len() + 1, "{format}: and one message more");
        let last = request.last().unwrap();
        assert_eq!(last["role"], "user", "{format}: {last}");
        let instruction = text_of(last);
        // The summary strategy archives the oldest turns, down to low_water: the instruction
        // quotes where the kept part starts.
        let end_step = conversation.pending_summary().unwrap().end_step;
        let end = conversation.turn_of(conversation.step_starts()[end_step]).unwrap();
        assert_eq!(conversation.turn_info(end).unwrap().first_message, conversation.step_starts()[end_step]);
        assert!(0 < end && end < turns, "{format}: {end} of {turns}");
        let kept = format!("Task {end}: make test_{end} pass.");
        assert!(
            instruction.contains(&format!("begins \\\"{kept}\\\"")),
            "{format}: names where the kept turn starts: {instruction}"
        );
        assert!(instruction.contains("[done] or [pending]") && instruction.contains("at most 400 tokens"), "{format}");
        assert_eq!(check(rules, &json!({ key: request })), Ok(()), "{format}: {request:?}");
        // The instruction is what is billed in full: far smaller than the standalone prompt.
        let prompt = summary_request(&mut standalone).unwrap();
        let (model, instruction_tokens) = (conversation.model().clone(), conversation.model().count(&instruction).tokens);
        assert!(instruction_tokens * 4 < model.count(&prompt).tokens, "{format}: {instruction_tokens} tokens of instruction");
        // set_summary answers both the same way. The conversation covers every turn to
        // archive at once (they are in it already); the standalone prompt, as many as fit its
        // budget, the rest in further parts (asked for by hand: once live tokens are under the
        // threshold, needs_summary no longer says so).
        let summary = "Original task: make the tests pass. [done] all but the last.";
        conversation.set_summary(conversation.generation(), summary, 7).unwrap();
        assert!(!conversation.needs_summary(), "{format}");
        assert_eq!(conversation.archived_turns(), end, "{format}");
        standalone.set_summary(standalone.generation(), summary, 7).unwrap();
        while standalone.archived_turns() < end {
            summary_request(&mut standalone).unwrap();
            standalone.set_summary(standalone.generation(), summary, 8).unwrap();
        }
        assert_eq!(conversation.archived_turns(), standalone.archived_turns(), "{format}");
        assert_eq!(conversation.live_tokens(), standalone.live_tokens(), "{format}");
        // The next summary rolls up the one in place, which the conversation starts with.
        while !conversation.needs_summary() {
            turn(&mut conversation, turns, 12);
            turns += 1;
        }
        let request: Vec<Value> = serde_json::from_str(&summary_request(&mut conversation).unwrap()).unwrap();
        // The task is pinned: it comes first, the summary in place right after it (in the same
        // user message where roles alternate).
        let head = text_of(&request[0]) + &text_of(&request[1]);
        let (task, summary) = (head.find("Task 0:"), head.find("Original task: make the tests pass."));
        assert!(task.is_some() && summary.is_some() && task < summary, "{format}: {head}");
        assert!(text_of(request.last().unwrap()).contains("must absorb"), "{format}");
        assert_eq!(check(rules, &json!({ key: request })), Ok(()), "{format}");
    }
}

/// Asked mid-turn, after a tool result: Anthropic and Gemini alternate roles, so the
/// instruction joins the last user message (its tool results first) instead of following it.
#[test]
fn mid_turn_the_instruction_joins_the_last_user_message_where_roles_alternate() {
    for (format, rules, key) in FORMATS {
        // A low water mark this low archives every turn but the running one.
        let config = r#""strategy":"summary","context_limit":6000,"output_reserve":800,"summary_budget":400,"low_water":0.01"#;
        let mut window = window(config, format, "conversation");
        for t in 0..3 {
            turn(&mut window, t, 12);
        }
        window.push(Kind::User, "Task 3: one more.").unwrap();
        window.push_tool(Kind::ToolCall, "c3", "ls\n{}").unwrap();
        window.push_tool(Kind::ToolResult, "c3", "src/").unwrap();
        let (now, request) = sent_then_request(&mut window, rules, key, format);
        let joined = matches!(rules, Rules::Anthropic | Rules::Gemini);
        assert_eq!(request.len(), now.len() + usize::from(!joined), "{format}");
        let shared = now.len() - usize::from(joined);
        assert_eq!(request[..shared], now[..shared], "{format}");
        let last = text_of(request.last().unwrap());
        assert!(last.contains("begins \\\"Task 3: one more.\\\""), "{format}: {last}");
        assert_eq!(last.contains("src/"), joined, "{format}: the tool result shares the message: {last}");
        window.set_summary(window.generation(), "Three tasks done.", 1).unwrap();
        assert_eq!(window.archived_turns(), 3, "{format}");
    }
}

/// With the sliding window the steps to archive have left the view (whole turns, and the
/// oldest steps of the first turn still sent): their transcript goes into the final
/// message, after the conversation still sent, and ends where the view starts.
#[test]
fn turns_that_left_the_view_come_as_a_transcript() {
    let mut window = window(r#""history_budget":1500,"low_water":1,"summary_budget":300"#, "openai_chat", "conversation");
    let mut turns = 0;
    while window.first_live_turn() < 2 {
        turn(&mut window, turns, 20);
        turns += 1;
    }
    assert!(window.needs_summary());
    let (pruned, start) = (window.first_live_turn(), window.start());
    let now: Vec<Value> = serde_json::from_str(&render_json(&window).unwrap()).unwrap();
    let request: Vec<Value> = serde_json::from_str(&summary_request(&mut window).unwrap()).unwrap();
    assert_eq!(request[..now.len()], now[..]);
    let last = request.last().unwrap()["content"].as_str().unwrap().to_owned();
    assert!(last.contains("[message 0] USER:\nTask 0: make test_0 pass."), "{last}");
    assert!(last.contains(&format!("[message {}]", start - 1)), "every step that left the view: {last}");
    assert!(!last.contains(&format!("[message {start}]")), "only what left the view: {last}");
    window.set_summary(window.generation(), "Earlier tasks done.", 1).unwrap();
    assert_eq!(window.archived_turns(), pruned);
    assert_eq!(window.summary().unwrap().last_archived + 1, start);
    assert!(!window.needs_summary());
}

/// The summary request of `window`, parsed, which must pass `rules` (under `key`); `case`
/// names the case when it fails.
fn checked_request(window: &mut Window, rules: Rules, key: &str, case: &str) -> Vec<Value> {
    let request = summary_request(window).unwrap_or_else(|e| panic!("{case}: {e}"));
    let request: Vec<Value> = serde_json::from_str(&request).unwrap();
    assert_eq!(check(rules, &json!({ key: request })), Ok(()), "{case}: {request:?}");
    request
}

/// The conversation `window` sends now, then its summary request ([`checked_request`]).
fn sent_then_request(window: &mut Window, rules: Rules, key: &str, case: &str) -> (Vec<Value>, Vec<Value>) {
    let now: Vec<Value> = serde_json::from_str(&render_json(window).unwrap()).unwrap();
    (now, checked_request(window, rules, key, case))
}

/// Tokens of `request` (a conversation array in `format`) as a fresh window counts it, parsed
/// back: what the provider is sent.
fn request_tokens(format: &str, request: &[Value]) -> u64 {
    let mut fresh = window(r#""context_limit":1000000"#, format, "conversation");
    ctxwin::json::push_json(&mut fresh, &Value::from(request.to_vec()).to_string()).unwrap();
    u64::from(fresh.live_tokens().tokens)
}

/// A conversation too large for the room the answer needs is sent cut after a step: the
/// newest turns that stay go first, it starts as the conversation sent does, and it fits;
/// when the steps to summarise must go too, the request covers fewer. One that cannot fit
/// at all is refused, naming the way out, and nothing is remembered.
#[test]
fn a_conversation_too_large_is_cut_after_a_step_and_one_that_cannot_fit_is_refused() {
    for (format, rules, key) in FORMATS {
        let config = r#""strategy":"summary","context_limit":6000,"output_reserve":200,"summary_budget":2500,"threshold":0.95"#;
        let mut window = window(config, format, "conversation");
        let mut turns = 0;
        while u64::from(window.live_tokens().tokens) < 4000 {
            turn(&mut window, turns, 12);
            turns += 1;
        }
        let (now, request) = sent_then_request(&mut window, rules, key, format);
        let shown = request.len() - 1;
        assert!(shown < now.len(), "{format}: the newest messages are left out");
        assert_eq!(request[..shown], now[..shown], "{format}: the request starts as the conversation sent");
        let instruction = text_of(request.last().unwrap());
        assert!(instruction.contains("Stop working on the task now") && instruction.contains("at most 2500 tokens"));
        // Counted back from the JSON, less what that count adds to the conversation sent over
        // the window's own count (Gemini's tool results are JSON objects).
        let over = request_tokens(format, &now) - u64::from(window.live_tokens().tokens);
        let tokens = request_tokens(format, &request) - over;
        assert!(tokens <= 6000 - 2500, "{format}: {tokens} tokens");
        assert!(tokens > 6000 - 2500 - 600, "{format}: {tokens} tokens, more could have been sent");
        // The summary strategy archives the oldest turns, down to low_water: the kept part
        // starts in the conversation sent, and the request covers every turn to archive.
        let pending = window.pending_summary().unwrap();
        let kept = window.turn_of(window.step_starts()[pending.end_step]).unwrap();
        assert!(instruction.contains(&format!("begins \\\"Task {kept}: make test_{kept} pass.")), "{format}: {instruction}");
        window.set_summary(window.generation(), "Tasks done.", 1).unwrap();
        assert_eq!(window.archived_turns(), kept, "{format}");

        // A larger answer leaves room for fewer turns than the summary strategy archives:
        // the request covers the oldest ones, and a summary is still due for the rest.
        let config = r#""strategy":"summary","context_limit":6000,"output_reserve":200,"summary_budget":4000,"threshold":0.95,"low_water":0.01"#;
        let mut window = crate::window(config, format, "conversation");
        for turn_index in 0..turns {
            turn(&mut window, turn_index, 12);
        }
        let target = window.summary_steps().unwrap();
        let (now, request) = sent_then_request(&mut window, rules, key, format);
        let over = request_tokens(format, &now) - u64::from(window.live_tokens().tokens);
        assert!(request_tokens(format, &request) - over <= 2000, "{format}");
        let pending = window.pending_summary().unwrap();
        assert!(target.start < pending.end_step && pending.end_step < target.end, "{format}: {pending:?} of {target:?}");
        assert!(text_of(request.last().unwrap()).contains("every message above will be removed"), "{format}");
        window.set_summary(window.generation(), "The first tasks done.", 1).unwrap();
        assert_eq!(window.summary_steps().unwrap().start, pending.end_step, "{format}: the rest is still to summarise");

        // No cut leaves room for the instruction: refused, nothing remembered.
        let config = r#""strategy":"summary","context_limit":6000,"output_reserve":200,"summary_budget":5950,"threshold":0.95,"low_water":0.01"#;
        let mut window = crate::window(config, format, "conversation");
        for turn_index in 0..3 {
            turn(&mut window, turn_index, 12);
        }
        let before = ctxwin::persist::export(&window);
        let err = summary_request(&mut window).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::OutOfRange);
        assert!(err.message().contains("\"standalone\"") && err.message().contains("summary_budget 5950"), "{}", err.message());
        assert!(window.pending_summary().is_none());
        assert_eq!(ctxwin::persist::export(&window), before);
    }
}

/// The oldest step to archive is too large for the room the answer leaves (a file read of
/// most of the window, with `summary_budget` above `output_reserve`), so no cut of the
/// conversation holds it: the request is the conversation before the steps to archive, then
/// the steps as a transcript in the instruction, the large output clipped, in every format.
/// It fits, and its answer archives the step, after which the view is well within the
/// limit. (Refused before, for as long as the step stayed.)
#[test]
fn a_step_too_large_for_any_cut_comes_as_a_clipped_transcript() {
    for (format, rules, key) in FORMATS {
        let config = r#""strategy":"summary","context_limit":6000,"output_reserve":200,"summary_budget":2500,"threshold":0.9,"low_water":0.5"#;
        let mut window = window(config, format, "conversation");
        window.push(Kind::System, "You are a coding agent. Keep answers short.").unwrap();
        turn(&mut window, 0, 350);
        let large = u64::from(window.live_tokens().tokens);
        assert!((3600..5000).contains(&large), "{format}: {large} tokens after the large read");
        let mut turns = 1;
        while !window.needs_summary() {
            turn(&mut window, turns, 3);
            turns += 1;
        }
        let (now, request) = sent_then_request(&mut window, rules, key, format);
        // Only the system message is shown (Chat and Responses send it as a message; Anthropic
        // and Gemini take it beside the messages), as the conversation sent starts.
        let shown = request.len() - 1;
        assert_eq!(request[..shown], now[..shown], "{format}: the request starts as the conversation sent");
        assert_eq!(shown, usize::from(matches!(format, "openai_chat" | "openai_responses")), "{format}: {request:?}");
        let instruction = text_of(request.last().unwrap());
        assert!(instruction.contains("The work to summarise:"), "{format}: {instruction}");
        assert!(instruction.contains("Task 0: make test_0 pass.") && instruction.contains("read_file"), "{format}");
        assert!(instruction.contains("   0 | let v0 = f(0);"), "{format}: the output's head is in the transcript");
        assert!(!instruction.contains(" 349 | let v349 = f(0);"), "{format}: the output is clipped");
        let over = request_tokens(format, &now) - u64::from(window.live_tokens().tokens);
        let tokens = request_tokens(format, &request) - over;
        assert!(tokens <= 6000 - 2500, "{format}: {tokens} tokens");
        let pending = window.pending_summary().unwrap();
        assert_eq!(pending.first_step, 0, "{format}");
        window.set_summary(window.generation(), "Task 0 done: read src/m0.rs.", 1).unwrap();
        assert!(window.archived_steps() >= 1, "{format}");
        assert!(u64::from(window.live_tokens().tokens) < large / 2, "{format}: the large read is archived");
        window.prepare().unwrap();
    }
}

/// The same after a summary: the summary in place is shown before the transcript, and the
/// instruction asks to absorb it.
#[test]
fn a_step_too_large_for_any_cut_after_a_summary_rolls_it_up() {
    for (format, rules, key) in FORMATS {
        let config = r#""strategy":"summary","context_limit":6000,"output_reserve":200,"summary_budget":2500,"threshold":0.9,"low_water":0.01,"keep_recent_steps":1"#;
        let mut window = window(config, format, "conversation");
        let mut turns = 0;
        while !window.needs_summary() {
            turn(&mut window, turns, 12);
            turns += 1;
        }
        summary_request(&mut window).unwrap();
        window.set_summary(window.generation(), "Tasks before done.", 1).unwrap();
        let large = turns;
        turn(&mut window, large, 300);
        while !window.needs_summary() {
            turns += 1;
            turn(&mut window, turns, 3);
        }
        // Every summary due, down to the strategy's target: one of the requests has the large
        // read oldest.
        let mut rolled_up = 0;
        while window.summary_steps().is_ok() {
            let request = checked_request(&mut window, rules, key, format);
            let text = text_of(&Value::from(request));
            if let Some(transcript_at) = text.find("The work to summarise:") {
                assert!(text.find("Tasks before done.").is_some_and(|at| at < transcript_at), "{format}: {text}");
                assert!(text.contains("must absorb it") && text.contains(&format!("make test_{large} pass")), "{format}: {text}");
                rolled_up += 1;
            }
            window.set_summary(window.generation(), "Tasks before done.", 2).unwrap();
        }
        assert_eq!(rolled_up, 1, "{format}");
        window.prepare().unwrap();
    }
}

/// The setting is saved with the window, and a window refused a conversation request can
/// switch to the standalone one.
#[test]
fn the_setting_is_saved_and_standalone_is_the_way_out() {
    let config = r#""strategy":"summary","context_limit":6000,"output_reserve":200,"summary_budget":5950,"threshold":0.95,"low_water":0.01"#;
    let mut window = window(config, "anthropic", "conversation");
    for turn_index in 0..3 {
        turn(&mut window, turn_index, 12);
    }
    assert_eq!(summary_request(&mut window).unwrap_err().kind(), ErrorKind::OutOfRange);
    window.configure(r#"{"summary_request":"standalone","summary_budget":2500}"#).unwrap();
    let prompt = summary_request(&mut window).unwrap();
    assert!(prompt.starts_with("You are compacting"));
    window.set_summary(window.generation(), "Done so far.", 1).unwrap();
    window.configure(r#"{"summary_request":"conversation"}"#).unwrap();
    let restored = ctxwin::persist::import(&ctxwin::persist::export(&window)).unwrap();
    assert_eq!(restored.settings().summary_request, ctxwin::config::SummaryRequest::Conversation);
}

/// A one-task tool loop with `history_budget: "auto"`, its view as large as the room the
/// context limit leaves, the agent asking for a summary as soon as one is due (after a
/// step's results, before the next `prepare`): every request is the conversation and fits
/// (cut after a step where it must), in every format and at small and large limits,
/// starting as the conversation sent does, and the answer archives what it covered.
#[test]
fn a_one_task_loop_at_its_limit_always_gets_a_conversation_request() {
    for (format, rules, key) in FORMATS {
        for limit in [8_000u32, 12_000] {
            // summary_budget is the default, 2000 tokens, and output_reserve a quarter of the
            // limit: 2000 and 3000 tokens, so the view leaves little or no room for the
            // instruction.
            let config = format!(r#""strategy":"summary","history_budget":"auto","context_limit":{limit}"#);
            let mut window = window(&config, format, "conversation");
            window.push(Kind::User, "Make every test in the crate pass.").unwrap();
            let (mut summaries, mut cut) = (0, 0);
            for step in 0..160usize {
                window.prepare().unwrap();
                // One to three parallel reads, one in ten a whole file.
                let calls = 1 + step % 3;
                for call in 0..calls {
                    let args = format!("{{\"path\":\"src/m{step}_{call}.rs\"}}");
                    window.push_tool_call(&format!("call_{step}_{call}"), "read_file", &args).unwrap();
                }
                for call in 0..calls {
                    let lines = if (step + call) % 10 == 0 { 150 } else { 2 + (step * 7 + call) % 20 };
                    let output: String = (0..lines).map(|l| format!("{l:>4} | let v{l} = compute({step}, {l});\n")).collect();
                    window.push_tool(Kind::ToolResult, &format!("call_{step}_{call}"), &output).unwrap();
                }
                if !window.needs_summary() {
                    continue;
                }
                let (now, request) = sent_then_request(&mut window, rules, key, &format!("{format} {limit} step {step}"));
                // Counted back from the JSON, less what that count adds to the conversation
                // sent over the window's own count (Gemini's tool results are JSON objects).
                let over = request_tokens(format, &now) - u64::from(window.live_tokens().tokens);
                let tokens = request_tokens(format, &request) - over;
                assert!(tokens <= u64::from(limit - 2000), "{format} {limit} step {step}: {tokens} tokens");
                // All but the last message are the conversation's (where roles alternate the
                // instruction may join its last message).
                let shared = request.len() - 1;
                assert_eq!(request[..shared], now[..shared], "{format} {limit} step {step}");
                // Cut when the newest step's reads are not in it.
                cut += usize::from(!Value::from(request.clone()).to_string().contains(&format!("src/m{step}_0.rs")));
                summaries += 1;
                let pending = window.pending_summary().unwrap();
                window.set_summary(window.generation(), &format!("Summary {summaries}: tests being fixed."), 1).unwrap();
                assert_eq!(
                    window.summary().unwrap().last_archived + 1,
                    window.step_starts()[pending.end_step],
                    "{format} {limit}"
                );
            }
            eprintln!("{format} {limit}: {summaries} summaries, {cut} of them cut");
            assert!(summaries >= 2 && cut > 0, "{format} {limit}: {summaries} summaries, {cut} cut");
        }
    }
}

/// A one-task loop of seven `ls` steps: the task padded with `pad` words, the first step's
/// output `first_lines` lines, the others one; `after` runs after each step.
fn listing_loop(window: &mut Window, pad: usize, first_lines: usize, mut after: impl FnMut(&mut Window, usize)) {
    window.push(Kind::User, &format!("Make every test in the crate pass.{}", " x".repeat(pad))).unwrap();
    for step in 0..7 {
        let id = format!("c{step}");
        window.push_tool_call(&id, "sh", &format!("{{\"cmd\":\"ls d{step}\"}}")).unwrap();
        let lines = if step == 0 { first_lines } else { 1 };
        let output: String = (0..lines).map(|l| format!("file_{l}_{step}.rs\n")).collect();
        window.push_tool(Kind::ToolResult, &id, &output).unwrap();
        after(window, step);
    }
}

/// The instruction is shorter once nothing stays (the conversation cut right after the steps
/// to archive) than while steps stay: a cut that falls short with the longer one must not
/// rule out the next. A one-task loop of one large step to archive and small newest steps,
/// the task's length shifting every cut by a token: whenever the conversation cut after the
/// large step fits with its instruction, as the window counts them, the request is given and
/// covers that step (the old search refused some).
#[test]
fn a_cut_after_the_steps_to_archive_is_tried_after_one_with_steps_kept_fell_short() {
    let config = r#""strategy":"summary","output_reserve":200,"summary_budget":2500,"low_water":0.02,"context_limit":8000"#;
    for (format, rules, key) in FORMATS {
        let mut fitting = 0;
        for pad in 0..200 {
            let mut window = window(config, format, "conversation");
            listing_loop(&mut window, pad, 730, |_, _| {});
            assert_eq!(window.summary_steps().unwrap(), 0..1, "{format}");
            let cut = window.step_starts()[1];
            let small: u64 = (0..window.view_len())
                .filter_map(|i| window.view_item(i))
                .filter(|item| item.index >= cut)
                .map(|item| u64::from(item.tokens.tokens))
                .sum();
            let text = instruction(None, Kept::Nothing, false, 2500);
            if u64::from(window.live_tokens().tokens) - small + u64::from(window.model().count(&text).tokens) > 8000 - 2500 {
                continue;
            }
            fitting += 1;
            checked_request(&mut window, rules, key, &format!("{format} pad {pad}"));
            assert_eq!(window.pending_summary().unwrap().end_step, 1, "{format} pad {pad}");
        }
        assert!(fitting > 190, "{format}: {fitting} pads leave room for the cut after the large step");
    }
}

/// A SYSTEM message pushed mid-loop (a reminder) is sent first by the OpenAI formats,
/// wherever it stands: a request cut before it still starts as the conversation sent does,
/// reminder included.
#[test]
fn a_cut_request_keeps_a_system_message_pushed_after_the_cut() {
    let config = r#""strategy":"summary","output_reserve":200,"summary_budget":2500,"low_water":0.02,"context_limit":8000"#;
    for (format, rules, key) in FORMATS.into_iter().take(2) {
        let mut window = window(config, format, "conversation");
        window.push(Kind::System, "You are a coding agent.").unwrap();
        listing_loop(&mut window, 100, 735, |window, step| {
            if step == 4 {
                window.push(Kind::System, "Reminder: run the tests before you finish.").unwrap();
            }
        });
        let (now, request) = sent_then_request(&mut window, rules, key, format);
        let shown = request.len() - 1;
        assert!(shown < now.len() && !Value::from(request.clone()).to_string().contains("ls d6"), "{format}: cut");
        assert_eq!(request[..shown], now[..shown], "{format}: the request starts as the conversation sent");
        assert_eq!(now[1]["content"], "Reminder: run the tests before you finish.", "{format}");
    }
}

/// A late result (answering a call of an earlier step of the turn, which the request would
/// otherwise answer as cancelled) is sent in its call's step: a request cut before the
/// late result's own step still sends it there, as the conversation sent does, and counts
/// it within the budget.
#[test]
fn a_cut_request_keeps_a_late_result_in_its_calls_step() {
    let config = r#""strategy":"summary","output_reserve":200,"summary_budget":2500,"low_water":0.02,"context_limit":8000"#;
    for (format, rules, key) in FORMATS {
        let mut cut = 0;
        for pad in (30..80).step_by(5) {
            let mut window = window(config, format, "conversation");
            window.push(Kind::User, &format!("Make every test in the crate pass.{}", " x".repeat(pad))).unwrap();
            let output: String = (0..1030).map(|l| format!("file_{l}.rs\n")).collect();
            window.push_tool_call("big", "sh", "{\"cmd\":\"ls\"}").unwrap();
            window.push_tool(Kind::ToolResult, "big", &output).unwrap();
            // Two calls, one answered; the other answers four steps later.
            window.push_tool_call("x1", "sh", "{\"cmd\":\"sleep 100\"}").unwrap();
            window.push_tool_call("x2", "sh", "{\"cmd\":\"ls a\"}").unwrap();
            window.push_tool(Kind::ToolResult, "x2", "a.rs").unwrap();
            for step in 2..7 {
                let id = format!("c{step}");
                window.push_tool_call(&id, "sh", &format!("{{\"cmd\":\"ls d{step}\"}}")).unwrap();
                window.push_tool(Kind::ToolResult, &id, "f.rs").unwrap();
                if step == 5 {
                    window.push_tool(Kind::ToolResult, "x1", "slept 100 seconds, done").unwrap();
                }
            }
            let (now, request) = sent_then_request(&mut window, rules, key, &format!("{format} pad {pad}"));
            let text = Value::from(request.clone()).to_string();
            if text.contains("ls d5") || !text.contains("sleep 100") {
                continue;
            }
            cut += 1;
            assert!(text.contains("slept 100 seconds") && !text.contains("cancelled"), "{format} pad {pad}: {text}");
            let shared = request.len() - 1;
            assert_eq!(request[..shared], now[..shared], "{format} pad {pad}");
            let over = request_tokens(format, &now) - u64::from(window.live_tokens().tokens);
            assert!(request_tokens(format, &request) - over <= 8000 - 2500, "{format} pad {pad}");
        }
        assert!(cut > 3, "{format}: {cut} requests cut between the call and its late result");
    }
}

/// The newest turn starts with a message of many tokens (the instruction quotes its first
/// 120 characters) and holds many tiny steps: every cut within the quote's length of the
/// budget falls short, more of them than the few transcripts a search renders, and the
/// request is still found.
#[test]
fn a_long_quoted_message_and_many_tiny_steps_still_get_a_request() {
    let config = r#""strategy":"summary","output_reserve":200,"summary_budget":2500,"low_water":0.2,"context_limit":8000"#;
    for pad in (0..80).step_by(10) {
        let mut window = window(config, "openai_chat", "conversation");
        window.push(Kind::User, &format!("Task 0.{}", " x".repeat(pad))).unwrap();
        window.push_tool_call("big", "sh", "{}").unwrap();
        let output: String = (0..950).map(|l| format!("file_{l}.rs\n")).collect();
        window.push_tool(Kind::ToolResult, "big", &output).unwrap();
        window.push(Kind::Assistant, "Done.").unwrap();
        window.end_turn();
        window.push(Kind::User, &"\u{1f980}".repeat(120)).unwrap();
        for step in 0..80 {
            let id = format!("t{step}");
            window.push_tool_call(&id, "a", "{}").unwrap();
            window.push_tool(Kind::ToolResult, &id, "1").unwrap();
        }
        let steps = window.summary_steps().unwrap();
        summary_request(&mut window).unwrap_or_else(|e| panic!("pad {pad}: {e}"));
        assert_eq!(window.pending_summary().unwrap().end_step, steps.end, "pad {pad}");
    }
}

/// After a request covering fewer steps than are due, the rest stays to summarise, and the
/// next request covers it from where the first ended. `needs_summary` asks for it while it
/// is still needed: with the `summary` strategy, while the view is over `threshold` (the
/// first part's summary may bring it under).
#[test]
fn a_request_covering_fewer_steps_leaves_the_rest_to_the_next() {
    let config = r#""strategy":"summary","context_limit":6000,"output_reserve":200,"summary_budget":4000,"threshold":0.95,"low_water":0.01"#;
    let mut window = window(config, "openai_chat", "conversation");
    let mut turns = 0;
    while u64::from(window.live_tokens().tokens) < 4000 {
        turn(&mut window, turns, 12);
        turns += 1;
    }
    let target = window.summary_steps().unwrap();
    summary_request(&mut window).unwrap();
    let first = window.pending_summary().unwrap();
    assert!(first.end_step < target.end, "{first:?} of {target:?}");
    window.set_summary(window.generation(), "The first tasks done.", 1).unwrap();
    let rest = window.summary_steps().unwrap();
    assert_eq!(rest.start, first.end_step, "the rest starts where the first request ended");
    let over_threshold = f64::from(window.live_tokens().tokens) >= 0.95 * 6000.0;
    assert_eq!(window.needs_summary(), over_threshold, "asked for while the view is over threshold");
    summary_request(&mut window).unwrap();
    let second = window.pending_summary().unwrap();
    assert_eq!((second.first_step, second.end_step > second.first_step), (first.end_step, true));
    window.set_summary(window.generation(), "The tasks so far done.", 2).unwrap();
    assert_eq!(window.summary().unwrap().last_archived + 1, window.step_starts()[second.end_step]);
}

/// Under `sliding` with the view filled to the room, the steps pruned before a summary come
/// as a transcript, and the conversation is cut as far as it takes for all of them to fit:
/// one request covers every pruned step (rather than the few the whole conversation leaves
/// room for), still starting as the conversation sent does, within the budget.
#[test]
fn steps_that_left_the_view_are_all_covered_by_cutting_the_conversation() {
    for (format, rules, key) in FORMATS {
        let mut window = window(r#""strategy":"sliding","history_budget":"auto","context_limit":8000"#, format, "conversation");
        window.push(Kind::User, "Make every test in the crate pass.").unwrap();
        let (mut summaries, mut cut) = (0, 0);
        for step in 0..120usize {
            window.prepare().unwrap();
            let id = format!("call_{step}");
            window.push_tool_call(&id, "read_file", &format!("{{\"path\":\"src/m{step}.rs\"}}")).unwrap();
            let lines = if step % 9 == 0 { 120 } else { 5 + step * 7 % 30 };
            let output: String = (0..lines).map(|l| format!("{l:>4} | let v{l} = compute({step}, {l});\n")).collect();
            window.push_tool(Kind::ToolResult, &id, &output).unwrap();
            window.prepare().unwrap();
            if !window.needs_summary() {
                continue;
            }
            let pruned = window.first_live_step();
            let (now, request) = sent_then_request(&mut window, rules, key, &format!("{format} step {step}"));
            let shared = request.len() - 1;
            assert_eq!(request[..shared], now[..shared], "{format} step {step}");
            let over = request_tokens(format, &now) - u64::from(window.live_tokens().tokens);
            assert!(request_tokens(format, &request) - over <= 8000 - 2000, "{format} step {step}");
            let pending = window.pending_summary().unwrap();
            assert!(pending.end_step >= pruned, "{format} step {step}: {pending:?} covers fewer than the {pruned} steps pruned");
            cut += usize::from(!Value::from(request.clone()).to_string().contains(&format!("src/m{step}.rs")));
            summaries += 1;
            window.set_summary(window.generation(), &format!("Summary {summaries}: tests being fixed."), 1).unwrap();
        }
        eprintln!("{format}: {summaries} summaries, {cut} cut");
        assert!(summaries >= 3 && cut > 0, "{format}: {summaries} summaries, {cut} cut");
    }
}

/// The transcript names the tool each call ran, as well as its id, in the standalone request
/// and in the transcript of turns that left the view in a `"conversation"` request: a call's
/// text is its arguments alone, and the summary must keep exact commands.
#[test]
fn the_transcript_names_each_calls_tool() {
    for mode in ["standalone", "conversation"] {
        let mut window = window(r#""history_budget":1500,"low_water":1,"summary_budget":300"#, "openai_chat", mode);
        window.push(Kind::User, "Read it.").unwrap();
        window.push_tool_call("a", "read", "{\"p\":1}").unwrap();
        window.push_tool(Kind::ToolResult, "a", "one").unwrap();
        window.end_turn();
        let mut turns = 1;
        while window.first_live_turn() < 2 {
            turn(&mut window, turns, 20);
            turns += 1;
        }
        let request = summary_request(&mut window).unwrap();
        let transcript = match mode {
            "standalone" => request,
            _ => {
                let request: Vec<Value> = serde_json::from_str(&request).unwrap();
                request.last().unwrap()["content"].as_str().unwrap().to_owned()
            }
        };
        for needle in [
            "[message 1] TOOL_CALL read (a):\n{\"p\":1}",
            "[message 2] TOOL_RESULT (a):\none",
            "[message 4] TOOL_CALL read_file (c1):\n{\"path\":\"src/m1.rs\"}",
        ] {
            assert!(transcript.contains(needle), "{mode}: missing {needle:?} in {transcript}");
        }
    }
}
