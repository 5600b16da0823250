//! The sliding window (Ikigai's dynamic sliding window): drop the oldest whole turns while
//! live history exceeds the budget; the newest turn is never dropped.

/// Index of the first live turn: the smallest `k` whose suffix of turns `k..turn_count` fits
/// in `available` tokens, but never past the newest turn and never before `floor` (turns the
/// caller dropped by hand). `suffix_tokens(k)` is the history tokens of turns `k..` and must
/// not increase with `k`.
///
/// Because suffixes only grow as turns are added, applying this after every turn gives the
/// same boundary as applying it once to the whole ledger: the boundary depends on the
/// ledger's contents, not on when `end_turn` was called. O(log turns).
pub fn first_live_turn(
    turn_count: usize,
    suffix_tokens: impl Fn(usize) -> u64,
    available: u64,
    floor: usize,
) -> usize {
    let Some(newest) = turn_count.checked_sub(1) else {
        return 0;
    };
    // Binary search for the first k in [0, newest] that fits; newest when none does.
    let (mut lo, mut hi) = (0, newest);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if suffix_tokens(mid) <= available {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo.max(floor.min(newest))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference: drop from the front one turn at a time, as the source design does.
    fn reference(turns: &[u64], available: u64, floor: usize) -> usize {
        if turns.is_empty() {
            return 0;
        }
        let mut k = floor.min(turns.len() - 1);
        while k + 1 < turns.len() && turns[k..].iter().sum::<u64>() > available {
            k += 1;
        }
        k
    }

    #[test]
    fn matches_dropping_one_turn_at_a_time() {
        let turns = [5u64, 0, 7, 3, 9, 1, 1, 20, 2];
        for available in 0..60 {
            for floor in 0..12 {
                let suffix = |k: usize| turns[k..].iter().sum::<u64>();
                assert_eq!(
                    first_live_turn(turns.len(), suffix, available, floor),
                    reference(&turns, available, floor),
                    "available {available} floor {floor}"
                );
            }
        }
        assert_eq!(first_live_turn(0, |_| 0, 0, 3), 0);
    }
}
