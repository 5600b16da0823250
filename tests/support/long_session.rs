//! One turn of a long tool-using session, for the long-session tests and benchmark: a
//! question, sometimes thinking, up to two steps of one or two parallel tool calls whose
//! outputs run from one line to 150 (a few lines of several hundred characters),
//! and an answer; and the agent's LLM answering the summary requests due. Included with
//! `#[path]`.

#[path = "rng.rs"]
mod rng;
pub use rng::Rng;

use ctxwin::{Kind, Window};

/// Between `lo` and `hi` words of a small vocabulary.
fn words(rng: &mut Rng, lo: usize, hi: usize) -> String {
    const WORDS: [&str; 8] = ["parse", "the", "config", "file", "error", "in", "module", "value"];
    (0..rng.between(lo, hi)).map(|_| rng.pick(&WORDS)).collect::<Vec<_>>().join(" ")
}

fn output(rng: &mut Rng) -> String {
    let lines = match rng.below(10) {
        0..=4 => rng.between(1, 8),
        5..=8 => rng.between(20, 60),
        _ => rng.between(80, 150),
    };
    (0..lines)
        .map(|i| {
            if rng.chance(1) {
                format!("{i}: {}", "x".repeat(rng.between(300, 600)))
            } else {
                format!("{i}: {}", words(rng, 2, 9))
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Pushes one turn of work; call ids are numbered from `id`.
pub fn turn(window: &mut Window, rng: &mut Rng, id: &mut usize) {
    window.push(Kind::User, &words(rng, 4, 40)).unwrap();
    if rng.chance(30) {
        window.push(Kind::Thinking, &words(rng, 10, 60)).unwrap();
    }
    for _ in 0..rng.below(3) {
        let calls: Vec<String> = (0..rng.between(1, 2))
            .map(|_| {
                *id += 1;
                format!("call_{id}")
            })
            .collect();
        for call in &calls {
            window.push_tool(Kind::ToolCall, call, &words(rng, 2, 12)).unwrap();
        }
        for call in &calls {
            window.push_tool(Kind::ToolResult, call, &output(rng)).unwrap();
        }
    }
    window.push(Kind::Assistant, &words(rng, 5, 80)).unwrap();
}

/// Answers the summary requests due, as an agent's LLM would: a generated summary within
/// `summary_budget`. Returns how many were answered.
pub fn answer_summaries(window: &mut Window, rng: &mut Rng, turn: usize) -> usize {
    const WORDS: [&str; 8] = ["fixed", "the", "parser", "in", "src/config.rs", "pending", "tests", "done"];
    let mut answered = 0;
    while window.needs_summary() {
        window.summary_request().unwrap();
        // At most half the budget, and never more than the summary and steps it replaces
        // (the USER message of a turn it ends inside is still sent).
        let pending = window.pending_summary().unwrap();
        let starts = window.step_starts();
        let end = starts[pending.end_step];
        let question = window.turn_of(end).map(|turn| window.turn_info(turn).unwrap().first_message);
        let replaced = window.summary().map_or(0, |record| record.summary_tokens.tokens)
            + (starts[pending.first_step]..end)
                .filter(|&i| !window.is_pinned_at(i) && Some(i) != question)
                .map(|i| window.message(i).unwrap().count().tokens)
                .sum::<u32>();
        let most = (window.settings().summary_budget / 2).min(replaced) as usize;
        let mut words: Vec<&str> = (0..rng.between(10, most.max(11))).map(|_| rng.pick(&WORDS)).collect();
        let mut text = format!("Progress through turn {turn}: {}", words.join(" "));
        while window.model().count(&text).tokens as usize > most && !words.is_empty() {
            words.truncate(words.len() / 2);
            text = format!("Progress through turn {turn}: {}", words.join(" "));
        }
        window.set_summary(window.generation(), &text, turn as u64).unwrap();
        answered += 1;
        assert!(answered < 50, "turn {turn}: needs_summary stays true after {answered} answers");
    }
    answered
}
