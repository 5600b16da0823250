//! Cutting the long pieces of a character-level model into words, where that provably
//! changes no count.
//!
//! Gemma 3's `tokenizer.json` has no pre-tokenizer that splits (its spaces become `▁` first),
//! so a whole message is one piece, merged as one. Merging only ever joins two adjacent
//! symbols into the token their strings spell together. A cut in the text between a
//! character `c` and a `▁` can therefore only be crossed by a merge of a left token ending
//! in `c` with a right token starting with `▁`. The loader lists the `c` of every such merge
//! in the file (Gemma 3 has one: `>` + `▁</`); before every other `▁` that follows a
//! character other than `▁`, no merge can ever join the two sides, so the words on either
//! side merge exactly as they would in the whole piece (merging picks the best pair anywhere,
//! but pairs on different sides never interact). Counting them apart gives the same total,
//! lets each word be remembered (see `memo`), and keeps every merge short.

/// The meta-symbol SentencePiece-style vocabularies write spaces as.
pub(super) const SPACE: char = '▁';

/// Where a piece may be cut: before a `▁` that follows a character no merge joins to it.
#[derive(Debug)]
pub(super) struct Boundary {
    /// Characters that some merge joins to a following `▁`-token.
    blocked: Vec<char>,
}

/// What the loader learns from the merges for [`Boundary`].
#[derive(Debug, Default)]
pub(super) struct Crossings {
    /// Last characters of left tokens merged with a right token starting with `▁`.
    blocked: Vec<char>,
    /// A byte-fallback or unknown token (`<...>`) is such a left token: the character before a
    /// `▁` is not always what the left token ends with, so no cut is safe.
    unsafe_cut: bool,
}

impl Crossings {
    /// Notes the merge of `left` then `right` (token strings as the file writes them, UTF-8).
    #[inline]
    pub(super) fn note(&mut self, left: &[u8], right: &[u8]) {
        if !right.starts_with(SPACE.encode_utf8(&mut [0; 4]).as_bytes()) {
            return;
        }
        // The last character: from the last byte that does not continue one.
        let start = left.iter().rposition(|&b| b & 0xC0 != 0x80).unwrap_or(0);
        let Some(last) = std::str::from_utf8(&left[start..]).ok().and_then(|s| s.chars().next()) else { return };
        if last == SPACE {
            return;
        }
        if left.starts_with(b"<") && left.ends_with(b">") {
            self.unsafe_cut = true;
        }
        if !self.blocked.contains(&last) {
            self.blocked.push(last);
        }
    }

    /// The boundary, when cutting is safe: `space_is_token` says `▁` is a token of its own
    /// (else a `▁` in the text is byte-fallback symbols that merges may join differently).
    pub(super) fn boundary(self, space_is_token: bool) -> Option<Boundary> {
        (space_is_token && !self.unsafe_cut).then_some(Boundary { blocked: self.blocked })
    }
}

impl Boundary {
    /// Calls `word` with the words of `piece`, in order (the piece itself when it has no
    /// cut).
    pub(super) fn for_each_word(&self, piece: &str, word: &mut dyn FnMut(&str)) {
        let mut start = 0;
        let mut previous = None;
        for (at, c) in piece.char_indices() {
            if c == SPACE && at > start && previous.is_some_and(|p| p != SPACE && !self.blocked.contains(&p)) {
                word(&piece[start..at]);
                start = at;
            }
            previous = Some(c);
        }
        if start < piece.len() {
            word(&piece[start..]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(boundary: &Boundary, piece: &str) -> Vec<String> {
        let mut out = Vec::new();
        boundary.for_each_word(piece, &mut |w| out.push(w.to_owned()));
        out
    }

    #[test]
    fn cuts_before_spaces_no_merge_crosses() {
        let mut crossings = Crossings::default();
        crossings.note(b">", "▁</".as_bytes());
        crossings.note(b"a", b"b");
        crossings.note("▁▁".as_bytes(), "▁".as_bytes());
        crossings.note("é".as_bytes(), "▁".as_bytes());
        let boundary = crossings.boundary(true).unwrap();
        assert_eq!(words(&boundary, "▁Hello▁world▁▁▁x"), ["▁Hello", "▁world", "▁▁▁x"]);
        assert_eq!(words(&boundary, "▁café▁x"), ["▁café▁x"]);
        // No cut after a `>`: a merge joins it to `▁</`.
        assert_eq!(words(&boundary, "<b>▁</b>▁y"), ["<b>▁</b>▁y"]);
        assert_eq!(words(&boundary, "<b>▁</b>x▁y"), ["<b>▁</b>x", "▁y"]);
        assert_eq!(words(&boundary, "x"), ["x"]);
        assert_eq!(words(&boundary, ""), Vec::<String>::new());
        let mut bytes = Crossings::default();
        bytes.note(b"<0xE2>", "▁a".as_bytes());
        assert!(bytes.boundary(true).is_none());
        assert!(Crossings::default().boundary(false).is_none());
    }
}
