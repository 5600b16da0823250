//! `prepare` before every request: the request fits the context limit, the reported stable
//! prefix is never longer than the true common prefix of two requests, the boundary is a
//! function of the ledger whatever the order of calls, and save/load keeps the cache state.
//! Random long tool-using sessions under every strategy, with and without `low_water`.

use ctxwin::view::ItemType;
use ctxwin::{ErrorKind, Kind, Window};

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

const STRATEGIES: [&str; 5] = ["sliding", "drop_oldest", "tiered", "monologue", "summary"];

/// What one item sends, for comparisons: type, kind, text, and the call id and original
/// JSON of the ledger message it stands for.
type Sent = (ItemType, Kind, Option<String>, Option<String>);

fn request(window: &Window) -> Vec<Sent> {
    (0..window.view_len())
        .map(|i| {
            let item = window.view_item(i).unwrap();
            let ledger = window.message(item.index).unwrap();
            (item.item_type, item.kind, item.text.map(str::to_owned), ledger.call_id().map(str::to_owned))
        })
        .collect()
}

fn common_prefix(a: &[Sent], b: &[Sent]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// One step of a session.
#[derive(Clone, Debug)]
enum Step {
    Push(Kind, String),
    Tool(Kind, String, String),
    EndTurn,
}

/// A tool-using session: turns of a question, parallel tool calls with outputs from a few
/// words to thousands of lines, and an answer.
fn session(rng: &mut Rng, turns: usize) -> Vec<Step> {
    let mut steps = vec![Step::Push(Kind::System, "You are a coding agent. ".repeat(20))];
    let mut id = 0;
    for turn in 0..turns {
        steps.push(Step::Push(Kind::User, format!("Task {turn}: fix the failing test in module {}.", rng.below(50))));
        for _ in 0..rng.below(4) {
            let calls: Vec<String> = (0..1 + rng.below(3))
                .map(|_| {
                    id += 1;
                    format!("call_{id}")
                })
                .collect();
            for call in &calls {
                steps.push(Step::Tool(Kind::ToolCall, call.clone(), format!("read_file src/m{}.rs", rng.below(100))));
            }
            for call in &calls {
                let lines = match rng.below(10) {
                    0 => 1500 + rng.below(3000),
                    1..=3 => 50 + rng.below(300),
                    _ => 1 + rng.below(20),
                };
                let output: String = (0..lines).map(|l| format!("{l}: let value_{l} = compute({l});\n")).collect();
                steps.push(Step::Tool(Kind::ToolResult, call.clone(), output));
            }
        }
        steps.push(Step::Push(Kind::Assistant, format!("Done with task {turn}.")));
        steps.push(Step::EndTurn);
    }
    steps
}

fn apply(window: &mut Window, step: &Step) {
    match step {
        Step::Push(kind, text) => {
            window.push(*kind, text).unwrap();
        }
        Step::Tool(kind, id, text) => {
            window.push_tool(*kind, id, text).unwrap();
        }
        Step::EndTurn => {
            window.end_turn();
        }
    }
}

fn settings(rng: &mut Rng, strategy: &str) -> String {
    let low_water = rng.pick(&["1", "0.5", "0.7", "0.8"]);
    let limit = 8_000 + rng.below(40_000);
    let mut json = format!(r#"{{"strategy":"{strategy}","context_limit":{limit},"low_water":{low_water}"#);
    if rng.chance(50) {
        json.push_str(&format!(r#","history_budget":{}"#, 2_000 + rng.below(limit / 2)));
    }
    if rng.chance(30) {
        json.push_str(&format!(r#","output_reserve":{}"#, rng.below(4_000)));
    }
    json.push('}');
    json
}

/// Every request fits, the stable prefix is never over-reported (and covers the whole
/// previous request when nothing but appends happened), and a replay of the ledger without
/// any `prepare` or `end_turn` gives the same view.
#[test]
fn prepare_fits_reports_a_true_stable_prefix_and_keeps_the_view_a_function_of_the_ledger() {
    let mut checked = 0;
    for seed in 0..60u64 {
        let mut rng = Rng::new(seed);
        let strategy = STRATEGIES[seed as usize % STRATEGIES.len()];
        let config = settings(&mut rng, strategy);
        let turns = 10 + rng.below(50);
        let steps = session(&mut rng, turns);
        let mut window = Window::new("gpt-4o");
        window.configure(&config).unwrap();
        window.set_overhead(500, 300).unwrap();
        let limit = u64::from(window.known_context_limit().unwrap());
        let mut previous: Option<(Vec<Sent>, u32)> = None;
        for step in &steps {
            apply(&mut window, step);
            // The agent prepares a request after every push that ends in a model call.
            if matches!(step, Step::Push(Kind::User, _) | Step::Tool(Kind::ToolResult, _, _)) && rng.chance(70) {
                let before = ctxwin::persist::export(&window);
                match window.prepare() {
                    Ok(info) => {
                        let sent = request(&window);
                        assert_eq!(info.view_len, sent.len());
                        assert_eq!(info.tokens, u64::from(window.live_tokens().tokens));
                        assert!(info.tokens + u64::from(window.output_reserve()) <= limit, "{config}: {info:?}");
                        if let Some((last, generation)) = &previous {
                            let true_prefix = common_prefix(last, &sent);
                            assert!(info.stable_items <= true_prefix, "{config}: over-reported {info:?} vs {true_prefix}");
                            if *generation == window.generation() {
                                assert_eq!(info.stable_items, last.len(), "{config}: an append-only request is stable");
                            }
                            let tokens: u64 =
                                (0..info.stable_items).map(|i| u64::from(window.view_item(i).unwrap().tokens.tokens)).sum();
                            assert_eq!(info.stable_tokens, tokens);
                        }
                        previous = Some((sent, window.generation()));
                        checked += 1;
                    }
                    Err(e) => {
                        assert_eq!(e.kind(), ErrorKind::OutOfRange, "{e:?}");
                        assert_eq!(ctxwin::persist::export(&window), before, "a refused prepare changed the window");
                    }
                }
            }
        }
        window.end_turn();
        for every_turn in [true, false] {
            let mut replay = Window::new("gpt-4o");
            replay.configure(&config).unwrap();
            replay.set_overhead(500, 300).unwrap();
            for step in steps.iter().filter(|s| every_turn || !matches!(s, Step::EndTurn)) {
                apply(&mut replay, step);
            }
            replay.end_turn();
            assert_eq!(request(&replay), request(&window), "{config}: seed {seed}, end_turn every turn: {every_turn}");
            assert_eq!(replay.start(), window.start());
        }
    }
    assert!(checked > 1000, "{checked} requests checked");
}

/// A rewind makes the items from the rewound message on count as changed, even when the
/// same texts are pushed again.
#[test]
fn a_rewind_shortens_the_stable_prefix() {
    let mut window = Window::new("gpt-4o");
    window.configure(r#"{"retain_text":false}"#).unwrap();
    for _ in 0..3 {
        window.push_counted(Kind::User, ctxwin::Count::exact(10));
        window.push_counted(Kind::Assistant, ctxwin::Count::exact(10));
    }
    assert_eq!(window.prepare().unwrap().stable_items, 0);
    assert_eq!(window.prepare().unwrap().stable_items, 6);
    window.truncate(4).unwrap();
    window.push_counted(Kind::User, ctxwin::Count::exact(10));
    window.push_counted(Kind::Assistant, ctxwin::Count::exact(10));
    let info = window.prepare().unwrap();
    assert_eq!(info.stable_items, 4, "counts alone cannot show the bytes are the same");
    assert_eq!(info.stable_tokens, 40);
}

/// The running turn over the context limit: its oldest long tool outputs are cut first,
/// oldest first, and no step goes while cutting makes room; with more steps than fit even
/// cut, the oldest steps go behind one marker (never the USER message, pinned as the task)
/// and the rest are cut as far as needed; when even that is not enough, OUT_OF_RANGE and
/// nothing changes.
#[test]
fn the_running_turn_is_cut_then_loses_its_oldest_steps_then_an_impossible_request_is_refused() {
    let mut window = Window::new("gpt-4o");
    window.configure(r#"{"context_limit":6000,"output_reserve":1000,"tool_output_max_lines":20}"#).unwrap();
    window.push(Kind::User, "Read the logs.").unwrap();
    let log: String = (0..400).map(|l| format!("{l}: request served in {l} ms\n")).collect();
    for call in ["a", "b", "c"] {
        window.push_tool(Kind::ToolCall, call, "read_log").unwrap();
        window.push_tool(Kind::ToolResult, call, &log).unwrap();
        window.push(Kind::Assistant, "Next log.").unwrap();
    }
    let info = window.prepare().unwrap();
    assert!(info.tokens + 1000 <= 6000, "{info:?}");
    let items: Vec<_> = (0..window.view_len()).map(|i| window.view_item(i).unwrap()).collect();
    // The budget is the room: the walk drops the step before the newest three (the first
    // log); the newest three stay (before, the second log went too), their oldest output cut.
    assert_eq!(window.start(), 3, "only what the walk drops goes");
    let results: Vec<ItemType> = items.iter().filter(|item| item.kind == Kind::ToolResult).map(|item| item.item_type).collect();
    assert_eq!(results.len(), 2, "{results:?}");
    let cut = results.iter().take_while(|&&kind| kind == ItemType::Truncated).count();
    assert!(cut >= 1 && results[cut..].iter().all(|&kind| kind == ItemType::Message), "oldest first: {results:?}");
    let sent: Vec<usize> = items.iter().filter(|item| item.item_type != ItemType::Synthetic).map(|item| item.index).collect();
    let expected: Vec<usize> = std::iter::once(0).chain(window.start()..window.message_count()).collect();
    assert_eq!(sent, expected, "the task, then every message from the boundary on, some cut");
    // Steps enough that even cut they are over: the oldest go, behind one marker.
    for call in 0..60 {
        let id = format!("s{call}");
        window.push_tool(Kind::ToolCall, &id, "read_log").unwrap();
        window.push_tool(Kind::ToolResult, &id, &log).unwrap();
    }
    let info = window.prepare().unwrap();
    assert!(info.tokens + 1000 <= 6000, "{info:?}");
    let items: Vec<_> = (0..window.view_len()).map(|i| window.view_item(i).unwrap()).collect();
    assert_eq!((items[0].index, items[0].item_type), (0, ItemType::Message), "the task is sent");
    assert!(window.start() > 1 && window.is_pinned_at(0));
    let markers: Vec<_> = items.iter().filter(|item| item.item_type == ItemType::Synthetic).collect();
    assert_eq!(markers.len(), 1, "one marker");
    assert!(markers[0].text.unwrap().contains("tool call"), "{:?}", markers[0].text);
    let sent: Vec<usize> = items.iter().filter(|item| item.item_type != ItemType::Synthetic).map(|item| item.index).collect();
    let expected: Vec<usize> = std::iter::once(0).chain(window.start()..window.message_count()).collect();
    assert_eq!(sent, expected, "the task, then every message from the boundary on");
    assert_eq!(*items.last().unwrap(), window.view_item(window.view_len() - 1).unwrap());
    // One step alone over the room: its output is cut, not dropped.
    let long: String = (0..1500).map(|l| format!("{l}: request served in {l} ms\n")).collect();
    window.push_tool(Kind::ToolCall, "d", "read_log").unwrap();
    window.push_tool(Kind::ToolResult, "d", &long).unwrap();
    let info = window.prepare().unwrap();
    assert!(info.tokens + 1000 <= 6000, "{info:?}");
    let last = window.view_item(window.view_len() - 1).unwrap();
    assert_eq!((last.index, last.item_type), (window.message_count() - 1, ItemType::Truncated), "the newest output is cut");
    // A question far above the limit: a user message is never cut.
    let before = ctxwin::persist::export(&window);
    window.push(Kind::User, &"Please read this: words words words. ".repeat(2000)).unwrap();
    let pushed = ctxwin::persist::export(&window);
    let err = window.prepare().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::OutOfRange);
    assert!(err.message().contains("6000"), "{}", err.message());
    assert_eq!(ctxwin::persist::export(&window), pushed, "a refused prepare changes nothing");
    assert_ne!(pushed, before);
}

/// One big tool output in a one-task loop, at or over the room the context limit leaves
/// (a budget that is the room, as for models under about 104k tokens): the newest
/// `keep_recent_steps` steps stay, the output is cut instead, the request keeps every step
/// that fits once it is cut, and the boundary never moves back while the loop goes on,
/// under `sliding` and `["clear","sliding"]`. Before, every older step went (the newest
/// three included), a cut output left most of the room empty, and the next request either
/// brought the dropped steps back or dropped the big step one step after the model read it.
#[test]
fn a_big_output_is_cut_before_a_recent_step_goes_and_the_boundary_never_moves_back() {
    for config in [r#"{"context_limit":6000}"#, r#"{"context_limit":6000,"stages":["clear","sliding"],"keep_tool_results":1}"#] {
        for big in [490, 500, 2000] {
            let mut window = Window::new("gpt-4o");
            window.configure(config).unwrap();
            window.push(Kind::User, "Fix the parser.").unwrap();
            let mut last_start = 0;
            for step in 0..12 {
                let lines = if step == 5 { big } else { 10 };
                let id = format!("c{step}");
                let output: String = (0..lines).map(|l| format!("{l:06} output line of call {step}\n")).collect();
                window.push_tool(Kind::ToolCall, &id, "read").unwrap();
                window.push_tool(Kind::ToolResult, &id, &output).unwrap();
                let info = window.prepare().unwrap();
                let what = format!("{config}, {big} lines, step {step}: {info:?}");
                assert!(window.start() >= last_start, "the boundary moved back: {what}");
                last_start = window.start();
                let sent: Vec<usize> = (0..window.view_len()).map(|i| window.view_item(i).unwrap().index).collect();
                // The newest three steps (two messages each) are sent, cut or not.
                let newest = window.message_count() - 6..window.message_count();
                assert!(newest.clone().all(|index| sent.contains(&index)), "a recent step went: {what}");
                if step == 5 {
                    assert!(window.start() <= 1 + 2 * 3, "more went than the walk drops: {what}");
                    let big = window.view_item(window.view_len() - 1).unwrap();
                    assert_eq!(big.item_type, ItemType::Truncated, "the big output is sent cut: {what}");
                }
            }
        }
    }
}

/// A restored window reports the next request stable as the original does, with the same
/// cache statistics.
#[test]
fn save_and_load_keep_the_cache_state() {
    let mut rng = Rng::new(7);
    let steps = session(&mut rng, 30);
    let mut window = Window::new("claude-sonnet-4-5");
    window.configure(r#"{"history_budget":20000,"low_water":0.7}"#).unwrap();
    let mut last_len = 0;
    for step in &steps {
        apply(&mut window, step);
        if matches!(step, Step::Tool(Kind::ToolResult, _, _)) {
            last_len = window.prepare().unwrap().view_len;
            let end = window.message_count();
            let usage = format!(r#"{{"input_tokens":10,"cache_read_input_tokens":{},"cache_creation_input_tokens":5}}"#, end * 3);
            window.observe_usage_json(window.start(), end, &usage).unwrap();
        }
    }
    let mut restored = ctxwin::persist::import(&ctxwin::persist::export(&window)).unwrap();
    assert_eq!(restored.cache_stats(), window.cache_stats());
    assert!(window.cache_stats().requests > 10);
    for w in [&mut window, &mut restored] {
        w.push(Kind::User, "One more thing.").unwrap();
    }
    let (a, b) = (window.prepare().unwrap(), restored.prepare().unwrap());
    assert_eq!(a, b);
    assert_eq!(a.stable_items, last_len, "the whole request prepared before saving is stable: {a:?}");
}

/// observe_usage_json feeds the same calibration as observe_usage with the provider's
/// prompt total, and sums what it reads; bad reports change nothing.
#[test]
fn usage_objects_calibrate_and_add_up() {
    let build = || {
        let mut window = Window::new("claude-sonnet-4-5");
        window.push(Kind::User, "Summarise the design document in three bullet points.").unwrap();
        window.push(Kind::Assistant, "It counts, it groups, it slides.").unwrap();
        window
    };
    let (mut by_json, mut by_total) = (build(), build());
    // prepare records its request as the last one: a report without a range goes to it.
    let mut prepared = build();
    assert_eq!(prepared.observe_last_usage(30).unwrap_err().kind(), ErrorKind::Mismatch);
    prepared.prepare().unwrap();
    prepared.observe_last_usage(30).unwrap();
    let json = r#"{"id":"msg_1","usage":{"input_tokens":7,"cache_creation_input_tokens":20,"cache_read_input_tokens":3,"output_tokens":9}}"#;
    let usage = by_json.observe_usage_json(0, 2, json).unwrap();
    assert_eq!((usage.prompt_tokens, usage.cached_tokens), (30, 3));
    by_total.observe_usage(0, 2, 30).unwrap();
    assert_eq!(by_json.calibration_ratio(), by_total.calibration_ratio());
    assert_eq!(by_json.live_tokens(), by_total.live_tokens());
    by_json.observe_usage_json(0, 2, r#"{"prompt_tokens":40,"prompt_tokens_details":{"cached_tokens":32}}"#).unwrap();
    let stats = by_json.cache_stats();
    assert_eq!((stats.requests, stats.prompt_tokens, stats.cached_tokens), (2, 70, 35));
    // Gemini's tool-use prompt (its own tools' results, given back to the model) is billed
    // on top of promptTokenCount but was not in the request sent: the statistics add it, the
    // calibration learns from the request as sent, exactly as observe_usage with it.
    let (mut gemini, mut plain) = (build(), build());
    let json = r#"{"usageMetadata":{"promptTokenCount":30,"cachedContentTokenCount":10,"toolUsePromptTokenCount":900,"totalTokenCount":960}}"#;
    let usage = gemini.observe_usage_json(0, 2, json).unwrap();
    assert_eq!((usage.prompt_tokens, usage.cached_tokens, usage.tool_use_tokens), (930, 10, 900));
    plain.observe_usage(0, 2, 30).unwrap();
    assert_eq!(gemini.calibration_ratio(), plain.calibration_ratio());
    assert_eq!(gemini.live_tokens(), plain.live_tokens());
    let stats = gemini.cache_stats();
    assert_eq!((stats.requests, stats.prompt_tokens, stats.cached_tokens), (1, 930, 10));
    let before = ctxwin::persist::export(&by_json);
    for (first, end, json, kind, needle) in [
        (0, 2, r#"{"prompt_tokens":-4}"#, ErrorKind::InvalidArg, "prompt_tokens"),
        (0, 2, r#"{"completion_tokens":4}"#, ErrorKind::InvalidArg, "unknown shape"),
        (
            0,
            2,
            r#"{"usageMetadata":{"promptTokenCount":9,"cachedContentTokenCount":-1}}"#,
            ErrorKind::InvalidArg,
            "cachedContentTokenCount",
        ),
        (
            0,
            2,
            r#"{"usageMetadata":{"promptTokenCount":9,"toolUsePromptTokenCount":1.5}}"#,
            ErrorKind::InvalidArg,
            "toolUsePromptTokenCount",
        ),
        (0, 9, r#"{"prompt_tokens":40}"#, ErrorKind::OutOfRange, "0..9"),
        (2, 1, r#"{"prompt_tokens":40}"#, ErrorKind::OutOfRange, "2..1"),
        (0, 2, r#"{"prompt_tokens":"#, ErrorKind::Parse, "JSON"),
    ] {
        let err = by_json.observe_usage_json(first, end, json).unwrap_err();
        assert_eq!(err.kind(), kind, "{json}");
        assert!(err.message().contains(needle), "{json}: {}", err.message());
        assert_eq!(ctxwin::persist::export(&by_json), before, "{json}");
    }
}

/// `cache_breakpoints`: an Anthropic render marks the end of the stable prefix and the newest
/// message, at most four breakpoints with the caller's own; other messages stay byte for byte.
#[test]
fn anthropic_renders_carry_cache_breakpoints() {
    let mut window = Window::new("claude-sonnet-4-5");
    window.configure(r#"{"cache_breakpoints":true}"#).unwrap();
    let first = r#"[{"role":"user","content":"List src/"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"ls","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"lib.rs"}]}]"#;
    ctxwin::json::push_json(&mut window, first).unwrap();
    window.prepare().unwrap();
    let rendered = ctxwin::json::render_json(&window).unwrap();
    assert_eq!(rendered.matches("cache_control").count(), 1, "nothing stable yet: the newest message only");
    assert!(rendered.starts_with(r#"[{"role":"user","content":"List src/"},"#));
    ctxwin::json::push_json(&mut window, r#"{"role":"assistant","content":"One file: lib.rs."}"#).unwrap();
    ctxwin::json::push_json(
        &mut window,
        r#"{"role":"user","content":[{"type":"text","text":"Thanks","cache_control":{"type":"ephemeral"}}]}"#,
    )
    .unwrap();
    assert_eq!(window.prepare().unwrap().stable_items, 3);
    let rendered: serde_json::Value = serde_json::from_str(&ctxwin::json::render_json(&window).unwrap()).unwrap();
    let marked: Vec<usize> = (0..5).filter(|&i| rendered[i].to_string().contains("cache_control")).collect();
    assert_eq!(marked, vec![2, 4], "the stable prefix ends with message 2; the caller marked the newest");
    // render_request counts the base's own: three there leave one, for the newest message.
    let base = r#"{"model":"claude-sonnet-4-5","system":[{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral"}}],"tools":[{"name":"a","input_schema":{},"cache_control":{"type":"ephemeral"}},{"name":"b","input_schema":{},"cache_control":{"type":"ephemeral"}}]}"#;
    let body: serde_json::Value = serde_json::from_str(&ctxwin::json::render_request(&window, base).unwrap()).unwrap();
    assert_eq!(body.to_string().matches("cache_control").count(), 4, "never more than four");
    assert!(!body["messages"][2].to_string().contains("cache_control"));
    // Without the key, the render is the pushed JSON as it was.
    window.configure(r#"{"cache_breakpoints":false}"#).unwrap();
    assert_eq!(ctxwin::json::render_json(&window).unwrap().matches("cache_control").count(), 1);
}

/// A usage report is judged against what the request sent: under `tiered` and `monologue`
/// the view sends cut outputs, a summary block and a marker instead of the whole messages,
/// and `start` stays at 0, so the messages `start..count` are far more than the request held.
/// The provider's total for the prepared request is accepted whatever was pushed since, and
/// an estimating model learns the true ratio from it.
#[test]
fn usage_is_judged_against_what_the_request_sent() {
    let output: String = (0..500).map(|i| format!("{i:>4} | let value_{i} = compute(&input[{i}]);\n")).collect();
    for strategy in ["tiered", "monologue"] {
        for (model, ratio) in [("gpt-4o", 1.0), ("claude-sonnet-4-5", 1.2)] {
            let mut window = Window::new(model);
            window.configure(&format!(r#"{{"strategy":"{strategy}","history_budget":20000}}"#)).unwrap();
            for turn in 0..40 {
                window.push(Kind::User, &format!("task {turn}: read the file")).unwrap();
                window.push_tool(Kind::ToolCall, &format!("c{turn}"), "read\n{}").unwrap();
                window.push_tool(Kind::ToolResult, &format!("c{turn}"), &output).unwrap();
                window.push(Kind::Assistant, "done").unwrap();
                window.end_turn();
            }
            window.push(Kind::User, "and now?").unwrap();
            let info = window.prepare().unwrap();
            let whole: u64 = (0..window.message_count()).map(|i| u64::from(window.message(i).unwrap().count().tokens)).sum();
            assert!(whole > 4 * info.tokens, "{strategy}: the view sends much less than the ledger holds");
            // The provider's count of the request as sent: exact for gpt-4o, 1.2 times the
            // estimate for Claude.
            let reported = (info.tokens as f64 * ratio).round() as i64;
            let mut by_range = window.clone();
            let json = format!(r#"{{"usage":{{"prompt_tokens":{reported}}}}}"#);
            by_range.observe_usage_json(by_range.start(), by_range.message_count(), &json).unwrap();
            // Pushed and ended since: the last request is still the one judged.
            window.push(Kind::Assistant, "the answer").unwrap();
            window.end_turn();
            window.observe_last_usage_json(&json).unwrap();
            // One report: the ratio's prior keeps the ratio near 1 and most of the difference
            // between the report and what the request sent is learned as undeclared overhead;
            // together they give the report back. Judged against the whole messages of the
            // range, the report would be far below them.
            for learned in [&window, &by_range] {
                assert_eq!(learned.prompt_total(), Some(reported as u64), "{strategy} {model}");
                let (got, overhead) = (learned.calibration_ratio(), f64::from(learned.learned_overhead().tokens));
                assert!((got - 1.0).abs() < 0.05, "{strategy} {model}: learned ratio {got}");
                let predicted = overhead + got * info.tokens as f64;
                assert!((predicted / reported as f64 - 1.0).abs() < 0.01, "{strategy} {model}: {predicted} for {reported}");
            }
        }
    }
}
