//! What `ctxwin replay` prints: per request and per policy, as text or JSON, and the sums
//! the log's own usage gives.

use crate::agent_log::AgentLog;
use crate::replay::{Baseline, Prices, Row, Run, logged_billed};
use serde_json::{Value, json};

/// The sums of one policy's requests.
#[derive(Debug, Default, PartialEq)]
pub struct Totals {
    pub requests: usize,
    pub over_budget: usize,
    pub refused: usize,
    /// Requests that send the task, of those after it was pushed; `None` without a task.
    pub task_kept: Option<(usize, usize)>,
    pub tokens: u64,
    pub cached: u64,
    pub billed: f64,
    pub largest: u64,
    pub render_errors: usize,
    /// Results the last request sends cleared (what is cleared stays cleared), and the
    /// tokens clearing saved over all requests.
    pub cleared: usize,
    pub cleared_tokens: u64,
}

impl Totals {
    pub fn of(rows: &[Row]) -> Totals {
        let with_task: Vec<bool> = rows.iter().filter_map(|r| r.task).collect();
        Totals {
            requests: rows.len(),
            over_budget: rows.iter().filter(|r| r.over_budget).count(),
            refused: rows.iter().filter(|r| r.refused.is_some()).count(),
            task_kept: (!with_task.is_empty()).then(|| (with_task.iter().filter(|&&t| t).count(), with_task.len())),
            tokens: rows.iter().map(|r| r.tokens).sum(),
            cached: rows.iter().map(|r| r.cached).sum(),
            billed: rows.iter().map(|r| r.billed).sum(),
            largest: rows.iter().map(|r| r.tokens).max().unwrap_or(0),
            render_errors: rows.iter().filter(|r| r.render_error.is_some()).count(),
            cleared: rows.last().map_or(0, |r| r.cleared),
            cleared_tokens: rows.iter().map(|r| r.cleared_tokens).sum(),
        }
    }

    fn cache_share(&self) -> f64 {
        if self.tokens == 0 { 0.0 } else { self.cached as f64 / self.tokens as f64 }
    }

    fn to_json(&self) -> Value {
        json!({
            "requests": self.requests, "over_budget": self.over_budget, "refused": self.refused,
            "task_kept": self.task_kept.map(|(kept, of)| json!({"requests": kept, "of": of})),
            "tokens_sent": self.tokens, "cached_tokens": self.cached, "cache_hit_share": self.cache_share(),
            "billed_input": self.billed, "largest_request": self.largest, "render_errors": self.render_errors,
            "results_cleared": self.cleared, "tokens_saved_by_clearing": self.cleared_tokens,
        })
    }
}

/// The log's own requests, from its usage: `None` when it holds none.
pub fn logged_totals(base: &Baseline, prices: Prices) -> Option<Totals> {
    let usages: Vec<_> = base.logged.iter().flatten().copied().collect();
    if usages.is_empty() {
        return None;
    }
    Some(Totals {
        requests: usages.len(),
        tokens: usages.iter().map(|u| u.prompt).sum(),
        cached: usages.iter().map(|u| u.cached).sum(),
        billed: usages.iter().map(|&u| logged_billed(u, prices)).sum(),
        largest: usages.iter().map(|u| u.prompt).max().unwrap_or(0),
        ..Totals::default()
    })
}

/// How ctxwin's count of what the log added compares with what the provider billed for it.
#[derive(Debug, PartialEq)]
pub struct Estimate {
    /// The requests compared (1-based): from the first with usage to the last before the
    /// agent's own compaction, if it compacted.
    pub first: usize,
    pub last: usize,
    /// Tokens the provider's prompt grew by between them.
    pub logged: u64,
    /// Tokens ctxwin counted for the messages added between them.
    pub counted: u64,
}

impl Estimate {
    fn error(&self) -> f64 {
        (self.counted as f64 - self.logged as f64) / self.logged as f64
    }
}

/// Compares the growth of the provider's prompt with ctxwin's count of the messages added,
/// from the first request with usage up to the agent's own compaction (a prompt that shrinks
/// by more than 30%). `None` when fewer than two requests hold usage or nothing grew.
pub fn estimate(base: &Baseline) -> Option<Estimate> {
    let with_usage: Vec<(usize, u64)> =
        base.logged.iter().enumerate().filter_map(|(i, usage)| usage.map(|u| (i, u.prompt))).collect();
    let &(first, first_prompt) = with_usage.first()?;
    let mut last = (first, first_prompt);
    for &(i, prompt) in &with_usage[1..] {
        if (prompt as f64) < last.1 as f64 * 0.7 {
            break;
        }
        last = (i, prompt);
    }
    let logged = last.1.checked_sub(first_prompt).filter(|&g| g > 0)?;
    let counted = base.history[last.0].saturating_sub(base.history[first]);
    Some(Estimate { first: first + 1, last: last.0 + 1, logged, counted })
}

fn percent(share: f64) -> String {
    format!("{:.0}%", share * 100.0)
}

fn task_text(kept: Option<(usize, usize)>) -> String {
    kept.map_or_else(|| "-".to_owned(), |(kept, of)| format!("{kept}/{of}"))
}

/// The report as text.
pub fn text(
    name: &str,
    log: &AgentLog,
    model: &ctxwin::Model,
    base: &Baseline,
    runs: &[Run],
    prices: Prices,
    rows: bool,
) -> String {
    let mut out = format!(
        "{name}: {} log, {} model calls, model {}{}\noverhead {} tokens per request ({})\n",
        log.format,
        log.requests(),
        model.name(),
        model.context_limit().map_or_else(String::new, |l| format!(" (context limit {l})")),
        base.overhead,
        base.overhead_source,
    );
    if log.task.is_none() {
        out.push_str("the log holds no user message: the task column is empty\n");
    }
    if log.stand_in_task {
        out.push_str(
            "the log does not record the prompt: a one-line stand-in task is pushed first, the prompt is in the overhead\n",
        );
    }
    for run in runs.iter().filter(|_| rows) {
        let config = run.config.as_deref().map_or_else(String::new, |c| format!(", configured with {c}"));
        out.push_str(&format!("\n{}, history budget {}{config}\n", run.strategy, run.budget));
        out.push_str("    req   line   tokens   logged  over     task  sent/pushed  removed  cleared   cached\n");
        for (i, row) in run.rows.iter().enumerate() {
            let logged = base.logged[i].map_or_else(|| "-".to_owned(), |u| u.prompt.to_string());
            let over = match (&row.refused, row.over_budget) {
                (Some(_), _) => "LIMIT",
                (None, true) => "yes",
                (None, false) => "",
            };
            let task = match row.task {
                Some(true) => "sent",
                Some(false) => "DROPPED",
                None => "-",
            };
            out.push_str(&format!(
                "  {:>5}  {:>5}  {:>7}  {:>7}  {:>5}  {:>7}  {:>11}  {:>7}  {:>7}  {:>7}\n",
                i + 1,
                row.line,
                row.tokens,
                logged,
                over,
                task,
                format!("{}/{}", row.sent, row.messages),
                row.removed,
                row.cleared,
                row.cached
            ));
        }
    }
    out.push_str(&format!(
        "\nbilled input: uncached tokens x {}, cached tokens x {} (input price = 1)\n",
        prices.write, prices.read
    ));
    out.push_str(
        "policy                      requests  over budget  over limit  task kept  tokens sent  billed input  cache hits  largest  cleared\n",
    );
    let mut line = |label: &str, t: &Totals, dash: bool| {
        let or_dash = |n: usize| if dash { "-".to_owned() } else { n.to_string() };
        out.push_str(&format!(
            "{:<26}  {:>8}  {:>11}  {:>10}  {:>9}  {:>11}  {:>12.0}  {:>10}  {:>7}  {:>7}\n",
            label,
            t.requests,
            or_dash(t.over_budget),
            or_dash(t.refused),
            task_text(t.task_kept),
            t.tokens,
            t.billed,
            percent(t.cache_share()),
            t.largest,
            or_dash(t.cleared)
        ));
    };
    if let Some(logged) = logged_totals(base, prices) {
        line("as logged (the agent)", &logged, true);
    }
    for run in runs {
        line(&format!("{} {}", run.strategy, run.budget), &Totals::of(&run.rows), false);
    }
    if let Some(e) = estimate(base) {
        out.push_str(&format!(
            "\nestimate: from request {} to {} the provider's prompt grew by {} tokens; ctxwin counted {} for the messages added ({:+.1}%)\n",
            e.first,
            e.last,
            e.logged,
            e.counted,
            e.error() * 100.0
        ));
    }
    for run in runs {
        let totals = Totals::of(&run.rows);
        if run.summaries > 0 {
            out.push_str(&format!(
                "{} {}: {} summary requests answered with a one-line stand-in\n",
                run.strategy, run.budget, run.summaries
            ));
        }
        if let Some(row) = run.rows.iter().find(|r| r.refused.is_some()) {
            out.push_str(&format!(
                "{} {}: {} requests refused by prepare; the first (line {}): {}\n",
                run.strategy,
                run.budget,
                totals.refused,
                row.line,
                row.refused.as_deref().unwrap_or_default()
            ));
        }
        if let Some(row) = run.rows.iter().find(|r| r.render_error.is_some()) {
            out.push_str(&format!(
                "{} {}: render_request refused {} requests; the first (line {}): {}\n",
                run.strategy,
                run.budget,
                totals.render_errors,
                row.line,
                row.render_error.as_deref().unwrap_or_default()
            ));
        }
    }
    out
}

/// The report as JSON.
pub fn to_json(name: &str, log: &AgentLog, model: &ctxwin::Model, base: &Baseline, runs: &[Run], prices: Prices) -> Value {
    let policies: Vec<Value> = runs
        .iter()
        .map(|run| {
            let rows: Vec<Value> = run
                .rows
                .iter()
                .enumerate()
                .map(|(i, row)| {
                    json!({
                        "request": i + 1, "line": row.line, "tokens": row.tokens, "over_budget": row.over_budget,
                        "refused": row.refused, "task_sent": row.task, "messages_sent": row.sent,
                        "messages_pushed": row.messages, "removed": row.removed, "results_cleared": row.cleared,
                        "cleared_tokens": row.cleared_tokens, "cached_tokens": row.cached,
                        "billed_input": row.billed, "render_error": row.render_error,
                        "logged_prompt": base.logged[i].map(|u| u.prompt),
                    })
                })
                .collect();
            json!({
                "strategy": run.strategy, "config": run.config, "history_budget": run.budget, "summaries": run.summaries,
                "totals": Totals::of(&run.rows).to_json(), "requests": rows,
            })
        })
        .collect();
    json!({
        "log": {
            "file": name, "format": log.format, "model": model.name(), "model_known": model.is_known(),
            "context_limit": model.context_limit(), "requests": log.requests(), "has_task": log.task.is_some(),
            "stand_in_task": log.stand_in_task,
            "overhead": base.overhead, "overhead_source": base.overhead_source,
            "largest_history": base.history.iter().max(),
        },
        "prices": {"cache_read": prices.read, "cache_write": prices.write},
        "logged": logged_totals(base, prices).map(|t| t.to_json()),
        "estimate": estimate(base).map(|e| json!({
            "first_request": e.first, "last_request": e.last, "logged_growth": e.logged,
            "counted_growth": e.counted, "error": e.error(),
        })),
        "policies": policies,
    })
}
