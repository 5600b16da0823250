//! The estimator against real tokenizers of other families (issue 17): on 8,000 real texts
//! other than those the library's fits were made on, the exact counts of OpenAI's o200k and
//! cl100k and of the tokenizers loaded from the families' published files.
//!
//! Needs the files `tests/fetch_tokenizers.py` fetches: run by `make estimate-families`
//! (part of `make test`), which fetches them first; plain `cargo test` skips it.

#[path = "support/family_truths.rs"]
mod family_truths;
use family_truths::{Corpus, FIT_SEED, percentile};

/// The goal: the 90th percentile of the uncalibrated estimate's absolute error.
const GOAL_P90: f64 = 15.0;

/// Gemma 3 (Gemini) is the one family the others do not predict: it has no byte-level
/// pre-tokenizer, splits every number into single digits and `snake_case` at every
/// underscore, so on code it takes 23% more tokens than o200k where every other family
/// stays within 0-12%. Held out, a fit on the other vendors is off by a p90 of 19.6% to 20.5%
/// (the texts are drawn from the files the machine has, so the figure moves from machine to
/// machine). Fitting to the other vendors cannot close the gap: the mean of their own exact
/// counts of each text is off by a p90 of about 20%, and even their maximum by about 15%
/// (`cargo bench --bench estimates` prints these). This bound keeps it from getting worse. Gemini's own row
/// of the table (fitted with Gemma 3) is held to the goal like every other.
const GEMMA_HELD_OUT_P90: f64 = 22.0;

#[test]
#[ignore = "needs the tokenizer files: make estimate-families"]
fn estimates_meet_the_goal_against_every_family() {
    let corpus = Corpus::load(FIT_SEED + 1);
    let pooled = ctxwin::Model::resolve("a-model-of-no-known-family");
    let mut failures = Vec::new();
    for truth in &corpus.truths {
        // Held out: fitted on every other vendor's tokenizers, judged on this one.
        let held_out = percentile(&corpus.fit_errors(&corpus.fit_without(truth.group), truth), 0.9);
        let bound = if truth.group == "gemma" { GEMMA_HELD_OUT_P90 } else { GOAL_P90 };
        // The library's estimate for a model of this family, fitted on other texts.
        let model = ctxwin::Model::resolve(truth.model);
        let by_name = percentile(&corpus.errors(truth, |i| model.count(&corpus.texts[i]).tokens as f64), 0.9);
        // A model of no known family: the pooled fit (Gemma 3 is in it).
        let unknown = percentile(&corpus.errors(truth, |i| pooled.count(&corpus.texts[i]).tokens as f64), 0.9);
        println!(
            "{:15} held out p90 {held_out:5.1}%  by name ({}) {by_name:5.1}%  pooled {unknown:5.1}%",
            truth.name, truth.model
        );
        if held_out > bound {
            failures.push(format!("{}: held-out p90 {held_out:.1}% > {bound}%", truth.name));
        }
        if by_name > GOAL_P90 {
            failures.push(format!("{}: {} estimated with p90 {by_name:.1}% > {GOAL_P90}%", truth.name, truth.model));
        }
        if unknown > bound {
            failures.push(format!("{}: the pooled estimate's p90 {unknown:.1}% > {bound}%", truth.name));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
