//! The command line: `ctxwin count|inspect [options] [FILE]`, parsed by hand.

/// What the user asked for.
#[derive(Debug, Default)]
pub struct Args {
    /// `count`, `inspect`, `help` or `version`.
    pub command: String,
    /// `--model`.
    pub model: Option<String>,
    /// `--budget`: the history budget in tokens.
    pub budget: Option<i32>,
    /// `--strategy`.
    pub strategy: Option<String>,
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
}

/// The help text.
pub const USAGE: &str = "\
usage: ctxwin count --model MODEL [--json] [FILE]
       ctxwin inspect [--model MODEL] [--budget N] [--strategy S] [--config JSON] [--json]
                      [--render [--base BODY.json] | --summary-request | --problems] FILE
       ctxwin --version

count    counts the tokens of FILE (standard input when absent) for MODEL.
inspect  reads FILE: a ctxwin save file (ctxwin_window_save / export; --model optional), a
         JSON array of provider messages (OpenAI Chat Completions, OpenAI Responses,
         Anthropic Messages or Gemini contents), a request body holding one (its system
         prompt and tools count as overhead), or one message per line (JSON Lines). It shows
         one row per turn, the view the strategy sends item by item (type, kind, ledger
         index, tokens, call id, the first characters) with the window divider, the context
         usage and the problems ctxwin_window_validate finds.

options
  --strategy S          sliding, drop_oldest, tiered, monologue or summary
  --config JSON         any ctxwin_window_configure keys, e.g. '{\"token_threshold\":6000}'
  --budget N            the history budget in tokens
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
            "--budget" => {
                let budget = value("--budget")?;
                parsed.budget = Some(
                    budget
                        .parse()
                        .ok()
                        .filter(|&n: &i32| n >= 0)
                        .ok_or_else(|| format!("--budget must be a whole number of tokens, not '{budget}'"))?,
                );
            }
            "--strategy" => parsed.strategy = Some(value("--strategy")?),
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
        assert_eq!((inspect.budget, inspect.json, inspect.file.as_deref()), (Some(500), true, Some("t.json")));
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
        ] {
            let err = args(line).unwrap_err();
            assert!(err.contains(needle), "{line}: {err}");
        }
    }
}
