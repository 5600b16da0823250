//! Throughput and cold-start benchmark of `ctxwin::tokens::Encoding::count` against
//! tiktoken-rs. Run with `cargo bench --bench count` (single thread).
//!
//! Times are the benchmark thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), so
//! other processes on a shared machine do not skew them.
//!
//! Throughput: a mixed corpus (`corpus::mixed_text`) is counted by
//! ours and by `CoreBPE::encode_ordinary(text).len()` alternately for several
//! rounds; the median MB/s of each and their ratio are printed.
//!
//! Cold start: the benchmark re-executes itself as fresh child processes that
//! time either the first o200k count or `tiktoken_rs::o200k_base()`, and prints
//! the medians over several runs and their ratio.

use std::hint::black_box;
use std::process::Command;
use std::time::Duration;

use ctxwin::tokens::Encoding;

#[path = "../tests/support/cpu_time.rs"]
mod cpu_time;
use cpu_time::thread_cpu_time;

#[path = "../tests/support/corpus.rs"]
mod corpus;
use tiktoken_rs::CoreBPE;

const CORPUS_BYTES: usize = 4 << 20;
const ROUNDS: usize = 7;
const COLD_RUNS: usize = 9;
const CHILD_FLAG: &str = "--cold-start-child";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(position) = args.iter().position(|arg| arg == CHILD_FLAG) {
        cold_start_child(args.get(position + 1).map(String::as_str));
        return;
    }
    let text = corpus::mixed_text(0x5EED, CORPUS_BYTES);
    println!(
        "corpus: {:.2} MB of mixed text, {ROUNDS} rounds, single thread",
        text.len() as f64 / 1e6
    );
    throughput(
        "o200k_base",
        Encoding::O200kBase,
        tiktoken_rs::o200k_base_singleton(),
        &text,
    );
    throughput(
        "cl100k_base",
        Encoding::Cl100kBase,
        tiktoken_rs::cl100k_base_singleton(),
        &text,
    );
    cold_start();
}

fn throughput(name: &str, encoding: Encoding, reference: &CoreBPE, text: &str) {
    let expected = reference.encode_ordinary(text).len();
    assert_eq!(
        encoding.count(text),
        expected,
        "{name}: counts differ from tiktoken-rs"
    );
    let mut ours = Vec::with_capacity(ROUNDS);
    let mut theirs = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        ours.push(time(|| encoding.count(black_box(text))));
        theirs.push(time(|| reference.encode_ordinary(black_box(text)).len()));
    }
    let megabytes = text.len() as f64 / 1e6;
    let ours_mbs = megabytes / median(ours).as_secs_f64();
    let theirs_mbs = megabytes / median(theirs).as_secs_f64();
    println!(
        "{name}: {expected} tokens; ours {ours_mbs:.1} MB/s, tiktoken-rs {theirs_mbs:.1} MB/s, ratio {:.2}x",
        ours_mbs / theirs_mbs
    );
}

/// Thread CPU time spent in `work`.
fn time<T>(work: impl FnOnce() -> T) -> Duration {
    let start = thread_cpu_time();
    black_box(work());
    thread_cpu_time().saturating_sub(start)
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Runs the child processes alternately and prints the medians.
fn cold_start() {
    let exe = std::env::current_exe().expect("path of the running benchmark");
    let run = |what: &str| -> Duration {
        let output = Command::new(&exe)
            .args([CHILD_FLAG, what])
            .output()
            .expect("spawn child");
        let nanos = String::from_utf8_lossy(&output.stdout)
            .trim()
            .parse()
            .expect("child prints nanoseconds");
        Duration::from_nanos(nanos)
    };
    let mut ours = Vec::with_capacity(COLD_RUNS);
    let mut theirs = Vec::with_capacity(COLD_RUNS);
    for _ in 0..COLD_RUNS {
        ours.push(run("ours"));
        theirs.push(run("tiktoken"));
    }
    let (ours, theirs) = (median(ours), median(theirs));
    println!(
        "cold start (median of {COLD_RUNS} fresh processes): first o200k count {:.3} ms, tiktoken_rs::o200k_base() {:.3} ms, ratio {:.0}x",
        ours.as_secs_f64() * 1e3,
        theirs.as_secs_f64() * 1e3,
        theirs.as_secs_f64() / ours.as_secs_f64()
    );
}

/// In a fresh process: times the first o200k count (`ours`) or the build of
/// tiktoken-rs's o200k tokenizer (`tiktoken`) and prints nanoseconds.
fn cold_start_child(what: Option<&str>) {
    let text = "Cold start: the first exact o200k count in this process.";
    let elapsed = match what {
        Some("ours") => time(|| Encoding::O200kBase.count(black_box(text))),
        Some("tiktoken") => time(|| tiktoken_rs::o200k_base().expect("o200k_base loads")),
        other => panic!("unknown cold-start child {other:?}"),
    };
    println!("{}", elapsed.as_nanos());
}
