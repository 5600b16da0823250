//! The BPE model of a loaded tokenizer: its vocabulary, its merges, and how a piece of text
//! becomes the symbols merging starts from.

use super::merge::Merges;
use super::vocab::Vocab;
use super::words::Boundary;

/// What merging starts from.
#[derive(Debug)]
pub(super) enum Units {
    /// Byte-level: every byte of the piece is a symbol (the token of that byte).
    Bytes(Box<[u32; 256]>),
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
    pub(super) merges: Merges,
    /// A piece that is itself a token counts one without merging (tiktoken always;
    /// Hugging Face with `ignore_merges`).
    pub(super) whole_piece: bool,
    pub(super) units: Units,
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

    /// Number of tokens of one piece (from the pre-tokenizer).
    pub(super) fn count(&self, piece: &[u8], symbols: &mut Vec<u32>) -> usize {
        if piece.is_empty() {
            return 0;
        }
        if self.whole_piece && self.vocab.get(piece).is_some() {
            return 1;
        }
        symbols.clear();
        match &self.units {
            Units::Bytes(tokens) => symbols.extend(piece.iter().map(|&b| tokens[usize::from(b)])),
            Units::Chars { byte_fallback, unk } => self.char_symbols(piece, byte_fallback.as_deref(), *unk, symbols),
        }
        self.merges.count(symbols)
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
