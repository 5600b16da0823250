//! Changing a window's settings: the configuration object, the history budget (checked
//! against what the model can take) and the overhead sent with every request.

use super::{Overhead, Window};
use crate::config::{BudgetMode, Settings, StrategyName};
use crate::error::{Error, ErrorKind, Result};
use crate::wire::FormatSet;

impl Window {
    /// Applies the JSON configuration object `json`; nothing changes unless every key is
    /// valid. Re-enforces the strategy.
    ///
    /// A `format` other than `"auto"` fixes the window's format; one that differs from a
    /// format already fixed (by an earlier `format` or a JSON push only one format reads) is refused with
    /// [`ErrorKind::Mismatch`]: a window speaks one format for its whole life.
    pub fn configure(&mut self, json: &str) -> Result<()> {
        let settings = self.settings.with_json(json)?;
        let limit = settings.context_limit.or(self.model.context_limit());
        let fixed = self.fixed_cost().tokens();
        if let Some(limit) = limit {
            if settings.strategy == StrategyName::Summary && settings.summary_budget >= limit {
                return Err(Error::invalid_arg(format!(
                    "configuration keys 'summary_budget' ({}) and 'context_limit' ({limit}{}): with the summary \
                     strategy the summary slot must be smaller than the context, or no summary request fits",
                    settings.summary_budget,
                    if settings.context_limit.is_some() { "" } else { ", the model's" }
                )));
            }
            let reserve = settings.output_reserve_in(limit);
            if u64::from(reserve) + fixed >= u64::from(limit) {
                return Err(Error::invalid_arg(format!(
                    "configuration key 'output_reserve' ({reserve}) leaves no room in the context limit ({limit}) \
                     for the {fixed} tokens every request sends besides the history ({})",
                    self.fixed_parts()
                )));
            }
        }
        // A budget given here is checked against the model, and so is a budget set earlier
        // when this call lowers what the model can take (a smaller context limit, a larger
        // output reserve): refused, never clamped silently. The default budget (100000) is
        // capped by what the model can take (see `available_for_history`).
        let given = |key: &str| serde_json::from_str::<serde_json::Value>(json).is_ok_and(|v| v.get(key).is_some());
        if given("history_budget") {
            self.check_budget(&settings)
                .map_err(|why| Error::invalid_arg(format!("configuration key 'history_budget': {why}")))?;
        } else if settings.budget_mode == BudgetMode::Given {
            if let Some(key) = ["context_limit", "output_reserve", "budget_includes_overhead"].into_iter().find(|key| given(key))
            {
                self.check_budget(&settings).map_err(|why| {
                    Error::invalid_arg(format!(
                        "configuration key '{key}': the {why}; give a history_budget that fits (or \"auto\") in the same call"
                    ))
                })?;
            }
        }
        let formats = match settings.format {
            Some(format) if !self.wire.wire_formats.contains(format) => {
                return Err(Error::new(
                    ErrorKind::Mismatch,
                    format!(
                        "configuration key 'format': this window's format is already {} (fixed for the window's life), not {}",
                        self.format().key(),
                        format.key()
                    ),
                ));
            }
            Some(format) => FormatSet::of(&[format]),
            None => self.wire.wire_formats,
        };
        self.settings = settings;
        self.wire.wire_formats = formats;
        match self.ledger.pin_task != self.settings.pin_task {
            true => self.repin(),
            false => {
                self.policy.costs.clear();
                self.enforce();
            }
        }
        Ok(())
    }

    /// Sets the history budget and re-enforces the strategy over the whole ledger, so turns
    /// that fit a larger budget are live again.
    ///
    /// A budget above what the model can take (its context limit less the output reserve and,
    /// unless `budget_includes_overhead`, the overhead and pinned messages) is refused with
    /// OUT_OF_RANGE, saying how much it can take.
    pub fn set_budget(&mut self, history_tokens: i32) -> Result<()> {
        let settings = Settings {
            history_budget: non_negative("history budget", history_tokens)?,
            budget_mode: BudgetMode::Given,
            ..self.settings.clone()
        };
        self.check_budget(&settings).map_err(|why| Error::new(ErrorKind::OutOfRange, why))?;
        self.settings = settings;
        self.enforce();
        Ok(())
    }

    /// Explains why the explicit budget of `settings` is more than the model can take, if it
    /// is.
    fn check_budget(&self, settings: &Settings) -> std::result::Result<(), String> {
        let Some(limit) = settings.context_limit.or(self.model.context_limit()) else {
            return Ok(());
        };
        if settings.budget_mode != BudgetMode::Given {
            return Ok(());
        }
        let reserve = settings.output_reserve_in(limit);
        let fixed = if settings.budget_includes_overhead { 0 } else { self.fixed_cost().tokens() };
        let most = u64::from(limit).saturating_sub(u64::from(reserve) + fixed);
        if u64::from(settings.history_budget) <= most {
            return Ok(());
        }
        // With budget_includes_overhead the budget holds what is sent besides the history.
        let sent = match settings.budget_includes_overhead {
            true => String::new(),
            false => format!(" - {fixed} sent besides the history ({})", self.fixed_parts()),
        };
        Err(format!(
            "history budget {} is more than {} can take: context limit {limit} - output reserve {reserve}{sent} = \
             {most} tokens (\"history_budget\": \"auto\" follows the model)",
            settings.history_budget,
            self.model.name()
        ))
    }

    /// Sets the tokens of the system prompt and tool definitions sent with every request.
    pub fn set_overhead(&mut self, system_tokens: i32, tool_tokens: i32) -> Result<()> {
        let overhead =
            Overhead { system: non_negative("system tokens", system_tokens)?, tools: non_negative("tool tokens", tool_tokens)? };
        self.overhead = overhead;
        self.enforce();
        Ok(())
    }

    /// The overhead set by [`Window::set_overhead`].
    pub fn overhead(&self) -> Overhead {
        self.overhead
    }
}

fn non_negative(what: &str, value: i32) -> Result<u32> {
    u32::try_from(value).map_err(|_| Error::invalid_arg(format!("{what} must not be negative (got {value})")))
}
