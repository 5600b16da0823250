//! `ctxwin replay`: an agent's log run through the library as its host would have run it,
//! under each policy asked for: `push_json` of every message, `prepare` and `render_request`
//! before every model call, the `summary` strategy's requests answered with a stand-in.

use crate::agent_log::{AgentLog, Event, LoggedUsage};
use crate::args::Budget;
use crate::source;
use ctxwin::json::{push_json, render_request};
use ctxwin::view::ItemType;
use ctxwin::{Kind, Window};

/// What a summary request is answered with: the replay has no model to ask.
const STAND_IN_SUMMARY: &str = "Summary of the earlier part of this session (a stand-in written by ctxwin replay).";

/// Prices of an input token, the uncached input price being 1.
#[derive(Clone, Copy, Debug)]
pub struct Prices {
    /// A token read from the provider's cache.
    pub read: f64,
    /// A token written to the provider's cache.
    pub write: f64,
}

/// One policy: a strategy (the window's default when `None`) and a history budget (the
/// model's when `None`).
#[derive(Clone, Debug)]
pub struct Policy {
    pub strategy: Option<String>,
    pub config: Option<String>,
    pub budget: Option<Budget>,
}

/// What the log sends without any policy: every message, as the agent sent it.
#[derive(Debug)]
pub struct Baseline {
    /// ctxwin's count of the messages of each request (no overhead).
    pub history: Vec<u64>,
    /// The provider's usage of each request, where the log holds it.
    pub logged: Vec<Option<LoggedUsage>>,
    /// The log's line of each request.
    pub lines: Vec<usize>,
    /// Tokens sent besides the messages.
    pub overhead: u64,
    /// Where `overhead` comes from.
    pub overhead_source: &'static str,
}

/// One request under one policy.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Row {
    /// The log's line of the model's answer.
    pub line: usize,
    /// Input tokens sent: overhead, pinned messages, summary and history.
    pub tokens: u64,
    /// The history is over the budget (the newest turn or step alone is).
    pub over_budget: bool,
    /// `prepare` refused: the request does not fit the context limit.
    pub refused: Option<String>,
    /// The task is sent; `None` when the log has no task.
    pub task: Option<bool>,
    /// Ledger messages sent (whole or shortened) and pushed.
    pub sent: usize,
    pub messages: usize,
    /// Messages `prepare` took out of the view or shortened at this request.
    pub removed: usize,
    /// Tool results the request sends cleared, and the tokens that saves (the clearing
    /// stage, `"stages": ["clear", ...]`).
    pub cleared: usize,
    pub cleared_tokens: u64,
    /// Leading tokens the previous request sent identically (the overhead included).
    pub cached: u64,
    /// Input billed at the cache prices.
    pub billed: f64,
    /// `render_request` refused the view.
    pub render_error: Option<String>,
}

/// The rows of one policy.
#[derive(Debug)]
pub struct Run {
    pub strategy: String,
    /// `--config`, as given.
    pub config: Option<String>,
    pub budget: u32,
    pub rows: Vec<Row>,
    /// Summary requests answered with the stand-in.
    pub summaries: usize,
}

fn push(window: &mut Window, line: usize, json: &str) -> Result<(), String> {
    push_json(window, json).map(|_| ()).map_err(|e| format!("line {line}: {e}"))
}

/// Pushes the whole log into a window of `model` with nothing pruned: what the agent sent.
pub fn baseline(log: &AgentLog, model: &str, overhead: Option<i32>) -> Result<Baseline, String> {
    let mut window = Window::new(model);
    let mut history = 0u64;
    let mut base = Baseline { history: Vec::new(), logged: Vec::new(), lines: Vec::new(), overhead: 0, overhead_source: "" };
    for event in &log.events {
        match event {
            Event::Push { line, json, .. } => {
                let before = window.message_count();
                push(&mut window, *line, json)?;
                history += (before..window.message_count())
                    .filter_map(|i| window.message(i))
                    .map(|m| u64::from(m.count().tokens))
                    .sum::<u64>();
            }
            Event::Request { line, usage } => {
                base.history.push(history);
                base.logged.push(*usage);
                base.lines.push(*line);
            }
        }
    }
    (base.overhead, base.overhead_source) = match (overhead, log.overhead, base.logged.first().copied().flatten()) {
        (Some(n), _, _) => (u64::try_from(n).unwrap_or(0), "--overhead"),
        (None, Some(saved), _) => (saved, "the save's system prompt and tools"),
        (None, None, Some(first)) => {
            (first.prompt.saturating_sub(base.history[0]), "the first request's logged usage less its messages")
        }
        (None, None, None) => (0, "none: the log holds no usage; give --overhead"),
    };
    Ok(base)
}

/// The budget in tokens `budget` names for a log whose largest history is `peak`.
fn tokens_of(budget: Budget, peak: u64) -> i32 {
    match budget {
        Budget::Tokens(n) => n,
        Budget::Percent(p) => i32::try_from((peak as f64 * p / 100.0).round() as u64).unwrap_or(i32::MAX),
    }
}

/// Replays `log` under `policy`.
pub fn run(log: &AgentLog, model: &str, base: &Baseline, policy: &Policy, prices: Prices) -> Result<Run, String> {
    let mut window = Window::new(model);
    let overhead = i32::try_from(base.overhead).map_err(|_| format!("overhead {} is too large", base.overhead))?;
    window.set_overhead(overhead, 0).map_err(|e| format!("--overhead: {e}"))?;
    let peak = base.history.iter().copied().max().unwrap_or(0);
    let budget = policy.budget.map(|b| tokens_of(b, peak));
    source::configure(&mut window, policy.strategy.as_deref(), policy.config.as_deref(), budget)?;
    let summarizes = window.settings().strategy == ctxwin::config::StrategyName::Summary;
    let mut run = Run {
        strategy: window.settings().strategy.as_str().to_owned(),
        config: policy.config.clone(),
        budget: window.settings().history_budget,
        rows: Vec::new(),
        summaries: 0,
    };
    let mut task = None;
    let mut prepared_before = false;
    for (i, event) in log.events.iter().enumerate() {
        match event {
            Event::Push { line, json, starts_turn } => {
                if *starts_turn && window.message_count() > 0 {
                    window.end_turn();
                }
                let before = window.message_count();
                push(&mut window, *line, json)?;
                if log.task == Some(i) {
                    task = (before..window.message_count()).find(|&m| window.message(m).is_some_and(|m| m.kind() == Kind::User));
                    // A task after other user messages (Codex sends its environment and
                    // instructions first) is pinned, as such a host pins it: `pin_task`
                    // pins only the first. A pin over the budget is refused: then the task
                    // column says where it was not sent.
                    if let Some(t) = task.filter(|&t| !window.is_pinned_at(t)) {
                        window.pin(t, true).ok();
                    }
                }
            }
            Event::Request { line, .. } => {
                if summarizes && window.needs_summary() && window.summary_request().is_ok() {
                    let generation = window.generation();
                    if window.set_summary(generation, STAND_IN_SUMMARY, 0).is_ok() {
                        run.summaries += 1;
                    }
                }
                let row = request(&mut window, *line, task, prepared_before, base.overhead, prices);
                prepared_before |= row.refused.is_none();
                run.rows.push(row);
            }
        }
    }
    Ok(run)
}

/// Prepares and renders one request, and describes it.
fn request(window: &mut Window, line: usize, task: Option<usize>, cached_before: bool, overhead: u64, prices: Prices) -> Row {
    let mut row = Row { line, messages: window.message_count(), ..Row::default() };
    let info = match window.prepare() {
        Ok(info) => info,
        Err(e) => {
            row.tokens = u64::from(window.live_tokens().tokens);
            row.refused = Some(e.to_string());
            row.billed = row.tokens as f64 * prices.write;
            return row;
        }
    };
    row.tokens = info.tokens;
    row.removed = info.removed;
    (row.cleared, row.cleared_tokens) = (info.cleared_results, info.cleared_tokens);
    row.over_budget = window.overrun() > 0;
    let mut sent = vec![false; row.messages];
    for item in (0..window.view_len()).filter_map(|i| window.view_item(i)) {
        match sent.get_mut(item.index) {
            Some(slot) if item.item_type != ItemType::Synthetic => *slot = true,
            _ => {}
        }
    }
    row.sent = sent.iter().filter(|&&s| s).count();
    row.task = task.map(|t| sent.get(t).copied().unwrap_or(false));
    row.cached = if cached_before { (overhead + info.stable_tokens).min(row.tokens) } else { 0 };
    row.billed = (row.tokens - row.cached) as f64 * prices.write + row.cached as f64 * prices.read;
    row.render_error = render_request(window, "{}").err().map(|e| e.to_string());
    row
}

/// What the agent's own requests cost, from the log's usage.
pub fn logged_billed(usage: LoggedUsage, prices: Prices) -> f64 {
    let uncached = usage.prompt - usage.cached - usage.written;
    uncached as f64 + usage.written as f64 * prices.write + usage.cached as f64 * prices.read
}
