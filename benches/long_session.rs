//! Long sessions: 10,000 turns of tool-using work (the generator of `tests/long_sessions.rs`)
//! under every strategy, history budget 20,000 tokens, `end_turn` after every turn. Prints one
//! row per strategy: the fill of the budget once the history first outgrew it (the view's
//! history over the limit, minimum and average over the later `end_turn`s), the items in
//! the view at the end, and the time of one `end_turn` (median, mean and worst CPU time of the
//! calling thread, so a busy machine's preemptions do not count). Under `summary` the
//! summary requests due after each `end_turn` are answered with a generated text, as the
//! agent's LLM would (not timed), and the row counts them.
//!
//! Goal (issue 13): at most 1 ms on average and 10 ms worst for every strategy, with the fill
//! never below the default `low_water` of the limit, less one step, once the budget is full.

#[path = "../tests/support/long_session.rs"]
mod long_session;
use long_session::{Rng, answer_summaries, turn};

#[path = "../tests/support/cpu_time.rs"]
mod cpu_time;
use cpu_time::thread_cpu_time;

use ctxwin::Window;

const TURNS: usize = 10_000;
const BUDGET: u64 = 20_000;
const STRATEGIES: [&str; 5] = ["sliding", "drop_oldest", "tiered", "monologue", "summary"];

struct Row {
    fill_min: f64,
    fill_avg: f64,
    items: usize,
    median_us: f64,
    mean_us: f64,
    worst_us: f64,
    summaries: usize,
}

fn session(strategy: &str) -> Row {
    let mut window = Window::new("gpt-4o");
    window.configure(&format!(r#"{{"strategy":"{strategy}","history_budget":{BUDGET}}}"#)).unwrap();
    window.push(ctxwin::Kind::System, "You are a careful coding agent.").unwrap();
    let mut rng = Rng::new(13);
    let (mut id, mut whole, mut times, mut fills, mut summaries) = (0, 0u64, Vec::with_capacity(TURNS), Vec::new(), 0);
    for t in 0..TURNS {
        turn(&mut window, &mut rng, &mut id);
        let started = thread_cpu_time();
        window.end_turn();
        times.push((thread_cpu_time() - started).as_secs_f64() * 1e6);
        if strategy == "summary" {
            summaries += answer_summaries(&mut window, &mut rng, t);
        }
        whole += u64::from(window.turn_info(t).unwrap().tokens.tokens);
        if whole > BUDGET {
            fills.push(window.view_history().tokens() as f64 / BUDGET as f64);
        }
    }
    let mean_us = times.iter().sum::<f64>() / times.len() as f64;
    times.sort_by(f64::total_cmp);
    Row {
        fill_min: fills.iter().copied().fold(f64::INFINITY, f64::min),
        fill_avg: fills.iter().sum::<f64>() / fills.len() as f64,
        items: window.view_len(),
        median_us: times[times.len() / 2],
        mean_us,
        worst_us: times[times.len() - 1],
        summaries,
    }
}

fn main() {
    println!("long session: {TURNS} turns, history budget {BUDGET}, gpt-4o counts, end_turn after every turn");
    println!(
        "{:<12} {:>9} {:>9} {:>7} {:>11} {:>11} {:>11} {:>10}",
        "strategy", "fill min", "fill avg", "items", "median µs", "mean µs", "worst µs", "summaries"
    );
    let only: Vec<String> = std::env::args().skip(1).filter(|arg| !arg.starts_with('-')).collect();
    for strategy in STRATEGIES.into_iter().filter(|s| only.is_empty() || only.iter().any(|o| o == s)) {
        let row = session(strategy);
        println!(
            "{strategy:<12} {:>8.1}% {:>8.1}% {:>7} {:>11.1} {:>11.1} {:>11.1} {:>10}",
            row.fill_min * 100.0,
            row.fill_avg * 100.0,
            row.items,
            row.median_us,
            row.mean_us,
            row.worst_us,
            row.summaries
        );
    }
}
