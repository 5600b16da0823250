//! Building the loader's open-addressing tables (vocabularies, merges) in the order of their
//! slots.
//!
//! A table of a large vocabulary is larger than the cache: inserting its items in file order
//! misses the cache at every item. [`by_home`] orders the items, in place, by the bucket of
//! slots where their search starts, and [`Filling`] sets the table's slots bucket by bucket just before
//! they are filled, so each part of the table is written while it is in the cache.

/// Buckets [`by_home`] sorts into (at most): few enough for the scattered writes of the sort
/// to stay in the cache, and a bucket of a 16 MB table (16 KB) still fits in it.
const BUCKET_BITS: u32 = 10;

/// Orders `items` so that their `home` slots (`bits`-bit numbers) rise, bucket by bucket,
/// in place (an American flag sort on the high bits: each item is swapped straight into its
/// bucket; the order within a bucket is not kept).
pub(super) fn by_home<T>(items: &mut [T], bits: u32, home: impl Fn(&T) -> usize) {
    let bucket_bits = bits.min(BUCKET_BITS);
    let bucket = |item: &T| home(item) >> (bits - bucket_bits);
    let mut ends = vec![0usize; 1 << bucket_bits];
    for item in items.iter() {
        ends[bucket(item)] += 1;
    }
    let mut next = Vec::with_capacity(ends.len());
    let mut start = 0;
    for end in &mut ends {
        next.push(start);
        start += *end;
        *end = start;
    }
    // `next[b]`: where bucket b's next item goes; the items before it are in place.
    for b in 0..ends.len() {
        while next[b] < ends[b] {
            let to = bucket(&items[next[b]]);
            if to == b {
                next[b] += 1;
            } else {
                items.swap(next[b], next[to]);
                next[to] += 1;
            }
        }
    }
}

/// A table of `2^bits` slots being filled in the order of [`by_home`]: the slots past those
/// set so far are empty, and are set (to empty) a bucket at a time when first reached.
pub(super) struct Filling<S> {
    slots: Vec<S>,
    len: usize,
    /// Slot number to bucket.
    shift: u32,
    empty: S,
}

impl<S: Clone> Filling<S> {
    /// A table of `2^bits` slots, all `empty`.
    pub(super) fn new(bits: u32, empty: S) -> Filling<S> {
        Filling { slots: Vec::with_capacity(1 << bits), len: 1 << bits, shift: bits - bits.min(BUCKET_BITS), empty }
    }

    /// Slot `at` (below `2^bits`).
    #[inline]
    pub(super) fn slot(&mut self, at: usize) -> &mut S {
        if at >= self.slots.len() {
            let end = ((at >> self.shift) + 1) << self.shift;
            self.slots.resize(end.min(self.len), self.empty.clone());
        }
        &mut self.slots[at]
    }

    /// The filled table.
    pub(super) fn finish(mut self) -> Vec<S> {
        self.slots.resize(self.len, self.empty.clone());
        self.slots
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_come_by_bucket_in_order_and_slots_start_empty() {
        let bits = 14;
        let items: Vec<u32> = (0..5000u32).map(|i| i.wrapping_mul(0x9E37_79B9) >> (32 - bits)).collect();
        let mut sorted = items.clone();
        by_home(&mut sorted, bits, |&h| h as usize);
        let bucket = |h: u32| h >> (bits - BUCKET_BITS);
        assert!(sorted.windows(2).all(|w| bucket(w[0]) <= bucket(w[1])));
        // The same items.
        let (mut a, mut b) = (items.clone(), sorted.clone());
        a.sort();
        b.sort();
        assert_eq!(a, b);
        let mut few = vec![3usize, 1, 2, 0, 3];
        by_home(&mut few, 2, |&h| h);
        assert_eq!(few, [0, 1, 2, 3, 3]);
        // Linear probing into a Filling gives the table that probing into a full one gives,
        // clusters running past buckets and wrapping around the end included.
        let mut plain = vec![u32::MAX; 1 << bits];
        let mut filling = Filling::new(bits, u32::MAX);
        let crowded: Vec<u32> = sorted.iter().map(|&h| h | 0x3F).chain([(1 << bits) - 1; 40]).collect();
        for &h in &crowded {
            let mut at = h as usize;
            while plain[at] != u32::MAX {
                at = (at + 1) % plain.len();
            }
            plain[at] = h;
            let mut at = h as usize;
            while *filling.slot(at) != u32::MAX {
                at = (at + 1) % plain.len();
            }
            *filling.slot(at) = h;
        }
        assert_eq!(filling.finish(), plain);
    }
}
