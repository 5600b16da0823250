//! The classes of up to 64 ASCII bytes of a text at once, as bit masks (one
//! bit per byte), for pre-tokenizers that find every piece start of a window
//! with a few bit operations instead of a branch per piece.
//!
//! A window starts at a piece start: the regexes have no look-behind, so the
//! pieces after a piece start depend only on the text from there, and the
//! window's first byte can be taken as if it started the text.

#[cfg(any(test, not(any(target_arch = "x86_64", target_arch = "aarch64"))))]
use super::{HIGH, ascii_in_range};

/// Fewest bytes a window is worth classifying for: before a byte of 0x80 or
/// more that is nearer, the text is split piece by piece.
pub(super) const SHORTEST_WINDOW: u32 = 16;

/// Classes of the bytes `from..from + len` of a text, bit `i` for byte
/// `from + i`. No class has a bit at `len` or beyond.
pub(in super::super) struct AsciiWindow {
    /// Bytes classified: up to 64, fewer where the text ends or a byte of
    /// 0x80 or more (a character whose class is not known here) comes first.
    pub(in super::super) len: u32,
    /// Whether the window ends where the text does (rather than before bytes
    /// not classified).
    pub(in super::super) ends_text: bool,
    /// `\p{L}`: ASCII letters.
    pub(super) letters: u64,
    /// `\p{Lu}`: `A-Z`.
    pub(super) uppers: u64,
    /// `\p{Ll}`: `a-z`.
    pub(super) lowers: u64,
    /// `\p{N}`: ASCII digits.
    pub(super) digits: u64,
    /// `\s`: tab, line feed, vertical tab, form feed, carriage return, space.
    pub(super) whitespace: u64,
    /// `[\r\n]`.
    pub(super) newlines: u64,
    /// The space character alone.
    pub(super) spaces: u64,
    /// `[^\s\p{L}\p{N}]`: every other ASCII byte.
    pub(super) punctuation: u64,
    /// `'`, the start of the contraction suffixes.
    pub(super) apostrophes: u64,
    /// `/`, which o200k's punctuation takes after its newlines.
    pub(super) slashes: u64,
}

impl AsciiWindow {
    /// The window of `text` starting at `from` (before its end); when fewer
    /// than [`SHORTEST_WINDOW`] bytes from there are ASCII and the text does
    /// not end before, the offset from `from` past the last byte of 0x80 or
    /// more among the next 64, where a window is worth trying again.
    #[inline(always)]
    pub(in super::super) fn at(text: &[u8], from: usize) -> Result<AsciiWindow, usize> {
        let rest = text.get(from..).unwrap_or_default();
        // The 64 bytes from `from`; near the text's end, the text's last 64,
        // whose tests are shifted down to start at `from`.
        let mut padded = [0u8; 64];
        let (bytes, skipped) = match (rest.first_chunk::<64>(), text.last_chunk::<64>()) {
            (Some(bytes), _) => (bytes, 0),
            (None, Some(last)) => (last, 64 - rest.len() as u32),
            (None, None) => {
                padded[..rest.len()].copy_from_slice(rest);
                (&padded, 0)
            }
        };
        // Most non-ASCII text fails here, before anything is classified.
        let not_ascii = Bytes::not_ascii(bytes) >> skipped;
        let ascii_len = not_ascii.trailing_zeros().min(rest.len().min(64) as u32);
        let ends_text = ascii_len as usize == rest.len();
        if ascii_len < SHORTEST_WINDOW && !ends_text {
            return Err(64 - not_ascii.leading_zeros() as usize);
        }
        let valid = if ascii_len == 64 { u64::MAX } else { (1u64 << ascii_len) - 1 };
        let mask = |first: u8, last: u8| valid & Bytes::in_range(bytes, first, last) >> skipped;
        let uppers = mask(b'A', b'Z');
        let lowers = mask(b'a', b'z');
        let letters = uppers | lowers;
        let digits = mask(b'0', b'9');
        let spaces = mask(b' ', b' ');
        let whitespace = mask(b'\t', b'\r') | spaces;
        let newlines = mask(b'\n', b'\n') | mask(b'\r', b'\r');
        let apostrophes = mask(b'\'', b'\'');
        let slashes = mask(b'/', b'/');
        let punctuation = valid & !(letters | digits | whitespace);
        Ok(AsciiWindow {
            len: ascii_len,
            ends_text,
            letters,
            uppers,
            lowers,
            digits,
            whitespace,
            newlines,
            spaces,
            punctuation,
            apostrophes,
            slashes,
        })
    }
}

/// Bit `i` of `after(mask)`: byte `i − 1` is in `mask`.
#[inline(always)]
pub(super) fn after(mask: u64) -> u64 {
    mask << 1
}

/// The rules the cl100k and o200k regexes share, for ASCII:
/// - a run of punctuation starts a piece unless a space is before it
///   (` ?[^\s\p{L}\p{N}]+`), and takes the newlines right after it, and
///   whatever else the regex lets it take after them;
/// - a run of letters starts one, unless the byte before is white space
///   other than a newline, or punctuation that starts a piece (which take
///   the letters as their one-character prefix, `[^\r\n\p{L}\p{N}]?`);
/// - a run of digits starts one, and so does every third digit on
///   (`\p{N}{1,3}`);
/// - a run of white space starts one (after what punctuation took, if any),
///   and so does the byte after its last newline (`\s*[\r\n]`); a last
///   stretch without newlines of two or more leaves its last byte to start
///   the next piece (`\s+(?!\S)`).
pub(super) struct SharedStarts {
    /// The starts of those rules, bit 0 included.
    pub(super) starts: u64,
    /// Of them, the punctuation that starts a piece.
    pub(super) punctuation: u64,
    /// The last bytes of runs of white space that `\s+(?!\S)` leaves, which
    /// the text's end may undo (not in `starts`).
    pub(super) lookahead_splits: u64,
}

impl AsciiWindow {
    /// [`SharedStarts`], where punctuation takes `takes` (newlines, or more)
    /// after it.
    #[inline(always)]
    pub(super) fn shared_starts(&self, takes: u64) -> SharedStarts {
        let blanks = self.whitespace & !self.newlines;
        let taken = spread_up(after(self.punctuation) & self.newlines, takes);
        let punctuation = self.punctuation & !taken & (!after(self.punctuation) & !after(self.spaces) | after(taken));
        let letter_starts = self.letters & !after(self.letters) & !after(blanks | punctuation);
        let mut digit_starts = self.digits & !after(self.digits);
        let third_digits = self.digits & after(self.digits) & after(after(self.digits));
        loop {
            let more = digit_starts << 3 & third_digits & !digit_starts;
            if more == 0 {
                break;
            }
            digit_starts |= more;
        }
        let run_starts = self.whitespace & !after(self.whitespace) & !taken;
        let after_taken = after(taken) & self.whitespace & !taken;
        let last_newlines = self.newlines & !(spread_down(self.newlines, self.whitespace) >> 1);
        let after_last_newline = after(last_newlines) & self.whitespace;
        let run_ends = self.whitespace & !(self.whitespace >> 1);
        let lookahead_splits = run_ends & blanks & after(blanks);
        let starts = 1 | punctuation | letter_starts | digit_starts | run_starts | after_taken | after_last_newline;
        SharedStarts { starts, punctuation, lookahead_splits }
    }

    /// The run of white space that the window's last byte ends, if any.
    #[inline(always)]
    pub(super) fn trailing_whitespace(&self) -> u64 {
        let last = 1u64 << (self.len - 1);
        if self.whitespace & last != 0 { spread_down(last, self.whitespace) } else { 0 }
    }

    /// `starts` up to the last one whose piece cannot depend on bytes past
    /// the window (which does not end the text): those the last three bytes
    /// may start (a run or a contraction they start may go on past it), and
    /// the pieces of a run of white space reaching its end (they depend on
    /// where the run ends) are not trusted.
    #[inline(always)]
    pub(super) fn trusted(&self, starts: u64, trailing_whitespace: u64) -> u64 {
        let mut trusted = self.len - 3;
        if trailing_whitespace != 0 {
            trusted = trusted.min(trailing_whitespace.trailing_zeros() + 1);
        }
        starts & ((1u64 << trusted) - 1)
    }
}

/// Per-byte tests of 64 bytes, each a mask with bit `i` for byte `i`.
#[cfg(target_arch = "x86_64")]
type Bytes = Sse2;
#[cfg(target_arch = "aarch64")]
type Bytes = Neon;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
type Bytes = Swar;

/// The tests with SSE2, which every x86-64 processor has: 16 bytes per
/// instruction.
#[cfg(target_arch = "x86_64")]
struct Sse2;

#[cfg(target_arch = "x86_64")]
impl Sse2 {
    /// The bytes of 0x80 or more.
    #[inline(always)]
    fn not_ascii(bytes: &[u8; 64]) -> u64 {
        Self::each(bytes, |chunk| chunk)
    }

    /// The bytes in `first..=last` (both ASCII).
    #[inline(always)]
    fn in_range(bytes: &[u8; 64], first: u8, last: u8) -> u64 {
        use std::arch::x86_64::{_mm_cmplt_epi8, _mm_set1_epi8, _mm_sub_epi8};
        // Shifted so that the range starts at -128 as signed bytes, the bytes
        // in it are those below -128 + its length (and no byte of 0x80 or
        // more: they land from -127 up).
        let shift = first.wrapping_add(0x80) as i8;
        let below = 0x80u8.wrapping_add(last - first + 1) as i8;
        // SAFETY: SSE2 instructions, which every x86-64 processor has.
        Self::each(bytes, |chunk| unsafe { _mm_cmplt_epi8(_mm_sub_epi8(chunk, _mm_set1_epi8(shift)), _mm_set1_epi8(below)) })
    }

    /// The high bits of `test` applied to each 16 bytes.
    #[inline(always)]
    fn each(bytes: &[u8; 64], test: impl Fn(std::arch::x86_64::__m128i) -> std::arch::x86_64::__m128i) -> u64 {
        use std::arch::x86_64::{_mm_loadu_si128, _mm_movemask_epi8};
        let mut mask = 0;
        for (k, chunk) in bytes.chunks_exact(16).enumerate() {
            // SAFETY: SSE2 instructions, which every x86-64 processor has; the
            // load reads the 16 bytes of `chunk`, and needs no alignment.
            let high = unsafe { _mm_movemask_epi8(test(_mm_loadu_si128(chunk.as_ptr().cast()))) };
            mask |= u64::from(high as u16) << (16 * k);
        }
        mask
    }
}

/// The tests with NEON, which every AArch64 processor has (Apple silicon,
/// Graviton, Ampere): 16 bytes per instruction, as [`Sse2`].
#[cfg(target_arch = "aarch64")]
struct Neon;

#[cfg(target_arch = "aarch64")]
impl Neon {
    /// The bytes of 0x80 or more.
    #[inline(always)]
    fn not_ascii(bytes: &[u8; 64]) -> u64 {
        use std::arch::aarch64::{vcgeq_u8, vdupq_n_u8};
        // SAFETY: NEON instructions, which every AArch64 processor has.
        Self::each(bytes, |chunk| unsafe { vcgeq_u8(chunk, vdupq_n_u8(0x80)) })
    }

    /// The bytes in `first..=last` (both ASCII): those whose distance up from
    /// `first`, wrapping below it round to 0xFF, is less than the range's length.
    #[inline(always)]
    fn in_range(bytes: &[u8; 64], first: u8, last: u8) -> u64 {
        use std::arch::aarch64::{vcltq_u8, vdupq_n_u8, vsubq_u8};
        // SAFETY: NEON instructions, which every AArch64 processor has.
        Self::each(bytes, |chunk| unsafe { vcltq_u8(vsubq_u8(chunk, vdupq_n_u8(first)), vdupq_n_u8(last - first + 1)) })
    }

    /// The bytes `test` sets (to 0xFF) in each 16 bytes, as bits. NEON has no
    /// `movemask`: byte `i` keeps bit `i mod 8` alone, and three rounds of
    /// pairwise adds sum each eight bytes into one (distinct bits, so nothing
    /// carries), in order: the first eight sums are the 64 bits.
    #[inline(always)]
    fn each(bytes: &[u8; 64], test: impl Fn(std::arch::aarch64::uint8x16_t) -> std::arch::aarch64::uint8x16_t) -> u64 {
        use std::arch::aarch64::{vandq_u8, vgetq_lane_u64, vld1q_u8, vpaddq_u8, vreinterpretq_u64_u8};
        const BITS: [u8; 16] = [1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128];
        // SAFETY: NEON instructions, which every AArch64 processor has; each
        // load reads 16 bytes of `bytes` or of `BITS`, and needs no alignment.
        unsafe {
            let bits = vld1q_u8(BITS.as_ptr());
            let [a, b, c, d] = [0, 16, 32, 48].map(|at| vandq_u8(test(vld1q_u8(bytes[at..].as_ptr())), bits));
            let quarters = vpaddq_u8(vpaddq_u8(a, b), vpaddq_u8(c, d));
            vgetq_lane_u64::<0>(vreinterpretq_u64_u8(vpaddq_u8(quarters, quarters)))
        }
    }
}

/// The tests on any processor: eight bytes at a time in a `u64`. (On x86-64
/// and AArch64 compiled for the tests only, which compare it with [`Sse2`]
/// and [`Neon`].)
#[cfg(any(test, not(any(target_arch = "x86_64", target_arch = "aarch64"))))]
struct Swar;

#[cfg(any(test, not(any(target_arch = "x86_64", target_arch = "aarch64"))))]
impl Swar {
    #[inline(always)]
    fn not_ascii(bytes: &[u8; 64]) -> u64 {
        Self::each(bytes, |word| word & HIGH)
    }

    #[inline(always)]
    fn in_range(bytes: &[u8; 64], first: u8, last: u8) -> u64 {
        Self::each(bytes, |word| ascii_in_range(word, first, last))
    }

    /// The marks (high bits) `test` sets in each eight bytes. Gathering a
    /// word's marks multiplies by copies shifted by multiples of 7: byte
    /// `k`'s mark (bit 8k + 7) shifted by 7·(7 − k) lands on bit 56 + k, and
    /// no two copies land on the same bit, so nothing carries.
    #[inline(always)]
    fn each(bytes: &[u8; 64], test: impl Fn(u64) -> u64) -> u64 {
        let mut mask = 0;
        for (k, chunk) in bytes.chunks_exact(8).enumerate() {
            let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
            mask |= ((test(word) & HIGH).wrapping_mul(0x0002_0408_1020_4081) >> 56) << (8 * k);
        }
        mask
    }
}

/// Bits of `run` reached from a bit of `seed` by a stretch of bits of `run`
/// going up (the seeds themselves only where they are in `run`).
#[inline(always)]
pub(super) fn spread_up(seed: u64, run: u64) -> u64 {
    let (mut reached, mut open) = (seed & run, run);
    for shift in [1, 2, 4, 8, 16, 32] {
        reached |= open & (reached << shift);
        open &= open << shift;
    }
    reached
}

/// Bits of `run` from which a bit of `seed` is reached by a stretch of bits
/// of `run` going up: [`spread_up`] the other way.
#[inline(always)]
pub(super) fn spread_down(seed: u64, run: u64) -> u64 {
    let (mut reached, mut open) = (seed & run, run);
    for shift in [1, 2, 4, 8, 16, 32] {
        reached |= open & (reached >> shift);
        open &= open >> shift;
    }
    reached
}

#[cfg(test)]
mod tests {
    use super::super::super::layout::{CLASS_LOWER, CLASS_UPPER};
    use super::super::super::unicode::{LETTERS, NUMBERS, PUNCTUATION, WHITESPACE, class_at, is_in};
    use super::*;
    use crate::test_rng::XorShift;

    /// Every ASCII byte at every position of a window lands in the classes
    /// the character tables give it, and a byte of 0x80 or more ends it.
    #[test]
    fn classes_agree_with_the_tables() {
        for byte in 0..=0x7Fu8 {
            for position in 0..64 {
                let mut text = vec![b'a'; 80];
                text[position] = byte;
                let Ok(window) = AsciiWindow::at(&text, 0) else { panic!() };
                let class = class_at(&text, position).0;
                let bit = |mask: u64| mask >> position & 1 == 1;
                assert_eq!(window.len, 64);
                assert_eq!(bit(window.letters), is_in(LETTERS, class), "{byte:#04x}");
                assert_eq!(bit(window.uppers), class == CLASS_UPPER, "{byte:#04x}");
                assert_eq!(bit(window.lowers), class == CLASS_LOWER, "{byte:#04x}");
                assert_eq!(bit(window.digits), is_in(NUMBERS, class), "{byte:#04x}");
                assert_eq!(bit(window.whitespace), is_in(WHITESPACE, class), "{byte:#04x}");
                assert_eq!(bit(window.punctuation), is_in(PUNCTUATION, class), "{byte:#04x}");
                assert_eq!(bit(window.newlines), matches!(byte, b'\r' | b'\n'), "{byte:#04x}");
                assert_eq!(bit(window.spaces), byte == b' ', "{byte:#04x}");
                assert_eq!(bit(window.apostrophes), byte == b'\'', "{byte:#04x}");
                assert_eq!(bit(window.slashes), byte == b'/', "{byte:#04x}");
            }
        }
        let mut text = vec![b' '; 40];
        text[20] = 0xC3;
        let Ok(window) = AsciiWindow::at(&text, 2) else { panic!() };
        assert_eq!((window.len, window.ends_text, window.whitespace), (18, false, (1 << 18) - 1));
        assert_eq!(AsciiWindow::at(&text, 5).err(), Some(16), "15 ASCII bytes before 0xC3");
        let Ok(window) = AsciiWindow::at(&text[..10], 3) else { panic!() };
        assert_eq!((window.len, window.ends_text, window.whitespace), (7, true, 0x7F));
        // Near the end of a text of 64 bytes or more, the last 64 are read.
        let mut text = vec![b'x'; 100];
        text[90] = b' ';
        let Ok(window) = AsciiWindow::at(&text, 70) else { panic!() };
        assert_eq!(
            (window.len, window.ends_text, window.whitespace, window.letters),
            (30, true, 1 << 20, (1 << 30) - 1 - (1 << 20))
        );
    }

    /// The processor's way of testing bytes ([`Sse2`], [`Neon`]) marks the
    /// same bytes as [`Swar`], on random bytes of every value.
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[test]
    fn vector_and_swar_agree() {
        let mut rng = XorShift(0x05EE_D0FB_17E5);
        for _ in 0..20_000 {
            let mut bytes = [0u8; 64];
            for chunk in bytes.chunks_exact_mut(8) {
                chunk.copy_from_slice(&rng.next().to_le_bytes());
            }
            // Mostly ASCII, as text is.
            if rng.below(2) == 0 {
                bytes.iter_mut().for_each(|byte| *byte &= 0x7F);
            }
            assert_eq!(Bytes::not_ascii(&bytes), Swar::not_ascii(&bytes));
            for (first, last) in
                [(b'0', b'9'), (b' ', b' '), (b'\t', b'\r'), (b'\n', b'\n'), (b'\'', b'\''), (0, 0x7F), (0x7F, 0x7F)]
            {
                assert_eq!(Bytes::in_range(&bytes, first, last), Swar::in_range(&bytes, first, last), "{first}..={last}");
            }
        }
    }

    /// The spreads match a bit-by-bit walk on random masks.
    #[test]
    fn spreads_match_a_walk() {
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        for _ in 0..20_000 {
            let run = rng.next() | rng.next();
            let seed = rng.next() & rng.next() & rng.next();
            let (mut up, mut down) = (0u64, 0u64);
            for i in 0..64 {
                let bit = 1u64 << i;
                if run & bit != 0 && (seed & bit != 0 || (i > 0 && up & bit >> 1 != 0)) {
                    up |= bit;
                }
                let j = 63 - i;
                let bit = 1u64 << j;
                if run & bit != 0 && (seed & bit != 0 || (j < 63 && down & bit << 1 != 0)) {
                    down |= bit;
                }
            }
            assert_eq!(spread_up(seed, run), up);
            assert_eq!(spread_down(seed, run), down);
        }
    }
}
