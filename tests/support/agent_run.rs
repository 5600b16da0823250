//! Long agent runs in the shape today's coding agents produce, for property tests and
//! benchmarks: one task (a USER message), then a loop of steps under it, each a model
//! response (optional thinking with a signature, optional text, 1 to 6 parallel tool calls
//! with JSON arguments) followed by the results of its calls; the last step is the final
//! answer (text, no calls). Now and then the agent inserts a skill's text as a USER message
//! after a step's results, as Claude Code does (which starts a new ctxwin turn).
//!
//! Deterministic: [`Run::generate`] gives the same run for the same seed and [`Shape`] on
//! every machine with the same files. Every text is made from real files on the machine
//! (`real_text.rs`: source in cargo's registry, the toolchain's books, data files), as an
//! agent's tools would return them:
//! - `read_file {"file_path","offset","limit"}`: an excerpt with `cat -n` line numbers;
//! - `grep {"pattern","path","output_mode"}`: the excerpt's lines holding a word of its first
//!   line, as `path:line:text` (or "No matches found");
//! - `run {"command","timeout"}`: a test log naming the excerpt's functions, a compiler
//!   error quoting its lines, or a `git diff` of it;
//! - `edit {"file_path","old_string","new_string"}`: the update notice and the new lines;
//! - `write_file {"file_path","content"}` (long arguments), `glob {"pattern","path"}` (a
//!   listing of real paths).
//!
//! About 5% of outputs are errors (`is_error` in Anthropic, `{"error":..}` in Gemini);
//! `Shape::large_output` percent of outputs join several excerpts (up to ~30 kB). The texts
//! of one process come from one pool of excerpts read once (so a 100,000-call step costs
//! no file reads); `Shape::max_output_bytes` caps each output for benches that want many
//! calls in little memory.
//!
//! Three ways to push a run into a [`Window`] ([`Route`]):
//! - `Route::Json(format)`: provider JSON for `ctxwin::json::push_json`, the shape each
//!   provider returns and takes back:
//!   - OpenAI Chat: `{"role":"assistant","content":text|null,"tool_calls":[{"id":"call_..",
//!     "type":"function","function":{"name","arguments"}}]}`, then one
//!     `{"role":"tool","tool_call_id","content"}` push per result (Chat returns no thinking);
//!   - OpenAI Responses: one push of the response's output items, `reasoning`
//!     (`id` "rs_..", `summary` of `summary_text`, `encrypted_content`), a `message`
//!     (`output_text` with `annotations`), `function_call` items (`id` "fc_..", `call_id`,
//!     `name`, `arguments`, `status`), then one `function_call_output` push per result;
//!   - Anthropic: `{"role":"assistant","content":[{"type":"thinking","thinking","signature"},
//!     {"type":"text"}, {"type":"tool_use","id":"toolu_..","name","input"}]}`, then one user
//!     message holding every `tool_result` (`is_error` on failures), as the API requires;
//!   - Gemini: `{"role":"model","parts":[{"text","thought":true}, {"text"},
//!     {"functionCall":{"id","name","args"},"thoughtSignature"}]}` (the signature on the first
//!     call part, or on the last part of an answer without calls), then one user content of
//!     `functionResponse` parts (`{"id","name","response":{"output"|"error"}}`) in call
//!     order. `Shape::gemini_ids` false leaves the ids out, as the Gemini API does for most
//!     models (calls then pair by order).
//!   - in every format, a skill is a user message of text.
//! - `Route::Typed`: `push` (USER, THINKING, ASSISTANT), `push_tool_call`, `push_tool`
//!   (TOOL_RESULT), one call per message.
//! - `Route::Message`: `push_message`: the task, each model response (thinking, text and its
//!   calls as parts) and each result as host messages with their own host ids
//!   ([`host_id`]).
//!
//! Use: `let run = Run::generate(seed, &Shape::default());` then `run.push_task(&mut w,
//! route)` and `run.push_step(&mut w, route, i)` for each step (prepare / render between
//! steps as an agent does), or `run.push_all`. `Run::step_pushes(format, i)` gives the JSON
//! documents of one step; `Run::model(format)` a model of the format's family.
//! Included with `#[path]`.
#![allow(dead_code)]

#[path = "real_text.rs"]
mod real_text;
pub use real_text::Rng;
use real_text::{Excerpt, Kind as Source};

use ctxwin::json::{self, Format};
use ctxwin::window::Part;
use ctxwin::{Kind, Window};
use serde_json::{Value, json};
use std::ops::RangeInclusive;
use std::sync::OnceLock;

/// The start (up to 200 bytes) of `text` as a JSON string spells it, without the quotes:
/// what a rendered body holds of a text it sends.
pub fn escaped_head(text: &str) -> String {
    let escaped = serde_json::to_string(text).unwrap();
    let inner = &escaped[1..escaped.len() - 1];
    let mut end = inner.len().min(200);
    while !inner.is_char_boundary(end) {
        end -= 1;
    }
    inner[..end].to_owned()
}

/// The tools the generated agent calls.
pub const TOOLS: [&str; 6] = ["read_file", "grep", "run", "edit", "write_file", "glob"];

/// What runs look like; [`Shape::default`] is the shape.
#[derive(Clone, Debug)]
pub struct Shape {
    /// Steps under the task, the final answer included (drawn log-uniformly).
    pub steps: RangeInclusive<usize>,
    /// Parallel calls of a step with calls.
    pub parallel: RangeInclusive<usize>,
    /// Percent of steps with thinking (a signature with it).
    pub thinking: usize,
    /// Percent of steps with calls that also say something.
    pub text: usize,
    /// Percent of steps after whose results the agent inserts a skill's text.
    pub skill: usize,
    /// Percent of outputs made of several excerpts (up to ~30 kB).
    pub large_output: usize,
    /// Caps every output at this many bytes (a bench of many calls in little memory).
    pub max_output_bytes: Option<usize>,
    /// Gemini `functionCall` / `functionResponse` parts carry `id`.
    pub gemini_ids: bool,
}

impl Default for Shape {
    fn default() -> Shape {
        Shape {
            steps: 10..=2000,
            parallel: 1..=6,
            thinking: 60,
            text: 40,
            skill: 1,
            large_output: 3,
            max_output_bytes: None,
            gemini_ids: true,
        }
    }
}

impl Shape {
    /// The default shape with exactly `steps` steps.
    pub fn with_steps(steps: usize) -> Shape {
        Shape { steps: steps..=steps, ..Shape::default() }
    }
}

/// Reasoning shown with a step, and the provider's opaque signature of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Thinking {
    pub text: String,
    pub signature: String,
}

/// One tool call: its id token (formats add their prefix, see [`Call::id`]), the tool and
/// its arguments (a JSON object's text).
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub token: String,
    pub name: &'static str,
    pub arguments: String,
}

impl Call {
    /// The call id as `format` spells it (`None`: the typed API's, Chat's spelling).
    pub fn id(&self, format: Option<Format>) -> String {
        match format {
            Some(Format::Anthropic) => format!("toolu_01{}", self.token),
            Some(Format::Gemini) => self.token.to_lowercase(),
            _ => format!("call_{}", self.token),
        }
    }
}

/// A tool's output.
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    pub text: String,
    pub is_error: bool,
}

/// One model response and the results of its calls.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub thinking: Option<Thinking>,
    pub text: Option<String>,
    pub calls: Vec<Call>,
    /// One per call, in call order.
    pub outputs: Vec<Output>,
    /// A skill's text the agent inserts as a USER message after the results.
    pub skill: Option<String>,
}

/// One generated run.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    pub task: String,
    pub steps: Vec<Step>,
    pub gemini_ids: bool,
}

/// How a run is pushed (see the module's documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    Json(Format),
    Typed,
    Message,
}

impl Route {
    /// Every route: the four JSON formats and the two typed ones.
    pub const ALL: [Route; 6] = [
        Route::Json(Format::OpenAiChat),
        Route::Json(Format::OpenAiResponses),
        Route::Json(Format::Anthropic),
        Route::Json(Format::Gemini),
        Route::Typed,
        Route::Message,
    ];

    /// The wire format of a JSON route.
    pub fn format(self) -> Option<Format> {
        match self {
            Route::Json(format) => Some(format),
            _ => None,
        }
    }
}

/// The host id `Route::Message` gives part `k` of step `step` (`None`: the task): the model
/// response is `k` 0, result `j` is `k` `1 + j`, the skill `k` = calls + 1.
pub fn host_id(step: Option<usize>, k: usize) -> i64 {
    step.map_or(0, |step| (((step as i64) + 1) << 21) + k as i64)
}

/// The excerpts every run of this process draws from.
fn pool() -> &'static [Excerpt] {
    static POOL: OnceLock<Vec<Excerpt>> = OnceLock::new();
    POOL.get_or_init(|| real_text::excerpts(3000, 0x5EED_A6E7))
}

/// `text` cut to at most `max` bytes, at a character boundary.
fn clip(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Random characters of base64's alphabet, as signatures and encrypted content look.
fn opaque(rng: &mut Rng, lo: usize, hi: usize) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let len = rng.between(lo, hi) / 4 * 4;
    (0..len).map(|_| ALPHABET[rng.below(64)] as char).collect()
}

/// An id token of 24 base62 characters.
fn token(rng: &mut Rng) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    (0..24).map(|_| ALPHABET[rng.below(62)] as char).collect()
}

/// Steps drawn log-uniformly in `range`.
fn log_uniform(rng: &mut Rng, range: &RangeInclusive<usize>) -> usize {
    let (lo, hi) = (*range.start() as f64, *range.end() as f64);
    let x = lo.max(1.0) * (hi / lo.max(1.0)).powf(rng.below(10_001) as f64 / 10_000.0);
    (x.round() as usize).clamp(*range.start(), *range.end())
}

struct Maker<'s> {
    rng: Rng,
    shape: &'s Shape,
}

impl Maker<'_> {
    fn excerpt(&mut self, source: Option<Source>) -> &'static Excerpt {
        let pool = pool();
        loop {
            let excerpt = &pool[self.rng.below(pool.len())];
            if source.is_none_or(|source| excerpt.kind == source) {
                return excerpt;
            }
        }
    }

    /// A few lines of prose (a doc excerpt), `lo` to `hi` bytes.
    fn prose(&mut self, lo: usize, hi: usize) -> String {
        let excerpt = self.excerpt(Some(Source::Docs));
        let want = self.rng.between(lo, hi);
        // An excerpt holds at least 200 bytes besides white space: never empty.
        clip(excerpt.text.trim_start(), want).trim_end().to_owned()
    }

    fn thinking(&mut self) -> Thinking {
        let text = self.prose(60, 1500);
        let signature = opaque(&mut self.rng, 200, 1200);
        Thinking { text, signature }
    }

    /// A call of a random tool and its output.
    fn call(&mut self) -> (Call, Output) {
        let name = self.rng.pick(&TOOLS);
        let excerpt = self.excerpt(match name {
            "read_file" | "edit" | "write_file" => None,
            _ => Some(Source::Code),
        });
        let path = excerpt.path.as_str();
        let lines: Vec<&str> = excerpt.text.lines().collect();
        let (arguments, mut text) = match name {
            "read_file" => {
                let args = json!({"file_path": path, "offset": excerpt.line, "limit": lines.len()});
                (args, numbered(&lines, excerpt.line))
            }
            "grep" => {
                let word = first_word(&excerpt.text);
                let dir = path.rsplit_once('/').map_or(".", |(dir, _)| dir);
                let hits: Vec<String> = lines
                    .iter()
                    .enumerate()
                    .filter(|(_, line)| line.contains(word))
                    .map(|(i, line)| format!("{path}:{}:{line}", excerpt.line + i))
                    .collect();
                let out = if hits.is_empty() { "No matches found".to_owned() } else { hits.join("\n") };
                (json!({"pattern": word, "path": dir, "output_mode": "content", "-n": true}), out)
            }
            "run" => self.run_output(excerpt, &lines),
            "edit" => {
                let at = self.rng.below(lines.len().max(1));
                let old = lines.get(at).copied().unwrap_or_default();
                let new = format!("{old} // checked");
                let shown =
                    numbered(&lines[at.saturating_sub(3)..(at + 4).min(lines.len())], excerpt.line + at.saturating_sub(3));
                let out = format!(
                    "The file {path} has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n{}",
                    shown.replacen(old, &new, 1)
                );
                (json!({"file_path": path, "old_string": old, "new_string": new}), out)
            }
            "write_file" => {
                (json!({"file_path": path, "content": excerpt.text}), format!("File created successfully at: {path}"))
            }
            _ => {
                let dir = path.split('/').next().unwrap_or(".");
                let listing: Vec<&str> = (0..self.rng.between(3, 40)).map(|_| self.excerpt(None).path.as_str()).collect();
                (json!({"pattern": "**/*.rs", "path": dir}), listing.join("\n"))
            }
        };
        let is_error = self.rng.chance(5);
        if is_error {
            text = match name {
                "run" => format!("Exit code 101\n{text}"),
                "read_file" => format!("<tool_use_error>File does not exist: {path}</tool_use_error>"),
                _ => format!("Error: {}", clip(&text, 300)),
            };
        } else if self.rng.chance(self.shape.large_output) {
            for _ in 0..self.rng.between(2, 10) {
                text.push('\n');
                text.push_str(&self.excerpt(None).text);
            }
        }
        if let Some(max) = self.shape.max_output_bytes {
            text = clip(&text, max).to_owned();
        }
        let call = Call { token: token(&mut self.rng), name, arguments: arguments.to_string() };
        (call, Output { text, is_error })
    }

    /// A `run` call: a test log, a compiler error or a diff, from a code excerpt.
    fn run_output(&mut self, excerpt: &Excerpt, lines: &[&str]) -> (Value, String) {
        let krate = excerpt.path.split('/').next().unwrap_or("crate");
        let krate = krate.rsplit_once('-').map_or(krate, |(name, _)| name);
        match self.rng.below(3) {
            0 => {
                let tests: Vec<&str> = lines
                    .iter()
                    .filter_map(|line| line.trim_start().strip_prefix("fn "))
                    .filter_map(|rest| rest.split('(').next())
                    .collect();
                let mut out = format!(
                    "   Compiling {krate} v0.1.0\n    Finished `test` profile\n     Running unittests\n\nrunning {} tests\n",
                    tests.len()
                );
                for test in &tests {
                    out.push_str(&format!("test {krate}::{test} ... ok\n"));
                }
                out.push_str(&format!("\ntest result: ok. {} passed; 0 failed; 0 ignored\n", tests.len()));
                (json!({"command": format!("cargo test -p {krate}"), "timeout": 120000}), out)
            }
            1 => {
                let at = self.rng.below(lines.len().max(1));
                let line = lines.get(at).copied().unwrap_or_default();
                let out = format!(
                    "   Compiling {krate} v0.1.0\nerror[E0308]: mismatched types\n  --> {}:{}:5\n   |\n{:>4} | {line}\n   |     ^^^ expected `usize`, found `u32`\n\nerror: could not compile `{krate}` (lib) due to 1 previous error",
                    excerpt.path,
                    excerpt.line + at,
                    excerpt.line + at
                );
                (json!({"command": "cargo build --release", "timeout": 600000}), out)
            }
            _ => {
                let mut out = format!(
                    "diff --git a/{0} b/{0}\n--- a/{0}\n+++ b/{0}\n@@ -{1},{2} +{1},{2} @@\n",
                    excerpt.path,
                    excerpt.line,
                    lines.len()
                );
                for line in lines {
                    let mark = if self.rng.chance(10) { '+' } else { ' ' };
                    out.push(mark);
                    out.push_str(line);
                    out.push('\n');
                }
                (json!({"command": "git diff", "description": "Show the working tree changes"}), out)
            }
        }
    }

    fn step(&mut self, parallel: Option<usize>) -> Step {
        let thinking = self.rng.chance(self.shape.thinking).then(|| self.thinking());
        let text = match parallel {
            None => Some(self.prose(40, 1200)),
            Some(_) => self.rng.chance(self.shape.text).then(|| self.prose(20, 300)),
        };
        let (calls, outputs) = (0..parallel.unwrap_or(0)).map(|_| self.call()).unzip();
        let skill = (parallel.is_some() && self.rng.chance(self.shape.skill)).then(|| {
            let name = first_word(&self.prose(20, 40)).to_lowercase();
            format!("Base directory for this skill: skills/{name}\n\n# {name}\n\n{}", self.prose(400, 4000))
        });
        Step { thinking, text, calls, outputs, skill }
    }
}

/// `lines` numbered from `first` as `cat -n` does.
fn numbered(lines: &[&str], first: usize) -> String {
    lines.iter().enumerate().map(|(i, line)| format!("{:>6}\t{line}", first + i)).collect::<Vec<_>>().join("\n")
}

/// The first word (letters, digits, `_`) of `text` of three or more characters, else "fn".
fn first_word(text: &str) -> &str {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_')).find(|word| word.len() >= 3).unwrap_or("fn")
}

impl Run {
    /// The run of `seed` in `shape`.
    pub fn generate(seed: u64, shape: &Shape) -> Run {
        let mut maker = Maker { rng: Rng::new(seed), shape };
        let excerpt = maker.excerpt(Some(Source::Code));
        let task = format!(
            "In {}, around line {}: {}\n\nFix it, run the tests, and explain the change.",
            excerpt.path,
            excerpt.line,
            maker.prose(100, 3000)
        );
        let count = log_uniform(&mut maker.rng, &shape.steps).max(1);
        let mut steps: Vec<Step> = (1..count)
            .map(|_| {
                let parallel = maker.rng.between(*shape.parallel.start(), *shape.parallel.end());
                maker.step(Some(parallel))
            })
            .collect();
        steps.push(maker.step(None));
        Run { task, steps, gemini_ids: shape.gemini_ids }
    }

    /// A run of one step of `calls` parallel calls (and its answer), for benches: outputs
    /// capped at `max_output_bytes`.
    pub fn parallel(seed: u64, calls: usize, max_output_bytes: usize) -> Run {
        let shape = Shape {
            steps: 2..=2,
            parallel: calls..=calls,
            skill: 0,
            max_output_bytes: Some(max_output_bytes),
            ..Shape::default()
        };
        Run::generate(seed, &shape)
    }

    /// A model of `format`'s family (`None`: an OpenAI model).
    pub fn model(format: Option<Format>) -> &'static str {
        match format {
            Some(Format::Anthropic) => "claude-sonnet-4-5",
            Some(Format::Gemini) => "gemini-2.5-pro",
            _ => "gpt-4o",
        }
    }

    /// Tool calls in the run.
    pub fn calls(&self) -> usize {
        self.steps.iter().map(|step| step.calls.len()).sum()
    }

    /// The task as `format`'s user message.
    pub fn task_json(&self, format: Format) -> Value {
        user_text(format, &self.task)
    }

    /// The JSON documents of step `i` in `format`, in push order (each one `push_json`).
    pub fn step_pushes(&self, format: Format, i: usize) -> Vec<Value> {
        let step = &self.steps[i];
        let f = Some(format);
        let mut pushes = Vec::new();
        match format {
            Format::OpenAiChat => {
                let tool_calls: Vec<Value> = step
                    .calls
                    .iter()
                    .map(|c| json!({"id": c.id(f), "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
                    .collect();
                let mut message = json!({"role": "assistant", "content": step.text, "refusal": null});
                if !tool_calls.is_empty() {
                    message["tool_calls"] = Value::Array(tool_calls);
                }
                pushes.push(message);
                for (call, output) in step.calls.iter().zip(&step.outputs) {
                    pushes.push(json!({"role": "tool", "tool_call_id": call.id(f), "content": output.text}));
                }
            }
            Format::OpenAiResponses => {
                let mut items = Vec::new();
                if let Some(thinking) = &step.thinking {
                    items.push(json!({"type": "reasoning", "id": format!("rs_{i:08x}"),
                        "summary": [{"type": "summary_text", "text": thinking.text}],
                        "encrypted_content": format!("gAAAAA{}", thinking.signature)}));
                }
                if let Some(text) = &step.text {
                    items.push(
                        json!({"type": "message", "id": format!("msg_{i:08x}"), "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": text, "annotations": []}]}),
                    );
                }
                for call in &step.calls {
                    items.push(json!({"type": "function_call", "id": format!("fc_{}", call.token), "call_id": call.id(f),
                        "name": call.name, "arguments": call.arguments, "status": "completed"}));
                }
                pushes.push(Value::Array(items));
                for (call, output) in step.calls.iter().zip(&step.outputs) {
                    pushes.push(json!({"type": "function_call_output", "call_id": call.id(f), "output": output.text}));
                }
            }
            Format::Anthropic => {
                let mut blocks = Vec::new();
                if let Some(thinking) = &step.thinking {
                    blocks.push(json!({"type": "thinking", "thinking": thinking.text, "signature": thinking.signature}));
                }
                if let Some(text) = &step.text {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for call in &step.calls {
                    blocks.push(json!({"type": "tool_use", "id": call.id(f), "name": call.name, "input": arguments(call)}));
                }
                pushes.push(json!({"role": "assistant", "content": blocks}));
                if !step.calls.is_empty() {
                    let results: Vec<Value> = step
                        .calls
                        .iter()
                        .zip(&step.outputs)
                        .map(|(call, output)| {
                            let mut block = json!({"type": "tool_result", "tool_use_id": call.id(f), "content": output.text});
                            if output.is_error {
                                block["is_error"] = json!(true);
                            }
                            block
                        })
                        .collect();
                    pushes.push(json!({"role": "user", "content": results}));
                }
            }
            Format::Gemini => {
                let mut parts = Vec::new();
                if let Some(thinking) = &step.thinking {
                    parts.push(json!({"text": thinking.text, "thought": true}));
                }
                if let Some(text) = &step.text {
                    parts.push(json!({"text": text}));
                }
                for call in &step.calls {
                    let mut function = json!({"name": call.name, "args": arguments(call)});
                    if self.gemini_ids {
                        function["id"] = json!(call.id(f));
                    }
                    parts.push(json!({"functionCall": function}));
                }
                if let Some(thinking) = &step.thinking {
                    // On the first call part, or on the last part of an answer without calls.
                    let at = if step.calls.is_empty() { parts.len() - 1 } else { parts.len() - step.calls.len() };
                    parts[at]["thoughtSignature"] = json!(thinking.signature);
                }
                pushes.push(json!({"role": "model", "parts": parts}));
                if !step.calls.is_empty() {
                    let responses: Vec<Value> = step
                        .calls
                        .iter()
                        .zip(&step.outputs)
                        .map(|(call, output)| {
                            let key = if output.is_error { "error" } else { "output" };
                            let mut function = json!({"name": call.name, "response": {key: output.text}});
                            if self.gemini_ids {
                                function["id"] = json!(call.id(f));
                            }
                            json!({"functionResponse": function})
                        })
                        .collect();
                    pushes.push(json!({"role": "user", "parts": responses}));
                }
            }
        }
        if let Some(skill) = &step.skill {
            pushes.push(user_text(format, skill));
        }
        pushes
    }

    /// Pushes the task by `route`.
    pub fn push_task(&self, window: &mut Window, route: Route) -> ctxwin::Result<()> {
        match route {
            Route::Json(format) => json::push_json(window, &self.task_json(format).to_string()).map(drop),
            Route::Typed => window.push(Kind::User, &self.task).map(drop),
            Route::Message => window.push_message(&[part(Kind::User, &self.task, None, None)], host_id(None, 0)).map(drop),
        }
    }

    /// Pushes step `i` by `route`: the model response, its results, the skill if any.
    pub fn push_step(&self, window: &mut Window, route: Route, i: usize) -> ctxwin::Result<()> {
        let step = &self.steps[i];
        match route {
            Route::Json(format) => {
                for push in self.step_pushes(format, i) {
                    json::push_json(window, &push.to_string())?;
                }
            }
            Route::Typed => {
                if let Some(thinking) = &step.thinking {
                    window.push(Kind::Thinking, &thinking.text)?;
                }
                if let Some(text) = &step.text {
                    window.push(Kind::Assistant, text)?;
                }
                for call in &step.calls {
                    window.push_tool_call(&call.id(None), call.name, &call.arguments)?;
                }
                for (call, output) in step.calls.iter().zip(&step.outputs) {
                    window.push_tool(Kind::ToolResult, &call.id(None), &output.text)?;
                }
                if let Some(skill) = &step.skill {
                    window.push(Kind::User, skill)?;
                }
            }
            Route::Message => {
                let ids: Vec<String> = step.calls.iter().map(|call| call.id(None)).collect();
                let mut parts = Vec::new();
                if let Some(thinking) = &step.thinking {
                    parts.push(part(Kind::Thinking, &thinking.text, None, None));
                }
                if let Some(text) = &step.text {
                    parts.push(part(Kind::Assistant, text, None, None));
                }
                for (call, id) in step.calls.iter().zip(&ids) {
                    parts.push(part(Kind::ToolCall, &call.arguments, Some(id), Some(call.name)));
                }
                window.push_message(&parts, host_id(Some(i), 0))?;
                for (j, (output, id)) in step.outputs.iter().zip(&ids).enumerate() {
                    window.push_message(&[part(Kind::ToolResult, &output.text, Some(id), None)], host_id(Some(i), 1 + j))?;
                }
                if let Some(skill) = &step.skill {
                    window.push_message(&[part(Kind::User, skill, None, None)], host_id(Some(i), 1 + ids.len()))?;
                }
            }
        }
        Ok(())
    }

    /// Pushes the whole run by `route`.
    pub fn push_all(&self, window: &mut Window, route: Route) -> ctxwin::Result<()> {
        self.push_task(window, route)?;
        (0..self.steps.len()).try_for_each(|i| self.push_step(window, route, i))
    }
}

/// A call's arguments as a JSON value.
fn arguments(call: &Call) -> Value {
    serde_json::from_str(&call.arguments).expect("generated arguments are JSON")
}

fn part<'a>(kind: Kind, text: &'a str, call_id: Option<&'a str>, name: Option<&'a str>) -> Part<'a> {
    Part { kind, text, replaced: false, call_id, name }
}

/// A user message of text in `format`.
fn user_text(format: Format, text: &str) -> Value {
    match format {
        Format::Gemini => json!({"role": "user", "parts": [{"text": text}]}),
        Format::Anthropic => json!({"role": "user", "content": [{"type": "text", "text": text}]}),
        Format::OpenAiResponses => json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}),
        Format::OpenAiChat => json!({"role": "user", "content": text}),
    }
}
