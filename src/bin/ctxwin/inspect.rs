//! `ctxwin inspect`: the turns of a transcript, the context usage, the divider and what would
//! be sent, for people (a table) or machines (`--json`).

use ctxwin::json::items_to_send;
use ctxwin::tokens::format_count;
use ctxwin::{Count, Window};
use serde_json::{Value, json};

/// Everything inspect reports, computed once for both outputs.
pub struct Report {
    turns: Vec<Turn>,
    /// Tokens of the system prompt (overhead) and of the pinned messages.
    system: u64,
    tools: u64,
    /// Tokens of the summary in place (none unless the transcript's window holds one).
    summary: u64,
    history: u64,
    limit: Option<u64>,
    start: usize,
    first_live_turn: usize,
    send: Vec<usize>,
    live: Count,
}

struct Turn {
    first_message: usize,
    message_count: usize,
    kinds: [usize; 6],
    tokens: Count,
    live: bool,
}

const KIND_NAMES: [&str; 6] = ["system", "user", "assistant", "tool call", "tool result", "thinking"];
const BAR_WIDTH: u64 = 50;

impl Report {
    /// The report for `window`.
    pub fn new(window: &Window) -> Report {
        let mut turns = Vec::new();
        for turn in 0..window.turn_count() {
            let info = window.turn_info(turn).expect("turn < turn_count");
            let mut kinds = [0; 6];
            for index in info.first_message..info.first_message + info.message_count {
                kinds[window.message(index).expect("index < message_count").kind() as usize] += 1;
            }
            turns.push(Turn {
                first_message: info.first_message,
                message_count: info.message_count,
                kinds,
                tokens: info.tokens,
                live: info.live,
            });
        }
        let pinned: u64 = (0..window.message_count())
            .filter(|&i| window.is_pinned_at(i))
            .map(|i| u64::from(window.message(i).expect("index < message_count").count().tokens))
            .sum();
        let overhead = window.overhead();
        Report {
            system: u64::from(overhead.system) + pinned,
            tools: u64::from(overhead.tools),
            summary: window.summary().map_or(0, |record| u64::from(window.calibrated(record.summary_tokens).tokens)),
            history: window.view_history().tokens(),
            limit: window.model().context_limit().map(u64::from),
            start: window.start(),
            first_live_turn: window.first_live_turn(),
            send: items_to_send(window).iter().filter_map(|item| item.source).collect(),
            live: window.live_tokens(),
            turns,
        }
    }

    fn used(&self) -> u64 {
        self.system + self.tools + self.summary + self.history
    }

    /// The machine-readable report.
    pub fn to_json(&self, window: &Window, format: &str) -> Value {
        let turns: Vec<Value> = self
            .turns
            .iter()
            .enumerate()
            .map(|(i, turn)| {
                let kinds: serde_json::Map<String, Value> =
                    KIND_NAMES.iter().zip(turn.kinds).filter(|(_, n)| *n > 0).map(|(k, n)| ((*k).to_owned(), json!(n))).collect();
                json!({"turn": i, "first_message": turn.first_message, "message_count": turn.message_count,
                       "kinds": kinds, "tokens": turn.tokens.tokens, "exact": turn.tokens.exact, "live": turn.live})
            })
            .collect();
        json!({
            "model": window.model().name(), "format": format,
            "budget": window.settings().history_budget, "messages": window.message_count(),
            "turns": turns, "start": self.start, "first_live_turn": self.first_live_turn,
            "usage": {"system": self.system, "tools": self.tools, "summary": self.summary,
                      "history": self.history, "limit": self.limit,
                      "free": self.limit.map(|limit| limit.saturating_sub(self.used()))},
            "live_tokens": {"tokens": self.live.tokens, "exact": self.live.exact},
            "send": self.send,
        })
    }

    /// The report for people.
    pub fn to_text(&self, window: &Window, format: &str) -> String {
        let mut out = format!(
            "{} messages in {} turns ({format}), model {}, history budget {}\n\n",
            window.message_count(),
            self.turns.len(),
            window.model().name(),
            window.settings().history_budget
        );
        out.push_str(&format!(" turn  messages    {:<62} {:>6}  state\n", "kinds", "tokens"));
        for (i, turn) in self.turns.iter().enumerate() {
            if i == self.first_live_turn && i > 0 {
                out.push_str(&divider(self.start));
            }
            let kinds: Vec<String> = KIND_NAMES
                .iter()
                .zip(turn.kinds)
                .filter(|(_, n)| *n > 0)
                .map(|(name, n)| format!("{n} {name}"))
                .collect();
            let last = turn.first_message + turn.message_count.max(1) - 1;
            out.push_str(&format!(
                "{i:>5}  {:<10}  {:<62} {:>6}  {}\n",
                format!("{}-{last}", turn.first_message),
                kinds.join(", "),
                format_count(turn.tokens),
                if turn.live { "live" } else { "pruned" }
            ));
        }
        out.push('\n');
        out.push_str(&self.usage_bar());
        out.push_str(&format!(
            "would send: {} of {} messages, {} tokens with overhead: {}\n",
            self.send.len(),
            window.message_count(),
            format_count(self.live),
            ranges(&self.send)
        ));
        out
    }

    fn usage_bar(&self) -> String {
        let limit = self.limit.unwrap_or_else(|| self.used().max(1));
        let cells = |tokens: u64| (tokens * BAR_WIDTH).div_ceil(limit.max(1)).min(BAR_WIDTH) as usize;
        let mut bar = String::new();
        for (tokens, symbol) in [(self.system, 'S'), (self.tools, 'T'), (self.summary, 'M'), (self.history, 'H')] {
            bar.extend(std::iter::repeat_n(symbol, cells(tokens)));
        }
        let bar: String = bar.chars().take(BAR_WIDTH as usize).collect();
        let free = limit.saturating_sub(self.used());
        let count = |tokens: u64| format_count(Count::exact(u32::try_from(tokens).unwrap_or(u32::MAX)));
        format!(
            "context [{bar:.<width$}] {} of {}{}\n  S system {}  T tools {}  M summary {}  H history {}  . free {}\n",
            count(self.used()),
            count(limit),
            if self.limit.is_some() { "" } else { " (context limit unknown)" },
            count(self.system),
            count(self.tools),
            count(self.summary),
            count(self.history),
            count(free),
            width = BAR_WIDTH as usize
        )
    }
}

fn divider(start: usize) -> String {
    format!("------------------------ context window starts here (message {start}) ------------------------\n")
}

/// `0, 3-7, 9` for sorted indices.
fn ranges(indices: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < indices.len() {
        let mut j = i;
        while j + 1 < indices.len() && indices[j + 1] == indices[j] + 1 {
            j += 1;
        }
        out.push(if i == j { indices[i].to_string() } else { format!("{}-{}", indices[i], indices[j]) });
        i = j + 1;
    }
    if out.is_empty() { "nothing".to_owned() } else { out.join(", ") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ctxwin::Kind;

    #[test]
    fn ranges_collapse_runs() {
        assert_eq!(ranges(&[0, 3, 4, 5, 7]), "0, 3-5, 7");
        assert_eq!(ranges(&[]), "nothing");
    }

    #[test]
    fn the_report_adds_up() {
        let mut window = Window::new("gpt-4o");
        window.push(Kind::System, "Be brief.").unwrap();
        for turn in 0..6 {
            window.push(Kind::User, &format!("question {turn} about the ledger and its turns")).unwrap();
            window.push(Kind::Assistant, "an answer of a few words").unwrap();
        }
        window.set_budget(40).unwrap();
        let report = Report::new(&window);
        let live: u64 = report.turns.iter().filter(|t| t.live).map(|t| u64::from(t.tokens.tokens)).sum();
        assert_eq!(report.history, live);
        assert_eq!(report.system + report.history, u64::from(window.live_tokens().tokens));
        assert_eq!(report.send[0], 0);
        assert_eq!(report.send[1], window.start());
        assert!(report.to_text(&window, "x").contains(&divider(window.start())));
        assert_eq!(KIND_NAMES[Kind::ToolCall as usize], "tool call");
    }
}
