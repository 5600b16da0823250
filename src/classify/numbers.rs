//! Reading one token count out of matched text.

/// Expands to a regex fragment (a string literal, for `concat!`) matching
/// one token count as one capture group: either digits grouped by commas in
/// threes (`128,000`) or a plain digit run. Only ASCII digits, so digits of
/// other scripts never reach the parser.
macro_rules! count {
    () => {
        "([0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)"
    };
}
pub(super) use count;

/// Parse a count matched by [`count!`]: commas are dropped, and a value that
/// does not fit in `i64` yields `None` rather than a wrong number.
pub(super) fn parse_count(digits: &str) -> Option<i64> {
    let mut value: i64 = 0;
    let mut seen_digit = false;
    for b in digits.bytes() {
        match b {
            b',' => {}
            b'0'..=b'9' => {
                value = value.checked_mul(10)?.checked_add(i64::from(b - b'0'))?;
                seen_digit = true;
            }
            _ => return None,
        }
    }
    seen_digit.then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex::Regex;

    #[test]
    fn parses_plain_and_grouped_counts() {
        assert_eq!(parse_count("130512"), Some(130_512));
        assert_eq!(parse_count("128,000"), Some(128_000));
        assert_eq!(parse_count("1,048,576"), Some(1_048_576));
        assert_eq!(parse_count("0"), Some(0));
    }

    #[test]
    fn rejects_overflow_and_junk() {
        assert_eq!(parse_count("9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_count("9223372036854775808"), None);
        assert_eq!(parse_count("99999999999999999999999999"), None);
        assert_eq!(parse_count(""), None);
        assert_eq!(parse_count(","), None);
        assert_eq!(parse_count("12a"), None);
        assert_eq!(parse_count("١٢٣"), None);
    }

    #[test]
    fn fragment_matches_whole_counts_only() {
        let re = Regex::new(concat!("^", count!(), "$")).unwrap();
        for ok in ["7", "4096", "128,000", "1,048,576"] {
            assert!(re.is_match(ok), "{ok}");
        }
        for bad in ["12,34", "1,0000", ",100", "1 000", "١٢٣"] {
            assert!(!re.is_match(bad), "{bad}");
        }
    }
}
