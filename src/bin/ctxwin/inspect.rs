//! `ctxwin inspect`: the turns of a window, the view its strategy sends item by item, the
//! divider, the context usage and the problems `validate` finds, for people (a table) or
//! machines (`--json`).

use ctxwin::tokens::format_count;
use ctxwin::view::ItemType;
use ctxwin::{Count, Window};
use serde_json::{Value, json};

/// Everything inspect reports, computed once for both outputs.
pub struct Report {
    turns: Vec<Turn>,
    items: Vec<Item>,
    /// Tokens of the system prompt (overhead) and of the pinned messages.
    system: u64,
    tools: u64,
    /// Tokens of the summary in place (the `summary` strategy's, or the sliding slot's).
    summary: u64,
    history: u64,
    limit: Option<u64>,
    start: usize,
    live: Count,
    /// `ctxwin_window_validate`'s report.
    validation: Value,
}

/// One turn and what the view does with its messages.
struct Turn {
    first_message: usize,
    message_count: usize,
    kinds: [usize; 6],
    tokens: Count,
    /// Its messages sent as pushed, truncated, and the items the library wrote for it.
    whole: usize,
    truncated: usize,
    written: usize,
}

impl Turn {
    /// `sent`, `partly sent`, `replaced` (only items the library wrote) or `not sent`.
    fn state(&self) -> &'static str {
        match (self.whole, self.truncated, self.written) {
            (whole, 0, _) if whole == self.message_count => "sent",
            (0, 0, 0) => "not sent",
            (0, 0, _) => "replaced",
            _ => "partly sent",
        }
    }
}

/// One item of the view.
struct Item {
    item_type: ItemType,
    kind: usize,
    index: usize,
    tokens: Count,
    call_id: Option<String>,
    /// Image and opaque-data tokens of the ledger message the item is.
    media: Option<Count>,
    pinned: bool,
    preview: String,
}

const KIND_NAMES: [&str; 6] = ["system", "user", "assistant", "tool call", "tool result", "thinking"];
const TYPE_NAMES: [&str; 3] = ["message", "truncated", "synthetic"];
const BAR_WIDTH: u64 = 50;
const PREVIEW_CHARS: usize = 48;

impl Report {
    /// The report for `window`.
    pub fn new(window: &Window) -> Report {
        let mut turns: Vec<Turn> = (0..window.turn_count())
            .map(|turn| {
                let info = window.turn_info(turn).expect("turn < turn_count");
                let mut kinds = [0; 6];
                for index in info.first_message..info.first_message + info.message_count {
                    kinds[window.message(index).expect("index < message_count").kind() as usize] += 1;
                }
                Turn {
                    first_message: info.first_message,
                    message_count: info.message_count,
                    kinds,
                    tokens: info.tokens,
                    whole: 0,
                    truncated: 0,
                    written: 0,
                }
            })
            .collect();
        let mut items = Vec::with_capacity(window.view_len());
        for i in 0..window.view_len() {
            let item = window.view_item(i).expect("i < view_len");
            let message = window.message(item.index);
            if let Some(turn) = window.turn_of(item.index).and_then(|turn| turns.get_mut(turn)) {
                match item.item_type {
                    ItemType::Message => turn.whole += 1,
                    ItemType::Truncated => turn.truncated += 1,
                    ItemType::Synthetic => turn.written += 1,
                }
            }
            items.push(Item {
                item_type: item.item_type,
                kind: item.kind as usize,
                index: item.index,
                tokens: item.tokens,
                call_id: message.and_then(|m| m.call_id()).map(str::to_owned),
                media: message.filter(|_| item.item_type == ItemType::Message).and_then(|m| m.media()),
                pinned: item.item_type == ItemType::Message && window.is_pinned_at(item.index),
                preview: preview(item.text),
            });
        }
        let pinned: u64 = (0..window.message_count())
            .filter(|&i| window.is_pinned_at(i))
            .map(|i| u64::from(window.calibrated(window.message(i).expect("index < message_count").count()).tokens))
            .sum();
        let overhead = window.overhead();
        Report {
            // The overhead learned from usage is the system prompt and tools not declared.
            system: u64::from(overhead.system) + pinned + u64::from(window.learned_overhead().tokens),
            tools: u64::from(overhead.tools),
            summary: window.sent_summary().map_or(0, |record| u64::from(window.calibrated(record.summary_tokens).tokens)),
            history: window.view_history().tokens(),
            limit: window.model().context_limit().map(u64::from),
            start: window.start(),
            live: window.live_tokens(),
            validation: serde_json::from_str(&ctxwin::report::validation_report(window)).expect("the report is JSON"),
            turns,
            items,
        }
    }

    fn used(&self) -> u64 {
        self.system + self.tools + self.summary + self.history
    }

    /// Where the divider goes: before the first item of history (the first one not pinned),
    /// as soon as the view is not the whole transcript: the boundary moved (`start > 0`) or a
    /// strategy shortened, replaced or left out messages after it (`tiered` can keep
    /// message 0 and cut the middle). Items the strategy shortened or wrote are marked by
    /// their type.
    fn divider_at(&self) -> Option<usize> {
        let first_history = self.items.iter().position(|item| !item.pinned)?;
        let rewritten = self.turns.iter().any(|turn| turn.state() != "sent");
        (self.start > 0 || rewritten).then_some(first_history)
    }

    /// The machine-readable report.
    pub fn to_json(&self, window: &Window, source: &str) -> Value {
        let turns: Vec<Value> = self
            .turns
            .iter()
            .enumerate()
            .map(|(i, turn)| {
                let kinds: serde_json::Map<String, Value> =
                    KIND_NAMES.iter().zip(turn.kinds).filter(|(_, n)| *n > 0).map(|(k, n)| ((*k).to_owned(), json!(n))).collect();
                json!({"turn": i, "first_message": turn.first_message, "message_count": turn.message_count,
                       "kinds": kinds, "tokens": turn.tokens.tokens, "exact": turn.tokens.exact,
                       "live": window.turn_info(i).is_ok_and(|info| info.live), "state": turn.state(),
                       "sent_whole": turn.whole, "truncated": turn.truncated, "written": turn.written})
            })
            .collect();
        let items: Vec<Value> = self
            .items
            .iter()
            .map(|item| {
                json!({"type": TYPE_NAMES[item.item_type as usize], "kind": KIND_NAMES[item.kind], "index": item.index,
                       "tokens": item.tokens.tokens, "exact": item.tokens.exact, "call_id": item.call_id,
                       "media_tokens": item.media.map(|m| m.tokens), "pinned": item.pinned, "text": item.preview})
            })
            .collect();
        let send: Vec<usize> =
            self.items.iter().filter(|item| item.item_type == ItemType::Message).map(|item| item.index).collect();
        json!({
            "model": window.model().name(), "model_known": window.model().is_known(), "format": source,
            "strategy": window.settings().strategy.as_str(),
            "budget": window.available_for_history(), "messages": window.message_count(),
            "turns": turns, "start": self.start, "first_live_turn": window.first_live_turn(),
            "generation": window.generation(), "divider_before_item": self.divider_at(),
            "items": items, "send": send,
            "usage": {"system": self.system, "tools": self.tools, "summary": self.summary,
                      "history": self.history, "limit": self.limit,
                      "free": self.limit.map(|limit| limit.saturating_sub(self.used()))},
            "live_tokens": {"tokens": self.live.tokens, "exact": self.live.exact},
            "problems": self.validation["problems"], "over_budget_by": self.validation["over_budget_by"],
        })
    }

    /// The report for people.
    pub fn to_text(&self, window: &Window, source: &str) -> String {
        let mut out = format!(
            "{} messages in {} turns ({source}), model {}{}, strategy {}, history budget {}\n\n",
            window.message_count(),
            self.turns.len(),
            window.model().name(),
            if window.model().is_known() { "" } else { " (unknown: estimates, no context limit)" },
            window.settings().strategy.as_str(),
            window.available_for_history()
        );
        out.push_str(&format!(" turn  messages    {:<56} {:>6}  state\n", "kinds", "tokens"));
        for (i, turn) in self.turns.iter().enumerate() {
            let kinds: Vec<String> =
                KIND_NAMES.iter().zip(turn.kinds).filter(|(_, n)| *n > 0).map(|(name, n)| format!("{n} {name}")).collect();
            let last = turn.first_message + turn.message_count.max(1) - 1;
            let mut state = turn.state().to_owned();
            if state == "partly sent" {
                state.push_str(&format!(" ({} whole, {} truncated, {} written)", turn.whole, turn.truncated, turn.written));
            }
            out.push_str(&format!(
                "{i:>5}  {:<10}  {:<56} {:>6}  {state}\n",
                format!("{}-{last}", turn.first_message),
                kinds.join(", "),
                format_count(turn.tokens),
            ));
        }
        out.push_str(&format!("\nthe view: {} items\n", self.items.len()));
        out.push_str(&format!(" item  {:<9}  {:<11} {:>5}  {:>6}  {:<12}  text\n", "type", "kind", "index", "tokens", "call id"));
        let divider = self.divider_at();
        for (i, item) in self.items.iter().enumerate() {
            if divider == Some(i) {
                out.push_str(&format!("---------------- context window starts here (message {}) ----------------\n", self.start));
            }
            let media = item.media.map_or(String::new(), |m| format!("[image/data {}] ", format_count(m)));
            out.push_str(&format!(
                "{i:>5}  {:<9}  {:<11} {:>5}  {:>6}  {:<12}  {media}{}\n",
                TYPE_NAMES[item.item_type as usize],
                KIND_NAMES[item.kind],
                item.index,
                format_count(item.tokens),
                item.call_id.as_deref().unwrap_or("-"),
                item.preview
            ));
        }
        out.push('\n');
        out.push_str(&self.usage_bar());
        let count = |t: ItemType| self.items.iter().filter(|item| item.item_type == t).count();
        out.push_str(&format!(
            "would send: {} items ({} of {} messages as pushed, {} truncated, {} written by the library), {} tokens with overhead\n",
            self.items.len(),
            count(ItemType::Message),
            window.message_count(),
            count(ItemType::Truncated),
            count(ItemType::Synthetic),
            format_count(self.live),
        ));
        out.push_str(&self.problems_text());
        out
    }

    /// What `validate` finds, one line each.
    pub fn problems_text(&self) -> String {
        let problems = self.validation["problems"].as_array().map_or(&[][..], Vec::as_slice);
        let over = self.validation["over_budget_by"].as_u64().unwrap_or(0);
        let mut out = match problems.len() + usize::from(over > 0) {
            0 => "problems: none\n".to_owned(),
            n => format!("problems: {n}\n"),
        };
        for problem in problems {
            let call = problem["call_id"].as_str().map_or(String::new(), |id| format!(", call {id}"));
            let turn = problem["turn"].as_u64().map_or(String::new(), |turn| format!(" (turn {turn}{call})"));
            out.push_str(&format!(
                "  message {}{turn}: {}: {}\n",
                problem["index"],
                problem["problem"].as_str().unwrap_or_default().replace('_', " "),
                problem["repair"].as_str().unwrap_or_default()
            ));
        }
        if over > 0 {
            out.push_str(&format!("  the view is over the budget by {over} tokens (the newest turn alone is too large)\n"));
        }
        out
    }

    /// What `validate` finds, as `ctxwin_window_validate` writes it.
    pub fn validation(&self) -> &Value {
        &self.validation
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

/// The first characters of `text` on one line; `(text not kept)` when the window has none.
fn preview(text: Option<&str>) -> String {
    let Some(text) = text else { return "(text not kept)".to_owned() };
    let words: Vec<&str> = text.split_whitespace().collect();
    let line = words.join(" ");
    match line.char_indices().nth(PREVIEW_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ctxwin::Kind;

    #[test]
    fn previews_are_one_short_line() {
        assert_eq!(preview(Some("a\n  b\tc")), "a b c");
        assert_eq!(preview(Some(&"é".repeat(60))), format!("{}…", "é".repeat(PREVIEW_CHARS)));
        assert_eq!(preview(None), "(text not kept)");
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
        let sent: u64 = report.turns.iter().filter(|t| t.state() == "sent").map(|t| u64::from(t.tokens.tokens)).sum();
        assert_eq!(report.history, sent);
        assert_eq!(report.system + report.history, u64::from(window.live_tokens().tokens));
        assert_eq!(report.items[0].index, 0);
        // The task (the first USER message) is pinned: sent before the boundary, above the divider.
        assert!(report.items[1].index == 1 && report.items[1].pinned);
        assert!(window.start() > 2);
        assert_eq!(report.items[2].index, window.start());
        assert_eq!(report.divider_at(), Some(2));
        assert!(report.to_text(&window, "x").contains(&format!("context window starts here (message {})", window.start())));
        assert_eq!(KIND_NAMES[Kind::ToolCall as usize], "tool call");
    }
}
