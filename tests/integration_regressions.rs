//! Regressions found by the integration tests (view invariants with summaries and usage
//! reports, persistence round trips, render_json over the view), each kept as the smallest
//! case that failed.

use ctxwin::classify::{ErrorCategory, ErrorInfo};
use ctxwin::{Count, ErrorKind, Kind, Window};

fn overflow(excess: i64) -> ErrorInfo {
    ErrorInfo { category: ErrorCategory::ContextOverflow, limit: None, actual: None, excess: Some(excess) }
}

/// `recover` succeeded when the excess was larger than the whole history and the newest
/// turn cost nothing (a calibrated estimate rounded to 0): the view "reached" the saturated
/// target of 0 tokens without shrinking by the excess.
#[test]
fn recover_refuses_an_excess_larger_than_the_history() {
    let mut window = Window::new("gpt-4o");
    window.configure(r#"{"strategy":"monologue"}"#).unwrap();
    window.push_counted(Kind::User, Count::exact(19));
    window.end_turn();
    window.push_counted(Kind::User, Count::exact(0));
    window.end_turn();
    let before = ctxwin::persist::export(&window);
    let err = window.recover(&overflow(263)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::OutOfRange, "{err}");
    assert_eq!(ctxwin::persist::export(&window), before, "a failed recovery changes nothing");
    // An excess the history can cover is still recovered.
    let mut window = Window::new("gpt-4o");
    for _ in 0..4 {
        window.push_counted(Kind::User, Count::exact(100));
        window.end_turn();
    }
    window.configure(r#"{"pin_task":false}"#).unwrap();
    window.recover(&overflow(150)).unwrap();
    assert!(window.view_history().tokens() + 150 <= 400);
}

/// A usage report that changes the calibration changes the tokens of every estimated item
/// of the view, not what the view sends: the generation stays, so a summary requested
/// before the report is still taken (it used to bump the generation at every report of an
/// estimated model, and a summary answered after the next request was always refused).
#[test]
fn a_new_calibration_keeps_the_generation() {
    let mut window = Window::new("claude-sonnet-4-5");
    window.configure(r#"{"history_budget":9000,"summary_budget":200}"#).unwrap();
    for turn in 0..4 {
        window.push(Kind::User, &format!("Please read src/m{turn}.rs and summarise it. ").repeat(300)).unwrap();
        window.push(Kind::Assistant, &"It declares the modules of the crate. ".repeat(300)).unwrap();
        window.end_turn();
    }
    assert!(window.needs_summary(), "turns were pruned");
    window.summary_request().unwrap();
    // One report is taken as an undeclared overhead (the ratio's prior): a first report of
    // a request of another size makes the second one move the ratio.
    let first = i64::from(window.message(window.start()).unwrap().count().tokens) * 2;
    window.observe_usage(window.start(), window.start() + 1, first).unwrap();
    let (generation, tokens, ratio) = (window.generation(), window.view_item(0).unwrap().tokens, window.calibration_ratio());
    let raw: u32 = (window.start()..window.message_count()).map(|i| window.message(i).unwrap().count().tokens).sum();
    window.observe_usage(window.start(), window.message_count(), i64::from(raw) * 11 / 10).unwrap();
    assert_ne!(window.calibration_ratio(), ratio);
    assert_ne!(window.view_item(0).unwrap().tokens, tokens);
    assert_eq!(window.generation(), generation, "only tokens changed, the view sends the same");
    let pending = window.pending_summary().unwrap();
    window.set_summary(pending.generation, "Read src/m0.rs.", 1).unwrap();
}

/// The calibration sums did not survive export and import: serde_json's default float
/// parser may be off by one unit in the last place, so an import of `417.40000000000003`
/// read back `417.4` and the restored window exported something else (the crate now reads
/// floats with `float_roundtrip`).
#[test]
fn calibration_sums_survive_export_and_import_to_the_bit() {
    let mut window = Window::new("claude-sonnet-4-5");
    window.push(Kind::User, "Please read src/lib.rs.").unwrap();
    window.end_turn();
    let mut saved: serde_json::Value = serde_json::from_str(&ctxwin::persist::export(&window)).unwrap();
    // Edited on purpose below: without its checksum, as a document edited by hand must be.
    saved.as_object_mut().unwrap().remove("checksum");
    saved["calibration"] =
        serde_json::json!({"real": 417.40000000000003, "estimated": 537.8, "reports": 1.0, "inverse": 0.5, "ratios": 0.75});
    let saved = saved.to_string();
    assert!(saved.contains("417.40000000000003"), "{saved}");
    let restored = ctxwin::persist::import(&saved).unwrap();
    let state = restored.calibration().state();
    assert_eq!((state.real, state.estimated), (417.40000000000003, 537.8));
    let mut again: serde_json::Value = serde_json::from_str(&ctxwin::persist::export(&restored)).unwrap();
    again.as_object_mut().unwrap().remove("checksum");
    assert_eq!(again.to_string(), saved);
}

/// A summary request handed out before a restart is still answerable after it: the pending
/// request is saved with the window.
#[test]
fn a_pending_summary_request_survives_export_and_import() {
    let mut window = Window::new("gpt-4o");
    window.set_budget(60).unwrap();
    for turn in 0..6 {
        window.push(Kind::User, &format!("turn {turn}: please refactor module {turn} and run its tests")).unwrap();
        window.push_counted(Kind::ToolResult, Count::exact(25));
        window.end_turn();
    }
    assert!(window.needs_summary());
    window.summary_request().unwrap();
    let generation = window.generation();
    let mut restored = ctxwin::persist::import(&ctxwin::persist::export(&window)).unwrap();
    assert_eq!(restored.pending_summary(), window.pending_summary());
    restored.set_summary(generation, "Refactored modules 0 to 3.", 1).unwrap();
    window.set_summary(generation, "Refactored modules 0 to 3.", 1).unwrap();
    assert_eq!(ctxwin::persist::export(&restored), ctxwin::persist::export(&window));
    // A pending request that does not fit the ledger is refused.
    let mut doc: serde_json::Value = serde_json::from_str(&ctxwin::persist::export(&restored)).unwrap();
    // Edited on purpose below: without its checksum, as a document edited by hand must be.
    doc.as_object_mut().unwrap().remove("checksum");
    doc["pending_summary"] = serde_json::json!({"generation": 0, "first_turn": 3, "end_turn": 99});
    let err = ctxwin::persist::import(&doc.to_string()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Parse);
    assert!(err.message().contains("pending_summary"), "{err}");
}
