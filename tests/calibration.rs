//! Calibration of estimates from provider usage reports.

use ctxwin::{Count, ErrorKind, Kind, Window};

fn session(model: &str) -> Window {
    let mut window = Window::new(model);
    window.set_overhead(100, 50).unwrap();
    window.push(Kind::System, "You are a helpful agent.").unwrap();
    window.push(Kind::User, "Summarise the design document in three bullet points, please.").unwrap();
    window.push(Kind::Assistant, "Here are three bullet points about the design: it counts, it groups, it slides.").unwrap();
    window
}

#[test]
fn a_report_scales_estimates_by_the_learned_ratio() {
    let mut window = session("claude-sonnet-4-5");
    let before = window.live_tokens();
    assert!(!before.exact);
    let estimated = u64::from(before.tokens) - 150;
    // The provider counted 30% more than the estimate for the same request.
    let reported = 150 + (estimated as f64 * 1.3).round() as i64;
    window.observe_usage(0, window.message_count(), reported).unwrap();
    let after = window.live_tokens();
    assert!(!after.exact, "calibrated counts are still estimates");
    assert!((i64::from(after.tokens) - reported).abs() <= 2, "{after:?} vs {reported}");
    assert!((window.calibration_ratio() - 1.3).abs() < 0.02);
    // Raw counts stay cached; a new message is scaled too.
    let raw = window.message(1).unwrap().count();
    assert_eq!(
        raw,
        Window::new("claude-sonnet-4-5")
            .push(Kind::User, "Summarise the design document in three bullet points, please.")
            .unwrap()
    );
    let pushed = window.push(Kind::User, "And now in one sentence.").unwrap();
    let uncalibrated = ctxwin::Model::resolve("claude-sonnet-4-5").count("And now in one sentence.");
    assert_eq!(u64::from(pushed.tokens), (f64::from(uncalibrated.tokens) * window.calibration_ratio()).round() as u64);
}

#[test]
fn calibration_moves_the_boundary_and_set_model_forgets_it() {
    let mut window = Window::new("gemini-2.5-pro");
    window.configure(r#"{"low_water":1}"#).unwrap(); // prune only as far as the budget requires
    for _ in 0..10 {
        window.push_counted(Kind::User, Count::estimate(100));
    }
    window.set_budget(500).unwrap();
    assert_eq!(window.first_live_turn(), 5);
    window.observe_usage(5, 10, 1000).unwrap(); // the estimates were half the truth
    assert_eq!(window.first_live_turn(), 8, "500 tokens now hold 2.5 turns");
    window.set_model("gemini-2.5-flash");
    assert_eq!(window.calibration_ratio(), 1.0);
    assert_eq!(window.first_live_turn(), 5);
}

#[test]
fn exact_models_and_exact_ranges_learn_nothing() {
    let mut window = session("gpt-4o");
    let before = window.live_tokens();
    window.observe_usage(0, 3, i64::from(before.tokens) + 40).unwrap();
    assert_eq!(window.live_tokens(), before);
    assert_eq!(window.calibration_ratio(), 1.0);
}

/// Issue 15: the documented MISMATCH for a total below the exact part held only when the
/// request had estimates; an all-exact request took any total, and recorded it.
#[test]
fn an_exact_request_refuses_a_total_below_its_counts() {
    let mut window = session("gpt-4o");
    let exact = i64::from(window.live_tokens().tokens);
    let err = window.observe_usage(0, 3, exact - 1).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Mismatch, "{err}");
    assert!(err.message().contains("is below the exact part"), "{err}");
    assert_eq!(window.prompt_total(), None, "a refused report is not recorded");
    window.observe_usage(0, 3, exact).unwrap();
    assert_eq!(window.prompt_total(), Some(exact as u64));
}

#[test]
fn bad_reports_are_refused_and_change_nothing() {
    let mut window = session("claude-sonnet-4-5");
    let before = window.live_tokens();
    let cases = [
        (0, 4, 1000, ErrorKind::OutOfRange),
        (2, 1, 1000, ErrorKind::OutOfRange),
        (0, 3, -5, ErrorKind::InvalidArg),
        (0, 3, 120, ErrorKind::Mismatch), // below the 150 tokens of exact overhead
    ];
    for (first, end, total, kind) in cases {
        let err = window.observe_usage(first, end, total).unwrap_err();
        assert_eq!(err.kind(), kind, "{first}..{end} {total}: {err}");
    }
    assert_eq!(window.live_tokens(), before);
    assert_eq!(window.calibration_ratio(), 1.0);
    // Regression: a refused report used to be recorded as the provider's prompt total
    // (which the summary strategy's trigger watches).
    assert_eq!(window.prompt_total(), None);
}

#[test]
fn calibration_survives_export_and_import() {
    let mut window = session("claude-sonnet-4-5");
    let total = i64::from(window.live_tokens().tokens) + 25;
    window.observe_usage(0, 3, total).unwrap();
    let restored = ctxwin::persist::import(&ctxwin::persist::export(&window)).unwrap();
    assert_eq!(restored.calibration_ratio(), window.calibration_ratio());
    assert_eq!(restored.live_tokens(), window.live_tokens());
    let mut broken = serde_json::from_str::<serde_json::Value>(&ctxwin::persist::export(&window)).unwrap();
    // Edited on purpose below: without its checksum, as a document edited by hand must be.
    broken.as_object_mut().unwrap().remove("checksum");
    broken["calibration"]["real"] = serde_json::json!(-1.0);
    let err = ctxwin::persist::import(&broken.to_string()).unwrap_err();
    assert!(err.message().contains("calibration"), "{err}");
}
