//! How good the estimates are for models without a public tokenizer.
//!
//! First, per family, against real tokenizers: the exact counts of OpenAI's o200k and cl100k
//! and of the families' tokenizers loaded from their published files (fetched by
//! `make tokenizer-files` into target/), on 8,000 real texts (`tests/support/real_text.rs`,
//! seed 18: other texts than the seed-17 ones the library's fits were made on). Per family:
//! the median and 90th percentile of the absolute error (%) of bytes/4, of o200k's exact count
//! used as the estimate, of the library's uncalibrated estimate for a model of that family,
//! of the pooled estimate (a model of no known family), and held out: the estimator refitted
//! on every other vendor's tokenizers and judged on this one (goal: p90 <= 15%). With
//! `-- --fit`, also prints the coefficients fitted on the seed-17 texts (the library's table).
//!
//! Then, the calibration: sessions draw messages from this repository's own files (Rust, C, Markdown, JSON, TOML)
//! and from multilingual text, each session with its own mix. Five requests are observed
//! (`observe_usage` with the provider's true prompt total); then every later message of the
//! session is held out: its estimate is compared with its true count. Prints the median and
//! 90th percentile of the absolute error (%) for bytes/4, for our estimator before
//! calibration, and for our estimator after the five observed requests.
//!
//! Goal (issue 3): calibrated median error <= 5%. The hidden truth is each family's exact
//! count in turn, the model a model of no known family.

use ctxwin::{Kind, Window};
use std::path::Path;

#[path = "../tests/support/family_truths.rs"]
mod family_truths;
use family_truths::{Corpus, FIT_SEED, Rng, percentile};

const SESSIONS: usize = 300;
const OBSERVED_REQUESTS: usize = 5;
const MESSAGES_PER_REQUEST: usize = 6;
const HELD_OUT: usize = 30;
/// Messages under this many true tokens are not scored: one token off is not a percentage.
const MIN_TOKENS: usize = 20;

/// Prose in several scripts, written for this benchmark.
const PROSE: &[&str] = &[
    "The build failed because the linker could not find the static library. I added the missing path to the Makefile and ran the tests again; all of them pass now.",
    "Der Build ist fehlgeschlagen, weil der Linker die statische Bibliothek nicht finden konnte. Ich habe den Pfad ergänzt und die Tests erneut ausgeführt.",
    "La compilation a échoué parce que l'éditeur de liens ne trouvait pas la bibliothèque statique. J'ai ajouté le chemin manquant et relancé les tests.",
    "Сборка не удалась, потому что компоновщик не нашёл статическую библиотеку. Я добавил недостающий путь и снова запустил тесты.",
    "构建失败了，因为链接器找不到静态库。我在 Makefile 中添加了缺失的路径，然后重新运行了测试，现在全部通过。",
    "リンカが静的ライブラリを見つけられなかったため、ビルドに失敗しました。不足していたパスを追加し、テストを再実行しました。",
    "فشل البناء لأن الرابط لم يتمكن من العثور على المكتبة الثابتة. أضفت المسار المفقود وأعدت تشغيل الاختبارات.",
    "बिल्ड विफल हो गया क्योंकि लिंकर स्थैतिक लाइब्रेरी नहीं ढूंढ सका। मैंने गायब पथ जोड़ा और परीक्षण फिर से चलाए।",
];

/// Text sources by kind: the repository's files and the prose above.
struct Sources {
    kinds: Vec<Vec<String>>,
}

impl Sources {
    fn load() -> Sources {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut by_ext: Vec<(&str, Vec<String>)> =
            ["rs", "c", "md", "json", "toml"].iter().map(|ext| (*ext, Vec::new())).collect();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for entry in entries.flatten() {
                let path = entry.path();
                let name = entry.file_name().to_string_lossy().into_owned();
                if path.is_dir() {
                    if !name.starts_with('.') && name != "target" {
                        stack.push(path);
                    }
                } else if let Some((_, texts)) = by_ext.iter_mut().find(|(ext, _)| name.ends_with(&format!(".{ext}"))) {
                    if let Ok(text) = std::fs::read_to_string(&path) {
                        texts.push(text);
                    }
                }
            }
        }
        let mut kinds: Vec<Vec<String>> = by_ext.into_iter().map(|(_, texts)| texts).filter(|t| !t.is_empty()).collect();
        kinds.push(PROSE.iter().map(|p| p.to_string()).collect());
        Sources { kinds }
    }

    /// A message of kind `kind`: a run of whole lines of one file (or a few prose paragraphs).
    fn message(&self, kind: usize, rng: &mut Rng) -> String {
        let texts = &self.kinds[kind];
        if kind == self.kinds.len() - 1 {
            return (0..1 + rng.below(4)).map(|_| texts[rng.below(texts.len())].as_str()).collect::<Vec<_>>().join(" ");
        }
        let lines: Vec<&str> = texts[rng.below(texts.len())].lines().collect();
        let start = rng.below(lines.len().max(1));
        let len = 3 + rng.below(60);
        lines[start..(start + len).min(lines.len())].join("\n")
    }
}

fn error_percent(estimate: usize, truth: usize) -> f64 {
    (estimate as f64 - truth as f64).abs() / truth as f64 * 100.0
}

fn main() {
    let corpus = Corpus::load(FIT_SEED + 1);
    per_family(&corpus);
    if std::env::args().any(|arg| arg == "--fit") {
        print_fits(&Corpus::load(FIT_SEED));
    }
    for truth in &corpus.truths {
        calibrated_sessions(truth.name, &truth.count);
    }
}

fn median_p90(errors: &[f64]) -> String {
    format!("{:5.1}% {:5.1}%", percentile(errors, 0.5), percentile(errors, 0.9))
}

fn per_family(corpus: &Corpus) {
    println!("estimates per family: {} real texts (seed {}), absolute error median and p90", corpus.texts.len(), FIT_SEED + 1);
    println!(
        "  {:15} {:22} {:>13} {:>13} {:>13} {:>13} {:>13}",
        "family", "model name", "bytes/4", "o200k", "by name", "pooled", "held out"
    );
    let pooled = ctxwin::Model::resolve("a-model-of-no-known-family");
    let mut worst_held_out: f64 = 0.0;
    for truth in &corpus.truths {
        let model = ctxwin::Model::resolve(truth.model);
        let bytes4 = corpus.errors(truth, |i| corpus.texts[i].len().div_ceil(4) as f64);
        let o200k = corpus.errors(truth, |i| corpus.inputs[i][0]);
        let named = corpus.errors(truth, |i| model.count(&corpus.texts[i]).tokens as f64);
        let pooled = corpus.errors(truth, |i| pooled.count(&corpus.texts[i]).tokens as f64);
        let held_out = corpus.fit_errors(&corpus.fit_without(truth.group), truth);
        worst_held_out = worst_held_out.max(percentile(&held_out, 0.9));
        println!(
            "  {:15} {:22} {} {} {} {} {}",
            truth.name,
            truth.model,
            median_p90(&bytes4),
            median_p90(&o200k),
            median_p90(&named),
            median_p90(&pooled),
            median_p90(&held_out)
        );
    }
    println!("  held out: fitted on every other vendor's tokenizers; worst p90 {worst_held_out:.1}% (goal <= 15%)");
    envelope(corpus);
}

/// What no estimator fitted on the other vendors can beat by much: each text's own exact
/// counts by every other vendor's tokenizers, their mean, the middle of their range and their
/// maximum, taken as the estimate of the held-out family; and the one place in that range
/// (from the least to the most, in steps of 5%) whose worst p90 over every held-out family is
/// least.
fn envelope(corpus: &Corpus) {
    println!("held out, against the other vendors' own exact counts of each text (median and p90):");
    println!("  {:15} {:>13} {:>13} {:>13}", "family", "their mean", "mid-range", "their max");
    // Per family: the other vendors' least and most count of each text.
    let ranges: Vec<Vec<(f64, f64)>> = corpus
        .truths
        .iter()
        .map(|truth| {
            let others: Vec<_> = corpus.truths.iter().filter(|other| other.group != truth.group).collect();
            (0..corpus.texts.len())
                .map(|i| {
                    others.iter().fold((f64::MAX, f64::MIN), |(lo, hi), other| (lo.min(other.counts[i]), hi.max(other.counts[i])))
                })
                .collect()
        })
        .collect();
    for (truth, range) in corpus.truths.iter().zip(&ranges) {
        let others: Vec<_> = corpus.truths.iter().filter(|other| other.group != truth.group).collect();
        let mean = corpus.errors(truth, |i| others.iter().map(|other| other.counts[i]).sum::<f64>() / others.len() as f64);
        let mid = corpus.errors(truth, |i| (range[i].0 + range[i].1) / 2.0);
        let max = corpus.errors(truth, |i| range[i].1);
        println!("  {:15} {} {} {}", truth.name, median_p90(&mean), median_p90(&mid), median_p90(&max));
    }
    let worst = |step: usize| {
        let place = step as f64 / 20.0;
        corpus
            .truths
            .iter()
            .zip(&ranges)
            .map(|(truth, range)| {
                let errors = corpus.errors(truth, |i| range[i].0 + place * (range[i].1 - range[i].0));
                (percentile(&errors, 0.9), truth.name)
            })
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap()
    };
    let (step, (p90, name)) = (0..=20).map(|step| (step, worst(step))).min_by(|a, b| a.1.0.total_cmp(&b.1.0)).unwrap();
    println!("  one place in the range for every family: at best {}% of the way up, worst p90 {p90:.1}% ({name})", step * 5);
}

fn print_fits(corpus: &Corpus) {
    println!("fits on the seed-{FIT_SEED} texts (prices per {}):", ctxwin::tokens::FEATURE_NAMES.join(", per "));
    let all: Vec<_> = corpus.truths.iter().collect();
    let show = |name: &str, fit: ctxwin::tokens::EstimateFit| {
        let prices: Vec<String> = fit.prices.iter().map(|price| format!("{price:.3}")).collect();
        println!("  {name:10} [{}]", prices.join(", "));
    };
    show("pooled", corpus.fit(&all, ctxwin::tokens::POOLED_FEATURES));
    for group in corpus.groups() {
        show(group, corpus.fit(&corpus.truths.iter().filter(|t| t.group == group).collect::<Vec<_>>(), ctxwin::tokens::FEATURES));
    }
}

fn calibrated_sessions(name: &str, truth: &dyn Fn(&str) -> usize) {
    let sources = Sources::load();
    let mut rng = Rng::new(0x5eed_1234_abcd_0001);
    let (mut bytes4, mut raw, mut calibrated) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..SESSIONS {
        // Each session favours a few kinds of content, as real sessions do.
        let weights: Vec<usize> = (0..sources.kinds.len()).map(|_| rng.below(4) * rng.below(4)).collect();
        let total: usize = weights.iter().sum::<usize>().max(1);
        let pick = |rng: &mut Rng| {
            let mut r = rng.below(total);
            weights
                .iter()
                .position(|&w| {
                    let hit = r < w;
                    r = r.saturating_sub(w);
                    hit
                })
                .unwrap_or(0)
        };
        let mut window = Window::new("a-model-without-public-tokenizer");
        window.configure(r#"{"history_budget": 2000000000, "max_message_bytes": 0}"#).unwrap();
        let mut true_total = 0;
        for _ in 0..OBSERVED_REQUESTS {
            for _ in 0..MESSAGES_PER_REQUEST {
                let text = sources.message(pick(&mut rng), &mut rng);
                true_total += truth(&text);
                window.push(Kind::User, &text).unwrap();
            }
            window.observe_usage(0, window.message_count(), true_total as i64).unwrap();
        }
        let model = ctxwin::Model::resolve("a-model-without-public-tokenizer");
        for _ in 0..HELD_OUT {
            let text = sources.message(pick(&mut rng), &mut rng);
            let actual = truth(&text);
            if actual < MIN_TOKENS {
                continue;
            }
            bytes4.push(error_percent(text.len().div_ceil(4), actual));
            raw.push(error_percent(model.count(&text).tokens as usize, actual));
            calibrated.push(error_percent(window.push(Kind::User, &text).unwrap().tokens as usize, actual));
        }
    }
    println!(
        "calibration: {} held-out messages in {SESSIONS} sessions, truth = {name}, {OBSERVED_REQUESTS} observed requests",
        calibrated.len()
    );
    for (name, errors) in [("bytes/4", &mut bytes4), ("ours, uncalibrated", &mut raw), ("ours, calibrated", &mut calibrated)] {
        println!("  {name:20} median error {:5.1}%  p90 {:5.1}%", percentile(errors, 0.5), percentile(errors, 0.9));
    }
    println!("  goal: calibrated median <= 5%");
}
