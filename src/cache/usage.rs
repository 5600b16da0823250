//! Provider usage objects: the prompt total each provider bills, and the part of it served
//! from its prompt cache. Each provider states its rule:
//!
//! - **OpenAI Chat Completions** `usage`: `prompt_tokens` is the whole prompt;
//!   `prompt_tokens_details.cached_tokens` is the part of it retrieved from the cache
//!   (OpenAI's prompt caching guide: cached tokens are counted in `prompt_tokens` and billed
//!   at the cached price).
//! - **OpenAI Responses** `usage`: `input_tokens` is the whole input;
//!   `input_tokens_details.cached_tokens` the part retrieved from the cache.
//! - **Anthropic Messages** `usage`: `input_tokens` counts only the tokens after the last
//!   cache breakpoint, neither read from nor written to the cache; the prompt is
//!   `input_tokens + cache_creation_input_tokens + cache_read_input_tokens` (Anthropic's
//!   prompt caching guide, "Tracking cache performance"), of which `cache_read_input_tokens`
//!   were served from the cache.
//! - **Gemini** `usageMetadata`: `promptTokenCount` is the number of tokens in the request,
//!   and "when cached content is set, this is still the total effective prompt size", so it
//!   includes `cachedContentTokenCount` (the generateContent reference).
//!   `toolUsePromptTokenCount` counts the results of the provider's own tool executions
//!   (Google Search, code execution) given back to the model as input: apart from
//!   `promptTokenCount` (`totalTokenCount` is the sum of the prompt, candidates, tool-use
//!   prompt and thoughts counts), and billed as input, so the prompt total adds it. The
//!   request the agent sent did not hold those tokens: [`Usage::sent_tokens`] leaves them
//!   out for calibration.
//!
//! A whole response body is accepted too: its `usage` or `usageMetadata` member is read. So
//! are the streaming events and chunks that carry a request's usage, in each provider's
//! documented shape:
//!
//! - **Anthropic** `message_start` (`{"type":"message_start","message":{...,"usage":{...}}}`):
//!   its `message.usage` states the input counts. A `message_delta` event's `usage` is
//!   cumulative: read when it states `input_tokens`, refused when it states output tokens
//!   only (as it did before the API added the input counts to it), naming `message_start`.
//! - **OpenAI Responses** events holding the response (`response.completed`,
//!   `response.incomplete`, `response.failed`): `response.usage`. The earlier events
//!   (`response.created`, `response.in_progress`) hold `usage: null`, refused as carrying
//!   none yet.
//! - **OpenAI Chat** the last `chat.completion.chunk` of a stream asked for with
//!   `stream_options.include_usage`: its top-level `usage`, as a response body's (the
//!   chunks before it say `usage: null`, refused the same way).
//! - **Gemini** every `streamGenerateContent` chunk carries `usageMetadata`, read as a
//!   response body's.

use crate::error::{Error, ErrorKind, Result};
use crate::wire::{Format, FormatSet};
use serde_json::{Map, Value};

/// One request's usage: the prompt total the provider bills and its cached part.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// The provider formats whose usage has this shape ([`FormatSet::ANY`] for a total given
    /// as a number): an Anthropic usage without cache fields is also an OpenAI Responses one.
    pub formats: FormatSet,
    /// Every prompt token the provider bills, cached ones included.
    pub prompt_tokens: u64,
    /// Prompt tokens served from the provider's cache.
    pub cached_tokens: u64,
    /// The part of `prompt_tokens` the provider's own tools added to the request (Gemini's
    /// `toolUsePromptTokenCount`); 0 for the other providers.
    pub tool_use_tokens: u64,
}

impl Usage {
    /// The prompt tokens of the request as the agent sent it: the total less what the
    /// provider's own tools added.
    pub fn sent_tokens(&self) -> u64 {
        self.prompt_tokens - self.tool_use_tokens
    }
}

/// The usage object (or the response body holding it) in `json`, in any provider's shape.
///
/// Errors: PARSE for text that is not JSON; INVALID_ARG naming the field for a usage object
/// of no known shape, a count that is not a whole number from 0 up, or a cached part larger
/// than the prompt.
pub fn parse_usage(json: &str) -> Result<Usage> {
    let value: Value =
        crate::strict_json::parse(json).map_err(|e| Error::new(ErrorKind::Parse, format!("usage is not valid JSON: {e}")))?;
    let Value::Object(object) = &value else {
        return Err(Error::invalid_arg("usage must be a JSON object"));
    };
    let (usage, path) = locate(object)?;
    let path = path.as_str();
    if object.get("type").and_then(Value::as_str) == Some("message_delta") && count(usage, path, "input_tokens")?.is_none() {
        return Err(Error::invalid_arg(format!(
            "usage of an Anthropic message_delta event without '{path}input_tokens' (output tokens only): \
             observe the message_start event's usage (message.usage) instead"
        )));
    }
    let field = |name: &str| count(usage, path, name);
    let usage = if usage.contains_key("promptTokenCount") {
        let tool_use_tokens = field("toolUsePromptTokenCount")?.unwrap_or(0);
        Usage {
            formats: FormatSet::of(&[Format::Gemini]),
            prompt_tokens: field("promptTokenCount")?
                .unwrap_or(0)
                .checked_add(tool_use_tokens)
                .ok_or_else(|| Error::invalid_arg(format!("usage field '{path}toolUsePromptTokenCount' is out of range")))?,
            cached_tokens: field("cachedContentTokenCount")?.unwrap_or(0),
            tool_use_tokens,
        }
    } else if usage.contains_key("prompt_tokens") {
        Usage {
            formats: FormatSet::of(&[Format::OpenAiChat]),
            prompt_tokens: field("prompt_tokens")?.unwrap_or(0),
            cached_tokens: detail(usage, path, "prompt_tokens_details")?,
            tool_use_tokens: 0,
        }
    } else if usage.contains_key("cache_creation_input_tokens") || usage.contains_key("cache_read_input_tokens") {
        let read = field("cache_read_input_tokens")?.unwrap_or(0);
        let written = field("cache_creation_input_tokens")?.unwrap_or(0);
        let uncached = field("input_tokens")?.ok_or_else(|| missing(path, "input_tokens"))?;
        Usage {
            formats: FormatSet::of(&[Format::Anthropic]),
            prompt_tokens: uncached.saturating_add(written).saturating_add(read),
            cached_tokens: read,
            tool_use_tokens: 0,
        }
    } else if usage.contains_key("input_tokens") {
        // Responses, or Anthropic without cache fields: either way the whole input.
        let responses = usage.contains_key("input_tokens_details") || usage.contains_key("output_tokens_details");
        Usage {
            formats: match responses {
                true => FormatSet::of(&[Format::OpenAiResponses]),
                false => FormatSet::of(&[Format::Anthropic, Format::OpenAiResponses]),
            },
            prompt_tokens: field("input_tokens")?.unwrap_or(0),
            cached_tokens: detail(usage, path, "input_tokens_details")?,
            tool_use_tokens: 0,
        }
    } else {
        return Err(Error::invalid_arg(format!(
            "usage object of unknown shape: none of '{path}prompt_tokens' (OpenAI Chat), '{path}input_tokens' \
             (OpenAI Responses, Anthropic) or '{path}promptTokenCount' (Gemini usageMetadata)"
        )));
    };
    if usage.cached_tokens > usage.prompt_tokens {
        return Err(Error::invalid_arg(format!(
            "usage: the cached tokens ({}) exceed the prompt tokens ({})",
            usage.cached_tokens, usage.prompt_tokens
        )));
    }
    Ok(usage)
}

/// The usage object in `object` and the path naming its fields in errors: the `usage` or
/// `usageMetadata` member of `object` or, when it has neither, of its `message` (an
/// Anthropic `message_start` event) or `response` (an OpenAI Responses stream event);
/// else `object` itself. A member that is null (a stream's chunk or event before the
/// usage is known) is refused.
fn locate(object: &Map<String, Value>) -> Result<(&Map<String, Value>, String)> {
    if let Some(found) = member(object, "")? {
        return Ok(found);
    }
    for envelope in ["message", "response"] {
        if let Some(Value::Object(inner)) = object.get(envelope) {
            if let Some(found) = member(inner, &format!("{envelope}."))? {
                return Ok(found);
            }
        }
    }
    Ok((object, String::new()))
}

/// The `usage` or `usageMetadata` member of `object` (at `path`), if it has one.
fn member<'a>(object: &'a Map<String, Value>, path: &str) -> Result<Option<(&'a Map<String, Value>, String)>> {
    for key in ["usage", "usageMetadata"] {
        match object.get(key) {
            Some(Value::Object(usage)) => return Ok(Some((usage, format!("{path}{key}.")))),
            Some(Value::Null) => {
                return Err(Error::invalid_arg(format!(
                    "usage field '{path}{key}' is null: this chunk or event carries no usage yet (a stream states it \
                     in its last chunk, or its message_start or response.completed event)"
                )));
            }
            _ => {}
        }
    }
    Ok(None)
}

/// `cached_tokens` of the details object `name`, 0 when absent or null.
fn detail(usage: &Map<String, Value>, path: &str, name: &str) -> Result<u64> {
    match usage.get(name) {
        None | Some(Value::Null) => Ok(0),
        Some(Value::Object(details)) => Ok(count(details, &format!("{path}{name}."), "cached_tokens")?.unwrap_or(0)),
        Some(_) => Err(Error::invalid_arg(format!("usage field '{path}{name}' must be an object"))),
    }
}

/// The count `name`: `None` when absent or null, an error naming it when not a whole number
/// from 0 up.
fn count(object: &Map<String, Value>, path: &str, name: &str) -> Result<Option<u64>> {
    match object.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value.as_u64().map(Some).ok_or_else(|| {
            Error::invalid_arg(format!("usage field '{path}{name}' must be a whole number from 0 up (got {value})"))
        }),
    }
}

fn missing(path: &str, name: &str) -> Error {
    Error::invalid_arg(format!("usage field '{path}{name}' is missing"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(prompt_tokens: u64, cached_tokens: u64) -> Usage {
        Usage { prompt_tokens, cached_tokens, ..Usage::default() }
    }

    /// Compares the numbers only; [`shapes_name_their_formats`] checks the formats.
    fn numbers(usage: Usage) -> (u64, u64, u64) {
        (usage.prompt_tokens, usage.cached_tokens, usage.tool_use_tokens)
    }

    #[test]
    fn every_provider_shape() {
        let cases = [
            // OpenAI Chat: cached tokens are part of prompt_tokens.
            (
                r#"{"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,"prompt_tokens_details":{"cached_tokens":1920}}"#,
                usage(2006, 1920),
            ),
            (r#"{"id":"x","usage":{"prompt_tokens":50,"completion_tokens":3}}"#, usage(50, 0)),
            (r#"{"prompt_tokens":50,"prompt_tokens_details":null}"#, usage(50, 0)),
            // OpenAI Responses.
            (
                r#"{"input_tokens":125,"output_tokens":48,"total_tokens":173,"input_tokens_details":{"cached_tokens":98}}"#,
                usage(125, 98),
            ),
            // Anthropic: the three counters add up.
            (
                r#"{"input_tokens":21,"cache_creation_input_tokens":188,"cache_read_input_tokens":1800,"output_tokens":393}"#,
                usage(2009, 1800),
            ),
            (r#"{"type":"message","usage":{"input_tokens":12,"cache_read_input_tokens":0,"output_tokens":5}}"#, usage(12, 0)),
            (r#"{"input_tokens":12,"output_tokens":5}"#, usage(12, 0)),
            // Gemini: promptTokenCount includes the cached content.
            (
                r#"{"usageMetadata":{"promptTokenCount":18625,"candidatesTokenCount":188,"cachedContentTokenCount":18010}}"#,
                usage(18625, 18010),
            ),
            (r#"{"promptTokenCount":10,"totalTokenCount":12}"#, usage(10, 0)),
            (r#"{"promptTokenCount":10,"toolUsePromptTokenCount":null}"#, usage(10, 0)),
        ];
        for (json, expected) in cases {
            assert_eq!(numbers(parse_usage(json).unwrap()), numbers(expected), "{json}");
        }
    }

    /// Gemini bills the tool-use prompt (the results of its own tools, given back to the
    /// model) as input, apart from `promptTokenCount`: the total adds it, the part sent does
    /// not, and the cached part stays within the request sent.
    #[test]
    fn gemini_tool_use_prompt_is_billed_not_sent() {
        let json = r#"{"usageMetadata":{"promptTokenCount":1200,"cachedContentTokenCount":1000,"toolUsePromptTokenCount":3400,"candidatesTokenCount":80,"thoughtsTokenCount":20,"totalTokenCount":4700}}"#;
        let got = parse_usage(json).unwrap();
        assert_eq!(numbers(got), (4600, 1000, 3400));
        assert_eq!(got.sent_tokens(), 1200);
        // totalTokenCount is the sum of prompt, candidates, tool-use prompt and thoughts.
        assert_eq!(got.prompt_tokens + 80 + 20, 4700);
        let err = parse_usage(r#"{"promptTokenCount":1,"toolUsePromptTokenCount":-2}"#).unwrap_err();
        assert!(err.message().contains("toolUsePromptTokenCount"), "{}", err.message());
        let huge = format!(r#"{{"promptTokenCount":{},"toolUsePromptTokenCount":2}}"#, u64::MAX);
        assert!(parse_usage(&huge).unwrap_err().message().contains("toolUsePromptTokenCount"));
    }

    /// The events and chunks that carry a streamed request's usage, as each provider
    /// documents them; the ones before the usage is known are refused, naming the one to
    /// observe.
    #[test]
    fn streaming_events_and_chunks() {
        let cases = [
            // Anthropic message_start: message.usage, the three counters.
            (
                r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude-x","usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":5,"output_tokens":1}}}"#,
                usage(15, 5),
            ),
            // Anthropic message_delta with the cumulative input counts.
            (
                r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":10,"cache_creation_input_tokens":20,"cache_read_input_tokens":5,"output_tokens":42}}"#,
                usage(35, 5),
            ),
            // OpenAI Responses response.completed: response.usage.
            (
                r#"{"type":"response.completed","sequence_number":9,"response":{"id":"resp_1","object":"response","status":"completed","output":[],"usage":{"input_tokens":328,"input_tokens_details":{"cached_tokens":256},"output_tokens":52,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":380}}}"#,
                usage(328, 256),
            ),
            // OpenAI Chat: the last chunk of a stream with include_usage.
            (
                r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":9,"total_tokens":129,"prompt_tokens_details":{"cached_tokens":64}}}"#,
                usage(120, 64),
            ),
            // Gemini: a streamGenerateContent chunk.
            (
                r#"{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":71,"candidatesTokenCount":2,"totalTokenCount":73},"modelVersion":"gemini-2.5-flash"}"#,
                usage(71, 0),
            ),
        ];
        for (json, expected) in cases {
            assert_eq!(numbers(parse_usage(json).unwrap()), numbers(expected), "{json}");
        }
        let refused = [
            (r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":15}}"#, "message_start"),
            (
                r#"{"type":"message_delta","delta":{},"usage":{"input_tokens":null,"cache_read_input_tokens":null,"output_tokens":15}}"#,
                "message_start",
            ),
            (
                r#"{"type":"response.created","response":{"id":"resp_1","status":"in_progress","usage":null}}"#,
                "'response.usage' is null",
            ),
            (r#"{"object":"chat.completion.chunk","choices":[{"delta":{"content":"Hi"}}],"usage":null}"#, "'usage' is null"),
        ];
        for (json, needle) in refused {
            let err = parse_usage(json).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidArg, "{json}");
            assert!(err.message().contains(needle), "{json}: {}", err.message());
        }
    }

    /// Issue 26: a window in one format refuses another provider's usage, so each shape
    /// names the formats it belongs to.
    #[test]
    fn shapes_name_their_formats() {
        use Format::*;
        let cases: [(&str, &[Format]); 7] = [
            (r#"{"prompt_tokens":5,"completion_tokens":1}"#, &[OpenAiChat]),
            (r#"{"usageMetadata":{"promptTokenCount":5}}"#, &[Gemini]),
            (r#"{"input_tokens":5,"cache_read_input_tokens":0}"#, &[Anthropic]),
            (r#"{"input_tokens":5,"output_tokens":1}"#, &[Anthropic, OpenAiResponses]),
            (r#"{"input_tokens":5,"input_tokens_details":{"cached_tokens":0}}"#, &[OpenAiResponses]),
            (r#"{"input_tokens":5,"output_tokens_details":{"reasoning_tokens":0}}"#, &[OpenAiResponses]),
            (r#"{"type":"message_start","message":{"usage":{"input_tokens":5,"cache_creation_input_tokens":0}}}"#, &[Anthropic]),
        ];
        for (json, formats) in cases {
            assert_eq!(parse_usage(json).unwrap().formats, FormatSet::of(formats), "{json}");
        }
    }

    #[test]
    fn bad_usage_names_the_field() {
        let cases = [
            (r#"{"prompt_tokens":-3}"#, ErrorKind::InvalidArg, "prompt_tokens"),
            (
                r#"{"prompt_tokens":10,"prompt_tokens_details":{"cached_tokens":-1}}"#,
                ErrorKind::InvalidArg,
                "prompt_tokens_details.cached_tokens",
            ),
            (
                r#"{"usage":{"input_tokens":1,"cache_read_input_tokens":-5}}"#,
                ErrorKind::InvalidArg,
                "usage.cache_read_input_tokens",
            ),
            (r#"{"cache_read_input_tokens":5}"#, ErrorKind::InvalidArg, "input_tokens"),
            (r#"{"usageMetadata":{"promptTokenCount":"many"}}"#, ErrorKind::InvalidArg, "usageMetadata.promptTokenCount"),
            (r#"{"prompt_tokens":10,"prompt_tokens_details":{"cached_tokens":11}}"#, ErrorKind::InvalidArg, "exceed"),
            (r#"{"tokens":10}"#, ErrorKind::InvalidArg, "unknown shape"),
            (r#"[1]"#, ErrorKind::InvalidArg, "object"),
            (r#"{"prompt_tokens":"#, ErrorKind::Parse, "JSON"),
            (r#"{"prompt_tokens":1.5}"#, ErrorKind::InvalidArg, "prompt_tokens"),
        ];
        for (json, kind, needle) in cases {
            let err = parse_usage(json).unwrap_err();
            assert_eq!(err.kind(), kind, "{json}");
            assert!(err.message().contains(needle), "{json}: {}", err.message());
        }
    }
}
