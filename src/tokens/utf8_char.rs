//! The two- and three-byte UTF-8 characters a BPE engine may start merging from whole (see
//! `bpe::vocab` and `loaded::whole_chars`), found in a piece's bytes.

/// Bytes that continue a UTF-8 character.
const CONTINUATION: std::ops::RangeInclusive<u8> = 0x80..=0xBF;

/// The code point and the length of the character of two or three bytes at `piece[at]`, when
/// one starts there (well formed, not over-long); `None` for any other byte.
#[inline(always)]
pub(crate) fn two_or_three_byte_char(piece: &[u8], at: usize) -> Option<(u32, usize)> {
    let lead = *piece.get(at)?;
    let low_bits =
        |offset: usize| piece.get(at + offset).filter(|byte| CONTINUATION.contains(byte)).map(|&byte| u32::from(byte & 0x3F));
    match lead {
        0xC2..=0xDF => Some((u32::from(lead & 0x1F) << 6 | low_bits(1)?, 2)),
        0xE0..=0xEF => {
            let code_point = u32::from(lead & 0x0F) << 12 | low_bits(1)? << 6 | low_bits(2)?;
            // An over-long encoding is not the character's bytes.
            (code_point >= 0x800).then_some((code_point, 3))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::two_or_three_byte_char;

    #[test]
    fn decodes_what_std_decodes_and_nothing_else() {
        for c in ['é', 'ж', '中', 'ア', '한', '\u{800}', '\u{ffff}'] {
            let mut bytes = [0u8; 4];
            let text = c.encode_utf8(&mut bytes).as_bytes();
            assert_eq!(two_or_three_byte_char(text, 0), Some((u32::from(c), text.len())), "{c}");
        }
        for bytes in [&b"a"[..], "😀".as_bytes(), &[0xC3], &[0xE0, 0x80, 0x80], &[0xC0, 0x80], &[0x80]] {
            assert_eq!(two_or_three_byte_char(bytes, 0), None, "{bytes:?}");
        }
    }
}
