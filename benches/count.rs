//! Throughput, cold-start and size benchmark of `ctxwin::tokens::Encoding::count` against
//! two peers: tiktoken-rs and GitHub's `bpe-openai`. Run with `cargo bench --bench count`
//! (single thread); `make bench` runs it and prints the library sizes next to it.
//!
//! Times are the benchmark thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), so
//! other processes on a shared machine do not skew them.
//!
//! Throughput: each corpus is counted by ours, by `CoreBPE::encode_ordinary(text).len()`
//! and by `bpe_openai::…().count(text)` in turn for several rounds; the median MB/s of each
//! and our ratios to both peers are printed. Two corpora: the project's mixed text
//! (`corpus::mixed_text`: many scripts, code, JSON, base64) and English and source code from
//! real files on the machine (the `.md` and `.rs` files of the crates `Cargo.lock` names, in
//! cargo's registry, where the build itself put them: the same text wherever this lock file
//! was built, whatever else the registry holds), the text a coding agent counts most.
//!
//! Long pieces: one piece of random letters (no space, so the split leaves it whole) of 1 MB
//! and of 16 MB, counted once each: the second should take 16 times the first, not more.
//!
//! Cold start: the benchmark re-executes itself as fresh child processes that
//! time the first count of each encoding family, or `tiktoken_rs::o200k_base()`, and
//! prints the medians over several runs.
//!
//! Sizes: the bytes of each encoding family's tables (`Encoding::table_bytes`); `--sizes`
//! prints only those (`make sizes`).
//!
//! Profiling: `count-… --profile ENCODING CORPUS` (`CORPUS` is `mixed` or `English+code`)
//! only counts that corpus once with ours, for `valgrind --tool=callgrind`, whose instruction
//! counts do not depend on the machine's load.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use ctxwin::tokens::{Encoding, Model};

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
const PROFILE_FLAG: &str = "--profile";
const SIZES_FLAG: &str = "--sizes";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(position) = args.iter().position(|arg| arg == CHILD_FLAG) {
        cold_start_child(args.get(position + 1).map(String::as_str));
        return;
    }
    if args.iter().any(|arg| arg == SIZES_FLAG) {
        table_sizes();
        return;
    }
    let mixed = corpus::mixed_text(0x5EED, CORPUS_BYTES);
    let (english_code, sources) = english_and_code(CORPUS_BYTES);
    let corpora = [("mixed", mixed.as_str()), ("English+code", english_code.as_str())];
    if let Some(position) = args.iter().position(|arg| arg == PROFILE_FLAG) {
        let [encoding, corpus] = [1, 2].map(|offset| args.get(position + offset).map_or("", String::as_str));
        let encoding = Encoding::ALL.into_iter().find(|e| e.name() == encoding).expect("an encoding name");
        let (_, text) = corpora.into_iter().find(|(name, _)| *name == corpus).expect("a corpus name");
        println!("{} tokens", encoding.count(text));
        return;
    }
    println!(
        "corpora: mixed text {:.2} MB; English+code {:.2} MB ({sources}); {ROUNDS} rounds, single thread, medians",
        mixed.len() as f64 / 1e6,
        english_code.len() as f64 / 1e6,
    );
    let peers = [
        (Encoding::O200kBase, tiktoken_rs::o200k_base_singleton(), bpe_openai::o200k_base()),
        (Encoding::Cl100kBase, tiktoken_rs::cl100k_base_singleton(), bpe_openai::cl100k_base()),
    ];
    for (corpus_name, text) in corpora {
        for (encoding, tiktoken, bpe) in peers {
            throughput(corpus_name, encoding, tiktoken, bpe, text);
        }
    }
    long_piece();
    cold_start();
    table_sizes();
}

/// Counting one long piece without spaces (random letters: one piece of the split) of 1 MB
/// and of 16 MB: the time per byte should not grow with the length.
fn long_piece() {
    let letters = |bytes: usize| -> String {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        (0..bytes)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                char::from(b'a' + (state % 26) as u8)
            })
            .collect()
    };
    let (short, long) = (letters(1 << 20), letters(16 << 20));
    for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
        let rate = |text: &str| text.len() as f64 / 1e6 / time(|| encoding.count(black_box(text))).as_secs_f64();
        let (short_rate, long_rate) = (rate(&short), rate(&long));
        println!(
            "one piece of random letters, {}: 1 MB {short_rate:.1} MB/s, 16 MB {long_rate:.1} MB/s (16 MB takes {:.2}x the time per byte of 1 MB; 1 = linear)",
            encoding.name(),
            short_rate / long_rate
        );
    }
}

/// The bytes of each encoding's tables built into the library.
fn table_sizes() {
    println!("tables built in (bytes, shared between the encodings of a family):");
    for encoding in Encoding::ALL {
        println!(
            "  {:<14} {:>9} bytes{}",
            encoding.name(),
            encoding.table_bytes(),
            if encoding.is_built_in() { "" } else { " (left out: counts are estimates)" }
        );
    }
}

/// English prose and source code from real files: the `.md` files, then the `.rs` files
/// of the registry crates `Cargo.lock` names (sorted by path), each half up to `bytes / 2`.
/// Returns the text and a description of where it came from.
fn english_and_code(bytes: usize) -> (String, String) {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")))
        .expect("CARGO_HOME or HOME is set");
    let registry = home.join("registry").join("src");
    let indexes: Vec<PathBuf> =
        std::fs::read_dir(&registry).map_or_else(|_| Vec::new(), |dirs| dirs.flatten().map(|d| d.path()).collect());
    let mut files = Vec::new();
    for name in locked_crates() {
        if let Some(dir) = indexes.iter().map(|index| index.join(&name)).find(|dir| dir.is_dir()) {
            collect_files(&dir, &mut files);
        }
    }
    files.sort();
    let mut text = String::new();
    let mut counts = Vec::new();
    for extension in ["md", "rs"] {
        let limit = text.len() + bytes / 2;
        let mut used = 0;
        for file in files.iter().filter(|file| file.extension().is_some_and(|e| e == extension)) {
            if text.len() >= limit {
                break;
            }
            if let Ok(content) = std::fs::read_to_string(file) {
                text.push_str(&content);
                used += 1;
            }
        }
        counts.push(format!("{used} .{extension} files"));
    }
    assert!(text.len() > bytes / 4, "too little text under {}", registry.display());
    (text, format!("{} of the crates of Cargo.lock under $CARGO_HOME/registry/src", counts.join(" and ")))
}

/// `name-version` of each package of `Cargo.lock` that comes from a registry: the
/// directories cargo unpacks them into.
fn locked_crates() -> Vec<String> {
    let lock = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock")).expect("read Cargo.lock");
    lock.split("[[package]]")
        .filter_map(|package| {
            let field =
                |key: &str| package.lines().find_map(|line| line.strip_prefix(key)?.strip_prefix(" = \"")?.strip_suffix('"'));
            let from_registry = field("source").is_some_and(|source| source.starts_with("registry+"));
            Some(format!("{}-{}", field("name")?, field("version")?)).filter(|_| from_registry)
        })
        .collect()
}

fn collect_files(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => collect_files(&path, files),
            Ok(kind) if kind.is_file() => files.push(path),
            _ => {}
        }
    }
}

fn throughput(corpus: &str, encoding: Encoding, tiktoken: &CoreBPE, bpe: &bpe_openai::Tokenizer, text: &str) {
    let name = encoding.name();
    let expected = tiktoken.encode_ordinary(text).len();
    assert_eq!(encoding.count(text), expected, "{name}: counts differ from tiktoken-rs");
    let bpe_count = bpe.count(text);
    let mut ours = Vec::with_capacity(ROUNDS);
    let mut theirs = Vec::with_capacity(ROUNDS);
    let mut github = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        ours.push(time(|| encoding.count(black_box(text))));
        theirs.push(time(|| tiktoken.encode_ordinary(black_box(text)).len()));
        github.push(time(|| bpe.count(black_box(text))));
    }
    let megabytes = text.len() as f64 / 1e6;
    let rate = |samples: Vec<Duration>| megabytes / median(samples).as_secs_f64();
    let (ours, theirs, github) = (rate(ours), rate(theirs), rate(github));
    let differs = if bpe_count == expected { String::new() } else { format!(" (bpe-openai counts {bpe_count})") };
    println!(
        "{corpus:<12} {name:<11} {expected:>8} tokens: ours {ours:6.1} MB/s, tiktoken-rs {theirs:5.1} MB/s ({:.2}x), bpe-openai {github:5.1} MB/s ({:.2}x){differs}",
        ours / theirs,
        ours / github,
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

/// The cold-start children: the first count of each encoding family, then tiktoken-rs's.
const COLD_CHILDREN: [&str; 4] = ["o200k_base", "cl100k_base", "p50k_base", "tiktoken"];

/// Runs the child processes alternately and prints the medians.
fn cold_start() {
    let exe = std::env::current_exe().expect("path of the running benchmark");
    let run = |what: &str| -> Duration {
        let output = Command::new(&exe).args([CHILD_FLAG, what]).output().expect("spawn child");
        let nanos = String::from_utf8_lossy(&output.stdout).trim().parse().expect("child prints nanoseconds");
        Duration::from_nanos(nanos)
    };
    let mut samples = vec![Vec::with_capacity(COLD_RUNS); COLD_CHILDREN.len()];
    for _ in 0..COLD_RUNS {
        for (child, times) in COLD_CHILDREN.iter().zip(&mut samples) {
            times.push(run(child));
        }
    }
    let millis: Vec<f64> = samples.into_iter().map(|s| median(s).as_secs_f64() * 1e3).collect();
    println!(
        "cold start (median of {COLD_RUNS} fresh processes): first count o200k_base {:.3} ms, cl100k_base {:.3} ms, p50k_base {:.3} ms; tiktoken_rs::o200k_base() {:.1} ms ({:.0}x o200k's)",
        millis[0],
        millis[1],
        millis[2],
        millis[3],
        millis[3] / millis[0]
    );
}

/// In a fresh process: times the first count of an encoding (named as a model), or the build of
/// tiktoken-rs's o200k tokenizer (`tiktoken`), and prints nanoseconds.
fn cold_start_child(what: Option<&str>) {
    let text = "Cold start: the first exact count in this process.";
    let elapsed = match what {
        Some("tiktoken") => time(|| tiktoken_rs::o200k_base().expect("o200k_base loads")),
        // As `ctxwin_count_text` counts: the model name resolved, then the text counted.
        Some(name) => {
            assert!(Encoding::ALL.into_iter().any(|encoding| encoding.name() == name), "unknown cold-start child {name:?}");
            time(|| Model::resolve(black_box(name)).count(black_box(text)))
        }
        None => panic!("cold-start child without an encoding"),
    };
    println!("{}", elapsed.as_nanos());
}
