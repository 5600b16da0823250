//! How good the estimates are for models without a public tokenizer, measured against a
//! simulated provider whose hidden truth is OpenAI's o200k_base count.
//!
//! Sessions draw messages from this repository's own files (Rust, C, Markdown, JSON, TOML)
//! and from multilingual text, each session with its own mix. Five requests are observed
//! (`observe_usage` with the provider's true prompt total); then every later message of the
//! session is held out: its estimate is compared with its true count. Prints the median and
//! 90th percentile of the absolute error (%) for bytes/4, for our estimator before
//! calibration, and for our estimator after the five observed requests.
//!
//! Goal (issue 3): calibrated median error <= 5%.

use ctxwin::tokens::Encoding;
use ctxwin::{Kind, Window};
use std::path::Path;

#[path = "../tests/support/corpus.rs"]
mod corpus;
use corpus::Rng;

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

fn percentile(values: &mut [f64], p: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    values[((values.len() - 1) as f64 * p).round() as usize]
}

fn error_percent(estimate: usize, truth: usize) -> f64 {
    (estimate as f64 - truth as f64).abs() / truth as f64 * 100.0
}

fn main() {
    let sources = Sources::load();
    let truth = |text: &str| Encoding::O200kBase.count(text);
    let mut rng = Rng::new(0x5eed_1234_abcd_0001);
    let (mut bytes4, mut raw, mut calibrated) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..SESSIONS {
        // Each session favours a few kinds of content, as real sessions do.
        let weights: Vec<usize> = (0..sources.kinds.len()).map(|_| rng.below(4) * rng.below(4)).collect();
        let total: usize = weights.iter().sum::<usize>().max(1);
        let pick = |rng: &mut Rng| {
            let mut r = rng.below(total);
            weights.iter().position(|&w| {
                let hit = r < w;
                r = r.saturating_sub(w);
                hit
            }).unwrap_or(0)
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
        "estimates: {} held-out messages in {SESSIONS} sessions, truth = o200k_base, {OBSERVED_REQUESTS} observed requests",
        calibrated.len()
    );
    for (name, errors) in [
        ("bytes/4", &mut bytes4),
        ("ours, uncalibrated", &mut raw),
        ("ours, calibrated", &mut calibrated),
    ] {
        println!(
            "  {name:20} median error {:5.1}%  p90 {:5.1}%",
            percentile(errors, 0.5),
            percentile(errors, 0.9)
        );
    }
    println!("  goal: calibrated median <= 5%");
}
