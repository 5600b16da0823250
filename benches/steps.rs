//! Long tool loops in one turn (issue 24): the CPU cost of pushing one step (the model's
//! response and its results), alone and with the `prepare` an agent calls before the next
//! request, per step, in a turn of 1,000 and of 10,000 steps, and of one step of 1,000 and
//! of 100,000 parallel calls, per call. Flat costs (ratio near 1) are linear. `prepare` runs
//! in a window whose history budget is 60,000 tokens: sliding drops the running turn's
//! oldest steps, as a long loop needs, so the request stays the same size however long the
//! turn (`prepare` costs O(the view): with room for everything, a request of 10,000 steps
//! is 10 times one of 1,000, and so is its `prepare`). Runs from tests/support/agent_run.rs
//! (real text, 1 to 6 parallel calls a step, outputs capped at 2,000 bytes to bound
//! memory), pushed with `push_tool_call` / `push_tool` (the typed route) and as Anthropic
//! JSON (`push_json`). Medians of the rounds; CPU time of the calling thread.
//!
//! `cargo bench --bench steps -- [ROUNDS] [STEPS...]`: 3 rounds of 1,000 and 10,000 steps
//! by default; the sizes given replace the turn sizes. `CTXWIN_BENCH_CALLS=1000,4000`
//! replaces the parallel-call sizes (to measure a build where 100,000 never finishes).

#[path = "../tests/support/agent_run.rs"]
mod agent_run;
use agent_run::{Route, Run, Shape};

#[path = "../tests/support/cpu_time.rs"]
mod cpu_time;
use cpu_time::thread_cpu_time;

use ctxwin::Window;
use ctxwin::json::Format;

const ROUTES: [(&str, Route); 2] = [("typed", Route::Typed), ("anthropic json", Route::Json(Format::Anthropic))];

/// What runs after each step is pushed.
#[derive(Clone, Copy)]
enum After {
    /// Nothing: pushing alone.
    Nothing,
    /// `prepare`, in a window whose history budget drops the oldest steps.
    Prepare,
}

const AFTER: [(&str, After); 2] = [("push", After::Nothing), ("push+prepare", After::Prepare)];

fn window(route: Route) -> Window {
    let format = route.format().unwrap_or(Format::OpenAiChat);
    let mut window = Window::new(Run::model(Some(format)));
    let settings = format!(r#"{{"format":"{}","history_budget":60000,"context_limit":2100000000}}"#, format.key());
    window.configure(&settings).unwrap();
    window
}

/// Seconds of CPU to push every step of `run` by `route`, with `after` after each, the task
/// not counted.
fn measure(run: &Run, route: Route, after: After) -> f64 {
    let mut window = window(route);
    run.push_task(&mut window, route).unwrap();
    let started = thread_cpu_time();
    for i in 0..run.steps.len() {
        run.push_step(&mut window, route, i).unwrap();
        if !matches!(after, After::Nothing) {
            window.prepare().unwrap();
        }
    }
    (thread_cpu_time() - started).as_secs_f64()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Median microseconds per unit (`units` of them) over `rounds` runs of `measure`.
fn per_unit(rounds: usize, units: usize, mut measure: impl FnMut() -> f64) -> f64 {
    median((0..rounds).map(|_| measure() * 1e6 / units as f64).collect())
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|arg| arg.parse().ok()).collect();
    let rounds = args.first().copied().unwrap_or(3).max(1);
    let sizes = if args.len() > 1 { args[1..].to_vec() } else { vec![1_000, 10_000] };
    let parallel: Vec<usize> = std::env::var("CTXWIN_BENCH_CALLS")
        .map(|sizes| sizes.split(',').filter_map(|size| size.trim().parse().ok()).collect())
        .unwrap_or_else(|_| vec![1_000, 100_000]);
    println!("one turn of N steps (1-6 parallel calls each, outputs <= 2000 bytes): per step, CPU µs, median of {rounds}");
    let runs: Vec<Run> = sizes
        .iter()
        .map(|&steps| Run::generate(24, &Shape { skill: 0, max_output_bytes: Some(2000), ..Shape::with_steps(steps) }))
        .collect();
    for (name, route) in ROUTES {
        for (what, after) in AFTER {
            let mut costs = Vec::new();
            for (run, &steps) in runs.iter().zip(&sizes) {
                let cost = per_unit(rounds, steps, || measure(run, route, after));
                println!("  {name:<15} {what:<13} {steps:>7} steps ({:>6} calls): {cost:>9.1} µs/step", run.calls());
                costs.push(cost);
            }
            if let (Some(first), Some(last)) = (costs.first(), costs.last()) {
                let (small, large) = (sizes[0], sizes[sizes.len() - 1]);
                println!("  {name:<15} {what:<13} ratio {large} / {small} steps: {:.2}", last / first);
            }
        }
    }
    println!("one step of N parallel calls (outputs <= 200 bytes): per call, CPU µs, median of {rounds}");
    for (name, route) in ROUTES {
        for (what, after) in AFTER {
            let mut costs = Vec::new();
            for &calls in &parallel {
                let run = Run::parallel(26, calls, 200);
                let cost = per_unit(rounds, calls, || measure(&run, route, after));
                let step = cost * calls as f64 / 1e3;
                println!("  {name:<15} {what:<13} {calls:>7} calls: {cost:>9.2} µs/call, {step:>8.1} ms the step");
                costs.push(cost);
            }
            if let (Some(first), Some(last)) = (costs.first(), costs.last()) {
                let (small, large) = (parallel[0], parallel[parallel.len() - 1]);
                println!("  {name:<15} {what:<13} ratio {large} / {small} calls: {:.2}", last / first);
            }
        }
    }
}
