//! Merging several short pieces at once, a step of each in turn, so that
//! their memory reads overlap instead of each waiting on the one before.
//!
//! A merge is a chain of lookups (the join cache, then the vocabulary when
//! the cache has not seen the pair), each needed before the next step can
//! choose its pair: on text not seen before, nearly all of a merge's time is
//! spent waiting for memory. Pieces are independent, so their chains are not:
//! a [`Batch`] keeps up to [`LANES`] merges of pieces of at most
//! [`LANE_BYTES`] bytes in progress and advances each by one stage at a time,
//! starting the load of what the stage after needs (prefetch) before turning
//! to the other merges. Each merge takes exactly the steps of
//! [`count_small`](super::count_small) (the same pairs, the same lookups, in
//! the same order), only interleaved with other pieces' steps.

use super::super::layout::key_hash;
use super::super::memo::{JoinPlace, Memo};
use super::super::vocab::Vocab;
use super::part_list::{NewPair, PartList};
use super::{InitialParts, NO_MERGE, PairRanks};

/// Merges in progress at once.
/// (2 to 8 measured alike: a merge's stages take long enough that a few
/// others cover its waits.)
const LANES: usize = 4;
/// Longest piece merged in a lane (so at most that many parts).
const LANE_BYTES: usize = 16;

/// The merges of short pieces in progress, see the module's documentation.
pub(in super::super) struct Batch {
    lanes: [Lane; LANES],
}

/// One join a merge step asks, between being asked and being answered.
#[derive(Clone, Copy)]
struct Join {
    /// The initial index of the left part, whose key gets the answer.
    start: u8,
    /// The bytes of the piece the two parts cover together.
    from: u8,
    to: u8,
    place: JoinPlace,
    /// The bytes' key hash, once the join cache has not answered.
    hash: u64,
    /// Whether the join cache has not answered (so the vocabulary is asked).
    missed: bool,
}

/// What a lane does when it is advanced next.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// No piece.
    Idle,
    /// Choose and make the best merge, and ask the joins it makes new.
    Pick,
    /// Read the join cache's answers to the joins asked.
    Cache,
    /// Ask the vocabulary what the join cache did not answer.
    Vocab,
}

/// One piece being merged: [`count_small`](super::count_small)'s list of parts.
#[derive(Clone, Copy)]
struct Lane {
    stage: Stage,
    /// The piece's bytes in the text, and its key hash.
    start: usize,
    end: usize,
    hash: u64,
    parts: PartList<LANE_BYTES>,
    /// Offset in the piece of the part starting at each initial index, and
    /// the piece's length after the last.
    at: [u8; LANE_BYTES + 1],
    joins: [Option<Join>; 2],
}

impl Lane {
    const IDLE: Lane =
        Lane { stage: Stage::Idle, start: 0, end: 0, hash: 0, parts: PartList::EMPTY, at: [0; LANE_BYTES + 1], joins: [None; 2] };

    /// Starts merging `text[start..end]` (two to [`LANE_BYTES`] bytes).
    fn begin(&mut self, vocab: &Vocab, text: &[u8], start: usize, end: usize, hash: u64, memo: &mut Memo) {
        let piece = &text[start..end];
        // Field by field: `..Lane::IDLE` copied the constant from memory.
        (self.stage, self.start, self.end, self.hash, self.joins) = (Stage::Pick, start, end, hash, [None; 2]);
        let mut initial = [super::Part::NONE; LANE_BYTES];
        let mut len = 0;
        for (slot, part) in initial.iter_mut().zip(InitialParts { vocab, piece, at: 0 }) {
            *slot = part;
            len += 1;
        }
        let initial = &initial[..len];
        let pairs = &mut PairRanks { vocab, joins: &mut memo.joins, piece };
        self.parts.reset(initial, |s| pairs.initial(initial, s));
        self.at.fill(piece.len() as u8);
        for (offset, part) in self.at.iter_mut().zip(initial) {
            *offset = part.at as u8;
        }
    }

    /// Asks whether the two parts of `pair` join, in the piece starting at
    /// `piece_at` in `text` whose parts start at the offsets `at`: the rank
    /// at once if they cannot or the join cache cannot hold the answer
    /// (`Ok`), else the join to queue, with the join cache's entry prefetched.
    #[inline(always)]
    fn ask(vocab: &Vocab, text: &[u8], memo: &Memo, (piece_at, at): (usize, &[u8]), pair: NewPair) -> Result<u32, Join> {
        let NewPair { start: s, left, right, to } = pair;
        let (from, to) = (at[s], at[to]);
        if !vocab.may_join(left, right) {
            return Ok(NO_MERGE);
        }
        if let Some(place) = memo.joins.place(vocab, left, right) {
            memo.joins.prefetch(place);
            return Err(Join { start: s as u8, from, to, place, hash: 0, missed: false });
        }
        let bytes = &text[piece_at + usize::from(from)..piece_at + usize::from(to)];
        Ok(vocab.rank_hashed(bytes, key_hash(bytes)).unwrap_or(NO_MERGE))
    }

    /// Advances the merge by one stage; true when it is done (its count is
    /// `remaining`).
    #[inline(always)]
    fn advance(&mut self, vocab: &Vocab, text: &[u8], memo: &mut Memo) -> bool {
        match self.stage {
            Stage::Idle => return true,
            Stage::Pick => {
                let mut joins = [None; 2];
                let mut queued = joins.iter_mut();
                let piece = (self.start, &self.at[..]);
                // Inlined: two calls per merge, which the compiler would otherwise make calls.
                let merged = self.parts.merge_best(
                    #[inline(always)]
                    |pair| match Lane::ask(vocab, text, memo, piece, pair) {
                        Ok(rank) => Some(rank),
                        Err(join) => {
                            if let Some(slot) = queued.next() {
                                *slot = Some(join);
                            }
                            None
                        }
                    },
                );
                if !merged {
                    return true;
                }
                self.joins = joins;
                self.stage = if self.joins.iter().any(Option::is_some) { Stage::Cache } else { Stage::Pick };
            }
            Stage::Cache => {
                self.stage = Stage::Pick;
                for join in self.joins.iter_mut().flatten() {
                    match memo.joins.remembered(join.place) {
                        Some(answer) => {
                            let s = usize::from(join.start);
                            self.parts.set_rank(s, answer.unwrap_or(NO_MERGE));
                        }
                        None => {
                            let bytes = &text[self.start + usize::from(join.from)..self.start + usize::from(join.to)];
                            join.hash = key_hash(bytes);
                            join.missed = true;
                            vocab.prefetch(join.hash);
                            self.stage = Stage::Vocab;
                        }
                    }
                }
            }
            Stage::Vocab => {
                for join in self.joins.iter().flatten().filter(|join| join.missed) {
                    let bytes = &text[self.start + usize::from(join.from)..self.start + usize::from(join.to)];
                    let answer = vocab.rank_hashed(bytes, join.hash);
                    memo.joins.remember(join.place, answer);
                    let s = usize::from(join.start);
                    self.parts.set_rank(s, answer.unwrap_or(NO_MERGE));
                }
                self.stage = Stage::Pick;
            }
        }
        false
    }
}

impl Batch {
    /// No merge in progress.
    pub(in super::super) fn new() -> Self {
        Batch { lanes: [Lane::IDLE; LANES] }
    }

    /// The number of tokens of the piece `text[start..end]` (at least three
    /// bytes, key hash `hash`, not in `memo`), remembered in `memo`; 0 for a
    /// short piece that is not a token, which is merged in a lane instead and
    /// handed to `done` with its start and count when its merge is done, in
    /// this call or a later one (or in [`Batch::finish`]). Each piece is
    /// counted exactly once.
    #[inline(never)]
    pub(in super::super) fn count(
        &mut self,
        vocab: &Vocab,
        text: &[u8],
        (start, end): (usize, usize),
        hash: u64,
        memo: &mut Memo,
        done: &mut impl FnMut(usize, usize),
    ) -> usize {
        let piece = &text[start..end];
        if piece.len() > LANE_BYTES {
            return super::super::counted_piece_tokens(vocab, piece, hash, memo);
        }
        if vocab.rank_hashed(piece, hash).is_some() {
            memo.remember_piece(vocab, piece, hash, 1);
            return 1;
        }
        // Room for the piece: a lane is free, or one is once a merge is done.
        if self.lanes.iter().all(|lane| lane.stage != Stage::Idle) {
            self.advance(vocab, text, memo, false, done);
        }
        match self.lanes.iter_mut().find(|lane| lane.stage == Stage::Idle) {
            Some(free) => free.begin(vocab, text, start, end, hash, memo),
            None => return super::super::counted_piece_tokens(vocab, piece, hash, memo), // never: one was freed
        }
        0
    }

    /// Finishes the merges in progress, handing each piece's start and count
    /// to `done` (remembered in `memo`); the batch is empty after.
    pub(in super::super) fn finish(&mut self, vocab: &Vocab, text: &[u8], memo: &mut Memo, done: &mut impl FnMut(usize, usize)) {
        self.advance(vocab, text, memo, true, done);
    }

    /// Start of the first piece being merged, if any.
    pub(in super::super) fn in_flight_from(&self) -> Option<usize> {
        self.lanes.iter().filter(|lane| lane.stage != Stage::Idle).map(|lane| lane.start).min()
    }

    /// Advances every merge in progress, one stage at a time in turn, until
    /// one (or, with `all`, every one) is done; hands the start and count of
    /// each piece done (remembered in `memo`, its lane free again) to `done`.
    fn advance(&mut self, vocab: &Vocab, text: &[u8], memo: &mut Memo, all: bool, done: &mut impl FnMut(usize, usize)) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: `advance_avx2` only requires the AVX2 instructions it is
            // compiled with, and the CPU has them (checked just above).
            return unsafe { self.advance_avx2(vocab, text, memo, all, done) };
        }
        self.advance_any(vocab, text, memo, all, done)
    }

    /// [`Batch::advance`] compiled for AVX2 (the best-pair scan, as in
    /// `count_small`).
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn advance_avx2(
        &mut self,
        vocab: &Vocab,
        text: &[u8],
        memo: &mut Memo,
        all: bool,
        done: &mut impl FnMut(usize, usize),
    ) {
        self.advance_any(vocab, text, memo, all, done);
    }

    #[inline(always)]
    fn advance_any(&mut self, vocab: &Vocab, text: &[u8], memo: &mut Memo, all: bool, done: &mut impl FnMut(usize, usize)) {
        loop {
            let mut busy = false;
            let mut freed = false;
            for lane in &mut self.lanes {
                if lane.stage == Stage::Idle {
                    continue;
                }
                if lane.advance(vocab, text, memo) {
                    let count = lane.parts.remaining;
                    memo.remember_piece(vocab, &text[lane.start..lane.end], lane.hash, count);
                    done(lane.start, count);
                    lane.stage = Stage::Idle;
                    freed = true;
                } else {
                    busy = true;
                }
            }
            if !busy || (freed && !all) {
                return;
            }
        }
    }
}
