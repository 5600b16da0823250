//! The byte-level alphabet of GPT-2 style `tokenizer.json` files: every byte is written as
//! one printable character (`Ġ` for a space), so vocabularies and merges are text. Loading
//! turns those strings back into the bytes they stand for; counting then works on the
//! text's own UTF-8 bytes.

/// The character standing for each byte.
pub(super) fn byte_chars() -> [char; 256] {
    let mut chars = ['\0'; 256];
    let mut next = 256u32;
    for byte in 0..=255u8 {
        let printable = matches!(byte, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
        chars[usize::from(byte)] = if printable {
            char::from(byte)
        } else {
            let c = char::from_u32(next).unwrap_or('\0');
            next += 1;
            c
        };
    }
    chars
}

/// Decodes strings of the byte-level alphabet back to bytes.
pub(super) struct ByteAlphabet {
    /// Byte of each character below U+0144 (the alphabet's largest), or `None`.
    bytes: [Option<u8>; 0x144],
}

impl ByteAlphabet {
    pub(super) fn new() -> ByteAlphabet {
        let mut bytes = [None; 0x144];
        for (byte, c) in byte_chars().into_iter().enumerate() {
            bytes[c as usize] = Some(byte as u8);
        }
        ByteAlphabet { bytes }
    }

    /// Appends the bytes `text` stands for to `out`; false (with `out` partly written) if a
    /// character is outside the alphabet or `text` is not UTF-8.
    pub(super) fn decode_into(&self, text: &[u8], out: &mut Vec<u8>) -> bool {
        let mut at = 0;
        while let Some(&first) = text.get(at) {
            // The alphabet's characters are below U+0800: one or two bytes long.
            let (c, len) = match (first, text.get(at + 1)) {
                (0..=0x7F, _) => (usize::from(first), 1),
                // Only the shortest form, with a continuation byte: `text` may not be UTF-8.
                (0xC2..=0xDF, Some(&second)) if second & 0xC0 == 0x80 => {
                    (usize::from(first & 0x1F) << 6 | usize::from(second & 0x3F), 2)
                }
                _ => return false,
            };
            match self.bytes.get(c).copied().flatten() {
                Some(byte) => out.push(byte),
                None => return false,
            }
            at += len;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_alphabet_is_a_bijection_with_the_familiar_letters() {
        let chars = byte_chars();
        assert_eq!(chars[usize::from(b' ')], 'Ġ');
        assert_eq!(chars[usize::from(b'\n')], 'Ċ');
        assert_eq!(chars[usize::from(b'a')], 'a');
        let alphabet = ByteAlphabet::new();
        let all: String = chars.iter().collect();
        let mut bytes = Vec::new();
        assert!(alphabet.decode_into(all.as_bytes(), &mut bytes));
        assert_eq!(bytes, (0..=255u8).collect::<Vec<u8>>());
        assert!(!alphabet.decode_into("<|x|>▁".as_bytes(), &mut bytes));
        assert!(!alphabet.decode_into("Ġ▁".as_bytes(), &mut bytes));
        assert!(
            !alphabet.decode_into("\u{144}".as_bytes(), &mut bytes) && !alphabet.decode_into("é\u{AD}".as_bytes(), &mut bytes)
        );
    }
}
