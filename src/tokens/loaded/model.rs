//! The BPE model of a loaded tokenizer: its vocabulary, how two symbols merge, and how a
//! piece of text becomes the symbols merging starts from.

use super::merge::{self, JoinCache, Merges, NONE, Rule};
use super::vocab::Vocab;
use super::whole_chars::WholeChars;
use super::words::Boundary;

/// How symbols merge.
#[derive(Debug)]
pub(super) enum Merging {
    /// A `tokenizer.json`: the pairs its `merges` list, starting from `units`.
    Listed { merges: Merges, units: Units },
    /// A ranks file: starting from the piece's bytes, any two adjacent tokens whose bytes
    /// join into a token merge, the lowest joined rank first (the token's id is its rank).
    /// The first merges of every piece join two bytes: their ranks are in a table of their
    /// own (`first << 8 | second`, see [`Vocab::two_byte_ids`]), small enough to stay in
    /// the cache. A character that `whole` allows starts as one span of its bytes.
    Ranks { two_bytes: Box<[u32]>, whole: WholeChars },
}

/// What merging a `tokenizer.json`'s listed pairs starts from.
#[derive(Debug)]
pub(super) enum Units {
    /// Byte-level: every byte of the piece is a symbol (the token of that byte), or a
    /// character of it where `whole` allows (the token its bytes merge into).
    Bytes { tokens: Box<[u32; 256]>, whole: WholeChars },
    /// Character-level (SentencePiece-style BPE in a `tokenizer.json`): every character
    /// that is a token is a symbol; any other becomes its bytes' `<0xXX>` tokens when the
    /// vocabulary has them (byte fallback), else the unknown token (consecutive ones fused
    /// when `fuse_unk`), else nothing.
    Chars {
        /// The `<0xXX>` token of every byte, when byte fallback is on.
        byte_fallback: Option<Box<[u32; 256]>>,
        /// The unknown token and whether consecutive unknown characters fuse into one.
        unk: Option<(u32, bool)>,
    },
}

/// A BPE model.
#[derive(Debug)]
pub(super) struct Bpe {
    /// Token bytes (the text's own UTF-8 bytes) to token id.
    pub(super) vocab: Vocab,
    pub(super) merging: Merging,
    /// A piece that is itself a token counts one without merging (tiktoken always;
    /// Hugging Face with `ignore_merges`).
    pub(super) whole_piece: bool,
    /// Where a piece may be cut into words that merge apart (character-level models whose
    /// merges allow it).
    pub(super) words: Option<Boundary>,
}

impl Bpe {
    /// Calls `word` with the parts of `piece` that merge independently: its words where
    /// [`Bpe::words`] allows cutting, else the piece itself.
    pub(super) fn for_each_word(&self, piece: &str, word: &mut dyn FnMut(&str)) {
        match &self.words {
            Some(boundary) => boundary.for_each_word(piece, word),
            None => word(piece),
        }
    }

    /// Number of tokens of one piece (from the pre-tokenizer); `joins` remembers the
    /// listed merges' answers (this tokenizer's only).
    pub(super) fn count(&self, piece: &[u8], symbols: &mut Vec<u32>, joins: &JoinCache) -> usize {
        match piece.len() {
            0 => return 0,
            // One byte is one symbol, its byte's token (byte-level, ranks): nothing to merge.
            1 if !matches!(self.merging, Merging::Listed { units: Units::Chars { .. }, .. }) => return 1,
            _ => {}
        }
        if self.whole_piece && self.vocab.get(piece).is_some() {
            return 1;
        }
        let (merges, units) = match &self.merging {
            Merging::Listed { merges, units } => (merges, units),
            Merging::Ranks { two_bytes, whole } => {
                let joined = Joined { vocab: &self.vocab, two_bytes, piece };
                if whole.is_empty() || piece.is_ascii() || u32::try_from(piece.len()).is_err() {
                    return merge::count(&joined, piece.len(), |i| (i, i + 1));
                }
                // The spans' starts, then the piece's end.
                symbols.clear();
                whole.for_each_symbol(piece, |at, _| symbols.push(at as u32));
                symbols.push(piece.len() as u32);
                return merge::count(&joined, symbols.len() - 1, |i| (symbols[i] as usize, symbols[i + 1] as usize));
            }
        };
        symbols.clear();
        match units {
            Units::Bytes { tokens, whole } => whole.symbols(piece, tokens, symbols),
            Units::Chars { byte_fallback, unk } => self.char_symbols(piece, byte_fallback.as_deref(), *unk, symbols),
        }
        merge::count(&joins.over(merges), symbols.len(), |i| symbols[i])
    }

    fn char_symbols(&self, piece: &[u8], byte_fallback: Option<&[u32; 256]>, unk: Option<(u32, bool)>, symbols: &mut Vec<u32>) {
        let mut at = 0;
        let mut after_unk = false;
        while at < piece.len() {
            let len = utf8_len(piece[at]).min(piece.len() - at);
            let bytes = &piece[at..at + len];
            at += len;
            if let Some(id) = self.vocab.get(bytes) {
                symbols.push(id);
                after_unk = false;
            } else if let Some(fallback) = byte_fallback {
                symbols.extend(bytes.iter().map(|&b| fallback[usize::from(b)]));
            } else if let Some((id, fuse)) = unk {
                if !(fuse && after_unk) {
                    symbols.push(id);
                }
                after_unk = true;
            }
        }
    }
}

/// The merge rule of a ranks file within one piece: a symbol is a span of the piece's bytes
/// (start, end), and two spans merge with the rank of the bytes they cover together.
struct Joined<'a> {
    vocab: &'a Vocab,
    two_bytes: &'a [u32],
    piece: &'a [u8],
}

impl Rule for Joined<'_> {
    type Symbol = (usize, usize);

    #[inline]
    fn key(&self, left: (usize, usize), right: (usize, usize)) -> u64 {
        match &self.piece[left.0..right.1] {
            &[first, second] => match self.two_bytes[usize::from(first) << 8 | usize::from(second)] {
                u32::MAX => NONE,
                id => u64::from(id),
            },
            bytes => self.vocab.get(bytes).map_or(NONE, u64::from),
        }
    }

    #[inline]
    fn join(&self, left: (usize, usize), right: (usize, usize), _: u64) -> (usize, usize) {
        (left.0, right.1)
    }
}

/// Length of the UTF-8 sequence a leading byte starts.
#[inline]
fn utf8_len(first: u8) -> usize {
    match first {
        0xF0.. => 4,
        0xE0.. => 3,
        0xC0.. => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::super::merge::tests::check;
    use super::super::ranks::bpe_of_ranks;
    use super::super::vocab::Tokens;
    use super::super::whole_chars::tests::{random_text, random_vocabulary};
    use super::*;
    use crate::test_rng::XorShift;

    /// tiktoken's rule written out plainly over byte strings: join the adjacent pair whose
    /// bytes make the lowest-ranked token, the leftmost on ties, until none does.
    fn reference(ranks: &HashMap<Vec<u8>, u32>, piece: &[u8]) -> usize {
        let mut parts: Vec<Vec<u8>> = piece.iter().map(|&b| vec![b]).collect();
        loop {
            let best = (0..parts.len().saturating_sub(1))
                .filter_map(|i| ranks.get(&[parts[i].as_slice(), &parts[i + 1]].concat()).map(|&rank| (rank, i)))
                .min();
            let Some((_, i)) = best else { return parts.len() };
            let right = parts.remove(i + 1);
            parts[i].extend(right);
        }
    }

    #[test]
    fn ranks_merge_like_tiktoken() {
        let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
        let mut random = move |below: usize| rng.below(below);
        for _ in 0..20 {
            // Every byte, then tokens joined from two earlier ones over "abcd" (some longer
            // than the 15 bytes a vocabulary key holds).
            let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
            let mut joinable: Vec<usize> = b"abcd".iter().map(|&b| usize::from(b)).collect();
            while tokens.len() < 700 {
                let joined =
                    [tokens[joinable[random(joinable.len())]].as_slice(), &tokens[joinable[random(joinable.len())]]].concat();
                if joined.len() <= 24 && !tokens.contains(&joined) {
                    joinable.push(tokens.len());
                    tokens.push(joined);
                }
            }
            let mut list = Tokens::with_capacity(0, 0);
            for (rank, token) in tokens.iter().enumerate() {
                list.push(token, rank as u32);
            }
            let vocab = list.index().unwrap();
            let two_bytes = vocab.two_byte_ids();
            let ranks: HashMap<Vec<u8>, u32> = tokens.iter().enumerate().map(|(rank, t)| (t.clone(), rank as u32)).collect();
            for len in [0, 1, 2, 3, 7, 16, 17, 20, 63, 64, 65, 200, 256, 257, 400] {
                let piece: Vec<u8> = (0..len).map(|_| b"abcd"[random(4)]).collect();
                let joined = Joined { vocab: &vocab, two_bytes: &two_bytes, piece: &piece };
                let spans: Vec<(usize, usize)> = (0..len).map(|i| (i, i + 1)).collect();
                assert_eq!(check(&joined, &spans), reference(&ranks, &piece), "{:?}", String::from_utf8_lossy(&piece));
            }
        }
    }

    /// A ranks file's pieces count as tiktoken counts them (merging from bytes) when merging
    /// starts from whole characters where the table allows: on random vocabularies over two-
    /// and three-byte characters and ASCII whose tokens often join parts of a character with
    /// a neighbour, ranked in a random order (a token may rank before its parts), on random
    /// text of those characters; and many characters do start whole.
    #[test]
    fn ranks_starting_from_whole_characters_count_as_tiktoken() {
        let mut rng = XorShift(0x7A_4C5E_ED0F_C4A3);
        let (mut started_whole, mut chars) = (0, 0);
        for round in 0..300 {
            let (tokens, _) = random_vocabulary(&mut rng, round);
            let mut ranks: Vec<u32> = (0..tokens.len() as u32).collect();
            for i in (1..ranks.len()).rev() {
                ranks.swap(i, rng.below(i + 1));
            }
            let mut list = Tokens::with_capacity(0, 0);
            for (token, &rank) in tokens.iter().zip(&ranks) {
                list.push(token, rank);
            }
            let bpe = bpe_of_ranks(list.index().unwrap(), "test").unwrap();
            let Merging::Ranks { whole, .. } = &bpe.merging else { unreachable!() };
            let by_rank: HashMap<Vec<u8>, u32> = tokens.iter().cloned().zip(ranks.iter().copied()).collect();
            for _ in 0..30 {
                let text = random_text(&mut rng);
                let piece = text.as_bytes();
                let expected = if by_rank.contains_key(piece) { 1 } else { reference(&by_rank, piece) };
                let joins = JoinCache::new();
                assert_eq!(bpe.count(piece, &mut Vec::new(), &joins), expected, "round {round}: {text:?}");
                whole.for_each_symbol(piece, |_, whole| started_whole += usize::from(whole.is_some()));
                chars += text.chars().filter(|c| c.len_utf8() > 1).count();
            }
        }
        assert!(started_whole * 5 > chars, "{started_whole} of {chars} characters of two or three bytes started whole");
    }

    /// The table looks at merges of a three-byte character's token with its neighbour:
    /// "中" (built by ranks 10 and 30) may not start whole before "文" since "中文" ranks 20,
    /// or "中文字a" would count 3 ("中文", "字", "a") instead of tiktoken's 2 ("中",
    /// "文字a").
    #[test]
    fn ranks_keep_a_character_in_bytes_before_a_neighbour_its_token_joins() {
        let mut list = Tokens::with_capacity(0, 0);
        for byte in 0..=255u8 {
            list.push(&[byte], 1000 + u32::from(byte));
        }
        for (token, rank) in
            [("\u{E4}\u{B8}", 10), ("中", 30), ("\u{E6}\u{96}", 11), ("文", 12), ("\u{E5}\u{AD}", 13), ("字", 14)]
        {
            let bytes: Vec<u8> = if token.chars().count() == 2 { token.chars().map(|c| c as u8).collect() } else { token.into() };
            list.push(&bytes, rank);
        }
        for (token, rank) in [("中文", 20), ("文字", 25), ("文字a", 40)] {
            list.push(token.as_bytes(), rank);
        }
        let bpe = bpe_of_ranks(list.index().unwrap(), "test").unwrap();
        let mut whole = Vec::new();
        let Merging::Ranks { whole: table, .. } = &bpe.merging else { unreachable!() };
        table.for_each_symbol("中文字a".as_bytes(), |at, token| whole.push((at, token.is_some())));
        // ("文" starts whole; "字" does not, before an ASCII byte.)
        assert_eq!(whole, [(0, false), (1, false), (2, false), (3, true), (6, false), (7, false), (8, false), (9, false)]);
        assert_eq!(bpe.count("中文字a".as_bytes(), &mut Vec::new(), &JoinCache::new()), 2);
    }
}
