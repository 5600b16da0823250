//! `bpe::count` against tiktoken-rs's `encode_ordinary(text).len()` for all five
//! encodings: property tests over mixed generators, a deterministic corpus,
//! adversarial inputs, every code point, and concurrent use. A build with some
//! encoding families left out (cargo features) checks those it has.

use std::sync::Barrier;

use ctxwin::tokens::Encoding;
#[path = "support/corpus.rs"]
mod corpus;
use corpus::Rng;
use proptest::prelude::*;
#[path = "support/reference.rs"]
mod reference;
use reference::reference;
use tiktoken_rs::CoreBPE;

/// The encodings built in: all five unless cargo features left some out.
fn all() -> Vec<Encoding> {
    let built_in: Vec<Encoding> = Encoding::ALL.into_iter().filter(|e| e.is_built_in()).collect();
    assert!(!built_in.is_empty(), "no encoding is built in");
    built_in
}

fn reference_count(encoding: Encoding, text: &str) -> usize {
    reference(encoding).encode_ordinary(text).len()
}

/// Asserts equality with tiktoken-rs for every encoding.
fn assert_all_match(text: &str) {
    for encoding in all() {
        assert_eq!(
            encoding.count(text),
            reference_count(encoding, text),
            "{} differs on {:?}",
            encoding.name(),
            text.chars().take(200).collect::<String>()
        );
    }
}

// ---------------------------------------------------------------------------
// Property tests

fn contractions() -> impl Strategy<Value = String> {
    prop::string::string_regex("([A-Za-zſÀ-ÿ]{0,6}['’`]?(s|S|t|T|re|RE|rE|Re|ve|VE|vE|m|M|ll|LL|lL|Ll|d|D|ſ|x)?[ .\n'\t]?){1,8}")
        .expect("valid regex")
}

fn whitespace() -> impl Strategy<Value = String> {
    prop::string::string_regex("[ \t\r\n\u{b}\u{c}\u{85}\u{a0}\u{2000}\u{2028}\u{3000}a.1/é]{0,60}").expect("valid regex")
}

fn digits_and_punctuation() -> impl Strategy<Value = String> {
    prop::string::string_regex("[0-9٠-٩०-९①-⑳²½ .,;:!?/\\\\()\\[\\]{}<>=+*&^%$#@~`|\"'—–…«»“”\r\n-]{0,60}").expect("valid regex")
}

fn marks() -> impl Strategy<Value = String> {
    prop::string::string_regex(
        "[a-zA-Z \u{300}-\u{36f}\u{900}-\u{97f}\u{64b}-\u{65f}\u{1ab0}-\u{1aff}\u{20d0}-\u{20ff}ǅǈΣςᾈ'.]{0,40}",
    )
    .expect("valid regex")
}

fn emoji() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "😀",
        "👍🏽",
        "👨\u{200d}👩\u{200d}👧\u{200d}👦",
        "🏳\u{fe0f}\u{200d}🌈",
        "❤\u{fe0f}",
        "🇩🇪",
        "\u{200d}",
        "\u{fe0f}",
        "🧑🏿\u{200d}💻",
        " ",
        "a",
        "\n",
        "1\u{fe0f}\u{20e3}",
        "™",
    ]);
    prop::collection::vec(pieces, 0..12).prop_map(|parts| parts.concat())
}

fn seeded_corpus_sample() -> impl Strategy<Value = String> {
    any::<u64>().prop_map(|seed| corpus::sample(&mut Rng::new(seed)))
}

fn any_text() -> impl Strategy<Value = String> {
    let single = prop_oneof![
        any::<String>(),
        contractions(),
        whitespace(),
        digits_and_punctuation(),
        marks(),
        emoji(),
        seeded_corpus_sample(),
    ];
    prop::collection::vec(single, 1..4).prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn counts_match_tiktoken_rs(text in any_text()) {
        for encoding in all() {
            prop_assert_eq!(encoding.count(&text), reference_count(encoding, &text), "{}", encoding.name());
        }
    }
}

// ---------------------------------------------------------------------------
// Deterministic corpus

#[test]
fn corpus_matches_tiktoken_rs() {
    for text in corpus::strings(0xC0FFEE, 5_000) {
        assert_all_match(&text);
    }
}

#[test]
fn mixed_text_matches_tiktoken_rs() {
    assert_all_match(&corpus::mixed_text(42, 1 << 20));
}

/// Texts of many lines, long enough to be counted in many chunks through the memo of
/// lines, match tiktoken-rs when counted the first time (every chunk new) and again (every
/// chunk remembered), and after a line is changed in the middle (the chunks around it
/// new, the others remembered).
#[test]
fn multi_line_texts_counted_again_match_tiktoken_rs() {
    let mut rng = Rng::new(0x11AE5);
    for _ in 0..24 {
        let text = corpus::lines(&mut rng, 12_000);
        let at = text.len() / 2;
        let at = (at..text.len()).find(|&i| text.is_char_boundary(i)).unwrap_or(text.len());
        let edited = format!("{}edited line\n{}", &text[..at], &text[at..]);
        for encoding in all() {
            for text in [&text, &text, &edited] {
                assert_eq!(encoding.count(text), reference_count(encoding, text), "{} differs", encoding.name());
            }
        }
    }
}

#[test]
fn special_token_strings_are_ordinary_text() {
    assert_all_match("<|endoftext|> <|fim_prefix|><|fim_middle|><|fim_suffix|><|endofprompt|>");
    assert_all_match("<|start|>assistant<|channel|>final<|message|>hi<|end|><|return|><|reserved_200100|>");
}

#[test]
fn empty_and_tiny_inputs() {
    for text in ["", " ", "\n", "\r\n", "a", "'", "'s", "\0", "é", "\u{301}", "1", "  ", " \n"] {
        assert_all_match(text);
    }
}

// ---------------------------------------------------------------------------
// Adversarial inputs

/// The longest white-space run tiktoken-rs survives: its regex engine
/// (fancy-regex) overflows its backtracking stack on runs of about 10^6.
const LONGEST_REFERENCE_RUN: usize = 999_998;

#[test]
fn long_space_runs_match() {
    for len in [1_000, 65_536, LONGEST_REFERENCE_RUN] {
        assert_all_match(&" ".repeat(len));
    }
    assert_all_match(&format!("{}x", " ".repeat(100_000)));
    assert_all_match(&"\n ".repeat(100_000));
    assert_all_match(&format!("{}\n{}", "\t".repeat(50_000), " ".repeat(50_000)));
}

/// tiktoken-rs panics on a million spaces (o200k), so the piece's merge is
/// checked with a tiktoken-rs `CoreBPE` that has the same o200k ranks and the
/// regex `\s+`, which splits an all-space text exactly as o200k's does (one
/// piece: `\s+(?!\S)` at the end of the text).
#[test]
fn million_spaces_count_like_tiktoken_merging() {
    if !Encoding::O200kBase.is_built_in() {
        return;
    }
    let text = " ".repeat(1_000_000);
    let o200k = tiktoken_rs::o200k_base_singleton();
    let ranks: rustc_hash::FxHashMap<Vec<u8>, u32> =
        (0..199_998u32).map(|rank| (o200k.decode_bytes(&[rank]).expect("mergeable rank"), rank)).collect();
    let whole_run = CoreBPE::new(ranks, Default::default(), r"\s+").expect("simple regex compiles");
    let expected = whole_run.encode_ordinary(&text).len();
    assert_eq!(Encoding::O200kBase.count(&text), expected);
    // Followed by a letter, the run's last space moves to the letter's piece.
    let shorter = whole_run.encode_ordinary(&text[1..]).len();
    let with_letter = format!("{text}x");
    assert_eq!(Encoding::O200kBase.count(&with_letter), shorter + Encoding::O200kBase.count(" x"));
    // Beyond tiktoken-rs's reach: must neither panic nor blow up.
    for encoding in all() {
        assert!(encoding.count(&" ".repeat(1_500_000)) > 0);
        assert!(encoding.count(&format!("{}a", "\n".repeat(1_200_000))) > 0);
    }
}

#[test]
fn long_runs_of_one_class_match() {
    let mut rng = Rng::new(7);
    let digits: String = (0..100_000).map(|_| char::from(b'0' + rng.below(10) as u8)).collect();
    assert_all_match(&digits);
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let base64: String = (0..100_000).map(|_| char::from(rng.pick(alphabet))).collect();
    assert_all_match(&base64);
    let hex: String = (0..100_000).map(|_| char::from(rng.pick(b"0123456789abcdef"))).collect();
    assert_all_match(&hex);
    assert_all_match(&"a".repeat(200_000));
    assert_all_match(&"ab".repeat(100_000));
    assert_all_match(&"=".repeat(100_000));
    assert_all_match(&"\u{301}".repeat(50_000));
    assert_all_match(&"漢字".repeat(30_000));
    assert_all_match(&"\0".repeat(100_000));
}

/// Every code point, in chunks, bare and inside context that exercises the
/// prefix, contraction and look-ahead alternatives around it.
#[test]
fn every_code_point_matches() {
    let chars: Vec<char> = (0..=0x10FFFFu32).filter_map(char::from_u32).collect();
    for chunk in chars.chunks(2048) {
        let bare: String = chunk.iter().collect();
        assert_all_match(&bare);
        let mut framed = String::new();
        for &c in chunk.iter().step_by(3) {
            framed.push(c);
            framed.push_str("a ");
            framed.push(c);
            framed.push_str("'s1 ");
            framed.push(c);
            framed.push('\n');
        }
        assert_all_match(&framed);
    }
}

/// Runs of characters that are single tokens, in random order: the counter
/// starts merging such runs from whole characters where it can prove that
/// ends the same, so this is where a wrong proof would show. Letters of
/// every script with such tokens (Chinese, Japanese, Korean, Cyrillic,
/// Indic...), next to each other, to spaces and to marks.
#[test]
fn runs_of_single_token_characters_match() {
    let mut rng = Rng::new(0xC4A2);
    let families = [Encoding::O200kBase, Encoding::Cl100kBase, Encoding::R50kBase];
    for encoding in families.into_iter().filter(|e| e.is_built_in()) {
        let single: Vec<char> =
            (0x80..=0x10FFFFu32).filter_map(char::from_u32).filter(|c| reference_count(encoding, &c.to_string()) == 1).collect();
        assert!(single.len() > 100, "{}: {} single-token characters", encoding.name(), single.len());
        for round in 0..3000 {
            let len = 2 + rng.below(if round % 100 == 0 { 300 } else { 40 });
            let text: String = (0..len)
                .map(|_| match rng.below(40) {
                    0 => ' ',
                    1 => '\u{0301}',
                    _ => single[rng.below(single.len())],
                })
                .collect();
            assert_eq!(encoding.count(&text), reference_count(encoding, &text), "{} differs on {text:?}", encoding.name());
        }
    }
}

// ---------------------------------------------------------------------------
// Concurrency

#[test]
fn concurrent_counts_agree() {
    let texts = corpus::strings(99, 400);
    let expected: Vec<Vec<usize>> =
        texts.iter().map(|text| all().iter().map(|&encoding| encoding.count(text)).collect()).collect();
    let all = &all();
    let (expected, texts) = (&expected, &texts);
    let start = &Barrier::new(8);
    std::thread::scope(|scope| {
        for thread in 0..8 {
            scope.spawn(move || {
                start.wait();
                for round in 0..3 {
                    for (index, text) in texts.iter().enumerate().skip((thread + round) % 5) {
                        for (slot, &encoding) in all.iter().enumerate() {
                            assert_eq!(encoding.count(text), expected[index][slot]);
                        }
                    }
                }
            });
        }
    });
}
