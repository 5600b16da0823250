//! The command line: `ctxwin count|inspect [options] [FILE]`, parsed by hand.

/// What the user asked for.
#[derive(Debug, Default)]
pub struct Args {
    /// `count` or `inspect`.
    pub command: String,
    /// `--model`.
    pub model: Option<String>,
    /// `--budget`: the history budget in tokens.
    pub budget: Option<i32>,
    /// `--strategy`.
    pub strategy: Option<String>,
    /// `--json`: machine-readable output.
    pub json: bool,
    /// The input file; standard input when absent.
    pub file: Option<String>,
}

/// The help text.
pub const USAGE: &str = "\
usage: ctxwin count --model MODEL [--json] [FILE]
       ctxwin inspect --model MODEL [--budget N] [--strategy S] [--json] TRANSCRIPT

count    counts the tokens of FILE (standard input when absent) for MODEL.
inspect  reads a transcript: a JSON array of provider messages (OpenAI Chat Completions,
         OpenAI Responses, Anthropic Messages or Gemini contents), a request body holding
         one (with its system prompt and tools), or one message per line (JSON Lines),
         and shows one row per turn, the context usage, the window divider and what would
         be sent.";

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
            "--json" => parsed.json = true,
            "-h" | "--help" => parsed.command = "help".to_owned(),
            flag if flag.starts_with("--") => return Err(format!("unknown option '{flag}'")),
            _ if parsed.command.is_empty() => parsed.command = arg,
            _ if parsed.file.is_none() => parsed.file = Some(arg),
            _ => return Err(format!("unexpected argument '{arg}'")),
        }
    }
    match parsed.command.as_str() {
        "help" => {}
        "count" | "inspect" if parsed.model.is_none() => return Err(format!("{} needs --model", parsed.command)),
        "count" => {}
        "inspect" if parsed.file.is_none() => return Err("inspect needs a transcript file".to_owned()),
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
        for (line, needle) in [
            ("count", "--model"),
            ("inspect --model m", "transcript"),
            ("inspect --model m --budget -3 t", "--budget"),
            ("inspect --model", "needs a value"),
            ("frobnicate --model m", "unknown command"),
            ("count --model m --colour x", "unknown option"),
            ("count --model m a b", "unexpected"),
        ] {
            let err = args(line).unwrap_err();
            assert!(err.contains(needle), "{line}: {err}");
        }
    }
}
