//! `low_water` and `output_reserve`: strategies that act go down to the low-water mark, and
//! the view never grows into the room kept for the answer.

use ctxwin::config::Tokens;
use ctxwin::{Count, ErrorKind, Kind, Window};

/// A window of `turns` turns of `tokens` exact tokens each (a question and an answer); the
/// task is not pinned, so every turn is history.
fn session(model: &str, settings: &str, turns: usize, tokens: u32) -> Window {
    let mut window = Window::new(model);
    window.configure(r#"{"pin_task":false}"#).unwrap();
    window.configure(settings).unwrap();
    for _ in 0..turns {
        window.push_counted(Kind::User, Count::exact(tokens / 2));
        window.push_counted(Kind::Assistant, Count::exact(tokens - tokens / 2));
        window.end_turn();
    }
    window
}

#[test]
fn sliding_prunes_down_to_the_low_water_mark_then_stays_put() {
    let mut window = session("my-local-model", r#"{"history_budget":1000,"low_water":0.5}"#, 10, 100);
    assert_eq!(window.first_live_turn(), 0, "1000 tokens fit the budget");
    let generation = window.generation();
    window.push_counted(Kind::User, Count::exact(100));
    assert_eq!(window.end_turn(), 6, "over: the oldest go until history <= 500");
    assert_eq!(window.view_history().tokens(), 500);
    assert_ne!(window.generation(), generation);
    // The next five turns fit without moving the boundary: the view's prefix is unchanged.
    let (start, generation) = (window.start(), window.generation());
    for _ in 0..5 {
        window.push_counted(Kind::User, Count::exact(100));
        assert_eq!(window.end_turn(), 0);
        assert_eq!((window.start(), window.generation()), (start, generation));
    }
    window.push_counted(Kind::User, Count::exact(100));
    assert_eq!(window.end_turn(), 6);
    // low_water 1 prunes one turn at a time.
    let mut eager = session("my-local-model", r#"{"history_budget":1000,"low_water":1}"#, 11, 100);
    assert_eq!(eager.first_live_turn(), 1);
    eager.push_counted(Kind::User, Count::exact(100));
    assert_eq!(eager.end_turn(), 1);
}

#[test]
fn drop_oldest_scales_every_threshold() {
    let settings = r#"{"strategy":"drop_oldest","turn_threshold":10,"low_water":0.5}"#;
    let mut window = session("my-local-model", settings, 10, 10);
    assert_eq!(window.first_live_turn(), 0);
    window.push_counted(Kind::User, Count::exact(10));
    window.end_turn();
    assert_eq!(window.turn_count() - window.first_live_turn(), 5, "11 turns > 10: down to 5");
    let settings = r#"{"strategy":"drop_oldest","message_threshold":20,"low_water":0.7}"#;
    let mut window = session("my-local-model", settings, 10, 10);
    window.push_counted(Kind::User, Count::exact(10));
    window.end_turn();
    // 21 history messages > 20: down to 14 at most, in whole turns of 2 (the newest has 1).
    assert_eq!(window.view_len(), 13);
}

#[test]
fn the_view_leaves_the_output_reserve_free() {
    // gpt-4: a context limit of 8192 tokens; the default budget (100000) is far above it.
    let mut window = session("gpt-4", r#"{"output_reserve":1000}"#, 0, 0);
    window.set_overhead(500, 200).unwrap();
    window.push_counted(Kind::System, Count::exact(300));
    for _ in 0..100 {
        window.push_counted(Kind::User, Count::exact(150));
        window.push_counted(Kind::ToolResult, Count::exact(250));
        window.end_turn();
        assert!(u64::from(window.live_tokens().tokens) + 1000 <= 8192, "{:?}", window.live_tokens());
    }
    assert!(window.first_live_turn() > 0);
    // "auto" keeps a quarter of the limit, at most 4096.
    window.configure(r#"{"output_reserve":"auto"}"#).unwrap();
    assert_eq!(window.output_reserve(), 2048);
    assert!(u64::from(window.live_tokens().tokens) + 2048 <= 8192);
    assert_eq!(Window::new("gpt-4o").output_reserve(), 4096);
    assert_eq!(Window::new("my-local-model").output_reserve(), 0, "no limit known: nothing to reserve");
}

#[test]
fn a_reserve_leaving_no_room_is_refused_and_changes_nothing() {
    let mut window = session("gpt-4", r#"{"low_water":1}"#, 3, 100);
    window.set_overhead(4000, 0).unwrap();
    let before = ctxwin::persist::export(&window);
    for json in [r#"{"output_reserve":4192}"#, r#"{"output_reserve":9000}"#, r#"{"context_limit":4100}"#] {
        let err = window.configure(json).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArg, "{json}");
        assert!(err.message().contains("output_reserve"), "{}", err.message());
        assert_eq!(ctxwin::persist::export(&window), before, "{json}");
    }
    window.configure(r#"{"output_reserve":4191}"#).unwrap();
}

#[test]
fn a_window_saved_before_the_keys_keeps_its_behaviour() {
    let window = session("my-local-model", r#"{"history_budget":1000,"low_water":1}"#, 12, 100);
    let mut saved: serde_json::Value = serde_json::from_str(&ctxwin::persist::export(&window)).unwrap();
    // Edited on purpose below: without its checksum, as a document edited by hand must be.
    saved.as_object_mut().unwrap().remove("checksum");
    let settings = saved["settings"].as_object_mut().unwrap();
    settings.remove("low_water");
    settings.remove("output_reserve");
    let restored = ctxwin::persist::import(&saved.to_string()).unwrap();
    assert_eq!(restored.settings().low_water.get(), 1.0);
    assert_eq!(restored.settings().output_reserve, Tokens::Fixed(0));
    assert_eq!(restored.first_live_turn(), window.first_live_turn());
    assert_eq!(restored.view_len(), window.view_len());
}

#[test]
fn auto_budget_follows_the_model_and_too_large_budgets_are_refused() {
    let mut window = session("gpt-4", r#"{"history_budget":"auto","low_water":1}"#, 0, 0);
    window.set_overhead(500, 0).unwrap();
    for _ in 0..100 {
        window.push_counted(Kind::User, Count::exact(100));
        window.end_turn();
    }
    // 8192 - 2048 (auto reserve) - 500 (overhead) = 5644 history tokens.
    assert_eq!(window.view_history().tokens(), 5600);
    assert_eq!(window.settings().to_value()["history_budget"], "auto");
    let before = ctxwin::persist::export(&window);
    let err = window.set_budget(100_000).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::OutOfRange);
    assert!(err.message().contains("5644"), "{}", err.message());
    let err = window.configure(r#"{"history_budget":5645}"#).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArg);
    assert!(err.message().contains("history_budget") && err.message().contains("5644"), "{}", err.message());
    assert_eq!(ctxwin::persist::export(&window), before, "refusals change nothing");
    window.set_budget(5644).unwrap();
    assert_eq!(window.settings().to_value()["history_budget"], 5644);
    // With the budget covering the overhead, the overhead is not taken twice.
    window.configure(r#"{"budget_includes_overhead":true,"history_budget":6144}"#).unwrap();
    // Without a known limit, any budget goes.
    Window::new("my-local-model").set_budget(2_000_000_000).unwrap();
    // The default budget (100000) is capped, never refused.
    let default = session("gpt-4", r#"{"low_water":1}"#, 100, 100);
    assert_eq!(default.view_history().tokens(), 6100);
}

/// A budget set earlier is not clamped silently when a later call lowers what the model can
/// take: lowering `context_limit` or raising `output_reserve` under it is refused, naming the
/// key and how much the model can take, and changes nothing; given together with a budget
/// that fits (or "auto"), it goes. The default budget stays capped.
#[test]
fn lowering_the_limit_under_an_explicit_budget_is_refused() {
    let mut window = session("gpt-4o", r#"{"history_budget":30000}"#, 20, 100);
    window.set_overhead(500, 0).unwrap();
    let before = ctxwin::persist::export(&window);
    for (config, key, most) in [
        // 20000 - 4096 (auto reserve) - 500 overhead.
        (r#"{"context_limit":20000}"#, "context_limit", "15404"),
        (r#"{"context_limit":40000,"output_reserve":10000}"#, "output_reserve", "29500"),
    ] {
        let err = window.configure(config).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArg, "{config}");
        let message = err.message();
        assert!(message.contains(&format!("'{key}'")) || message.contains("'context_limit'"), "{config}: {message}");
        assert!(message.contains("30000") && message.contains(most), "{config}: {message}");
        assert_eq!(ctxwin::persist::export(&window), before, "{config}: a refusal changes nothing");
    }
    let mut budget = window.clone();
    budget.set_budget(20_000).unwrap();
    budget.configure(r#"{"context_limit":40000}"#).unwrap();
    window.configure(r#"{"context_limit":20000,"history_budget":15000}"#).unwrap();
    assert_eq!(window.settings().history_budget, 15000);
    window.configure(r#"{"history_budget":30000,"context_limit":0}"#).unwrap();
    window.configure(r#"{"context_limit":10000,"history_budget":"auto"}"#).unwrap();
    // The default budget is capped by what the model can take, as before.
    let mut default = session("gpt-4o", "{}", 20, 100);
    default.configure(r#"{"context_limit":8000}"#).unwrap();
}

/// A budget of exactly the default's 100000 tokens, given by the caller, is a given budget
/// like any other (it used to be taken for the default and capped silently); `"default"`
/// gives the default back. Saved and restored, each keeps its kind: a saved default leaves
/// the key out, so that libraries before `"default"` existed read it too.
#[test]
fn a_given_budget_of_100000_is_not_the_default() {
    let mut given = session("gpt-4o", r#"{"history_budget":100000}"#, 20, 100);
    assert_eq!(given.settings().to_value()["history_budget"], 100000);
    let err = given.configure(r#"{"context_limit":50000}"#).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArg);
    assert!(err.message().contains("'context_limit'") && err.message().contains("100000"), "{}", err.message());
    let restored = ctxwin::persist::import(&ctxwin::persist::export(&given)).unwrap();
    let err = restored.clone().configure(r#"{"context_limit":50000}"#).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArg, "a restored given budget is still given");

    given.configure(r#"{"history_budget":"default"}"#).unwrap();
    assert_eq!(given.settings().to_value()["history_budget"], "default");
    assert_eq!(given.settings().history_budget, 100000);
    given.configure(r#"{"context_limit":50000}"#).unwrap();
    let saved: serde_json::Value = serde_json::from_str(&ctxwin::persist::export(&given)).unwrap();
    assert!(saved["settings"].get("history_budget").is_none(), "a saved default leaves the key out");
    let mut restored = ctxwin::persist::import(&saved.to_string()).unwrap();
    assert_eq!(restored.settings().to_value()["history_budget"], "default");
    restored.configure(r#"{"context_limit":30000}"#).unwrap();

    let err = Window::new("gpt-4o").configure(r#"{"history_budget":"Default"}"#).unwrap_err();
    assert!(err.message().contains(r#""default", "auto" or a whole number"#), "{}", err.message());
}

/// The refusals that subtract what every request sends besides the history from the context
/// limit name each part of it: an open tool call's cancelled result (which the render adds)
/// is not called overhead or a pinned message, and the parts add up to the total.
#[test]
fn a_refused_budget_or_reserve_names_what_is_sent_besides_the_history() {
    let mut window = Window::new("claude-sonnet-4-5");
    window.configure(r#"{"pin_task":false}"#).unwrap();
    window.push(Kind::User, "Read it.").unwrap();
    window.push_tool_call("a", "read", "{}").unwrap();
    let cancelled = window.model().count(ctxwin::view::text::CANCELLED_RESULT).tokens;
    assert!(cancelled > 0);
    let limit = window.model().context_limit().unwrap();
    let err = window.set_budget(i32::try_from(limit).unwrap()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::OutOfRange);
    let parts = format!("{cancelled} sent besides the history (cancelled results of 1 open tool call {cancelled})");
    assert!(err.message().contains(&parts), "{}", err.message());
    assert!(!err.message().contains("overhead"), "{}", err.message());
    let most = u64::from(limit) - 4096 - u64::from(cancelled);
    assert!(err.message().contains(&format!("= {most} tokens")), "{}", err.message());

    window.set_overhead(500, 70).unwrap();
    window.push_tool_call("b", "ls", "{}").unwrap();
    let err = window.configure(&format!(r#"{{"output_reserve":{}}}"#, limit - 100)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArg);
    let total = 570 + 2 * cancelled;
    let parts = format!(
        "the {total} tokens every request sends besides the history (system prompt 500 + tool definitions 70 + \
         cancelled results of 2 open tool calls {})",
        2 * cancelled
    );
    assert!(err.message().contains(&parts), "{}", err.message());
    // With budget_includes_overhead the budget holds them: nothing is subtracted.
    window.configure(r#"{"budget_includes_overhead":true}"#).unwrap();
    let err = window.set_budget(i32::try_from(limit).unwrap()).unwrap_err();
    assert!(err.message().contains(&format!("output reserve 4096 = {} tokens", limit - 4096)), "{}", err.message());
}
