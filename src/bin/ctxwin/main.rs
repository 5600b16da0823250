//! `ctxwin`: count tokens, inspect an agent's context window and replay an agent's log from
//! the command line.

mod agent_log;
mod args;
mod chart;
mod inspect;
mod render;
mod replay;
mod replay_report;
mod source;

use std::io::Read;
use std::process::ExitCode;

/// How the program reports: plain text, or JSON when `--json` was given (errors included).
#[derive(Clone, Copy)]
struct Output {
    json: bool,
}

impl Output {
    fn error(self, message: &str) {
        if self.json {
            eprintln!("{}", serde_json::json!({ "error": message }));
        } else {
            eprintln!("ctxwin: {message}");
        }
    }

    fn warning(self, message: &str) {
        if self.json {
            eprintln!("{}", serde_json::json!({ "warning": message }));
        } else {
            eprintln!("ctxwin: warning: {message}");
        }
    }
}

fn main() -> ExitCode {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let output = Output { json: raw.iter().any(|arg| arg == "--json") };
    let args = match args::parse(raw) {
        Ok(args) => args,
        Err(message) => {
            output.error(&message);
            if !output.json {
                eprintln!("\n{}", args::USAGE);
            }
            return ExitCode::from(2);
        }
    };
    let outcome = match args.command.as_str() {
        "count" => count(&args, output),
        "inspect" => inspect(&args, output),
        "replay" => replay(&args, output),
        "version" => {
            println!("ctxwin {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        _ => {
            println!("{}", args::USAGE);
            Ok(())
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            output.error(&message);
            ExitCode::FAILURE
        }
    }
}

/// The input's name for messages, and its text.
fn read_input(file: Option<&str>) -> Result<(String, String), String> {
    match file {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
            Ok((path.to_owned(), text))
        }
        None => {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text).map_err(|e| format!("standard input: {e}"))?;
            Ok(("standard input".to_owned(), text))
        }
    }
}

/// Names an unknown model on stderr: its counts are generic estimates without a limit.
fn warn_if_unknown(model: &ctxwin::Model, output: Output) {
    if !model.is_known() {
        output.warning(&format!(
            "model '{}' is unknown: its counts are generic estimates (~) and its context limit is unknown; \
             check the spelling (for example gpt-4o, claude-sonnet-4-5, gemini-2.5-pro)",
            model.name()
        ));
    }
}

fn count(args: &args::Args, output: Output) -> Result<(), String> {
    let model = ctxwin::Model::resolve(args.model.as_deref().unwrap_or_default());
    warn_if_unknown(&model, output);
    let (_, text) = read_input(args.file.as_deref())?;
    let count = model.count(&text);
    if args.json {
        println!("{}", serde_json::json!({"tokens": count.tokens, "exact": count.exact, "model_known": model.is_known()}));
    } else {
        println!("{}{}", if count.exact { "" } else { "~" }, count.tokens);
    }
    Ok(())
}

fn inspect(args: &args::Args, output: Output) -> Result<(), String> {
    let (name, text) = read_input(args.file.as_deref())?;
    let mut source = source::open(args, &name, &text)?;
    warn_if_unknown(source.window.model(), output);
    let window = &mut source.window;
    if args.render {
        let base = match &args.base {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
                Some(serde_json::from_str(&text).map_err(|e| format!("{path}: invalid JSON: {e}"))?)
            }
            None => source.body.take(),
        };
        println!("{}", render::request_body(window, base)?);
    } else if args.summary_request {
        let request = ctxwin::json::summary_request(window).map_err(|e| format!("no summary request: {e}"))?;
        if args.json {
            println!("{}", serde_json::json!({ "summary_request": request, "generation": window.generation() }));
        } else {
            println!("{request}");
        }
    } else {
        let report = inspect::Report::new(window);
        match (args.problems, args.json) {
            (true, true) => println!("{}", report.validation()),
            (true, false) => print!("{}", report.problems_text()),
            (false, true) => println!("{}", report.to_json(window, &source.kind)),
            (false, false) => print!("{}", report.to_text(window, &source.kind)),
        }
    }
    Ok(())
}

fn replay(args: &args::Args, output: Output) -> Result<(), String> {
    let (name, text) = read_input(args.file.as_deref())?;
    let log = agent_log::read(&text, args.format.as_deref()).map_err(|e| format!("{name}: {e}"))?;
    let model_name = args
        .model
        .clone()
        .or_else(|| log.model.clone())
        .ok_or_else(|| format!("{name}: the log names no model: replay needs --model"))?;
    let model = ctxwin::Model::resolve(&model_name);
    warn_if_unknown(&model, output);
    let prices = replay::Prices { read: args.cache_read_price.unwrap_or(0.1), write: args.cache_write_price.unwrap_or(1.0) };
    let base = replay::baseline(&log, &model_name, args.overhead).map_err(|e| format!("{name}: {e}"))?;
    let strategies: Vec<Option<String>> = match args.strategies.is_empty() {
        true => vec![None],
        false => args.strategies.iter().cloned().map(Some).collect(),
    };
    let budgets: Vec<Option<args::Budget>> = match args.budgets.is_empty() {
        true => vec![None],
        false => args.budgets.iter().copied().map(Some).collect(),
    };
    let mut runs = Vec::new();
    for strategy in &strategies {
        for budget in &budgets {
            let policy = replay::Policy { strategy: strategy.clone(), config: args.config.clone(), budget: *budget };
            runs.push(replay::run(&log, &model_name, &base, &policy, prices).map_err(|e| format!("{name}: {e}"))?);
        }
    }
    if let Some(path) = &args.svg {
        let mut series = Vec::new();
        if base.logged.iter().any(Option::is_some) {
            series.push(chart::Series {
                label: "as logged".to_owned(),
                points: base.logged.iter().map(|u| u.map(|u| u.prompt)).collect(),
                dashed: true,
            });
        }
        for run in &runs {
            series.push(chart::Series {
                label: format!("{} {}", run.strategy, run.budget),
                points: run.rows.iter().map(|r| Some(r.tokens)).collect(),
                dashed: false,
            });
        }
        let title = format!("{name}: input tokens per request ({})", model.name());
        let limit = model.context_limit().map(u64::from);
        std::fs::write(path, chart::svg(&title, &series, limit)).map_err(|e| format!("{path}: {e}"))?;
    }
    if args.json {
        println!("{}", replay_report::to_json(&name, &log, &model, &base, &runs, prices));
    } else {
        print!("{}", replay_report::text(&name, &log, &model, &base, &runs, prices, !args.summary_only));
    }
    Ok(())
}
