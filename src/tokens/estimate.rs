//! Estimates for models whose tokenizer is not public.

/// Estimated tokens of `text`: one token per four bytes of UTF-8, rounded up.
pub fn bytes_over_four(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}
