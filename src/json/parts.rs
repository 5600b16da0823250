//! What every format parser produces: a wire message cut into parts, one ledger message
//! each, plus the field accessors that name the offending field on failure.

use crate::message::Kind;
use crate::tokens::Count;
use serde_json::{Map, Value};
use std::ops::Range;

/// One ledger message's worth of a wire message: a run of blocks of one kind, or a single
/// tool call or tool result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// The ledger kind.
    pub kind: Kind,
    /// The text pieces counted with the window's model, joined by newlines.
    pub texts: Vec<String>,
    /// Tokens of images and opaque data, counted by the provider's rule.
    pub media: Option<Count>,
    /// The tool call id of a TOOL_CALL or TOOL_RESULT part.
    pub call_id: Option<String>,
    /// The tool name of a TOOL_CALL part (or of a result whose wire form names it); not
    /// part of `texts`.
    pub name: Option<String>,
    /// The blocks of the wire message this part covers, numbered as the format numbers them.
    pub blocks: Range<usize>,
    /// True for a provider's compaction block or item (a USER part of its own).
    pub compaction: bool,
    /// True for a part no later block joins: a compaction, or a text that says nothing
    /// ([`PartsBuilder::blank_text`]).
    pub alone: bool,
}

impl Part {
    /// The text the ledger keeps and counts: the pieces joined by newlines.
    pub fn text(&self) -> String {
        self.texts.join("\n")
    }
}

/// A field of a wire message that is missing or has the wrong shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// The field's path inside the message, for example `content[1].type`.
    pub field: String,
    /// What is wrong with it.
    pub problem: String,
}

impl FieldError {
    /// `field` is wrong because of `problem`.
    pub fn new(field: impl Into<String>, problem: impl Into<String>) -> FieldError {
        FieldError { field: field.into(), problem: problem.into() }
    }
}

/// Collects a wire message's parts block by block, merging runs of text of one kind.
pub struct PartsBuilder {
    parts: Vec<Part>,
    kind: Kind,
}

impl PartsBuilder {
    /// A builder for a message whose parts default to `kind` (its role's kind).
    pub fn new(kind: Kind) -> PartsBuilder {
        PartsBuilder { parts: Vec::new(), kind }
    }

    /// The role's kind.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// Adds text of `kind` from block `block`.
    pub fn text(&mut self, kind: Kind, block: usize, text: &str) {
        self.mergeable(kind, block).texts.push(text.to_owned());
    }

    /// Adds text of `kind` from block `block` that says nothing (empty or whitespace only) as
    /// a part of its own, joined by no other block, so that a render can leave it out whole
    /// (Anthropic refuses such text blocks).
    pub fn blank_text(&mut self, kind: Kind, block: usize, text: &str) {
        let mut part = empty_part(kind, block..block + 1);
        part.texts.push(text.to_owned());
        part.alone = true;
        self.parts.push(part);
    }

    /// Adds media tokens of `kind` from block `block`.
    pub fn media(&mut self, kind: Kind, block: usize, count: Count) {
        let part = self.mergeable(kind, block);
        part.media = Some(part.media.map_or(count, |sum| sum.plus(count)));
    }

    /// Adds a tool call or tool result from block `block`, with its id and tool name: always
    /// a part of its own.
    pub fn call(
        &mut self,
        kind: Kind,
        block: usize,
        (call_id, name): (Option<&str>, Option<&str>),
        (texts, media): (Vec<String>, Option<Count>),
    ) -> &mut Part {
        self.parts.push(Part {
            kind,
            texts,
            media,
            call_id: call_id.map(str::to_owned),
            name: name.map(str::to_owned),
            blocks: block..block + 1,
            compaction: false,
            alone: false,
        });
        self.parts.last_mut().expect("a part was just pushed")
    }

    /// Adds a provider's compaction from block `block`: a USER part of its own holding the
    /// summary `text` (empty when it is encrypted only) and the `media` tokens of its opaque
    /// content.
    pub fn compaction(&mut self, block: usize, text: Option<&str>, media: Option<Count>) {
        let texts = text.map(|text| vec![text.to_owned()]).unwrap_or_default();
        let part = self.call(Kind::User, block, (None, None), (texts, media));
        (part.compaction, part.alone) = (true, true);
    }

    /// Every text piece and the summed media collected so far: the content of a tool result.
    pub fn flatten(self) -> (Vec<String>, Option<Count>) {
        let media = self.parts.iter().filter_map(|p| p.media).reduce(Count::plus);
        (self.parts.into_iter().flat_map(|p| p.texts).collect(), media)
    }

    /// The parts; a message without content is one empty part of the role's kind.
    pub fn finish(mut self) -> Vec<Part> {
        if self.parts.is_empty() {
            self.parts.push(empty_part(self.kind, 0..0));
        }
        self.parts
    }

    fn mergeable(&mut self, kind: Kind, block: usize) -> &mut Part {
        let merges = self.parts.last().is_some_and(|last| {
            last.kind == kind && !is_call(kind) && !last.alone && (last.blocks.end == block || last.blocks.end == block + 1)
        });
        if !merges {
            self.parts.push(empty_part(kind, block..block));
        }
        let part = self.parts.last_mut().expect("a part exists");
        part.blocks.end = block + 1;
        part
    }
}

fn empty_part(kind: Kind, blocks: Range<usize>) -> Part {
    Part { kind, texts: Vec::new(), media: None, call_id: None, name: None, blocks, compaction: false, alone: false }
}

fn is_call(kind: Kind) -> bool {
    matches!(kind, Kind::ToolCall | Kind::ToolResult)
}

/// `value` as an object, or an error naming `path`.
pub fn object<'a>(value: &'a Value, path: &str) -> Result<&'a Map<String, Value>, FieldError> {
    value.as_object().ok_or_else(|| FieldError::new(path, "must be an object"))
}

/// The string field `key` of `object` at `path`, which must be present.
pub fn required_str<'a>(object: &'a Map<String, Value>, key: &str, path: &str) -> Result<&'a str, FieldError> {
    optional_str(object, key, path)?.ok_or_else(|| FieldError::new(join(path, key), "is missing"))
}

/// The string field `key` of `object` at `path`, if present and not null.
pub fn optional_str<'a>(object: &'a Map<String, Value>, key: &str, path: &str) -> Result<Option<&'a str>, FieldError> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(FieldError::new(join(path, key), "must be a string")),
    }
}

/// The array field `key` of `object` at `path`; absent or null is empty.
pub fn optional_array<'a>(object: &'a Map<String, Value>, key: &str, path: &str) -> Result<&'a [Value], FieldError> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(FieldError::new(join(path, key), "must be an array")),
    }
}

/// `path.key`, or `key` at the top level.
pub fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") }
}

/// `path[index]`.
pub fn index(path: &str, index: usize) -> String {
    format!("{path}[{index}]")
}

/// A JSON value's compact text, as counted for tool arguments and structured results.
pub fn compact(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Tokens of content the library cannot read (audio, files, encrypted reasoning): an estimate
/// of one token per four bytes of its JSON.
pub fn opaque(value: &Value) -> Count {
    Count::estimate(u32::try_from(value.to_string().len().div_ceil(4)).unwrap_or(u32::MAX))
}

/// Keeps, in the field `key` of `object`, the blocks whose number passes `keep`: array
/// elements are numbered from `first`, a string is the single block `first`. Returns how
/// many blocks remain; a field left without blocks is removed.
pub fn retain_blocks(object: &mut Map<String, Value>, key: &str, first: usize, keep: &dyn Fn(usize) -> bool) -> usize {
    let remaining = match object.get_mut(key) {
        Some(Value::Array(items)) => {
            let mut number = first;
            items.retain(|_| {
                number += 1;
                keep(number - 1)
            });
            items.len()
        }
        Some(Value::String(_)) => usize::from(keep(first)),
        _ => 0,
    };
    if remaining == 0 {
        object.remove(key);
    }
    remaining
}

/// How many blocks the field `key` of `object` holds (a string is one).
pub fn block_count(object: &Map<String, Value>, key: &str) -> usize {
    match object.get(key) {
        Some(Value::Array(items)) => items.len(),
        Some(Value::String(_)) => 1,
        _ => 0,
    }
}

/// Test helpers the format parsers share.
#[cfg(test)]
pub mod testing {
    use super::{FieldError, Part};
    use serde_json::{Map, Value};

    /// A format's parser.
    pub type Parser = fn(&Map<String, Value>) -> Result<Vec<Part>, FieldError>;

    /// `parser` applied to the JSON object `json`.
    pub fn parse(parser: Parser, json: &str) -> Result<Vec<Part>, FieldError> {
        parser(serde_json::from_str::<Value>(json).unwrap().as_object().unwrap())
    }

    /// Checks that each case's JSON fails on the field named with it.
    pub fn assert_error_fields(parser: Parser, cases: &[(&str, &str)]) {
        for (json, field) in cases {
            assert_eq!(parse(parser, json).unwrap_err().field, *field, "{json}");
        }
    }
}
