//! Folding raw provider text into one canonical form that the wording rules
//! can match with simple patterns.
//!
//! The same message reaches us as a plain sentence, as a JSON string value,
//! as a JSON body escaped once more inside a log line or another JSON
//! string, wrapped over several terminal lines, or with Markdown backticks
//! around identifiers. Normalizing removes those differences:
//! - the input is cut to [`MAX_SCAN_BYTES`] (at a character boundary);
//! - backslash escapes are undone: any run of backslashes before `n`, `r`
//!   or `t` becomes a space, before `uXXXX` becomes that character, and is
//!   dropped before anything else (so `\"` and `\\\"` both become `"`);
//! - backticks are dropped;
//! - every run of whitespace becomes a single space, trimmed at both ends;
//! - ASCII letters are lowercased (other characters are kept as they are).

/// How many bytes of the input are examined. Error bodies are a few KiB at
/// most; this bounds the work on pathological inputs such as whole logs.
const MAX_SCAN_BYTES: usize = 256 * 1024;

/// Return the canonical form of `text` described in the module docs.
pub(super) fn normalize(text: &str) -> String {
    let text = bounded(text);
    let mut out = String::with_capacity(text.len());
    let mut pending_space = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let folded = if c == '\\' {
            while chars.peek() == Some(&'\\') {
                chars.next();
            }
            match chars.peek().copied() {
                Some('n' | 'r' | 't') => {
                    chars.next();
                    Some(' ')
                }
                Some('u') => unicode_escape(&mut chars),
                _ => None,
            }
        } else if c == '`' {
            None
        } else {
            Some(c)
        };
        match folded {
            Some(c) if c.is_whitespace() => pending_space = true,
            Some(c) => {
                if pending_space && !out.is_empty() {
                    out.push(' ');
                }
                pending_space = false;
                out.push(c.to_ascii_lowercase());
            }
            None => {}
        }
    }
    out
}

/// The longest prefix of `text` of at most [`MAX_SCAN_BYTES`] bytes that
/// ends on a character boundary.
fn bounded(text: &str) -> &str {
    if text.len() <= MAX_SCAN_BYTES {
        return text;
    }
    let mut end = MAX_SCAN_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Decode `uXXXX` following a backslash. On success the escape is consumed
/// and its character returned; otherwise nothing is consumed and `None`
/// returned, so the backslash is simply dropped.
fn unicode_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<char> {
    let mut lookahead = chars.clone();
    lookahead.next(); // the 'u'
    let mut code = 0u32;
    for _ in 0..4 {
        code = code * 16 + lookahead.next()?.to_digit(16)?;
    }
    let decoded = char::from_u32(code)?;
    *chars = lookahead;
    Some(decoded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_case_whitespace_and_backticks() {
        assert_eq!(normalize("  messages.2:\n    `tool_use` ids   were\tfound  "), "messages.2: tool_use ids were found");
    }

    #[test]
    fn undoes_single_and_double_escaping() {
        assert_eq!(normalize(r#"{\"code\":\"X\"}"#), r#"{"code":"x"}"#);
        assert_eq!(normalize(r#"{\\\"code\\\": 1}"#), r#"{"code": 1}"#);
        assert_eq!(normalize(r"a\nb\\n c"), "a b c");
    }

    #[test]
    fn decodes_unicode_escapes_and_tolerates_bad_ones() {
        assert_eq!(normalize(r"model\u0027s"), "model's");
        assert_eq!(normalize(r"\u00E9t\u00e9"), "été");
        assert_eq!(normalize(r"bad \uZZ12 \ud800 end\u12"), "bad uzz12 ud800 endu12");
        assert_eq!(normalize("trailing\\"), "trailing");
    }

    #[test]
    fn keeps_non_ascii_and_only_lowercases_ascii() {
        assert_eq!(normalize("ÉRROR Ünïcode 上下文"), "Érror Ünïcode 上下文");
    }

    #[test]
    fn bounds_input_on_a_char_boundary() {
        let mut text = "a".repeat(MAX_SCAN_BYTES - 1);
        text.push('é'); // two bytes straddling the bound
        text.push_str("tail");
        let out = normalize(&text);
        assert_eq!(out.len(), MAX_SCAN_BYTES - 1);
        assert!(out.bytes().all(|b| b == b'a'));
    }
}
