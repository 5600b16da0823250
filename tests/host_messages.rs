//! A host agent's own messages: counts set after the push, host messages of several parts
//! with host ids, text that is not UTF-8, usage of the request last rendered, and rewinds that
//! undo manual choices. Each against a plain reference: the same session built the way the
//! behaviour promises to equal.

use ctxwin::classify::{ErrorCategory, ErrorInfo};
use ctxwin::view::ItemType;
use ctxwin::window::Part;
use ctxwin::{Count, ErrorKind, Kind, Window, json, persist};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

const STRATEGIES: [&str; 5] = ["sliding", "drop_oldest", "tiered", "monologue", "summary"];

/// Everything the boundary and the view show: start, first live turn, live tokens, the view's
/// items and every turn's tokens.
type Shown = (usize, usize, Count, Vec<(ItemType, Kind, usize, Count)>, Vec<Count>);

fn shown(window: &Window) -> Shown {
    let view = (0..window.view_len())
        .map(|i| window.view_item(i).unwrap())
        .map(|item| (item.item_type, item.kind, item.index, item.tokens))
        .collect();
    let turns = (0..window.turn_count()).map(|t| window.turn_info(t).unwrap().tokens).collect();
    (window.start(), window.first_live_turn(), window.live_tokens(), view, turns)
}

fn configuration(rng: &mut Rng) -> String {
    let strategy = rng.pick(&STRATEGIES);
    format!(
        r#"{{"strategy":"{strategy}","history_budget":{},"token_threshold":{},"keep_recent":{},"keep_recent_turns":{},"retain_text":false}}"#,
        100 + rng.below(900),
        50 + rng.below(900),
        rng.below(8),
        rng.below(3)
    )
}

fn text(rng: &mut Rng) -> String {
    (0..1 + rng.below(40)).map(|i| if i % 7 == 6 { "word\n" } else { "word " }).collect()
}

/// `set_count` then `end_turn` gives what pushing that count in the first place gives: the
/// same boundary, turn tokens, live tokens and view, for every strategy, whether the counts
/// arrive for the newest turn or for older ones, before or after other turns ended.
#[test]
fn set_count_then_end_turn_is_pushing_that_count() {
    let mut runner = TestRunner::new(Config { cases: 400, failure_persistence: None, ..Config::default() });
    runner
        .run(&any::<u64>(), |seed| {
            let mut rng = Rng::new(seed);
            let config = configuration(&mut rng);
            let (mut late, mut early) = (Window::new("claude-sonnet-4-5"), Window::new("claude-sonnet-4-5"));
            late.configure(&config).unwrap();
            early.configure(&config).unwrap();
            let turns = 1 + rng.below(60);
            let mut truth = Vec::new();
            for _ in 0..turns {
                for m in 0..1 + rng.below(5) {
                    let kind = if m == 0 {
                        Kind::User
                    } else {
                        rng.pick(&[Kind::Assistant, Kind::ToolResult, Kind::Thinking, Kind::System])
                    };
                    late.push(kind, &text(&mut rng)).unwrap();
                    truth.push((kind, Count { tokens: rng.below(200) as u32, exact: rng.chance(80) }));
                }
                // The provider's figures arrive late: now for some of this turn's messages,
                // later for the rest (possibly after several more turns ended).
                for (index, &(_, count)) in truth.iter().enumerate() {
                    if rng.chance(30) {
                        late.set_count(index, count).unwrap();
                    }
                }
                late.end_turn();
            }
            for (index, &(_, count)) in truth.iter().enumerate() {
                late.set_count(index, count).unwrap();
            }
            late.end_turn();
            for (index, &(kind, count)) in truth.iter().enumerate() {
                if kind == Kind::User && index > 0 {
                    early.end_turn();
                }
                early.push_counted(kind, count);
            }
            early.end_turn();
            prop_assert_eq!(shown(&late), shown(&early), "{}", config);
            Ok(())
        })
        .unwrap_or_else(|failure| panic!("{failure}"));
}

/// Between `set_count` and the next `end_turn` nothing the window shows moves, and a window
/// saved then restores exactly.
#[test]
fn set_count_moves_nothing_until_the_next_end_turn() {
    let mut window = Window::new("gpt-4o");
    window.configure(r#"{"pin_task":false}"#).unwrap();
    window.set_budget(100).unwrap();
    for _ in 0..5 {
        window.push_counted(Kind::User, Count::exact(10));
        window.push_counted(Kind::Assistant, Count::exact(10));
        window.end_turn();
    }
    assert_eq!(window.first_live_turn(), 0);
    let generation = window.generation();
    window.set_count(1, Count::exact(70)).unwrap();
    window.set_count(1, Count::exact(60)).unwrap();
    assert_eq!(window.first_live_turn(), 0, "the boundary waits for end_turn");
    assert_eq!(window.generation(), generation);
    assert_eq!(window.live_tokens(), Count::exact(100));
    assert_eq!(window.message(1).unwrap().count(), Count::exact(10));
    let restored = persist::import(&persist::export(&window)).unwrap();
    assert_eq!(restored.first_live_turn(), 0);
    assert_eq!(restored.live_tokens(), Count::exact(100));
    window.end_turn();
    assert_eq!(window.first_live_turn(), 1);
    assert_eq!(window.turn_info(0).unwrap().tokens, Count::exact(70));
    assert_eq!(window.live_tokens(), Count::exact(80));
    let mut restored = restored;
    restored.end_turn();
    assert_eq!(shown(&restored), shown(&window));
    assert_eq!(window.set_count(10, Count::exact(1)).unwrap_err().kind(), ErrorKind::OutOfRange);
}

/// A turn's total spreads over its messages but SYSTEM ones, in proportion, and sums
/// exactly; with the task pinned it takes its share (a turn of the task alone too), and the
/// turn's history is the rest.
#[test]
fn set_turn_count_sums_to_the_total() {
    let mut rng = Rng::new(7);
    for _ in 0..500 {
        let mut window = Window::new("gpt-4o");
        let pin_task = rng.chance(50);
        window.configure(&format!(r#"{{"pin_task":{pin_task}}}"#)).unwrap();
        window.push(Kind::System, "be brief").unwrap();
        for _ in 0..1 + rng.below(4) {
            window.push(Kind::User, &text(&mut rng)).unwrap();
            for _ in 0..rng.below(6) {
                let kind = rng.pick(&[Kind::Assistant, Kind::ToolResult, Kind::System]);
                if rng.chance(20) {
                    window.push_counted(kind, Count::exact(0));
                } else {
                    window.push(kind, &text(&mut rng)).unwrap();
                }
            }
            window.end_turn();
        }
        let turn = rng.below(window.turn_count());
        let total = Count { tokens: rng.below(5000) as u32, exact: rng.chance(50) };
        let system_before: Vec<Count> = (0..window.message_count())
            .filter(|&i| window.message(i).unwrap().kind() == Kind::System)
            .map(|i| window.message(i).unwrap().count())
            .collect();
        window.set_turn_count(turn, total).unwrap();
        window.end_turn();
        let info = window.turn_info(turn).unwrap();
        let sent: u64 = (info.first_message..info.first_message + info.message_count)
            .map(|i| window.message(i).unwrap())
            .filter(|message| message.kind() != Kind::System)
            .map(|message| u64::from(message.count().tokens))
            .sum();
        assert_eq!(sent, u64::from(total.tokens), "the turn's messages sum to the total");
        let task = match pin_task && turn == 0 {
            true => window.message(info.first_message).unwrap().count().tokens,
            false => 0,
        };
        assert_eq!(info.tokens.tokens, total.tokens - task, "the history is the rest");
        if info.tokens.tokens > 0 {
            assert_eq!(info.tokens.exact, total.exact);
        }
        let system_after: Vec<Count> = (0..window.message_count())
            .filter(|&i| window.message(i).unwrap().kind() == Kind::System)
            .map(|i| window.message(i).unwrap().count())
            .collect();
        assert_eq!(system_before, system_after, "pinned SYSTEM messages keep their counts");
    }
}

/// One random host message: parts of every kind, tool calls with ids (some answered by later
/// messages, some refused), occasionally none at all.
/// A part: kind, text, call id, tool name.
type HostPart = (Kind, String, Option<String>, Option<String>);

fn host_parts(rng: &mut Rng, calls: &mut Vec<String>, next_id: &mut u32) -> Vec<HostPart> {
    let mut parts = Vec::new();
    for _ in 0..rng.below(5) {
        let kind = rng.pick(&[Kind::User, Kind::Assistant, Kind::Thinking, Kind::ToolCall, Kind::ToolResult, Kind::System]);
        let call_id = match kind {
            Kind::ToolCall if rng.chance(80) => {
                *next_id += 1;
                calls.push(format!("c{next_id}"));
                Some(format!("c{next_id}"))
            }
            Kind::ToolResult if rng.chance(80) && !calls.is_empty() => Some(calls[rng.below(calls.len())].clone()),
            Kind::ToolResult if rng.chance(50) => Some("never".to_owned()),
            _ => None,
        };
        // A call names its tool apart (its text then the arguments) or on its text's first line.
        let (text, name) = match kind {
            Kind::ToolCall if rng.chance(50) => {
                (rng.pick(&["{}", r#"{"path":"src"}"#, "not json"]).to_owned(), Some("read_file".to_owned()))
            }
            Kind::System if rng.chance(5) => (text(rng), Some("misplaced".to_owned())),
            _ => (text(rng), None),
        };
        parts.push((kind, text, call_id, name));
    }
    parts
}

/// The same parts pushed one by one: `push`, or `push_tool` for a part with an id. Returns
/// the index of the first part refused.
fn push_one_by_one(window: &mut Window, parts: &[HostPart]) -> Result<Count, usize> {
    let before = window.message_count();
    let mut total = 0;
    let mut exact = true;
    for (i, (kind, text, call_id, name)) in parts.iter().enumerate() {
        let pushed = match (call_id, name) {
            (_, Some(_)) if *kind != Kind::ToolCall => Err(ctxwin::Error::invalid_arg("a name on another kind")),
            (Some(id), Some(name)) => window.push_tool_call(id, name, text),
            (None, Some(name)) => window.push(*kind, &format!("{name}\n{text}")),
            (Some(id), None) => window.push_tool(*kind, id, text),
            (None, None) => window.push(*kind, text),
        };
        match pushed {
            Ok(count) => {
                total += count.tokens;
                exact &= count.exact;
            }
            Err(_) => {
                window.truncate(before).unwrap();
                return Err(i);
            }
        }
    }
    Ok(Count { tokens: total, exact })
}

/// `push_message` of N parts is the same ledger as N pushes, plus the host id on each part;
/// a refused message pushes nothing and names the part the pushes would have refused.
#[test]
fn push_message_is_n_pushes_plus_the_host_id() {
    let mut runner = TestRunner::new(Config { cases: 400, failure_persistence: None, ..Config::default() });
    runner
        .run(&any::<u64>(), |seed| {
            let mut rng = Rng::new(seed);
            let strategy = rng.pick(&STRATEGIES);
            let format = rng.pick(&["auto", "openai_chat", "anthropic", "gemini"]);
            let config = format!(r#"{{"strategy":"{strategy}","history_budget":{},"format":"{format}"}}"#, 100 + rng.below(2000));
            let (mut hosted, mut pushed) = (Window::new("gpt-4o"), Window::new("gpt-4o"));
            hosted.configure(&config).unwrap();
            pushed.configure(&config).unwrap();
            let (mut calls, mut next_id) = (Vec::new(), 0);
            let mut host_ids = Vec::new();
            for host_id in 0..rng.below(40) as i64 {
                let parts = host_parts(&mut rng, &mut calls, &mut next_id);
                let as_parts: Vec<Part<'_>> = parts
                    .iter()
                    .map(|(kind, text, call_id, name)| Part {
                        kind: *kind,
                        text,
                        replaced: false,
                        call_id: call_id.as_deref(),
                        name: name.as_deref(),
                    })
                    .collect();
                let before = persist::export(&hosted);
                let one_by_one = push_one_by_one(&mut pushed, &parts);
                match (hosted.push_message(&as_parts, host_id * 10), one_by_one) {
                    (Ok(a), Ok(b)) => {
                        prop_assert_eq!(a, b);
                        host_ids.extend(std::iter::repeat_n(host_id * 10, parts.len()));
                    }
                    (Err(e), Err(i)) => {
                        prop_assert!(
                            e.message().starts_with(&format!("parts[{i}].")),
                            "{} (pushes refused part {})",
                            e.message(),
                            i
                        );
                        prop_assert_eq!(persist::export(&hosted), before, "a refused message changes nothing");
                    }
                    (Err(e), Ok(_)) if parts.is_empty() => prop_assert!(e.message().starts_with("parts:"), "{}", e.message()),
                    (a, b) => prop_assert!(false, "push_message {:?}, pushes {:?}", a.map_err(|e| e.message().to_owned()), b),
                }
                if rng.chance(30) {
                    hosted.end_turn();
                    pushed.end_turn();
                }
            }
            hosted.end_turn();
            pushed.end_turn();
            prop_assert_eq!(hosted.message_count(), pushed.message_count());
            for (index, &host_id) in host_ids.iter().enumerate() {
                let (a, b) = (hosted.message(index).unwrap(), pushed.message(index).unwrap());
                prop_assert_eq!(
                    (a.kind(), a.count(), a.text(), a.call_id(), a.name()),
                    (b.kind(), b.count(), b.text(), b.call_id(), b.name())
                );
                prop_assert_eq!(hosted.host_id(index).unwrap(), host_id);
            }
            prop_assert_eq!(shown(&hosted), shown(&pushed));
            prop_assert_eq!(json::render_json(&hosted).ok(), json::render_json(&pushed).ok());
            // Every view item traces back to a host message, and the start to its first part.
            for i in 0..hosted.view_len() {
                let index = hosted.view_item(i).unwrap().index;
                let id = hosted.host_id(index).unwrap();
                prop_assert!(hosted.host_index(id).unwrap() <= index);
            }
            if hosted.message_count() > 0 {
                let id = hosted.start_host_id().unwrap();
                prop_assert!(hosted.host_index(id).unwrap() <= hosted.start());
            }
            Ok(())
        })
        .unwrap_or_else(|failure| panic!("{failure}"));
}

#[test]
fn host_ids_are_one_per_host_message_and_rewinds_free_them() {
    let mut window = Window::new("gpt-4o");
    let part = |kind, text| Part { kind, text, replaced: false, call_id: None, name: None };
    assert_eq!(window.start_host_id().unwrap_err().kind(), ErrorKind::OutOfRange);
    window.push(Kind::User, "pushed without an id").unwrap();
    assert_eq!(window.start_host_id().unwrap_err().kind(), ErrorKind::InvalidArg);
    window.truncate(0).unwrap();
    window.push_message(&[part(Kind::User, "hi")], 7).unwrap();
    window.push_message(&[part(Kind::Thinking, "hm"), part(Kind::Assistant, "hello")], 8).unwrap();
    assert_eq!((window.host_index(7).unwrap(), window.host_index(8).unwrap()), (0, 1));
    assert_eq!((window.host_id(1).unwrap(), window.host_id(2).unwrap()), (8, 8));
    assert_eq!(window.start_host_id().unwrap(), 7);
    let refused = window.push_message(&[part(Kind::User, "again")], 8).unwrap_err();
    assert!(refused.message().contains("host_id 8"), "{}", refused.message());
    assert_eq!(window.message_count(), 3);
    // Replacing host message 8 in place: rewind to where it starts, push it again.
    window.truncate(window.host_index(8).unwrap()).unwrap();
    assert_eq!(window.host_index(8).unwrap_err().kind(), ErrorKind::OutOfRange);
    window.push_message(&[part(Kind::Assistant, "hello again")], 8).unwrap();
    assert_eq!(window.host_index(8).unwrap(), 1);
    let restored = persist::import(&persist::export(&window)).unwrap();
    assert_eq!((restored.host_index(7).unwrap(), restored.host_index(8).unwrap()), (0, 1));
    let mut cleared = restored.clone();
    cleared.reset();
    assert_eq!(cleared.host_index(7).unwrap_err().kind(), ErrorKind::OutOfRange);
    // A saved window whose host message reuses an earlier one's id is refused (parts of one
    // host message are the messages in a row with its id).
    window.push_message(&[part(Kind::User, "next")], 9).unwrap();
    // Edited on purpose: without its checksum, as a document edited by hand must be.
    let mut export: serde_json::Value = serde_json::from_str(&persist::export(&window)).unwrap();
    export.as_object_mut().unwrap().remove("checksum");
    let export = export.to_string().replace(r#""host_id":9"#, r#""host_id":7"#);
    let error = persist::import(&export).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Parse);
    assert!(error.message().contains("host_id 7"), "{}", error.message());
}

/// `"invalid_utf8":"replace"` keeps the text with U+FFFD per invalid sequence, counted as
/// such and flagged; `"error"` (the default) refuses it and pushes nothing.
#[test]
fn invalid_utf8_is_refused_or_replaced() {
    let bytes: &[u8] = b"binary \xff\xfe tool output \xe2\x82 end \xf0\x9f\x98\x80";
    let mut window = Window::new("gpt-4o");
    let error = window.push_bytes(Kind::ToolResult, bytes).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidUtf8);
    assert!(error.message().contains("offset 7"), "{}", error.message());
    assert_eq!(window.message_count(), 0);
    window.configure(r#"{"invalid_utf8":"replace"}"#).unwrap();
    window.push(Kind::User, "run it").unwrap();
    let count = window.push_bytes(Kind::ToolResult, bytes).unwrap();
    let replaced = String::from_utf8_lossy(bytes);
    assert_eq!(replaced.matches('\u{fffd}').count(), 3, "one U+FFFD per maximal invalid sequence");
    assert_eq!(count, ctxwin::Model::resolve("gpt-4o").count(&replaced));
    assert_eq!(window.message(1).unwrap().text(), Some(&*replaced));
    assert!(window.message(1).unwrap().replaced_utf8() && !window.message(0).unwrap().replaced_utf8());
    assert!(persist::import(&persist::export(&window)).unwrap().message(1).unwrap().replaced_utf8());
    assert_eq!(window.settings().to_value()["invalid_utf8"], "replace");
}

/// The usage of the request last rendered is attributed to that request's messages: the same
/// as `observe_usage` over the range it sent, even after later pushes.
#[test]
fn usage_goes_to_the_request_last_rendered() {
    let mut window = Window::new("claude-sonnet-4-5");
    window.set_budget(400).unwrap();
    assert_eq!(window.observe_last_usage(100).unwrap_err().kind(), ErrorKind::Mismatch);
    for turn in 0..12 {
        window.push(Kind::User, &format!("question {turn} about the parser and its tests")).unwrap();
        window.push(Kind::Assistant, &"an answer with several words in it ".repeat(5)).unwrap();
        window.end_turn();
    }
    json::render_json(&window).unwrap();
    let (first, end) = (window.start(), window.message_count());
    assert!(first > 0, "the request starts at the boundary");
    window.push(Kind::User, "the next question, pushed after the request was sent").unwrap();
    let mut by_range = window.clone();
    by_range.observe_usage(first, end, 900).unwrap();
    window.observe_last_usage(900).unwrap();
    assert_eq!(window.calibration(), by_range.calibration());
    assert_eq!(window.prompt_total(), Some(900));
    window.truncate(end - 1).unwrap();
    assert_eq!(window.observe_last_usage(900).unwrap_err().kind(), ErrorKind::Mismatch, "the request was rewound away");
}

/// The issue's reproducer, and the same for `compact` and `recover`: a rewind undoes the
/// choices made after the point it rewinds to, and keeps those made before.
#[test]
fn truncate_undoes_choices_made_after_its_point() {
    let three_turns = || {
        let mut window = Window::new("gpt-4o");
        for _ in 0..3 {
            window.push_counted(Kind::User, Count::exact(10));
            window.push_counted(Kind::Assistant, Count::exact(10));
            window.end_turn();
        }
        window
    };
    let mut window = three_turns();
    window.drop_oldest_turn().unwrap();
    assert_eq!((window.first_live_turn(), window.start()), (1, 2));
    window.truncate(4).unwrap();
    assert_eq!((window.first_live_turn(), window.start()), (0, 0), "the drop was made after message 4");
    window.set_budget(100000).unwrap();
    assert_eq!(window.first_live_turn(), 0);

    // A drop made before the rewind point stays.
    let mut window = three_turns();
    window.drop_oldest_turn().unwrap();
    window.push_counted(Kind::User, Count::exact(10));
    window.end_turn();
    window.truncate(6).unwrap();
    assert_eq!(window.first_live_turn(), 1, "the drop was made with 6 messages: it stays");
    window.truncate(5).unwrap();
    assert_eq!(window.first_live_turn(), 0);

    let mut window = three_turns();
    window.configure(r#"{"strategy":"monologue","keep_recent_turns":0}"#).unwrap();
    window.compact();
    assert_eq!(window.compacted_through(), 3);
    window.truncate(4).unwrap();
    assert_eq!(window.compacted_through(), 0);

    let mut window = Window::new("gpt-4o");
    for _ in 0..3 {
        window.push_counted(Kind::User, Count::exact(200));
        window.push_counted(Kind::Assistant, Count::exact(200));
        window.end_turn();
    }
    let overflow = ErrorInfo { category: ErrorCategory::ContextOverflow, limit: None, actual: None, excess: Some(5) };
    window.recover(&overflow).unwrap();
    assert!(window.forced_first_live() > 0);
    let restored = persist::import(&persist::export(&window)).unwrap();
    window.truncate(4).unwrap();
    assert_eq!((window.forced_first_live(), window.first_live_turn()), (0, 0));
    let mut restored = restored;
    restored.truncate(4).unwrap();
    assert_eq!(shown(&restored), shown(&window), "the choices' ledger lengths are saved");
}

/// `prepare` applies the recorded counts and records its request as the last one; when it
/// fails, nothing changed: the counts are still recorded, not applied.
#[test]
fn prepare_applies_recorded_counts_or_changes_nothing() {
    let mut window = Window::new("gpt-4o");
    window.configure(r#"{"context_limit":1000,"output_reserve":100}"#).unwrap();
    window.push(Kind::User, "a question").unwrap();
    window.push(Kind::Assistant, "an answer").unwrap();
    window.end_turn();
    window.push(Kind::User, "the running turn").unwrap();
    window.set_count(2, Count::exact(5000)).unwrap();
    let before = persist::export(&window);
    assert_eq!(window.prepare().unwrap_err().kind(), ErrorKind::OutOfRange);
    assert_eq!(persist::export(&window), before, "a failed prepare changes nothing");
    window.set_count(2, Count::exact(50)).unwrap();
    window.prepare().unwrap();
    assert_eq!(window.message(2).unwrap().count(), Count::exact(50));
    assert_eq!(window.pending_counts().count(), 0);
    assert_eq!(window.last_request().map(|r| (r.first, r.end)), Some((window.start(), 3)));
}

/// A count set on a pinned SYSTEM message inside a turn reaches the view: the view renders
/// that turn's items again rather than reusing the ones built with the old count.
#[test]
fn set_count_of_a_system_message_inside_a_turn_reaches_its_view_item() {
    for strategy in STRATEGIES {
        let mut window = Window::new("gpt-4o");
        window.configure(&format!(r#"{{"strategy":"{strategy}"}}"#)).unwrap();
        window.push(Kind::User, "a question").unwrap();
        window.push(Kind::System, "a note in the middle of the turn").unwrap();
        window.push(Kind::Assistant, "an answer").unwrap();
        window.end_turn();
        window.push(Kind::User, "the next question").unwrap();
        window.end_turn();
        window.set_count(1, Count::estimate(248)).unwrap();
        window.end_turn();
        let item = (0..window.view_len()).filter_map(|i| window.view_item(i)).find(|item| item.index == 1).unwrap();
        assert_eq!(item.tokens, Count::estimate(248), "{strategy}");
        let total =
            (0..window.message_count()).filter_map(|i| window.message(i)).fold(Count::exact(0), |sum, m| sum.plus(m.count()));
        assert_eq!(window.live_tokens(), total, "{strategy}");
    }
}
