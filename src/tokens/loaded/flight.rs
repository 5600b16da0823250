//! Counting the pieces of a known split with several of them in flight, so that the memo's
//! lookups rarely wait for memory: its short table (2 MiB) is larger than the core's own
//! caches, and a lookup that waits for its line costs more than splitting a piece off.
//!
//! A piece of three to 24 bytes (the memo's short table) has its memo set prefetched when it is split
//! off; it is looked up [`ASK_AFTER`] such pieces later and counted (merged, on a miss)
//! [`DEPTH`] pieces later, when its slot is needed for a new piece, or at the end of the
//! text. Other pieces are counted at once. The total is the same in any order: a piece's
//! count depends only on its bytes, and the memo answers only for exactly those bytes (a
//! piece still in flight when its twin is looked up is merged twice, not miscounted). A
//! piece in flight is its memo key, which holds its bytes: pieces need not outlive their
//! push (a pre-tokenizer step may make them in a buffer of its own).

use super::memo::{INLINE, Pieces, ShortKey};

/// Short pieces in flight between being split off and being counted.
const DEPTH: usize = 8;
/// Short pieces split off between a short piece and its memo lookup.
const ASK_AFTER: usize = DEPTH / 2;

/// A short piece in flight: its memo key, and what the memo said.
#[derive(Clone, Copy, Default)]
struct Slot {
    key: ShortKey,
    /// `None` until asked; then the memo's answer.
    known: Option<Option<usize>>,
}

/// The pieces in flight, and the tokens counted so far.
#[derive(Default)]
pub(super) struct Flight {
    slots: [Slot; DEPTH],
    /// Short pieces taken so far.
    short: usize,
    tokens: usize,
}

impl Flight {
    /// Takes `piece`: counted with `count` (on the memo's miss) now or a few pieces later.
    #[inline]
    pub(super) fn push(&mut self, piece: &[u8], pieces: &mut Pieces, count: &mut dyn FnMut(&[u8]) -> usize) {
        let Some(key) = ShortKey::of(piece) else {
            self.tokens += pieces.count(piece, || count(piece));
            return;
        };
        pieces.prefetch(&key);
        let slot = self.short % DEPTH;
        if self.short >= DEPTH {
            self.settle(slot, pieces, count);
        }
        self.slots[slot] = Slot { key, known: None };
        if let Some(asked) = self.short.checked_sub(ASK_AFTER) {
            let asked = &mut self.slots[asked % DEPTH];
            asked.known = Some(pieces.short_count(&asked.key));
        }
        self.short += 1;
    }

    /// Counts what is still in flight and returns the tokens of every piece taken.
    pub(super) fn finish(mut self, pieces: &mut Pieces, count: &mut dyn FnMut(&[u8]) -> usize) -> usize {
        for k in self.short.saturating_sub(DEPTH)..self.short {
            self.settle(k % DEPTH, pieces, count);
        }
        self.tokens
    }

    /// Adds the count of the piece in `slot`: the memo's answer, else counted and remembered.
    #[inline(always)]
    fn settle(&mut self, slot: usize, pieces: &mut Pieces, count: &mut dyn FnMut(&[u8]) -> usize) {
        let Slot { key, known } = self.slots[slot];
        let known = known.unwrap_or_else(|| pieces.short_count(&key));
        self.tokens += known.unwrap_or_else(|| pieces.remember_short(&key, count(key.bytes(&mut [0; INLINE]))));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::XorShift;

    /// Counting pieces in flight (looked up and counted several pieces after they are split
    /// off, the memo filling meanwhile, the same piece missed twice while in flight, texts
    /// ending with 0 to more than DEPTH short pieces in flight) adds up the count of every
    /// piece exactly once, with each piece's own count: pieces of every length around the
    /// short table's limits, some repeated near each other, the text counted twice, the
    /// second time from a buffer overwritten after each push.
    #[test]
    fn every_piece_is_counted_once_with_its_own_count() {
        let words: Vec<String> = (1..=27).map(|len| "abcdefghijklmnopqrstuvwxyz0123"[..len].to_string()).collect();
        // A count that depends on every byte and its place (below 256, which the table keeps).
        let own = |piece: &[u8]| piece.iter().fold(piece.len(), |h, &b| (h * 31 + usize::from(b)) % 251);
        let mut rng = XorShift(0xF11_6477);
        let mut pieces = Pieces::default();
        for round in 0..3000 {
            let mut text = String::new();
            let mut cuts = Vec::new();
            for _ in 0..round % 40 {
                let start = text.len();
                match rng.below(4) {
                    0 => text.push_str(&format!("w{}", rng.below(500))),
                    _ => text.push_str(&words[rng.below(words.len())]),
                }
                cuts.push((start, text.len()));
            }
            let expected: usize = cuts.iter().map(|&(s, e)| own(&text.as_bytes()[s..e])).sum();
            // The second time, each piece is pushed from a buffer that the next one
            // overwrites, as a pre-tokenizer step that makes its own pieces does.
            for pass in 0..2 {
                let mut counted = 0;
                let mut count = |piece: &[u8]| {
                    counted += 1;
                    own(piece)
                };
                let mut flight = Flight::default();
                let mut buffer = Vec::new();
                for &(start, end) in &cuts {
                    let piece = &text.as_bytes()[start..end];
                    if pass == 1 {
                        buffer.clear();
                        buffer.extend_from_slice(piece);
                        buffer.extend_from_slice(b"overwritten");
                        flight.push(&buffer[..piece.len()], &mut pieces, &mut count);
                        buffer.fill(b'#');
                    } else {
                        flight.push(piece, &mut pieces, &mut count);
                    }
                }
                assert_eq!(flight.finish(&mut pieces, &mut count), expected, "{text:?}");
                assert!(counted <= cuts.len());
            }
        }
    }
}
