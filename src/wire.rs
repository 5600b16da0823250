//! The provider wire formats (OpenAI Chat Completions, Anthropic Messages, OpenAI Responses,
//! Gemini) and sets of them: which formats a window's JSON-pushed messages still fit. Below
//! both the window, which remembers the set, and the JSON layer, which narrows it.

use crate::tokens::{Family, Model};
use std::fmt;

/// A provider's message format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// OpenAI Chat Completions `messages`.
    OpenAiChat,
    /// Anthropic Messages `messages`.
    Anthropic,
    /// OpenAI Responses `input` items.
    OpenAiResponses,
    /// Gemini `contents`.
    Gemini,
}

impl Format {
    /// Every format, in order of preference when a message fits several.
    pub const ALL: [Format; 4] = [Format::OpenAiChat, Format::Anthropic, Format::OpenAiResponses, Format::Gemini];

    /// The format's name as the CLI and error messages spell it.
    pub fn name(self) -> &'static str {
        match self {
            Format::OpenAiChat => "OpenAI Chat Completions",
            Format::Anthropic => "Anthropic Messages",
            Format::OpenAiResponses => "OpenAI Responses",
            Format::Gemini => "Gemini",
        }
    }

    /// The format's value for the configuration key `format`.
    pub fn key(self) -> &'static str {
        match self {
            Format::OpenAiChat => "openai_chat",
            Format::Anthropic => "anthropic",
            Format::OpenAiResponses => "openai_responses",
            Format::Gemini => "gemini",
        }
    }

    /// The format whose [`Format::key`] is `key`.
    pub fn from_key(key: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|format| format.key() == key)
    }

    /// The API of `model`'s family: Anthropic for Claude, Gemini for Gemini and Gemma, OpenAI
    /// Chat Completions for every other model.
    pub fn of_model(model: &Model) -> Format {
        match model.family() {
            Family::Anthropic => Format::Anthropic,
            Family::Google => Format::Gemini,
            _ => Format::OpenAiChat,
        }
    }

    /// True when a tool call's arguments are a JSON object on the wire (Anthropic `input`,
    /// Gemini `args`), not a string.
    pub fn needs_object_arguments(self) -> bool {
        matches!(self, Format::Anthropic | Format::Gemini)
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// The formats a message (or a whole window) is still compatible with. Plain messages such as
/// `{"role":"user","content":"hi"}` fit several; one distinctive message narrows the set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FormatSet(u8);

impl FormatSet {
    /// Every format: nothing is known yet.
    pub const ANY: FormatSet = FormatSet(0b1111);

    /// The empty set: incompatible shapes.
    pub const NONE: FormatSet = FormatSet(0);

    /// The set of the given formats.
    pub fn of(formats: &[Format]) -> FormatSet {
        FormatSet(formats.iter().fold(0, |bits, f| bits | f.bit()))
    }

    /// The formats in both sets.
    pub fn and(self, other: FormatSet) -> FormatSet {
        FormatSet(self.0 & other.0)
    }

    /// True when `format` is in the set.
    pub fn contains(self, format: Format) -> bool {
        self.0 & format.bit() != 0
    }

    /// True for the empty set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The set as bits (one per format, in [`Format::ALL`] order), for saving.
    pub fn bits(self) -> u8 {
        self.0
    }

    /// The set saved as `bits`; `None` for bits no format has.
    pub fn from_bits(bits: u64) -> Option<FormatSet> {
        u8::try_from(bits).ok().filter(|&b| b & !FormatSet::ANY.0 == 0).map(FormatSet)
    }

    /// The set's only format, if it holds exactly one.
    pub fn single(self) -> Option<Format> {
        Format::ALL.into_iter().find(|&f| FormatSet::of(&[f]) == self)
    }

    /// The most preferred format in the set (`None` for the empty set).
    pub fn preferred(self) -> Option<Format> {
        Format::ALL.into_iter().find(|&f| self.contains(f))
    }
}

impl Default for FormatSet {
    /// [`FormatSet::ANY`]: nothing is known.
    fn default() -> FormatSet {
        FormatSet::ANY
    }
}

impl fmt::Display for FormatSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Format::ALL.into_iter().filter(|&x| self.contains(x)).map(Format::name).collect();
        if names.is_empty() { f.write_str("no known format") } else { f.write_str(&names.join(" or ")) }
    }
}
