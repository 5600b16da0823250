//! Every strategy and staged policy, in every provider format, over generated long agent
//! runs (tests/support/agent_run.rs: one task, then 10 to 300 steps of 1 to 6 parallel
//! calls with outputs made of real files, thinking with signatures, skills inserted as user
//! messages) pushed as the provider's JSON, `prepare` and `render_request` before every
//! model call as an agent does. Each request:
//! - holds its history within the budget, unless nothing it sends is left to drop (every
//!   message sent belongs to the newest `keep_recent_steps` steps or is a USER message);
//! - fits the context limit with the output reserve, or `prepare` refuses only because the
//!   task, the pins and the newest steps alone exceed it;
//! - sends the task;
//! - passes the providers' structural rules (tests/support/provider_rules.rs).
//!
//! `CTXWIN_REQUEST_BODIES=file` appends every body to `file` as JSON Lines, which
//! `make sdk-types` validates with the providers' own SDK types (tests/sdk_types.py).
//! `CTXWIN_BUDGET_RUNS=n` runs n runs per format and policy (default 2).

#[path = "support/agent_run.rs"]
mod agent_run;
#[path = "support/provider_rules.rs"]
mod provider_rules;

use agent_run::{Route, Run, Shape, escaped_head};
use ctxwin::json::{self, Format};
use ctxwin::view::ItemType;
use ctxwin::{ErrorKind, Kind, Window};
use provider_rules::{Rules, check};
use serde_json::{Value, json};
use std::io::Write;

/// The five strategies and the staged policies, as configuration keys.
const POLICIES: [&str; 10] = [
    r#""strategy":"sliding""#,
    r#""strategy":"drop_oldest""#,
    r#""strategy":"tiered""#,
    r#""strategy":"monologue""#,
    r#""strategy":"summary""#,
    r#""stages":["clear","sliding"]"#,
    r#""stages":["clear","summary"]"#,
    r#""stages":["clear","drop_oldest"]"#,
    r#""stages":["clear","monologue"]"#,
    r#""stages":["clear","tiered"]"#,
];

const BUDGET: u64 = 12_000;
const LIMIT: u64 = 40_000;
const RESERVE: u64 = 4_000;
const KEEP_RECENT_STEPS: usize = 3;

fn runs() -> u64 {
    std::env::var("CTXWIN_BUDGET_RUNS").ok().and_then(|n| n.parse().ok()).unwrap_or(2)
}

/// One agent run under one policy: pushes its steps, checking the request before each.
struct Agent {
    window: Window,
    format: Format,
    /// The ledger index of each pushed step's first message.
    step_starts: Vec<usize>,
    context: String,
    requests: usize,
    over_budget: usize,
}

impl Agent {
    /// Requests went over the budget only where the newest steps, which are kept, outweigh
    /// it alone (a few large files read in a row; `request` checks there was nothing older
    /// to drop): rare, not the rule.
    fn assert_rarely_over_budget(&self) {
        assert!(
            self.over_budget * 10 < self.requests,
            "{}: {} of {} requests over the budget",
            self.context,
            self.over_budget,
            self.requests
        );
    }

    /// The first ledger index of the newest `keep_recent_steps` steps pushed.
    fn newest_floor(&self) -> usize {
        let n = self.step_starts.len();
        if n < KEEP_RECENT_STEPS { 0 } else { self.step_starts[n - KEEP_RECENT_STEPS] }
    }

    /// True when the view sends nothing a strategy may drop: every ledger message it sends
    /// (whole or shortened) is pinned, a USER message, or one of the newest steps'.
    fn nothing_left_to_drop(&self) -> bool {
        let floor = self.newest_floor();
        (0..self.window.view_len()).filter_map(|i| self.window.view_item(i)).all(|item| {
            item.item_type == ItemType::Synthetic
                || item.kind == Kind::User
                || item.index >= floor
                || self.window.is_pinned_at(item.index)
        })
    }

    /// What an agent does before calling the model: prepare, render, send.
    fn request(&mut self, task: &str, out: &mut Option<std::fs::File>) {
        let when = format!("{} request {}", self.context, self.requests);
        self.requests += 1;
        let info = match self.window.prepare() {
            Ok(info) => info,
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::OutOfRange, "{when}: {e}");
                assert!(self.nothing_left_to_drop(), "{when}: refused with older steps still sent: {e}");
                return;
            }
        };
        assert!(info.tokens + RESERVE <= LIMIT, "{when}: {} tokens + reserve {RESERVE} over the limit {LIMIT}", info.tokens);
        let history = self.window.view_history().tokens();
        if history > BUDGET {
            self.over_budget += 1;
            assert!(
                self.nothing_left_to_drop(),
                "{when}: history {history} over the budget {BUDGET} with older steps still sent"
            );
        }
        let body = json::render_request(&self.window, r#"{"model":"m","max_tokens":256}"#).unwrap();
        let value: Value = serde_json::from_str(&body).unwrap();
        if let Err(broken) = check(Rules::of(self.format), &value) {
            panic!("{when}: {broken}");
        }
        assert!(body.contains(&escaped_head(task)), "{when}: the task is not sent");
        if let Some(file) = out {
            let line = json!({"format": self.format.key(), "body": value}).to_string() + "\n";
            file.write_all(line.as_bytes()).unwrap();
        }
    }
}

#[test]
fn every_policy_holds_budget_limit_and_task_over_long_runs_in_every_format() {
    let mut out = std::env::var_os("CTXWIN_REQUEST_BODIES")
        .map(|path| std::fs::OpenOptions::new().create(true).append(true).open(path).unwrap());
    let shape = Shape { steps: 10..=300, skill: 3, ..Shape::default() };
    let (mut requests, mut over) = (0, 0);
    for seed in 0..runs() {
        let run = Run::generate(seed, &shape);
        for format in Format::ALL {
            for policy in POLICIES {
                let mut window = Window::new(Run::model(Some(format)));
                window
                    .configure(&format!(
                        r#"{{"format":"{}",{policy},"history_budget":{BUDGET},"context_limit":{LIMIT},
                            "output_reserve":{RESERVE},"keep_recent_steps":{KEEP_RECENT_STEPS}}}"#,
                        format.key()
                    ))
                    .unwrap();
                let context = format!("seed {seed} {format:?} {policy}");
                let mut agent = Agent { window, format, step_starts: Vec::new(), context, requests: 0, over_budget: 0 };
                run.push_task(&mut agent.window, Route::Json(format)).unwrap();
                for i in 0..run.steps.len() {
                    agent.request(&run.task, &mut out);
                    agent.step_starts.push(agent.window.message_count());
                    run.push_step(&mut agent.window, Route::Json(format), i)
                        .unwrap_or_else(|e| panic!("{}: step {i}: {e}", agent.context));
                }
                agent.request(&run.task, &mut out);
                requests += agent.requests;
                over += agent.over_budget;
            }
        }
    }
    eprintln!("{requests} requests, {over} over the budget with nothing left to drop");
    // The runs are long enough for the budget to matter, and most requests hold it.
    assert!(requests > 0 && over * 10 < requests, "{over} of {requests} requests over the budget");
}

/// A one-task loop under `summary`, and under `sliding` with the host summarising what it
/// pruned, the host answering every summary request (standalone and as the conversation):
/// the summary archives the oldest steps of the running turn and stands where they were,
/// after the task; every request holds the limit, and the budget unless the newest steps kept
/// outweigh it alone,
/// sends the task and passes the providers' rules (every call with its results).
#[test]
fn summary_summarises_the_oldest_steps_of_a_one_task_loop_in_every_format() {
    let shape = Shape { steps: 160..=160, skill: 0, ..Shape::default() };
    let run = Run::generate(7, &shape);
    for (format, strategy) in Format::ALL.into_iter().flat_map(|f| [(f, "summary"), (f, "sliding")]) {
        for request in ["standalone", "conversation"] {
            let mut window = Window::new(Run::model(Some(format)));
            window
                .configure(&format!(
                    r#"{{"format":"{}","strategy":"{strategy}","summary_request":"{request}","summary_budget":400,
                        "history_budget":{BUDGET},"context_limit":{LIMIT},"output_reserve":{RESERVE},
                        "keep_recent_steps":{KEEP_RECENT_STEPS}}}"#,
                    format.key()
                ))
                .unwrap();
            let context = format!("{format:?} {strategy} {request}");
            let mut agent = Agent { window, format, step_starts: Vec::new(), context, requests: 0, over_budget: 0 };
            run.push_task(&mut agent.window, Route::Json(format)).unwrap();
            let mut summaries = 0;
            for i in 0..run.steps.len() {
                if agent.window.needs_summary() {
                    json::summary_request(&mut agent.window).unwrap_or_else(|e| panic!("{}: {e}", agent.context));
                    summaries += 1;
                    let text = format!("Summary {summaries}: the task is in progress; files read and edited so far.");
                    let generation = agent.window.generation();
                    agent.window.set_summary(generation, &text, 1).unwrap_or_else(|e| panic!("{}: {e}", agent.context));
                    // Under `sliding` the summary's own tokens can push one more step out of the
                    // view; the next summary covers it.
                    let due = agent.window.needs_summary();
                    assert!(!due || strategy == "sliding", "{}: a summary is still due after one", agent.context);
                    let record = agent.window.summary().unwrap().clone();
                    let end = record.last_archived + 1;
                    // The archive ends at a step boundary inside the one turn: the task stays.
                    let task = agent.window.turn_info(0).unwrap().first_message;
                    assert_eq!(agent.window.turn_count(), 1, "{}", agent.context);
                    assert_eq!(record.archived_turns, 0, "{}", agent.context);
                    assert!(end > task + 1, "{}: {record:?}", agent.context);
                    assert!(agent.window.step_starts().contains(&end), "{}: {record:?}", agent.context);
                    assert!(agent.window.start() >= end, "{}", agent.context);
                    assert!(record.tokens_after < record.tokens_before, "{}: {record:?}", agent.context);
                    // The summary stands where the archived steps were: after the task.
                    let body = json::render_request(&agent.window, r#"{"model":"m","max_tokens":256}"#).unwrap();
                    let (at_task, at_summary) = (body.find(&escaped_head(&run.task)), body.find(&text));
                    assert!(at_task.is_some() && at_task < at_summary, "{}: task then summary in {body}", agent.context);
                }
                agent.request(&run.task, &mut None);
                agent.step_starts.push(agent.window.message_count());
                run.push_step(&mut agent.window, Route::Json(format), i).unwrap();
            }
            agent.request(&run.task, &mut None);
            eprintln!("{}: {summaries} summaries, {} requests over {} steps", agent.context, agent.requests, run.steps.len());
            assert!(summaries >= 2, "{}: {summaries} summaries over {} steps", agent.context, run.steps.len());
            agent.assert_rarely_over_budget();
            // The view sends nothing archived besides the task: the summary stands for it.
            let end = agent.window.summary().unwrap().last_archived + 1;
            for item in (0..agent.window.view_len()).filter_map(|i| agent.window.view_item(i)) {
                let archived = item.item_type != ItemType::Synthetic && item.index < end;
                assert!(!archived || agent.window.is_pinned_at(item.index), "{}: archived {item:?} sent", agent.context);
            }
        }
    }
}

/// A one-task loop under `summary` with `history_budget: "auto"`, the answer's room no
/// larger than the output reserve (2,000 tokens of 16,000), the host asking for the summary
/// as the conversation as soon as one is due (after a step, before the next `prepare`):
/// every request is given, cut after a step where the whole conversation does not fit. It
/// starts as the conversation sent does, passes the providers' rules and, counted back from
/// its JSON, fits the limit less `summary_budget`.
#[test]
fn conversation_summary_requests_fit_at_the_limit_in_every_format() {
    let shape = Shape { steps: 160..=160, skill: 0, ..Shape::default() };
    let run = Run::generate(9, &shape);
    let settings = |format: Format| {
        format!(
            r#"{{"format":"{}","strategy":"summary","summary_request":"conversation","history_budget":"auto",
                "context_limit":16000,"output_reserve":2000,"summary_budget":2000}}"#,
            format.key()
        )
    };
    // Tokens of a conversation array as a fresh window counts it, parsed back.
    let counted = |format: Format, conversation: &[Value]| {
        let mut fresh = Window::new(Run::model(Some(format)));
        fresh.configure(&format!(r#"{{"format":"{}","context_limit":1000000}}"#, format.key())).unwrap();
        json::push_json(&mut fresh, &Value::from(conversation.to_vec()).to_string()).unwrap();
        u64::from(fresh.live_tokens().tokens)
    };
    for format in Format::ALL {
        let mut window = Window::new(Run::model(Some(format)));
        window.configure(&settings(format)).unwrap();
        run.push_task(&mut window, Route::Json(format)).unwrap();
        let mut summaries = 0;
        for i in 0..run.steps.len() {
            if let Err(e) = window.prepare() {
                assert_eq!(e.kind(), ErrorKind::OutOfRange, "{format:?} step {i}: {e}");
            }
            run.push_step(&mut window, Route::Json(format), i).unwrap();
            if !window.needs_summary() {
                continue;
            }
            let now: Vec<Value> = serde_json::from_str(&json::render_json(&window).unwrap()).unwrap();
            let request = json::summary_request(&mut window).unwrap_or_else(|e| panic!("{format:?} step {i}: {e}"));
            let request: Vec<Value> = serde_json::from_str(&request).unwrap();
            let key = match format {
                Format::OpenAiChat | Format::Anthropic => "messages",
                Format::OpenAiResponses => "input",
                Format::Gemini => "contents",
            };
            if let Err(broken) = check(Rules::of(format), &json!({ key: request })) {
                panic!("{format:?} step {i}: {broken}");
            }
            // All but the last message are the conversation's (where roles alternate the
            // instruction may join its last message).
            let shared = request.len() - 1;
            assert_eq!(request[..shared], now[..shared], "{format:?} step {i}");
            // Less what counting the JSON adds to the conversation over the window's count.
            let over = counted(format, &now).saturating_sub(u64::from(window.live_tokens().tokens));
            let tokens = counted(format, &request).saturating_sub(over);
            assert!(tokens <= 16_000 - 2_000, "{format:?} step {i}: {tokens} tokens");
            summaries += 1;
            window.set_summary(window.generation(), &format!("Summary {summaries}: the task is in progress."), 1).unwrap();
        }
        eprintln!("{format:?}: {summaries} conversation summary requests");
        assert!(summaries >= 2, "{format:?}: {summaries} summaries");
    }
}

/// Skills inserted as user messages start new turns: a summary that ends inside such a
/// running turn stands right after its USER message (the skill, sent though not pinned), and
/// every request still passes the providers' rules with the summary next to it.
#[test]
fn a_summary_inside_a_skill_turn_stands_after_its_user_message() {
    let shape = Shape { steps: 200..=200, skill: 4, ..Shape::default() };
    let run = Run::generate(11, &shape);
    for format in Format::ALL {
        let mut window = Window::new(Run::model(Some(format)));
        window
            .configure(&format!(
                r#"{{"format":"{}","strategy":"summary","summary_budget":400,"history_budget":{BUDGET},
                    "context_limit":{LIMIT},"output_reserve":{RESERVE},"keep_recent_steps":{KEEP_RECENT_STEPS}}}"#,
                format.key()
            ))
            .unwrap();
        let context = format!("{format:?}");
        let mut agent = Agent { window, format, step_starts: Vec::new(), context, requests: 0, over_budget: 0 };
        run.push_task(&mut agent.window, Route::Json(format)).unwrap();
        let (mut summaries, mut inside_a_skill_turn) = (0, 0);
        for i in 0..run.steps.len() {
            if agent.window.needs_summary() {
                json::summary_request(&mut agent.window).unwrap();
                summaries += 1;
                let text = format!("Summary {summaries}: the task is in progress.");
                agent.window.set_summary(agent.window.generation(), &text, 1).unwrap();
                let record = agent.window.summary().unwrap().clone();
                let question = agent.window.turn_info(record.archived_turns).unwrap().first_message;
                if record.last_archived + 1 > question && record.archived_turns > 0 {
                    inside_a_skill_turn += 1;
                    let items: Vec<_> = (0..agent.window.view_len()).filter_map(|i| agent.window.view_item(i)).collect();
                    let at = items.iter().position(|item| item.text == Some(text.as_str())).unwrap();
                    let before = items[at - 1];
                    assert_eq!((before.item_type, before.index), (ItemType::Message, question), "{}", agent.context);
                    assert!(agent.window.is_pinned_at(question), "{}: the skill is sent from before start", agent.context);
                }
            }
            agent.request(&run.task, &mut None);
            agent.step_starts.push(agent.window.message_count());
            run.push_step(&mut agent.window, Route::Json(format), i).unwrap();
        }
        agent.request(&run.task, &mut None);
        eprintln!("{}: {summaries} summaries, {inside_a_skill_turn} inside a skill's turn", agent.context);
        assert!(inside_a_skill_turn > 0, "{}: no summary ended inside a skill's turn", agent.context);
    }
}

/// A host that changes its policy mid-run: after `summary` has archived the oldest steps of a
/// one-task loop (a record ending at a step boundary inside the one turn), the run goes on
/// under every other policy. Every request still holds the limit, and the budget unless the
/// newest steps kept outweigh it alone, sends the task and the summary, and passes the
/// providers' rules; nothing archived is sent again.
#[test]
fn every_policy_takes_over_after_a_summary_of_the_oldest_steps() {
    let shape = Shape { steps: 120..=120, skill: 0, ..Shape::default() };
    let run = Run::generate(5, &shape);
    let switch_at = 60;
    for format in Format::ALL {
        for policy in POLICIES.iter().filter(|p| !p.contains("summary")) {
            let mut window = Window::new(Run::model(Some(format)));
            let settings = |policy: &str| {
                format!(
                    r#"{{"format":"{}",{policy},"summary_budget":400,"history_budget":{BUDGET},"context_limit":{LIMIT},
                        "output_reserve":{RESERVE},"keep_recent_steps":{KEEP_RECENT_STEPS}}}"#,
                    format.key()
                )
            };
            window.configure(&settings(r#""strategy":"summary""#)).unwrap();
            let context = format!("{format:?} summary then {policy}");
            let mut agent = Agent { window, format, step_starts: Vec::new(), context, requests: 0, over_budget: 0 };
            run.push_task(&mut agent.window, Route::Json(format)).unwrap();
            let mut summaries = 0;
            for i in 0..run.steps.len() {
                if i < switch_at && agent.window.needs_summary() {
                    json::summary_request(&mut agent.window).unwrap();
                    summaries += 1;
                    agent.window.set_summary(agent.window.generation(), "Summary: the task is in progress.", 1).unwrap();
                }
                if i == switch_at {
                    let record = agent.window.summary().unwrap_or_else(|| panic!("{}: no summary", agent.context));
                    assert_eq!(record.archived_turns, 0, "{}: the record ends inside the one turn", agent.context);
                    agent.window.configure(&settings(policy)).unwrap();
                }
                agent.request(&run.task, &mut None);
                if i >= switch_at {
                    let body = json::render_request(&agent.window, r#"{"model":"m","max_tokens":256}"#).unwrap();
                    assert!(
                        body.contains("Summary: the task is in progress."),
                        "{}: step {i}: the summary is not sent",
                        agent.context
                    );
                }
                agent.step_starts.push(agent.window.message_count());
                run.push_step(&mut agent.window, Route::Json(format), i).unwrap();
            }
            agent.request(&run.task, &mut None);
            assert!(summaries >= 1, "{}", agent.context);
            agent.assert_rarely_over_budget();
            let end = agent.window.summary().unwrap().last_archived + 1;
            for item in (0..agent.window.view_len()).filter_map(|i| agent.window.view_item(i)) {
                let archived = item.item_type != ItemType::Synthetic && item.index < end;
                assert!(!archived || agent.window.is_pinned_at(item.index), "{}: archived {item:?} sent", agent.context);
            }
        }
    }
}
