//! The long-agent-run generator (tests/support/agent_run.rs) makes runs of the shape it
//! promises, and every route pushes them whole: pushed into a window with room for all of it,
//! the rendered request of each format passes the providers' structural rules and holds the
//! task, every call id, every output and every thinking signature.
//!
//! 6 runs per route by default (up to 300 steps); `CTXWIN_AGENT_RUNS=n` runs n.

#[path = "support/agent_run.rs"]
mod agent_run;
#[path = "support/provider_rules.rs"]
mod provider_rules;

use agent_run::{Route, Run, Shape, TOOLS, escaped_head};
use ctxwin::json::{self, Format};
use ctxwin::{Kind, Window};
use provider_rules::{Rules, check};
use serde_json::Value;

fn runs() -> u64 {
    std::env::var("CTXWIN_AGENT_RUNS").ok().and_then(|s| s.parse().ok()).unwrap_or(6)
}

fn shape() -> Shape {
    Shape { steps: 10..=300, skill: 5, ..Shape::default() }
}

#[test]
fn runs_have_the_promised_shape() {
    let mut skills = 0;
    let mut thinking = 0;
    for seed in 0..runs() * 4 {
        let run = Run::generate(seed, &shape());
        assert_eq!(run, Run::generate(seed, &shape()), "seed {seed}: not deterministic");
        assert!((10..=300).contains(&run.steps.len()), "seed {seed}: {} steps", run.steps.len());
        assert!(!run.task.trim().is_empty());
        let (last, working) = run.steps.split_last().unwrap();
        assert!(last.calls.is_empty() && last.text.as_deref().is_some_and(|t| !t.trim().is_empty()), "the final answer");
        let mut ids = std::collections::HashSet::new();
        for step in working {
            assert!((1..=6).contains(&step.calls.len()));
            assert_eq!(step.calls.len(), step.outputs.len());
            for call in &step.calls {
                assert!(TOOLS.contains(&call.name));
                let arguments: Value = serde_json::from_str(&call.arguments).unwrap();
                assert!(arguments.is_object(), "{}", call.arguments);
                assert!(ids.insert(call.token.clone()), "seed {seed}: id {} twice", call.token);
            }
            assert!(step.outputs.iter().all(|output| !output.text.is_empty()));
            skills += usize::from(step.skill.is_some());
            thinking += usize::from(step.thinking.as_ref().is_some_and(|t| !t.signature.is_empty() && !t.text.is_empty()));
        }
    }
    assert!(skills > 0 && thinking > 0, "skills {skills}, thinking {thinking}");
    // A step of many parallel calls, outputs capped.
    let wide = Run::parallel(7, 5000, 200);
    assert_eq!(wide.steps[0].calls.len(), 5000);
    assert!(wide.steps[0].outputs.iter().all(|output| output.text.len() <= 200));
}

/// Pushes run `seed` by `route` into a window with room for all of it, rendered in `format`.
fn pushed(seed: u64, route: Route, format: Format) -> (Run, Window) {
    let run = Run::generate(seed, &shape());
    let mut window = Window::new(Run::model(Some(format)));
    window
        .configure(&format!(r#"{{"format":"{}","history_budget":1000000000,"context_limit":2000000000}}"#, format.key()))
        .unwrap();
    run.push_task(&mut window, route).unwrap_or_else(|e| panic!("seed {seed} {route:?}: task: {e}"));
    for i in 0..run.steps.len() {
        run.push_step(&mut window, route, i).unwrap_or_else(|e| panic!("seed {seed} {route:?}: step {i}: {e}"));
    }
    (run, window)
}

fn check_route(route: Route) {
    for seed in 0..runs() {
        for format in route.format().map_or(Format::ALL.to_vec(), |format| vec![format]) {
            let (run, mut window) = pushed(seed, route, format);
            window.prepare().unwrap();
            let body = json::render_request(&window, r#"{"model":"m","max_tokens":256}"#).unwrap();
            let value: Value = serde_json::from_str(&body).unwrap();
            if let Err(broken) = check(Rules::of(format), &value) {
                panic!("seed {seed} {route:?} in {format:?}: {broken}");
            }
            let sent = |text: &str| body.contains(&escaped_head(text));
            assert!(sent(&run.task), "seed {seed} {route:?} {format:?}: the task is not sent");
            let typed = route.format().is_none();
            for (i, step) in run.steps.iter().enumerate() {
                for (call, output) in step.calls.iter().zip(&step.outputs) {
                    // Gemini sends ids it was given; the typed routes' ids are Chat's spelling.
                    let id = call.id(if typed { None } else { Some(format) });
                    assert!(body.contains(&id), "seed {seed} {route:?} {format:?}: step {i}: call {id} is not sent");
                    assert!(sent(&output.text), "seed {seed} {route:?} {format:?}: step {i}: output of {id} is not sent");
                }
                // Signatures reach the wire only when the provider's JSON carried them.
                if let (Some(thinking), false) = (&step.thinking, typed || format == Format::OpenAiChat) {
                    assert!(body.contains(&thinking.signature), "seed {seed} {format:?}: step {i}: signature is not sent");
                }
            }
            let users = (0..window.message_count()).filter(|&i| window.message(i).unwrap().kind() == Kind::User).count();
            let skills = run.steps.iter().filter(|step| step.skill.is_some()).count();
            assert_eq!(window.turn_count(), 1 + skills, "seed {seed} {route:?}: one turn per task or skill ({users} users)");
        }
    }
}

#[test]
fn chat_json_pushes_whole() {
    check_route(Route::Json(Format::OpenAiChat));
}

#[test]
fn responses_json_pushes_whole() {
    check_route(Route::Json(Format::OpenAiResponses));
}

#[test]
fn anthropic_json_pushes_whole() {
    check_route(Route::Json(Format::Anthropic));
}

#[test]
fn gemini_json_pushes_whole() {
    check_route(Route::Json(Format::Gemini));
}

#[test]
fn typed_pushes_whole_in_every_format() {
    check_route(Route::Typed);
}

#[test]
fn host_messages_push_whole_in_every_format() {
    check_route(Route::Message);
}
