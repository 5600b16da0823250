//! How well a calibrated window predicts what the provider will report: the estimate error
//! of each request's total (the window's live tokens just before the request, against the
//! provider's count of it) and of single messages, once the window has observed the usage
//! of the requests before.
//!
//! 1. **Generated agent sessions on real text.** Each session sends a hidden system prompt
//!    and tool definitions (1 to 6 real texts), then grows by a user message, then steps of
//!    an assistant message and a tool result (real texts of code, documentation and data:
//!    `tests/support/real_text.rs`, seed 18), 30 requests. The provider's count of a request
//!    is a family's exact count of every text plus 3 tokens of framing a message; the hidden
//!    truth is each family in turn, the model a model of no known family (as
//!    `benches/estimates.rs`). Two hosts: one declares its overhead (its own estimate of the
//!    system prompt, given to `set_overhead`), one declares none. After the last request, 10
//!    held-out messages are pushed and their calibrated counts judged.
//! 2. **Real agent logs**, when `CTXWIN_AGENT_LOGS` names a directory of Claude Code session
//!    files (`.jsonl`, one API call per assistant message id, with the provider's usage):
//!    every message is pushed as it was sent, every call's usage observed before its answer
//!    is pushed (a compaction boundary resets the window), the model `claude-sonnet-4-5`.
//!    Claude Code does not declare its system prompt and tools to the window. No log is kept
//!    in the repository: point the variable at logs of your own.
//!
//! Three estimates are judged on the same requests: **uncalibrated** (no report observed),
//! **ratio only** (the calibration before issue 26, replayed here from the same reports: the
//! decayed ratio of the reported part above the exact counts to the estimated part, clamped
//! to 0.25..4, scaling every estimate), and **ctxwin** (the window: a ratio with a prior and
//! a learned overhead). Prints the median and p90 of the absolute error (%).

use ctxwin::{Kind, Window};
use std::path::Path;

#[path = "../tests/support/family_truths.rs"]
mod family_truths;
use family_truths::{Corpus, FIT_SEED, Rng, percentile};

const MODEL: &str = "a-model-without-public-tokenizer";
const SESSIONS: usize = 40;
const REQUESTS: usize = 30;
const HELD_OUT: usize = 10;
/// Tokens the provider adds per message (its wire framing), in the generated truth.
const FRAMING: usize = 3;
/// Messages under this many true tokens are not scored: one token off is not a percentage.
const MIN_TOKENS: usize = 20;
const SETTINGS: &str = r#"{"history_budget": 2000000000, "max_message_bytes": 0}"#;

/// The calibration before issue 26: a decayed ratio of real to estimated tokens.
#[derive(Default)]
struct RatioOnly {
    real: f64,
    estimated: f64,
}

impl RatioOnly {
    fn observe(&mut self, real: f64, estimated: f64) {
        if estimated > 0.0 && real > 0.0 {
            self.real = self.real * 0.8 + real;
            self.estimated = self.estimated * 0.8 + estimated;
        }
    }

    fn ratio(&self) -> f64 {
        if self.estimated > 0.0 { (self.real / self.estimated).clamp(0.25, 4.0) } else { 1.0 }
    }
}

/// The errors (%) of each estimate, by name.
#[derive(Default)]
struct Errors {
    uncalibrated: Vec<f64>,
    ratio_only: Vec<f64>,
    ctxwin: Vec<f64>,
}

impl Errors {
    fn add(&mut self, truth: f64, uncalibrated: f64, ratio_only: f64, ctxwin: f64) {
        let error = |estimate: f64| (estimate - truth).abs() / truth * 100.0;
        self.uncalibrated.push(error(uncalibrated));
        self.ratio_only.push(error(ratio_only));
        self.ctxwin.push(error(ctxwin));
    }

    fn print(&self, what: &str) {
        let show = |errors: &[f64]| format!("{:6.1}% {:6.1}%", percentile(errors, 0.5), percentile(errors, 0.9));
        println!(
            "  {what:44} {:>6} {} {} {}",
            self.ctxwin.len(),
            show(&self.uncalibrated),
            show(&self.ratio_only),
            show(&self.ctxwin)
        );
    }
}

fn header(title: &str) {
    println!("{title}");
    println!(
        "  {:44} {:>6} {:>15} {:>15} {:>15}",
        "(median, p90 of the absolute error)", "n", "uncalibrated", "ratio only", "ctxwin"
    );
}

/// A window's messages and overhead as counted before calibration: (exact, estimated).
fn raw_parts(window: &Window) -> (f64, f64) {
    let overhead = window.overhead();
    let mut parts = (f64::from(overhead.system) + f64::from(overhead.tools), 0.0);
    for index in 0..window.message_count() {
        let count = window.message(index).unwrap().count();
        if count.exact {
            parts.0 += f64::from(count.tokens);
        } else {
            parts.1 += f64::from(count.tokens);
        }
    }
    parts
}

fn main() {
    let corpus = Corpus::load(FIT_SEED + 1);
    estimator_tails(&corpus);
    header("generated agent sessions on real text: requests after the first report, held-out messages");
    for declared in [true, false] {
        let (mut requests, mut messages) = (Errors::default(), Errors::default());
        for truth in &corpus.truths {
            generated(&corpus, &*truth.count, declared, &mut requests, &mut messages);
        }
        let host = if declared { "overhead declared" } else { "overhead not declared" };
        requests.print(&format!("requests, {host}"));
        messages.print(&format!("messages, {host}"));
    }
    if let Some(dir) = std::env::var_os("CTXWIN_AGENT_LOGS") {
        real_logs(Path::new(&dir));
    }
}

/// The estimator's error tails per family, which bound what a report can say
/// (`Calibration::MAX_RATIO`): p99 and the largest error, by name and held out.
fn estimator_tails(corpus: &Corpus) {
    println!(
        "estimator error tails on {} real texts (seed {}): p99 and max, by name / held out",
        corpus.texts.len(),
        FIT_SEED + 1
    );
    for truth in &corpus.truths {
        let model = ctxwin::Model::resolve(truth.model);
        let named = corpus.errors(truth, |i| model.count(&corpus.texts[i]).tokens as f64);
        let held_out = corpus.fit_errors(&corpus.fit_without(truth.group), truth);
        println!(
            "  {:15} {:6.1}% {:6.1}%  /  {:6.1}% {:6.1}%",
            truth.name,
            percentile(&named, 0.99),
            percentile(&named, 1.0),
            percentile(&held_out, 0.99),
            percentile(&held_out, 1.0)
        );
    }
}

fn generated(corpus: &Corpus, truth: &dyn Fn(&str) -> usize, declared: bool, requests: &mut Errors, messages: &mut Errors) {
    let mut rng = Rng::new(0x0bad_cafe_5eed_0026);
    let model = ctxwin::Model::resolve(MODEL);
    let text = |rng: &mut Rng| corpus.texts[rng.below(corpus.texts.len())].as_str();
    for _ in 0..SESSIONS {
        let system: String = (0..1 + rng.below(6)).map(|_| text(&mut rng)).collect::<Vec<_>>().join("\n\n");
        let mut window = Window::new(MODEL);
        window.configure(SETTINGS).unwrap();
        if declared {
            window.set_overhead(model.count(&system).tokens as i32, 0).unwrap();
        }
        let mut true_total = truth(&system) + FRAMING;
        let mut old = RatioOnly::default();
        for request in 0..REQUESTS {
            let step: &[Kind] = if request == 0 { &[Kind::User] } else { &[Kind::Assistant, Kind::ToolResult] };
            for &kind in step {
                let content = text(&mut rng);
                true_total += truth(content) + FRAMING;
                window.push(kind, content).unwrap();
            }
            let (exact, estimated) = raw_parts(&window);
            if request > 0 {
                let predicted = f64::from(window.live_tokens().tokens);
                requests.add(true_total as f64, exact + estimated, exact + old.ratio() * estimated, predicted);
            }
            let usage = format!(r#"{{"prompt_tokens":{true_total}}}"#);
            // A host declaring its own estimate of the system prompt may declare more than the
            // provider counts: a first request below that is refused, as it was before.
            if window.observe_usage_json(0, window.message_count(), &usage).is_ok() {
                old.observe(true_total as f64 - exact, estimated);
            }
        }
        for _ in 0..HELD_OUT {
            let content = text(&mut rng);
            let actual = truth(content);
            if actual < MIN_TOKENS {
                continue;
            }
            let raw = f64::from(model.count(content).tokens);
            let calibrated = f64::from(window.push(Kind::Assistant, content).unwrap().tokens);
            messages.add(actual as f64, raw, old.ratio() * raw, calibrated);
        }
    }
}

/// The text of a content block list or string, as the model saw it.
fn block_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(text) => text.clone(),
        serde_json::Value::Array(blocks) => blocks.iter().map(block_text).collect::<Vec<_>>().join("\n"),
        serde_json::Value::Object(block) => match block.get("type").and_then(|t| t.as_str()) {
            Some("text") => block.get("text").and_then(|t| t.as_str()).unwrap_or("").to_owned(),
            Some("tool_result") => block.get("content").map(block_text).unwrap_or_default(),
            Some("tool_use") => format!(
                "{}\n{}",
                block.get("name").and_then(|n| n.as_str()).unwrap_or(""),
                block.get("input").map(|input| input.to_string()).unwrap_or_default()
            ),
            _ => String::new(), // thinking (not sent back in later turns), images
        },
        _ => String::new(),
    }
}

fn real_logs(dir: &Path) {
    let mut files: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().map(|e| e.path()).collect();
    files.retain(|path| path.extension().is_some_and(|ext| ext == "jsonl"));
    files.sort();
    let (mut requests, mut sessions) = (Errors::default(), 0);
    let (mut first_errors, mut learned) = (Errors::default(), Vec::new());
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let mut window = Window::new("claude-sonnet-4-5");
        window.configure(r#"{"context_limit": 1000000000, "history_budget": 900000000, "max_message_bytes": 0}"#).unwrap();
        let (mut old, mut last_id, mut reports) = (RatioOnly::default(), String::new(), 0);
        for line in text.lines() {
            let Ok(entry) = serde_json::from_str::<serde_json::Value>(line) else { continue };
            if entry.get("subtype").and_then(|s| s.as_str()) == Some("compact_boundary") {
                window.reset();
                continue;
            }
            let Some(message) = entry.get("message") else { continue };
            match entry.get("type").and_then(|t| t.as_str()) {
                Some("user") => {
                    let content = block_text(message.get("content").unwrap_or(&serde_json::Value::Null));
                    if !content.is_empty() {
                        window.push(Kind::User, &content).unwrap();
                    }
                }
                Some("assistant") => {
                    let id = message.get("id").and_then(|i| i.as_str()).unwrap_or("").to_owned();
                    if id != last_id && window.message_count() > 0 {
                        if let Some(usage) = message.get("usage") {
                            let (exact, estimated) = raw_parts(&window);
                            let predicted = f64::from(window.live_tokens().tokens);
                            let result = window.observe_usage_json(0, window.message_count(), &usage.to_string());
                            if let Ok(parsed) = result {
                                let reported = parsed.sent_tokens() as f64;
                                if reports > 0 {
                                    requests.add(reported, exact + estimated, exact + old.ratio() * estimated, predicted);
                                    if reports == 1 {
                                        first_errors.add(reported, exact + estimated, exact + old.ratio() * estimated, predicted);
                                    }
                                }
                                old.observe(reported - exact, estimated);
                                reports += 1;
                            }
                        }
                    }
                    last_id = id;
                    let content = block_text(message.get("content").unwrap_or(&serde_json::Value::Null));
                    if !content.is_empty() {
                        window.push(Kind::Assistant, &content).unwrap();
                    }
                }
                _ => {}
            }
        }
        if reports > 1 {
            sessions += 1;
            learned.push(f64::from(window.learned_overhead().tokens));
        }
    }
    header(&format!("real agent logs: {sessions} Claude Code sessions, every call after the first report"));
    requests.print("requests");
    first_errors.print("the request after the first report");
    if !learned.is_empty() {
        println!("  learned overhead (undeclared system prompt and tools): median {:.0} tokens", percentile(&learned, 0.5));
    }
}
