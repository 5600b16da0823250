//! Window settings and the JSON object `ctxwin_window_configure` takes.

pub mod clearing;

use crate::error::{Error, ErrorKind, Result, echo};
use crate::limits::MessageLimit;
use crate::wire::Format;
use clearing::Clearing;
use serde_json::Value;

/// The default history budget: the source design's `DEFAULT_HISTORY_TOKEN_LIMIT`.
pub const DEFAULT_HISTORY_BUDGET: u32 = 100_000;

/// The default budget of the summary slot, in tokens.
pub const DEFAULT_SUMMARY_BUDGET: u32 = 2_000;

/// The default trigger of the `summary` strategy: this fraction of the model's context limit.
pub const DEFAULT_THRESHOLD: Fraction = Fraction(0.85);

/// The default `low_water`: when a strategy has to act, it acts until the view is within this
/// fraction of its limits (1 acts only as far as the limits require).
pub const DEFAULT_LOW_WATER: Fraction = Fraction(0.65);

/// The most `output_reserve: "auto"` (the default) keeps for the model's answer: a quarter
/// of the context limit, at most this.
pub const AUTO_OUTPUT_RESERVE_MAX: u32 = 4_096;

/// A number of tokens, or `"auto"`: derived from the model's context limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tokens {
    /// Derived from the context limit (see the key's documentation).
    Auto,
    /// This many tokens.
    Fixed(u32),
}

impl Tokens {
    /// The value `configure` takes: `"auto"` or the number.
    pub fn to_value(self) -> Value {
        match self {
            Tokens::Auto => Value::from("auto"),
            Tokens::Fixed(tokens) => Value::from(tokens),
        }
    }
}

/// How a window's `history_budget` was set, which decides what happens when the model cannot
/// take it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetMode {
    /// Never set (or set to `"default"`): [`DEFAULT_HISTORY_BUDGET`], capped by what the
    /// model can take.
    Default,
    /// A number the caller gave: refused, never capped silently, when the model cannot take
    /// it.
    Given,
    /// `"auto"`: what the context limit leaves once the output reserve and the fixed cost
    /// are taken ([`DEFAULT_HISTORY_BUDGET`] while the limit is unknown).
    Auto,
}

/// The compaction strategy a window enforces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrategyName {
    /// Drop the oldest steps while live history exceeds the budget (whole turns, then the
    /// oldest steps of the running turn, never its task); the pruned steps feed the summary
    /// slot.
    Sliding,
    /// Archive compaction: at `threshold` of the context limit, ask the agent's LLM for a
    /// summary of the oldest turns, as many as bring the view within `low_water` of its
    /// limit (the newest turn always stays); the summary replaces them.
    Summary,
    /// Drop the oldest whole turns while any threshold (tokens, messages, turns) is exceeded.
    DropOldest,
    /// Truncate long tool outputs, then summarize old turns, then drop the middle.
    Tiered,
    /// Strip old turns to their user message and final answer.
    Monologue,
}

impl StrategyName {
    /// The name `configure` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            StrategyName::Sliding => "sliding",
            StrategyName::Summary => "summary",
            StrategyName::DropOldest => "drop_oldest",
            StrategyName::Tiered => "tiered",
            StrategyName::Monologue => "monologue",
        }
    }
}

/// Defaults of the compaction keys.
pub mod defaults {
    /// Messages at the start of the history that tiered compaction keeps (whole turns).
    pub const KEEP_FIRST: u32 = 1;
    /// Messages at the end of the history that tiered compaction keeps (whole turns).
    pub const KEEP_RECENT: u32 = 10;
    /// Newest turns monologue compaction keeps whole.
    pub const KEEP_RECENT_TURNS: u32 = 2;
    /// Lines of a tool output tiered compaction keeps (head and tail).
    pub const TOOL_OUTPUT_MAX_LINES: u32 = 40;
    /// Newest steps of the running turn no strategy drops (`keep_recent_steps`).
    pub const KEEP_RECENT_STEPS: u32 = 3;
    /// The most `keep_recent_steps` takes.
    pub const MAX_KEEP_RECENT_STEPS: u32 = 1000;
}

/// How a summary request is built (`summary_request`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SummaryRequest {
    /// A prompt of its own: instructions around a transcript of the turns to archive
    /// (`"standalone"`, the default). It fits a small context and holds only what it covers.
    #[default]
    Standalone,
    /// The conversation as the window renders it in its format, then a final user message
    /// asking for the summary (`"conversation"`): the provider serves the conversation from
    /// its prompt cache, since the agent's last request sent it.
    Conversation,
}

impl SummaryRequest {
    /// The name `configure` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            SummaryRequest::Standalone => "standalone",
            SummaryRequest::Conversation => "conversation",
        }
    }
}

/// What a push does with text that is not valid UTF-8 (`invalid_utf8`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InvalidUtf8 {
    /// Refuse the push with INVALID_UTF8 (`"error"`, the default).
    #[default]
    Error,
    /// Keep the text with U+FFFD in place of each invalid sequence, count it so, and flag the
    /// message (`"replace"`).
    Replace,
}

impl InvalidUtf8 {
    /// The name `configure` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            InvalidUtf8::Error => "error",
            InvalidUtf8::Replace => "replace",
        }
    }
}

/// What a push does with a tool part a model produced that the window cannot pair or send as
/// a tool message (`invalid_tool_parts`): arguments that are not a JSON object where the
/// format needs one, a call cut short (no name), an empty call id, an id that no call (or a
/// second call) carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InvalidToolParts {
    /// Refuse the push with INVALID_ARG naming the id (`"error"`, the default).
    #[default]
    Error,
    /// Keep the part, counted as its text, and flag the message (`"keep"`): a call becomes
    /// ASSISTANT text (the call as written), a result stays a result the view leaves out.
    Keep,
}

impl InvalidToolParts {
    /// The name `configure` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            InvalidToolParts::Error => "error",
            InvalidToolParts::Keep => "keep",
        }
    }
}

/// A fraction in (0, 1]: never NaN, so it compares like an integer.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Fraction(f64);

// NaN is excluded on construction, so equality is reflexive.
impl Eq for Fraction {}

impl Fraction {
    /// The whole: a limit admitted as it is.
    pub const ONE: Fraction = Fraction(1.0);

    /// `value` if it lies in (0, 1].
    pub fn new(value: f64) -> Option<Fraction> {
        (value > 0.0 && value <= 1.0).then_some(Fraction(value))
    }

    /// The fraction as a number.
    pub fn get(self) -> f64 {
        self.0
    }

    /// This fraction of `amount`, rounded up: the token count at which a trigger fires.
    pub fn of(self, amount: u32) -> u64 {
        (self.0 * f64::from(amount)).ceil() as u64
    }

    /// This fraction of `amount`, rounded down: the most a limit scaled by it admits.
    pub fn floor_of(self, amount: u64) -> u64 {
        // The product is finite and not negative, so truncating it is rounding it down. Not
        // `f64::floor`: the optimiser may compute a call of it speculatively on the unset
        // payload of a `None` limit (`Limits::low`), and valgrind then reports the software
        // floor's branches on uninitialised bits, a false alarm that fails `make valgrind`.
        if self.0 >= 1.0 { amount } else { (self.0 * amount as f64) as u64 }
    }
}

/// A window's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The strategy enforced at `end_turn`.
    pub strategy: StrategyName,
    /// Tokens live history may use (or the whole prompt, see `budget_includes_overhead`).
    /// With [`BudgetMode::Auto`], used only when the context limit is unknown.
    pub history_budget: u32,
    /// How `history_budget` was set.
    pub budget_mode: BudgetMode,
    /// Keep message texts (true) or counts only (false).
    pub retain_text: bool,
    /// When true the budget caps overhead + pinned messages + summary + history, not
    /// history alone.
    pub budget_includes_overhead: bool,
    /// Tokens the summary slot may use: a longer summary is refused.
    pub summary_budget: u32,
    /// The `summary` strategy's trigger, as a fraction of the context limit.
    pub threshold: Fraction,
    /// The model's context window, overriding the model table (which may not know it).
    pub context_limit: Option<u32>,
    /// The largest message text `push` accepts (`max_message_bytes`; 0 = no limit).
    pub max_message_bytes: MessageLimit,
    /// History tokens above which `drop_oldest`, `tiered` and `monologue` fire (the budget
    /// when unset; the budget still caps the view).
    pub token_threshold: Option<u32>,
    /// History messages in the view above which `drop_oldest` fires.
    pub message_threshold: Option<u32>,
    /// Live turns above which `drop_oldest` fires.
    pub turn_threshold: Option<u32>,
    /// Messages at the start of the history `tiered` keeps, rounded up to whole turns.
    pub keep_first: u32,
    /// Messages at the end of the history `tiered` keeps, rounded up to whole turns.
    pub keep_recent: u32,
    /// Newest turns `monologue` keeps whole.
    pub keep_recent_turns: u32,
    /// Newest steps of the running turn no strategy drops (at least 1; the turn's USER
    /// message stays too).
    pub keep_recent_steps: u32,
    /// The session's first USER message (the task) is pinned: sent in every request,
    /// counted with the system prompt.
    pub pin_task: bool,
    /// Tool outputs longer than this many lines are cut to head and tail by `tiered`.
    pub tool_output_max_lines: u32,
    /// What a push does with text that is not valid UTF-8.
    pub invalid_utf8: InvalidUtf8,
    /// What a push does with a tool part it cannot pair or send as one.
    pub invalid_tool_parts: InvalidToolParts,
    /// The provider format the window speaks (`format`); `None` is `"auto"`.
    pub format: Option<Format>,
    /// When a strategy has to act, it acts until the view is within this fraction of each of
    /// its limits, so that the view then stays unchanged (and cached) for many turns.
    pub low_water: Fraction,
    /// Tokens of the context limit kept free for the model's answer; `Auto` is a quarter of
    /// the limit, at most [`AUTO_OUTPUT_RESERVE_MAX`].
    pub output_reserve: Tokens,
    /// Anthropic renders mark the end of the stable prefix and the newest message with
    /// `cache_control` breakpoints.
    pub cache_breakpoints: bool,
    /// How summary requests are built.
    pub summary_request: SummaryRequest,
    /// The clearing stage: whether it runs before the strategy (`stages`) and how.
    pub clearing: Clearing,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            strategy: StrategyName::Sliding,
            history_budget: DEFAULT_HISTORY_BUDGET,
            budget_mode: BudgetMode::Default,
            retain_text: true,
            budget_includes_overhead: false,
            summary_budget: DEFAULT_SUMMARY_BUDGET,
            threshold: DEFAULT_THRESHOLD,
            context_limit: None,
            max_message_bytes: MessageLimit::default(),
            token_threshold: None,
            message_threshold: None,
            turn_threshold: None,
            keep_first: defaults::KEEP_FIRST,
            keep_recent: defaults::KEEP_RECENT,
            keep_recent_turns: defaults::KEEP_RECENT_TURNS,
            keep_recent_steps: defaults::KEEP_RECENT_STEPS,
            pin_task: true,
            tool_output_max_lines: defaults::TOOL_OUTPUT_MAX_LINES,
            invalid_utf8: InvalidUtf8::Error,
            invalid_tool_parts: InvalidToolParts::Error,
            format: None,
            low_water: DEFAULT_LOW_WATER,
            output_reserve: Tokens::Auto,
            cache_breakpoints: false,
            summary_request: SummaryRequest::Standalone,
            clearing: Clearing::default(),
        }
    }
}

impl Settings {
    /// These settings with the keys of the JSON object `json` applied. Nothing is applied
    /// unless every key is valid; errors name the offending key.
    pub fn with_json(&self, json: &str) -> Result<Settings> {
        let value: Value = crate::strict_json::parse(json)
            .map_err(|e| Error::new(ErrorKind::Parse, format!("configuration is not valid JSON: {e}")))?;
        self.with_value(&value)
    }

    /// These settings with the keys of the JSON object `value` applied, as
    /// [`Settings::with_json`].
    pub fn with_value(&self, value: &Value) -> Result<Settings> {
        let Value::Object(object) = value else {
            return Err(Error::invalid_arg("configuration must be a JSON object"));
        };
        let mut next = self.clone();
        for (key, value) in object {
            next.apply(key, value)?;
        }
        if let (Some(strategy), Some(Value::Array(stages))) = (object.get("strategy"), object.get("stages")) {
            if stages.last() != Some(strategy) {
                return Err(Error::invalid_arg(format!(
                    "configuration keys 'strategy' ({strategy}) and 'stages' disagree: the last stage is the strategy; give one of them"
                )));
            }
        }
        next.check_consistent()?;
        Ok(next)
    }

    /// Every setting as a configuration object: `with_value` on the defaults gives these
    /// settings back.
    pub fn to_value(&self) -> Value {
        let mut value = serde_json::json!({
            "strategy": self.strategy.as_str(),
            "history_budget": match self.budget_mode {
                BudgetMode::Default => Value::from("default"),
                BudgetMode::Given => Value::from(self.history_budget),
                BudgetMode::Auto => Value::from("auto"),
            },
            "retain_text": self.retain_text,
            "budget_includes_overhead": self.budget_includes_overhead,
            "summary_budget": self.summary_budget,
            "threshold": self.threshold.get(),
            "context_limit": self.context_limit.unwrap_or(0),
            "max_message_bytes": self.max_message_bytes.as_bytes(),
            "token_threshold": self.token_threshold,
            "message_threshold": self.message_threshold,
            "turn_threshold": self.turn_threshold,
            "keep_first": self.keep_first,
            "keep_recent": self.keep_recent,
            "keep_recent_turns": self.keep_recent_turns,
            "keep_recent_steps": self.keep_recent_steps,
            "pin_task": self.pin_task,
            "tool_output_max_lines": self.tool_output_max_lines,
            "invalid_utf8": self.invalid_utf8.as_str(),
            "invalid_tool_parts": self.invalid_tool_parts.as_str(),
            "format": self.format.map_or("auto", Format::key),
            "low_water": self.low_water.get(),
            "output_reserve": self.output_reserve.to_value(),
            "cache_breakpoints": self.cache_breakpoints,
            "summary_request": self.summary_request.as_str(),
            "stages": self.stages(),
        });
        self.clearing.to_entries(value.as_object_mut().expect("settings are an object"));
        value
    }

    /// The policy's stages, in the order they act: `"clear"` when the clearing stage is on,
    /// then the strategy (itself a preset of stages, see [`StrategyName`]).
    pub fn stages(&self) -> Vec<&'static str> {
        let mut stages = Vec::new();
        if self.clearing.enabled {
            stages.push(STAGE_CLEAR);
        }
        stages.push(self.strategy.as_str());
        stages
    }

    /// Tokens kept free for the answer in a context limit of `limit` tokens.
    pub fn output_reserve_in(&self, limit: u32) -> u32 {
        match self.output_reserve {
            Tokens::Auto => (limit / 4).min(AUTO_OUTPUT_RESERVE_MAX),
            Tokens::Fixed(tokens) => tokens,
        }
    }

    /// Rejects combinations no conversation can satisfy.
    fn check_consistent(&self) -> Result<()> {
        if let Some(threshold) = self.message_threshold {
            let kept = u64::from(self.keep_first) + u64::from(self.keep_recent);
            if self.strategy == StrategyName::Tiered && kept > u64::from(threshold) {
                return Err(Error::invalid_arg(format!(
                    "configuration keys 'keep_first' + 'keep_recent' ({kept}) exceed 'message_threshold' ({threshold}): \
                     tiered compaction could never keep what they ask for"
                )));
            }
        }
        Ok(())
    }

    fn apply(&mut self, key: &str, value: &Value) -> Result<()> {
        match key {
            "strategy" => self.strategy = parse_strategy(value)?,
            "history_budget" => (self.history_budget, self.budget_mode) = parse_history_budget(value)?,
            "retain_text" => self.retain_text = parse_bool(key, value)?,
            "budget_includes_overhead" => self.budget_includes_overhead = parse_bool(key, value)?,
            // 0 would refuse every summary answer: the summary strategy could never compact.
            "summary_budget" => self.summary_budget = parse_positive(key, value)?,
            "threshold" => self.threshold = parse_fraction(key, value)?,
            "context_limit" => self.context_limit = Some(parse_tokens(key, value)?).filter(|&limit| limit > 0),
            "max_message_bytes" => self.max_message_bytes = MessageLimit::from_bytes(parse_bytes(key, value)?),
            "token_threshold" => self.token_threshold = parse_threshold(key, value)?,
            "message_threshold" => self.message_threshold = parse_threshold(key, value)?,
            "turn_threshold" => self.turn_threshold = parse_threshold(key, value)?,
            "keep_first" => self.keep_first = parse_tokens(key, value)?,
            "keep_recent" => self.keep_recent = parse_tokens(key, value)?,
            "keep_recent_turns" => self.keep_recent_turns = parse_tokens(key, value)?,
            "keep_recent_steps" => self.keep_recent_steps = parse_keep_recent_steps(key, value)?,
            "pin_task" => self.pin_task = parse_bool(key, value)?,
            "tool_output_max_lines" => self.tool_output_max_lines = parse_positive(key, value)?,
            "invalid_utf8" => self.invalid_utf8 = parse_invalid_utf8(value)?,
            "invalid_tool_parts" => self.invalid_tool_parts = parse_invalid_tool_parts(value)?,
            "format" => self.format = parse_format(value)?,
            "low_water" => self.low_water = parse_fraction(key, value)?,
            "output_reserve" => self.output_reserve = parse_auto_tokens(key, value)?,
            "cache_breakpoints" => self.cache_breakpoints = parse_bool(key, value)?,
            "summary_request" => self.summary_request = parse_summary_request(value)?,
            "stages" => (self.clearing.enabled, self.strategy) = parse_stages(value)?,
            key if clearing::KEYS.contains(&key) => self.clearing.apply(key, value)?,
            unknown => return Err(Error::invalid_arg(format!("unknown configuration key '{}'", echo(unknown)))),
        }
        Ok(())
    }
}

/// Newest steps kept: 1 to [`defaults::MAX_KEEP_RECENT_STEPS`].
fn parse_keep_recent_steps(key: &str, value: &Value) -> Result<u32> {
    let steps = parse_positive(key, value)?;
    if steps > defaults::MAX_KEEP_RECENT_STEPS {
        return Err(Error::invalid_arg(format!(
            "configuration key '{key}' ({steps}) is more than {}: the newest steps kept must leave the strategy \
             something to drop",
            defaults::MAX_KEEP_RECENT_STEPS
        )));
    }
    Ok(steps)
}

fn parse_strategy(value: &Value) -> Result<StrategyName> {
    let name = value.as_str().ok_or_else(|| Error::invalid_arg("configuration key 'strategy' must be a string"))?;
    strategy_named(name).ok_or_else(|| {
        Error::invalid_arg(format!(
            "configuration key 'strategy': unknown strategy '{}' (expected sliding, drop_oldest, tiered, monologue or summary)",
            echo(name)
        ))
    })
}

fn strategy_named(name: &str) -> Option<StrategyName> {
    match name {
        "sliding" => Some(StrategyName::Sliding),
        "summary" => Some(StrategyName::Summary),
        "drop_oldest" => Some(StrategyName::DropOldest),
        "tiered" => Some(StrategyName::Tiered),
        "monologue" => Some(StrategyName::Monologue),
        _ => None,
    }
}

/// The stage that clears old tool results before the strategy acts.
pub const STAGE_CLEAR: &str = "clear";

/// The `stages` key: a list of stage names in the order they act, each acting only while the
/// view is still over its limits: `"clear"` first if wanted, then exactly one strategy (a
/// preset of stages: `summary` summarises then drops, `tiered` cuts, condenses then drops,
/// `monologue` strips then drops, `sliding` and `drop_oldest` drop). Returns whether the
/// clearing stage is on, and the strategy.
fn parse_stages(value: &Value) -> Result<(bool, StrategyName)> {
    let refuse = |why: String| {
        Error::invalid_arg(format!(
            "configuration key 'stages': {why} (expected an optional \"clear\" then one strategy: sliding, drop_oldest, \
             tiered, monologue or summary, e.g. [\"clear\", \"sliding\"])"
        ))
    };
    let Value::Array(stages) = value else {
        return Err(refuse(format!("must be a list of stage names (got {})", echo(&value.to_string()))));
    };
    let names: Vec<&str> = stages
        .iter()
        .map(|stage| {
            stage.as_str().ok_or_else(|| refuse(format!("a stage name must be a string (got {})", echo(&stage.to_string()))))
        })
        .collect::<Result<_>>()?;
    if let Some(unknown) = names.iter().find(|name| **name != STAGE_CLEAR && strategy_named(name).is_none()) {
        return Err(refuse(format!("unknown stage '{}'", echo(unknown))));
    }
    if names.iter().skip(1).any(|name| *name == STAGE_CLEAR) {
        return Err(refuse("\"clear\" comes first, before the strategy".into()));
    }
    match names.as_slice() {
        [] => Err(refuse("the list is empty".into())),
        [STAGE_CLEAR] => Err(refuse("\"clear\" must be followed by a strategy".into())),
        [STAGE_CLEAR, strategy] | [strategy] => Ok((names.len() == 2, strategy_named(strategy).expect("checked above"))),
        _ => Err(refuse(format!("one strategy ends the list ({} stages given)", names.len()))),
    }
}

/// A configured value as an error message repeats it: a string quoted, capped by [`echo`].
fn shown(value: &Value) -> String {
    match value.as_str() {
        Some(text) => format!("\"{}\"", echo(text)),
        None => echo(&value.to_string()).to_string(),
    }
}

/// The `format` key: `"auto"` (`None`) or one of the formats' keys.
fn parse_format(value: &Value) -> Result<Option<Format>> {
    match value.as_str() {
        Some("auto") => Ok(None),
        Some(key) if Format::from_key(key).is_some() => Ok(Format::from_key(key)),
        _ => Err(Error::invalid_arg(format!(
            "configuration key 'format' must be \"auto\", \"openai_chat\", \"openai_responses\", \"anthropic\" or \"gemini\" (got {})",
            shown(value)
        ))),
    }
}

fn parse_summary_request(value: &Value) -> Result<SummaryRequest> {
    match value.as_str() {
        Some("standalone") => Ok(SummaryRequest::Standalone),
        Some("conversation") => Ok(SummaryRequest::Conversation),
        _ => Err(Error::invalid_arg(format!(
            "configuration key 'summary_request' must be \"standalone\" or \"conversation\" (got {})",
            shown(value)
        ))),
    }
}

fn parse_invalid_utf8(value: &Value) -> Result<InvalidUtf8> {
    match value.as_str() {
        Some("error") => Ok(InvalidUtf8::Error),
        Some("replace") => Ok(InvalidUtf8::Replace),
        _ => Err(Error::invalid_arg(format!(
            "configuration key 'invalid_utf8' must be \"error\" or \"replace\" (got {})",
            shown(value)
        ))),
    }
}

fn parse_invalid_tool_parts(value: &Value) -> Result<InvalidToolParts> {
    match value.as_str() {
        Some("error") => Ok(InvalidToolParts::Error),
        Some("keep") => Ok(InvalidToolParts::Keep),
        _ => {
            Err(Error::invalid_arg(format!("configuration key 'invalid_tool_parts' must be \"error\" or \"keep\" (got {value})")))
        }
    }
}

fn parse_threshold(key: &str, value: &Value) -> Result<Option<u32>> {
    if value.is_null() {
        return Ok(None);
    }
    parse_positive(key, value).map(Some)
}

/// A whole number from 1 to `i32::MAX`.
fn parse_positive(key: &str, value: &Value) -> Result<u32> {
    match parse_tokens(key, value)? {
        0 => Err(Error::invalid_arg(format!("configuration key '{key}' must be at least 1 (got 0)"))),
        n => Ok(n),
    }
}

/// `"auto"` or a whole number from 0 to `i32::MAX`.
fn parse_auto_tokens(key: &str, value: &Value) -> Result<Tokens> {
    if value.as_str() == Some("auto") {
        return Ok(Tokens::Auto);
    }
    parse_tokens(key, value).map(Tokens::Fixed).map_err(|_| {
        Error::invalid_arg(format!("configuration key '{key}' must be \"auto\" or a whole number from 0 to {}", i32::MAX))
    })
}

/// The `history_budget` key: `"default"`, `"auto"` or a whole number of tokens.
fn parse_history_budget(value: &Value) -> Result<(u32, BudgetMode)> {
    match value.as_str() {
        Some("default") => Ok((DEFAULT_HISTORY_BUDGET, BudgetMode::Default)),
        Some("auto") => Ok((DEFAULT_HISTORY_BUDGET, BudgetMode::Auto)),
        _ => parse_tokens("history_budget", value).map(|tokens| (tokens, BudgetMode::Given)).map_err(|_| {
            Error::invalid_arg(format!(
                "configuration key 'history_budget' must be \"default\", \"auto\" or a whole number from 0 to {}",
                i32::MAX
            ))
        }),
    }
}

/// A whole number from 0 to `i32::MAX` (the C API's token range).
fn parse_tokens(key: &str, value: &Value) -> Result<u32> {
    value
        .as_u64()
        .filter(|&n| n <= i32::MAX as u64)
        .map(|n| n as u32)
        .ok_or_else(|| Error::invalid_arg(format!("configuration key '{key}' must be a whole number from 0 to {}", i32::MAX)))
}

fn parse_fraction(key: &str, value: &Value) -> Result<Fraction> {
    value
        .as_f64()
        .and_then(Fraction::new)
        .ok_or_else(|| Error::invalid_arg(format!("configuration key '{key}' must be a number above 0 and at most 1")))
}

/// A size in bytes: a whole number from 0 up.
fn parse_bytes(key: &str, value: &Value) -> Result<u64> {
    value
        .as_u64()
        .ok_or_else(|| Error::invalid_arg(format!("configuration key '{key}' must be a whole number of bytes (0 = no limit)")))
}

fn parse_bool(key: &str, value: &Value) -> Result<bool> {
    value.as_bool().ok_or_else(|| Error::invalid_arg(format!("configuration key '{key}' must be true or false")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applies_every_valid_key() {
        let settings = Settings::default()
            .with_json(r#"{"strategy":"sliding","history_budget":5000,"retain_text":false,"budget_includes_overhead":true}"#)
            .unwrap();
        assert_eq!(settings.history_budget, 5000);
        assert!(!settings.retain_text);
        assert!(settings.budget_includes_overhead);
        let summary = Settings::default()
            .with_json(r#"{"strategy":"summary","summary_budget":300,"threshold":0.5,"context_limit":8000}"#)
            .unwrap();
        assert_eq!(summary.strategy, StrategyName::Summary);
        assert_eq!(summary.summary_budget, 300);
        assert_eq!(summary.threshold.get(), 0.5);
        assert_eq!(summary.context_limit, Some(8000));
        let cleared = summary.with_json(r#"{"context_limit":0}"#).unwrap();
        assert_eq!(cleared.context_limit, None, "0 means: use the model table");
    }

    #[test]
    fn to_value_round_trips_through_with_value() {
        for json in [
            r#"{}"#,
            r#"{"strategy":"tiered","token_threshold":900,"message_threshold":30,"keep_first":2,"keep_recent":6}"#,
            r#"{"strategy":"drop_oldest","turn_threshold":4,"keep_recent_turns":3,"tool_output_max_lines":12}"#,
            r#"{"strategy":"summary","summary_budget":1,"threshold":0.123456789,"context_limit":9}"#,
            r#"{"retain_text":false,"budget_includes_overhead":true,"history_budget":0,"threshold":1}"#,
            r#"{"max_message_bytes":0}"#,
            r#"{"max_message_bytes":4096}"#,
            r#"{"invalid_utf8":"replace"}"#,
            r#"{"invalid_tool_parts":"keep"}"#,
            r#"{"format":"gemini"}"#,
            r#"{"format":"openai_responses"}"#,
            r#"{"low_water":0.7,"output_reserve":0}"#,
            r#"{"low_water":1,"output_reserve":32000}"#,
            r#"{"output_reserve":"auto"}"#,
            r#"{"history_budget":"auto"}"#,
            r#"{"cache_breakpoints":true}"#,
            r#"{"summary_request":"conversation"}"#,
            r#"{"summary_request":"standalone"}"#,
            r#"{"stages":["clear","summary"],"keep_tool_results":4,"exclude_tools":["memory"],"clear_at_least":0}"#,
            r#"{"stages":["tiered"],"clear_tool_inputs":true,"clear_placeholder":"{tool}"}"#,
            r#"{"stages":["clear","sliding"],"supersede":{"read_file":"path","grep":"pattern"}}"#,
            r#"{"keep_thinking":2}"#,
            r#"{"stages":["clear","sliding"],"clear_tool_inputs":true,"exclude_tools":["a","b"]}"#,
        ] {
            let settings = Settings::default().with_json(json).unwrap();
            assert_eq!(Settings::default().with_value(&settings.to_value()).unwrap(), settings, "{json}");
        }
    }

    #[test]
    fn stages_set_the_clearing_stage_and_the_strategy() {
        let settings = Settings::default().with_json(r#"{"stages":["clear","summary"]}"#).unwrap();
        assert!(settings.clearing.enabled);
        assert_eq!(settings.strategy, StrategyName::Summary);
        assert_eq!(settings.stages(), ["clear", "summary"]);
        // The strategy key keeps the clearing stage; stages without "clear" turn it off.
        let sliding = settings.with_json(r#"{"strategy":"sliding"}"#).unwrap();
        assert_eq!(sliding.stages(), ["clear", "sliding"]);
        for strategy in ["drop_oldest", "monologue", "tiered"] {
            let staged = sliding.with_json(&format!(r#"{{"strategy":"{strategy}"}}"#)).unwrap();
            assert_eq!(staged.stages(), ["clear", strategy]);
        }
        let plain = sliding.with_json(r#"{"stages":["sliding"]}"#).unwrap();
        assert_eq!((plain.clearing.enabled, plain.strategy), (false, StrategyName::Sliding));
        assert_eq!(Settings::default().stages(), ["sliding"]);
        // Both keys, agreeing, are fine.
        assert!(Settings::default().with_json(r#"{"strategy":"summary","stages":["clear","summary"]}"#).is_ok());
    }

    #[test]
    fn message_limit_key() {
        let limited = Settings::default().with_json(r#"{"max_message_bytes":1024}"#).unwrap();
        assert_eq!(limited.max_message_bytes, MessageLimit::Bytes(1024));
        let unlimited = limited.with_json(r#"{"max_message_bytes":0}"#).unwrap();
        assert_eq!(unlimited.max_message_bytes, MessageLimit::Unlimited);
    }

    #[test]
    fn compaction_keys() {
        let settings = Settings::default()
            .with_json(
                r#"{"strategy":"tiered","token_threshold":900,"message_threshold":30,"turn_threshold":null,
                    "keep_first":2,"keep_recent":6,"keep_recent_turns":3,"tool_output_max_lines":12}"#,
            )
            .unwrap();
        assert_eq!(settings.strategy, StrategyName::Tiered);
        assert_eq!(settings.token_threshold, Some(900));
        assert_eq!(settings.message_threshold, Some(30));
        assert_eq!(settings.turn_threshold, None);
        assert_eq!((settings.keep_first, settings.keep_recent), (2, 6));
        assert_eq!((settings.keep_recent_turns, settings.tool_output_max_lines), (3, 12));
        for (name, strategy) in [("drop_oldest", StrategyName::DropOldest), ("monologue", StrategyName::Monologue)] {
            let json = format!(r#"{{"strategy":"{name}"}}"#);
            assert_eq!(Settings::default().with_json(&json).unwrap().strategy, strategy);
        }
    }

    #[test]
    fn errors_name_the_key_and_change_nothing() {
        let cases = [
            (r#"{"history_budget":-1}"#, ErrorKind::InvalidArg, "history_budget"),
            (r#"{"history_budget":1.5}"#, ErrorKind::InvalidArg, "history_budget"),
            (r#"{"history_budget":3000000000}"#, ErrorKind::InvalidArg, "history_budget"),
            (r#"{"max_message_bytes":-1}"#, ErrorKind::InvalidArg, "max_message_bytes"),
            (r#"{"max_message_bytes":"64M"}"#, ErrorKind::InvalidArg, "max_message_bytes"),
            (r#"{"retain_text":"yes"}"#, ErrorKind::InvalidArg, "retain_text"),
            (r#"{"strategy":"lru"}"#, ErrorKind::InvalidArg, "lru"),
            (r#"{"threshold":0}"#, ErrorKind::InvalidArg, "threshold"),
            (r#"{"threshold":1.5}"#, ErrorKind::InvalidArg, "threshold"),
            (r#"{"threshold":"high"}"#, ErrorKind::InvalidArg, "threshold"),
            (r#"{"summary_budget":-3}"#, ErrorKind::InvalidArg, "summary_budget"),
            (r#"{"summary_budget":0}"#, ErrorKind::InvalidArg, "summary_budget"),
            (
                r#"{"strategy":"tiered","keep_first":1,"strategy":"summary"}"#,
                ErrorKind::Parse,
                "the key \"strategy\" is given twice",
            ),
            (r#"{"context_limit":true}"#, ErrorKind::InvalidArg, "context_limit"),
            (r#"{"keep_first":-2}"#, ErrorKind::InvalidArg, "keep_first"),
            (r#"{"token_threshold":-1}"#, ErrorKind::InvalidArg, "token_threshold"),
            (r#"{"message_threshold":0}"#, ErrorKind::InvalidArg, "message_threshold"),
            (r#"{"turn_threshold":"3"}"#, ErrorKind::InvalidArg, "turn_threshold"),
            (r#"{"tool_output_max_lines":0}"#, ErrorKind::InvalidArg, "tool_output_max_lines"),
            (r#"{"format":"openai"}"#, ErrorKind::InvalidArg, "format"),
            (r#"{"format":3}"#, ErrorKind::InvalidArg, "format"),
            (r#"{"low_water":0}"#, ErrorKind::InvalidArg, "low_water"),
            (r#"{"low_water":1.01}"#, ErrorKind::InvalidArg, "low_water"),
            (r#"{"low_water":-0.5}"#, ErrorKind::InvalidArg, "low_water"),
            (r#"{"low_water":null}"#, ErrorKind::InvalidArg, "low_water"),
            (r#"{"output_reserve":-1}"#, ErrorKind::InvalidArg, "output_reserve"),
            (r#"{"output_reserve":1.5}"#, ErrorKind::InvalidArg, "output_reserve"),
            (r#"{"output_reserve":"big"}"#, ErrorKind::InvalidArg, "output_reserve"),
            (r#"{"history_budget":"Auto"}"#, ErrorKind::InvalidArg, "history_budget"),
            (r#"{"cache_breakpoints":1}"#, ErrorKind::InvalidArg, "cache_breakpoints"),
            (r#"{"summary_request":"chat"}"#, ErrorKind::InvalidArg, "summary_request"),
            (r#"{"summary_request":true}"#, ErrorKind::InvalidArg, "summary_request"),
            (
                r#"{"strategy":"tiered","keep_first":4,"keep_recent":8,"message_threshold":10}"#,
                ErrorKind::InvalidArg,
                "keep_recent",
            ),
            (r#"{"history_budget":10,"bogus":1}"#, ErrorKind::InvalidArg, "bogus"),
            (r#"{"stages":[]}"#, ErrorKind::InvalidArg, "'stages': the list is empty"),
            (r#"{"stages":"clear"}"#, ErrorKind::InvalidArg, "'stages'"),
            (r#"{"stages":["clear"]}"#, ErrorKind::InvalidArg, "must be followed by a strategy"),
            (r#"{"stages":["sliding","clear"]}"#, ErrorKind::InvalidArg, "\"clear\" comes first"),
            (r#"{"stages":["compress","sliding"]}"#, ErrorKind::InvalidArg, "unknown stage 'compress'"),
            (r#"{"stages":["clear","clear","sliding"]}"#, ErrorKind::InvalidArg, "\"clear\" comes first"),
            (r#"{"stages":["clear","sliding","tiered"]}"#, ErrorKind::InvalidArg, "3 stages given"),
            (r#"{"stages":["clear",7]}"#, ErrorKind::InvalidArg, "'stages'"),
            (r#"{"stages":["clear","sliding"],"strategy":"tiered"}"#, ErrorKind::InvalidArg, "disagree"),
            (r#"{"supersede":{"read_file":""}}"#, ErrorKind::InvalidArg, "'supersede'"),
            (r#"{"supersede":{"read_file":["path"]}}"#, ErrorKind::InvalidArg, "'supersede'"),
            (r#"{"supersede":"read_file"}"#, ErrorKind::InvalidArg, "'supersede'"),
            (r#"{"keep_thinking":-2}"#, ErrorKind::InvalidArg, "'keep_thinking'"),
            (r#"{"keep_tool_results":-1}"#, ErrorKind::InvalidArg, "keep_tool_results"),
            (r#"{"exclude_tools":{"a":1}}"#, ErrorKind::InvalidArg, "exclude_tools"),
            (r#"[1,2]"#, ErrorKind::InvalidArg, "object"),
            (r#"{"history_budget":"#, ErrorKind::Parse, "JSON"),
            // A key given twice: refused as every JSON reader refuses it.
            (r#"{"history_budget":10,"history_budget":20}"#, ErrorKind::Parse, "the key \"history_budget\" is given twice"),
        ];
        for (json, kind, needle) in cases {
            let err = Settings::default().with_json(json).unwrap_err();
            assert_eq!(err.kind(), kind, "{json}");
            assert!(err.message().contains(needle), "{json}: {}", err.message());
        }
    }
}
