//! Tokens of tool (function) definitions, for `set_overhead`.

use super::parts::{FieldError, compact, index, join, object, optional_array, optional_str, required_str};
use crate::error::{Error, ErrorKind, Result};
use crate::tokens::{Count, Model};
use serde_json::{Map, Value};

/// Counts an array of tool definitions (or one definition) in any of the providers' shapes:
/// OpenAI Chat (`{"type":"function","function":{…}}`), OpenAI Responses (`{"type":"function",
/// "name":…}`), Anthropic (`{"name","description","input_schema"}`) and Gemini
/// (`{"functionDeclarations":[…]}`). Each function counts its name, description and compact
/// parameter schema, joined by newlines; a provider's built-in tool (`{"type":"web_search"}`)
/// counts its compact JSON.
///
/// Anything else is refused naming what was expected: a whole request body (point to its
/// `tools`), an object of none of these shapes.
///
/// Always an estimate: providers render definitions into the prompt in ways they do not
/// publish, so the count is a floor rather than the provider's figure.
pub fn count_tools(model: &Model, json: &str) -> Result<Count> {
    let value: Value = crate::strict_json::parse(json).map_err(|e| Error::new(ErrorKind::Parse, format!("invalid JSON: {e}")))?;
    let tools = match &value {
        Value::Array(tools) => tools.as_slice(),
        Value::Object(body) if BODY_KEYS.iter().any(|key| body.contains_key(*key)) => {
            return Err(Error::invalid_arg(format!(
                "tool definitions: this object has '{}', as a request body has: pass the value of its \"tools\" (an array of definitions)",
                BODY_KEYS.iter().find(|key| body.contains_key(**key)).unwrap_or(&"tools")
            )));
        }
        Value::Object(_) => std::slice::from_ref(&value),
        _ => return Err(Error::invalid_arg("tool definitions must be a JSON array or object")),
    };
    let mut total = Count::estimate(0);
    for (i, tool) in tools.iter().enumerate() {
        let path = index("tools", i);
        let tokens = count_tool(model, tool, &path)
            .map_err(|e| Error::invalid_arg(format!("tool definitions, field '{}': {}", e.field, e.problem)))?;
        total = total.plus(tokens);
    }
    Ok(Count::estimate(total.tokens))
}

fn count_tool(model: &Model, tool: &Value, path: &str) -> std::result::Result<Count, FieldError> {
    let object = object(tool, path)?;
    if let Some(Value::Object(function)) = object.get("function") {
        return declaration(model, function, &join(path, "function"));
    }
    if object.contains_key("functionDeclarations") {
        let declarations_path = join(path, "functionDeclarations");
        let mut total = Count::estimate(0);
        for (i, declaration_value) in optional_array(object, "functionDeclarations", path)?.iter().enumerate() {
            let declaration_path = index(&declarations_path, i);
            total = total.plus(declaration(model, self::object(declaration_value, &declaration_path)?, &declaration_path)?);
        }
        return Ok(total);
    }
    if object.contains_key("name") && matches!(optional_str(object, "type", path)?, None | Some("function" | "custom")) {
        return declaration(model, object, path);
    }
    // A provider's built-in tool: OpenAI's and Anthropic's name a type
    // (`{"type":"web_search"}`, `{"type":"bash_20250124","name":"bash"}`), Gemini's are one
    // key (`{"googleSearch":{}}`).
    let gemini_builtin = object.len() == 1 && object.keys().all(|key| GEMINI_BUILTINS.contains(&key.as_str()));
    if optional_str(object, "type", path)?.is_some() || gemini_builtin {
        return Ok(model.count(&compact(tool)));
    }
    Err(FieldError::new(
        path,
        "is not a tool definition: expected {\"type\":\"function\",\"function\":{...}} (OpenAI Chat), \
         {\"type\":\"function\",\"name\":...} (OpenAI Responses), {\"name\":...,\"input_schema\":{...}} (Anthropic), \
         {\"functionDeclarations\":[...]} (Gemini) or a provider's built-in tool ({\"type\":\"web_search\"}, {\"googleSearch\":{}})",
    ))
}

/// Keys of a request body, which tool definitions never have at their top level.
const BODY_KEYS: [&str; 5] = ["tools", "messages", "contents", "input", "model"];

/// Gemini's built-in tools, in both spellings its API accepts.
const GEMINI_BUILTINS: [&str; 16] = [
    "googleSearch",
    "google_search",
    "googleSearchRetrieval",
    "google_search_retrieval",
    "codeExecution",
    "code_execution",
    "urlContext",
    "url_context",
    "retrieval",
    "computerUse",
    "computer_use",
    "fileSearch",
    "file_search",
    "googleMaps",
    "google_maps",
    "enterpriseWebSearch",
];

/// A function declaration: name, description and parameter schema.
fn declaration(model: &Model, function: &Map<String, Value>, path: &str) -> std::result::Result<Count, FieldError> {
    let name = required_str(function, "name", path)?;
    let description = optional_str(function, "description", path)?.unwrap_or_default();
    let schema = ["parameters", "input_schema", "parametersJsonSchema"]
        .iter()
        .find_map(|key| function.get(*key))
        .map(compact)
        .unwrap_or_default();
    Ok(model.count(&[name, description, &schema].join("\n")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_counts_name_description_and_schema() {
        let model = Model::resolve("gpt-4o");
        let schema = r#"{"type":"object","properties":{"dir":{"type":"string"}}}"#;
        let expected = model.count(&format!("ls\nList a directory\n{schema}")).tokens;
        let shapes = [
            format!(
                r#"[{{"type":"function","function":{{"name":"ls","description":"List a directory","parameters":{schema}}}}}]"#
            ),
            format!(r#"[{{"type":"function","name":"ls","description":"List a directory","parameters":{schema}}}]"#),
            format!(r#"[{{"name":"ls","description":"List a directory","input_schema":{schema}}}]"#),
            format!(r#"[{{"functionDeclarations":[{{"name":"ls","description":"List a directory","parameters":{schema}}}]}}]"#),
            format!(r#"{{"name":"ls","description":"List a directory","input_schema":{schema}}}"#),
        ];
        for json in shapes {
            assert_eq!(count_tools(&model, &json).unwrap(), Count::estimate(expected), "{json}");
        }
        let two =
            format!(r#"[{{"name":"ls","description":"List a directory","input_schema":{schema}}},{{"type":"web_search"}}]"#);
        let builtin = model.count(r#"{"type":"web_search"}"#).tokens;
        assert_eq!(count_tools(&model, &two).unwrap().tokens, expected + builtin);
    }

    #[test]
    fn errors_name_the_field() {
        let model = Model::resolve("gpt-4o");
        let err = count_tools(&model, r#"[{"type":"function","function":{"description":"x"}}]"#).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArg);
        assert!(err.message().contains("tools[0].function.name"), "{}", err.message());
        assert_eq!(count_tools(&model, "[1").unwrap_err().kind(), ErrorKind::Parse);
        assert!(count_tools(&model, "[3]").unwrap_err().message().contains("tools[0]"));
        assert_eq!(count_tools(&model, "7").unwrap_err().kind(), ErrorKind::InvalidArg);
    }

    /// Any object was counted as a built-in tool: a whole request body, `{"hello":"world"}`.
    #[test]
    fn what_is_not_a_tool_definition_is_refused_naming_what_was_expected() {
        let model = Model::resolve("gpt-4o");
        let body = r#"{"model":"gpt-4o","messages":[],"tools":[{"type":"function","function":{"name":"ls"}}]}"#;
        let err = count_tools(&model, body).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArg);
        assert!(err.message().contains("request body") && err.message().contains("\"tools\""), "{}", err.message());
        for json in [r#"{"hello":"world"}"#, r#"[{"hello":"world"}]"#, r#"[{"description":"no name"}]"#, "[[]]"] {
            let err = count_tools(&model, json).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidArg, "{json}");
            assert!(err.message().contains("tools[0]"), "{json}: {}", err.message());
        }
        assert!(count_tools(&model, r#"[{"hello":"world"}]"#).unwrap_err().message().contains("expected {\"type\":\"function\""));
        // Built-in tools of each provider still count.
        for json in [
            r#"[{"type":"web_search"}]"#,
            r#"[{"type":"bash_20250124","name":"bash"}]"#,
            r#"[{"googleSearch":{}}]"#,
            r#"[{"code_execution":{}}]"#,
        ] {
            assert!(count_tools(&model, json).unwrap().tokens > 0, "{json}");
        }
    }
}
