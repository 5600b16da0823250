//! `ctxwin`: count tokens and inspect an agent's context window from the command line.

mod args;
mod inspect;

use ctxwin::Window;
use ctxwin::json::transcript;
use std::io::Read;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = match args::parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("ctxwin: {message}\n\n{}", args::USAGE);
            return ExitCode::from(2);
        }
    };
    let outcome = match args.command.as_str() {
        "count" => count(&args),
        "inspect" => inspect(&args),
        _ => {
            println!("{}", args::USAGE);
            Ok(())
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("ctxwin: {message}");
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
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| format!("standard input: {e}"))?;
            Ok(("standard input".to_owned(), text))
        }
    }
}

fn model(args: &args::Args) -> &str {
    args.model.as_deref().unwrap_or_default()
}

fn count(args: &args::Args) -> Result<(), String> {
    let (_, text) = read_input(args.file.as_deref())?;
    let count = ctxwin::Model::resolve(model(args)).count(&text);
    if args.json {
        println!("{}", serde_json::json!({"tokens": count.tokens, "exact": count.exact}));
    } else {
        println!("{}{}", if count.exact { "" } else { "~" }, count.tokens);
    }
    Ok(())
}

fn inspect(args: &args::Args) -> Result<(), String> {
    let (name, text) = read_input(args.file.as_deref())?;
    let mut window = Window::new(model(args));
    if let Some(strategy) = &args.strategy {
        let config = serde_json::json!({ "strategy": strategy }).to_string();
        window.configure(&config).map_err(|e| format!("--strategy: {e}"))?;
    }
    if let Some(budget) = args.budget {
        window.set_budget(budget).map_err(|e| format!("--budget: {e}"))?;
    }
    let extras = transcript::load(&mut window, &name, &text)?;
    let system = window.model().count(&extras.system).tokens;
    let tools = match &extras.tools {
        Some(tools) => ctxwin::json::count_tools(window.model(), tools).map_err(|e| format!("{name}: {e}"))?.tokens,
        None => 0,
    };
    let clamp = |n: u32| i32::try_from(n).unwrap_or(i32::MAX);
    window.set_overhead(clamp(system), clamp(tools)).map_err(|e| e.to_string())?;
    window.end_turn();
    let format = window.wire_formats().preferred().map_or("plain", |f| f.name());
    let report = inspect::Report::new(&window);
    if args.json {
        println!("{}", report.to_json(&window, format));
    } else {
        print!("{}", report.to_text(&window, format));
    }
    Ok(())
}
