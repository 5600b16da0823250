//! Pairing at push time, on generated agent runs (tests/support/agent_run.rs): a result
//! whose call is in an older step of the same turn (a late result) pairs with it, and every
//! format sends it in its call's step (issue 24); a result whose id no call carries
//! (a mistyped id) is refused by `push_json` in every format, naming the id, as `push_tool`
//! refuses it, and nothing is appended (issue 26 item 3); under
//! `"invalid_tool_parts":"keep"` it is kept, flagged, and left out of a request that still
//! passes the provider's rules.

#[path = "support/agent_run.rs"]
mod agent_run;
#[path = "support/provider_rules.rs"]
mod provider_rules;

use agent_run::{Route, Run, Shape, escaped_head};
use ctxwin::json::{self, Format};
use ctxwin::view::ItemType;
use ctxwin::{ErrorKind, Kind, Window};
use provider_rules::{Rules, check};
use serde_json::Value;

fn window(format: Format, keep: bool) -> Window {
    let mut window = Window::new(Run::model(Some(format)));
    let keep = if keep { r#","invalid_tool_parts":"keep""# } else { "" };
    window.configure(&format!(r#"{{"format":"{}"{keep}}}"#, format.key())).unwrap();
    window
}

/// `push` with every occurrence of `id` replaced by `typo`.
fn retyped(push: &Value, id: &str, typo: &str) -> String {
    push.to_string().replace(&format!("\"{id}\""), &format!("\"{typo}\""))
}

#[test]
fn a_mistyped_result_id_is_refused_by_push_json_in_every_format() {
    let run = Run::generate(5, &Shape { skill: 0, ..Shape::with_steps(12) });
    for format in Format::ALL {
        for keep in [false, true] {
            let mut window = window(format, keep);
            run.push_task(&mut window, Route::Json(format)).unwrap();
            for i in 0..3 {
                run.push_step(&mut window, Route::Json(format), i).unwrap();
            }
            let pushes = run.step_pushes(format, 3);
            json::push_json(&mut window, &pushes[0].to_string()).unwrap(); // the step's calls
            let call = &run.steps[3].calls[0];
            let id = call.id(Some(format));
            let typo = format!("{id}x");
            let before = window.message_count();
            let bad = retyped(&pushes[1], &id, &typo); // its (first) results, the id mistyped
            let pushed = json::push_json(&mut window, &bad);
            if !keep {
                let e = pushed.unwrap_err();
                assert_eq!(e.kind(), ErrorKind::InvalidArg, "{format:?}");
                assert!(e.message().contains(&format!("'{typo}'")), "{format:?}: {e}");
                assert_eq!(window.message_count(), before, "{format:?}: appended on refusal");
                let typed = window.push_tool(Kind::ToolResult, &typo, "output").unwrap_err();
                assert!(typed.message().contains(&format!("'{typo}'")), "{format:?}: push_tool: {typed}");
                assert_eq!(window.message_count(), before);
                continue;
            }
            pushed.unwrap();
            let kept: Vec<usize> =
                (before..window.message_count()).filter(|&i| window.message(i).unwrap().kept_as_text()).collect();
            assert_eq!(kept.len(), 1, "{format:?}: exactly the mistyped result is flagged");
            assert_eq!(window.message(kept[0]).unwrap().call_id(), Some(typo.as_str()));
            window.prepare().unwrap();
            let body = json::render_request(&window, r#"{"model":"m","max_tokens":256}"#).unwrap();
            check(Rules::of(format), &serde_json::from_str(&body).unwrap()).unwrap_or_else(|e| panic!("{format:?}: {e}"));
            assert!(!body.contains(&format!("\"{typo}\"")), "{format:?}: the kept result is sent");
        }
    }
}

/// Checks that the late results at `results` pair with their calls at `calls`: no pairing
/// defect, and a request in `format` that passes the provider's rules, sends each result
/// (its text's head) and no cancelled result; or, when `budget` drops their calls' step,
/// sends neither the calls nor the results.
fn paired_late(window: &mut Window, format: Format, calls: &[usize], results: &[usize], dropped: bool) {
    assert_eq!(window.pairing_defects(), vec![], "{format:?}");
    window.prepare().unwrap();
    let body = json::render_request(window, r#"{"model":"m","max_tokens":256}"#).unwrap();
    check(Rules::of(format), &serde_json::from_str(&body).unwrap()).unwrap_or_else(|e| panic!("{format:?}: {e}"));
    assert!(!body.contains(CANCELLED), "{format:?}: a late call was cancelled");
    // The view lists what the request sends (a host looping over it sends no orphan).
    let listed: Vec<usize> = (0..window.view_len())
        .filter_map(|i| window.view_item(i))
        .filter(|item| item.item_type == ItemType::Message)
        .map(|item| item.index)
        .collect();
    for &index in calls.iter().chain(results) {
        assert_eq!(listed.contains(&index), !dropped, "{format:?}: view item {index}");
    }
    for (&call, &result) in calls.iter().zip(results) {
        let id = window.message(call).unwrap().call_id().unwrap().to_owned();
        let text = escaped_head(window.message(result).unwrap().text().unwrap());
        // Another message may hold the same real text (a file read twice, or written): then
        // the head found in the body is not this result's, and proves nothing.
        let elsewhere = (0..window.message_count()).filter(|&i| i != result).filter_map(|i| window.message(i)).any(|m| {
            m.text().is_some_and(|t| serde_json::to_string(t).unwrap().contains(&text))
                || m.raw_json().is_some_and(|raw| raw.contains(&text))
        });
        if !elsewhere {
            assert_eq!(body.contains(&text), !dropped, "{format:?}: late result {result} of {id}");
        }
        assert_eq!(body.contains(&format!("\"{id}\"")), !dropped, "{format:?}: call {id}");
    }
}

/// Pushes `run`'s task, its first step's calls, twenty more steps, and then the first step's
/// results (late): the ledger indices of those calls and of their results.
fn push_late_results(run: &Run, window: &mut Window) -> (Vec<usize>, Vec<usize>) {
    run.push_task(window, Route::Typed).unwrap();
    let late = &run.steps[0];
    let first_call = window.message_count();
    for call in &late.calls {
        window.push_tool_call(&call.id(None), call.name, &call.arguments).unwrap();
    }
    let calls: Vec<usize> = (first_call..window.message_count()).collect();
    for i in 1..21 {
        run.push_step(window, Route::Typed, i).unwrap();
    }
    let first_result = window.message_count();
    for (call, output) in late.calls.iter().zip(&late.outputs) {
        window.push_tool(Kind::ToolResult, &call.id(None), &output.text).unwrap();
    }
    (calls, (first_result..window.message_count()).collect())
}

/// The text of a cancelled result.
const CANCELLED: &str = "[Tool call cancelled";

#[test]
fn late_results_are_sent_in_their_calls_step_in_every_format() {
    let run = Run::generate(6, &Shape { skill: 0, ..Shape::with_steps(30) });
    for format in Format::ALL {
        let mut window = window(format, false);
        let (calls, results) = push_late_results(&run, &mut window);
        // Sent in the running step, and once a new step completes it.
        paired_late(&mut window, format, &calls, &results, false);
        window.push(Kind::Assistant, "done").unwrap();
        paired_late(&mut window, format, &calls, &results, false);
        // A budget that drops the first step drops its calls' late results too.
        window.configure(r#"{"strategy":"sliding","history_budget":8000,"low_water":1.0}"#).unwrap();
        paired_late(&mut window, format, &calls, &results, true);
    }
}

#[test]
fn a_result_whose_call_is_in_an_older_step_of_the_turn_is_taken() {
    let run = Run::generate(6, &Shape { skill: 0, ..Shape::with_steps(30) });
    let mut window = Window::new("gpt-4o");
    let (calls, results) = push_late_results(&run, &mut window);
    let late = &run.steps[0];
    window.push(Kind::Assistant, "done").unwrap();
    paired_late(&mut window, Format::OpenAiChat, &calls, &results, false);
    window.truncate(window.message_count() - 1).unwrap();
    // Answered once, and a call that never came: refused, nothing appended.
    let count = window.message_count();
    let again = window.push_tool(Kind::ToolResult, &late.calls[0].id(None), "again").unwrap_err();
    assert!(again.message().contains("already answered"), "{again}");
    let never = window.push_tool(Kind::ToolResult, "call_never", "x").unwrap_err();
    assert!(never.message().contains("'call_never'"), "{never}");
    assert_eq!(window.message_count(), count);
    // A rewind rebuilds the running turn's index: the result taken off can be pushed again
    // (its call is open again), the one before it cannot (still answered).
    let taken = window.message(count - 1).unwrap();
    let (taken_id, taken_text) = (taken.call_id().unwrap().to_owned(), taken.text().unwrap().to_owned());
    let before = window.message(count - 2).unwrap();
    let (before_id, before_text) = (before.call_id().unwrap().to_owned(), before.text().unwrap().to_owned());
    window.truncate(count - 1).unwrap();
    let refused = window.push_tool(Kind::ToolResult, &before_id, &before_text).unwrap_err();
    assert!(refused.message().contains("already answered"), "{refused}");
    window.push_tool(Kind::ToolResult, &taken_id, &taken_text).unwrap();
    window.push(Kind::Assistant, "done").unwrap();
    paired_late(&mut window, Format::OpenAiChat, &calls, &results, false);
    // A new turn starts a new index: the old ids no longer pair.
    window.push(Kind::User, "next").unwrap();
    assert!(window.push_tool(Kind::ToolResult, &run.steps[1].calls[0].id(None), "x").is_err());
}

/// A refusal naming a call id repeats at most `MAX_ECHO_BYTES` of it, by every push route
/// (docs/api-conventions.md: "Errors repeat at most 200 bytes of an offending value"):
/// before, the id was repeated whole, so a 300-byte id made a 368-byte message and a 1 MiB
/// one a message cut only at the 4 KiB cap.
#[test]
fn a_refusal_repeats_at_most_the_start_of_a_long_call_id() {
    use ctxwin::error::MAX_ECHO_BYTES;
    use ctxwin::window::Part;
    let long = "x".repeat(100_000);
    let bounded = |what: &str, error: ctxwin::Error| {
        let message = error.message();
        assert!(message.len() < MAX_ECHO_BYTES + 200, "{what}: {} bytes: {message:.300}", message.len());
        assert!(message.contains("… (100000 bytes)"), "{what}: {message:.300}");
    };
    let mut window = Window::new("gpt-4o");
    bounded("a result before the task", window.push_tool(Kind::ToolResult, &long, "r").unwrap_err());
    window.push(Kind::User, "Task: run the tests.").unwrap();
    bounded("a result without its call", window.push_tool(Kind::ToolResult, &long, "r").unwrap_err());
    bounded("a call without a name", window.push_tool_call(&long, "", "{}").unwrap_err());
    window.push_tool_call(&long, "run", "{}").unwrap();
    bounded("a call reusing an id", window.push_tool_call(&long, "run", "{}").unwrap_err());
    let part = Part { kind: Kind::ToolCall, text: "{}", replaced: false, call_id: Some(&long), name: Some("run") };
    bounded("a host message reusing an id", window.push_message(&[part], 7).unwrap_err());
    let orphan = serde_json::json!({"role": "tool", "tool_call_id": format!("y{long}"), "content": "r"});
    let error = json::push_json(&mut window, &orphan.to_string()).unwrap_err();
    assert!(error.message().len() < MAX_ECHO_BYTES + 300, "push_json: {} bytes", error.message().len());
}
