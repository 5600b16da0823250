//! The command line: `ctxwin count|inspect|replay [options] [FILE]`, parsed by hand.

/// What the user asked for.
#[derive(Debug, Default)]
pub struct Args {
    /// `count`, `inspect`, `replay`, `help` or `version`.
    pub command: String,
    /// `--model`.
    pub model: Option<String>,
    /// `--budget`: the history budget in tokens (`replay`: a comma-separated list, each a
    /// number of tokens or a percentage of the log's largest history).
    pub budgets: Vec<Budget>,
    /// `--strategy` (`replay`: a comma-separated list).
    pub strategies: Vec<String>,
    /// `--config`: a `ctxwin_window_configure` object, applied after `--strategy`.
    pub config: Option<String>,
    /// `--json`: machine-readable output (errors included).
    pub json: bool,
    /// `--render`: print the request body that would be sent.
    pub render: bool,
    /// `--base`: the file holding the rest of the request body for `--render`.
    pub base: Option<String>,
    /// `--summary-request`: print the summary prompt.
    pub summary_request: bool,
    /// `--problems`: print only what `validate` finds.
    pub problems: bool,
    /// The input file; standard input when absent.
    pub file: Option<String>,
    /// `replay --format`: the log's format (detected when absent).
    pub format: Option<String>,
    /// `replay --overhead`: tokens sent besides the messages (system prompt and tools).
    pub overhead: Option<i32>,
    /// `replay --cache-read-price`: the price of a cached input token, input price = 1.
    pub cache_read_price: Option<f64>,
    /// `replay --cache-write-price`: the price of an input token written to the cache.
    pub cache_write_price: Option<f64>,
    /// `replay --svg`: where to draw tokens per request under each policy.
    pub svg: Option<String>,
    /// `replay --summary-only`: leave out the per-request rows.
    pub summary_only: bool,
}

/// One history budget `--budget` names.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Budget {
    /// A number of tokens.
    Tokens(i32),
    /// A percentage of the largest history the log sends (`replay` only).
    Percent(f64),
}

impl Args {
    /// The one strategy `inspect` takes.
    pub fn strategy(&self) -> Option<&str> {
        self.strategies.first().map(String::as_str)
    }

    /// The one budget in tokens `inspect` takes.
    pub fn budget(&self) -> Option<i32> {
        match self.budgets.first() {
            Some(Budget::Tokens(n)) => Some(*n),
            _ => None,
        }
    }
}

/// Reads `--budget`'s value: budgets separated by commas, each a whole number of tokens or a
/// percentage (`40%`).
fn budgets(text: &str) -> Result<Vec<Budget>, String> {
    text.split(',')
        .map(|part| {
            let part = part.trim();
            let budget = match part.strip_suffix('%') {
                Some(percent) => percent.parse().ok().filter(|p: &f64| *p > 0.0 && *p <= 1000.0).map(Budget::Percent),
                None => part.parse().ok().filter(|&n: &i32| n >= 0).map(Budget::Tokens),
            };
            budget.ok_or_else(|| format!("--budget must be a whole number of tokens or a percentage like 40%, not '{part}'"))
        })
        .collect()
}

/// Reads a price multiplier (input price = 1).
fn price(name: &str, text: &str) -> Result<f64, String> {
    text.parse()
        .ok()
        .filter(|p: &f64| p.is_finite() && *p >= 0.0)
        .ok_or_else(|| format!("{name} must be a number from 0 up (the input price is 1), not '{text}'"))
}

/// The help text.
pub const USAGE: &str = "\
usage: ctxwin count --model MODEL [--json] [FILE]
       ctxwin inspect [--model MODEL] [--budget N] [--strategy S] [--config JSON] [--json]
                      [--render [--base BODY.json] | --summary-request | --problems] FILE
       ctxwin replay [--model MODEL] [--strategy S[,S...]] [--budget N[,N%...]] [--config JSON]
                     [--format claude|codex|messages|save] [--overhead N] [--cache-read-price P]
                     [--cache-write-price P] [--svg FILE] [--summary-only] [--json] LOG
       ctxwin --version

count    counts the tokens of FILE (standard input when absent) for MODEL.
inspect  reads FILE: a ctxwin save file (ctxwin_window_save / export; --model optional), a
         JSON array of provider messages (OpenAI Chat Completions, OpenAI Responses,
         Anthropic Messages or Gemini contents), a request body holding one (its system
         prompt and tools count as overhead), or one message per line (JSON Lines). It shows
         one row per turn, the view the strategy sends item by item (type, kind, ledger
         index, tokens, call id, the first characters) with the window divider, the context
         usage and the problems ctxwin_window_validate finds.
replay   replays an agent's log (Claude Code stream-json or session JSONL, a Codex
         rollout, provider messages or a ctxwin save) through each strategy and budget as
         a host would: push_json of every message, prepare and render_request before every
         model call. Prints per request the tokens sent, over budget or refused, whether
         the task (the first user message) is sent, messages sent and dropped; then per
         policy the requests over budget, task kept, tokens sent, billed input at the cache
         prices, cache-hit share, largest request, and the log's own numbers where it holds
         the provider's usage.

options
  --strategy S          sliding, drop_oldest, tiered, monologue or summary (replay: a list)
  --config JSON         any ctxwin_window_configure keys, e.g. '{\"token_threshold\":6000}'
  --budget N            the history budget in tokens (replay: a list; 40% = 40% of the
                        largest history the log sends)
  --format F            replay: the log's format, claude, codex, messages or save (detected)
  --overhead N          replay: system prompt and tool tokens (default: what the first
                        request's logged usage holds beyond its messages, else 0)
  --cache-read-price P  replay: a cached input token's price, input = 1 (default 0.1)
  --cache-write-price P replay: a cache-write token's price (default 1; Anthropic 1.25)
  --svg FILE            replay: draw tokens per request under each policy
  --summary-only        replay: leave out the per-request rows
  --render              print the request body that would be sent: the view in the file's
                        format under messages/input/contents, in the rest of the body (the
                        request body read, or --base BODY.json, or {})
  --summary-request     print the summary prompt the window would ask the agent's LLM
  --problems            print only the problems ctxwin_window_validate finds
  --json                machine-readable output; errors are JSON too
  --version             print the version";

/// Parses the arguments after the program name.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
    let mut parsed = Args::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--model" => parsed.model = Some(value("--model")?),
            "--budget" => parsed.budgets = budgets(&value("--budget")?)?,
            "--strategy" => {
                parsed.strategies = value("--strategy")?.split(',').map(|s| s.trim().to_owned()).collect();
            }
            "--format" => parsed.format = Some(value("--format")?),
            "--overhead" => {
                let overhead = value("--overhead")?;
                parsed.overhead = Some(
                    overhead
                        .parse()
                        .ok()
                        .filter(|&n: &i32| n >= 0)
                        .ok_or_else(|| format!("--overhead must be a whole number of tokens, not '{overhead}'"))?,
                );
            }
            "--cache-read-price" => parsed.cache_read_price = Some(price("--cache-read-price", &value("--cache-read-price")?)?),
            "--cache-write-price" => {
                parsed.cache_write_price = Some(price("--cache-write-price", &value("--cache-write-price")?)?);
            }
            "--svg" => parsed.svg = Some(value("--svg")?),
            "--summary-only" => parsed.summary_only = true,
            "--config" => parsed.config = Some(value("--config")?),
            "--base" => parsed.base = Some(value("--base")?),
            "--json" => parsed.json = true,
            "--render" => parsed.render = true,
            "--summary-request" => parsed.summary_request = true,
            "--problems" => parsed.problems = true,
            "--version" | "-V" => parsed.command = "version".to_owned(),
            "-h" | "--help" => parsed.command = "help".to_owned(),
            flag if flag.starts_with("--") => return Err(format!("unknown option '{flag}'")),
            _ if parsed.command.is_empty() => parsed.command = arg,
            _ if parsed.file.is_none() => parsed.file = Some(arg),
            _ => return Err(format!("unexpected argument '{arg}'")),
        }
    }
    let outputs = [parsed.render, parsed.summary_request, parsed.problems].iter().filter(|&&on| on).count();
    let replay_options = parsed.format.is_some()
        || parsed.overhead.is_some()
        || parsed.cache_read_price.is_some()
        || parsed.cache_write_price.is_some()
        || parsed.svg.is_some()
        || parsed.summary_only;
    if parsed.command != "replay" {
        if replay_options {
            return Err(
                "--format, --overhead, --cache-read-price, --cache-write-price, --svg and --summary-only are replay options"
                    .to_owned(),
            );
        }
        if parsed.strategies.len() > 1 || parsed.budgets.len() > 1 {
            return Err("one --strategy and one --budget, not lists: lists are for replay".to_owned());
        }
        if parsed.budgets.iter().any(|b| matches!(b, Budget::Percent(_))) {
            return Err("--budget as a percentage is for replay: give a number of tokens".to_owned());
        }
    }
    match parsed.command.as_str() {
        "help" | "version" => {}
        "count" if parsed.model.is_none() => return Err("count needs --model".to_owned()),
        "count" if outputs > 0 || parsed.base.is_some() => {
            return Err("--render, --base, --summary-request and --problems are inspect options".to_owned());
        }
        "count" => {}
        "inspect" if parsed.file.is_none() => return Err("inspect needs a transcript or save file".to_owned()),
        "inspect" if outputs > 1 => {
            return Err("choose one of --render, --summary-request and --problems".to_owned());
        }
        "inspect" if parsed.base.is_some() && !parsed.render => return Err("--base goes with --render".to_owned()),
        "inspect" => {}
        "replay" if parsed.file.is_none() => return Err("replay needs a log file".to_owned()),
        "replay" if outputs > 0 || parsed.base.is_some() => {
            return Err("--render, --base, --summary-request and --problems are inspect options".to_owned());
        }
        "replay" => {}
        "" => return Err("no command given".to_owned()),
        other => return Err(format!("unknown command '{other}'")),
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Result<Args, String> {
        parse(line.split_whitespace().map(str::to_owned))
    }

    #[test]
    fn parses_commands_and_refuses_mistakes() {
        let inspect = args("inspect --model gpt-4o --budget 500 --strategy sliding --json t.json").unwrap();
        assert_eq!((inspect.budget(), inspect.json, inspect.file.as_deref()), (Some(500), true, Some("t.json")));
        let replay = args("replay --strategy sliding,tiered --budget 4000,40% --cache-read-price 0.1 log.jsonl").unwrap();
        assert_eq!(replay.strategies, ["sliding", "tiered"]);
        assert_eq!(replay.budgets, [Budget::Tokens(4000), Budget::Percent(40.0)]);
        assert_eq!((replay.cache_read_price, replay.file.as_deref()), (Some(0.1), Some("log.jsonl")));
        assert!(args("count --model gpt-4o").unwrap().file.is_none());
        assert!(args("inspect save.json").unwrap().model.is_none(), "a save file names its model");
        let render = args("inspect --render --base b.json t.json").unwrap();
        assert!(render.render && render.base.as_deref() == Some("b.json"));
        assert_eq!(args("--version").unwrap().command, "version");
        for (line, needle) in [
            ("count", "--model"),
            ("inspect --model m", "transcript"),
            ("inspect --model m --budget -3 t", "--budget"),
            ("inspect --model", "needs a value"),
            ("frobnicate --model m", "unknown command"),
            ("count --model m --colour x", "unknown option"),
            ("count --model m a b", "unexpected"),
            ("count --model m --render", "inspect options"),
            ("inspect --render --problems t", "choose one"),
            ("inspect --base b.json t", "--base goes with --render"),
            ("replay", "log file"),
            ("replay --budget 40%% l", "percentage like 40%"),
            ("replay --budget 0% l", "percentage like 40%"),
            ("replay --cache-read-price -1 l", "--cache-read-price must be"),
            ("replay --overhead x l", "--overhead must be"),
            ("replay --render l", "inspect options"),
            ("inspect --svg x.svg t", "replay options"),
            ("inspect --budget 1,2 t", "lists are for replay"),
            ("inspect --budget 40% t", "percentage is for replay"),
        ] {
            let err = args(line).unwrap_err();
            assert!(err.contains(needle), "{line}: {err}");
        }
    }
}
