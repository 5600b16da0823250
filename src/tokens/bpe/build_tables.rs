//! Build step of the `bpe` module: writes its lookup tables into `OUT_DIR`.
//!
//! `build.rs` includes this file (it is not part of the library) and calls [`generate`]. It needs the build-dependencies
//! `tiktoken-rs` (the vocabularies are read through its public API, so no file
//! paths into the cargo registry are involved) and `regex-syntax` (the Unicode
//! classes are taken from the same tables the `regex` crate under tiktoken uses).
//!
//! The files written, all read by the module with `include_bytes!`:
//! `bpe_class_index.bin`, `bpe_class_pages.bin` and, per vocabulary `V` of an
//! encoding family whose cargo feature is on (`o200k`, `cl100k`, `p50k`, the last
//! also serving r50k_base): `bpe_V_buckets.bin`, `bpe_V_entries.bin`,
//! `bpe_V_blob.bin`, `bpe_V_short.bin`, `bpe_V_sides.bin`,
//! `bpe_V_char_index.bin`, `bpe_V_char_pages.bin`, `bpe_V_char_entries.bin`.

use std::collections::{HashMap, HashSet};
use std::error::Error;
use std::fs;
use std::path::Path;

// The binary layout shared with the runtime, whose reader half is unused here.
#[allow(dead_code)]
#[path = "layout.rs"]
mod layout;

type BuildResult<T> = Result<T, Box<dyn Error>>;

/// Reading a vocabulary scans ranks upwards from 0 and stops after this many
/// consecutive ranks that decode to nothing (tiktoken's gaps are tiny).
const RANK_GAP_LIMIT: u32 = 1 << 12;

/// Writes the tables of the `bpe` module into `out_dir`: the character classes, and the
/// vocabularies of the encoding families whose cargo feature is on.
pub fn generate(out_dir: &Path) -> BuildResult<()> {
    write_class_tables(out_dir)?;
    let enabled = |feature: &str| std::env::var_os(format!("CARGO_FEATURE_{}", feature.to_uppercase())).is_some();
    if enabled("o200k") {
        write_vocab_table(out_dir, "o200k", &mergeable_tokens(&tiktoken_rs::o200k_base()?)?)?;
    }
    if enabled("cl100k") {
        write_vocab_table(out_dir, "cl100k", &mergeable_tokens(&tiktoken_rs::cl100k_base()?)?)?;
    }
    if enabled("p50k") {
        let p50k = mergeable_tokens(&tiktoken_rs::p50k_base()?)?;
        let r50k = mergeable_tokens(&tiktoken_rs::r50k_base()?)?;
        check_r50k_within_p50k(&p50k, &r50k)?;
        write_vocab_table(out_dir, "p50k", &p50k)?;
        fs::write(out_dir.join("bpe_r50k_pairs.bin"), pair_set(&r50k))?;
    }
    Ok(())
}

/// r50k_base is p50k_base's tokens of ranks below `R50K_RANKS`, p50k adds
/// `P50K_EXTRA` more, and the character tables of both agree, so one set of
/// tables serves both (see `layout`).
fn check_r50k_within_p50k(p50k: &[(u32, Vec<u8>)], r50k: &[(u32, Vec<u8>)]) -> BuildResult<()> {
    let below: Vec<&(u32, Vec<u8>)> = p50k.iter().filter(|(rank, _)| *rank < layout::R50K_RANKS).collect();
    let same = below.len() == r50k.len() && below.iter().zip(r50k).all(|(a, b)| *a == b);
    if !same || p50k.len() - r50k.len() != layout::P50K_EXTRA as usize {
        return Err("r50k_base is not p50k_base below rank R50K_RANKS".into());
    }
    if char_table("p50k", p50k)? != char_table("r50k", r50k)? {
        return Err("r50k_base's character table differs from p50k_base's".into());
    }
    Ok(())
}

/// The mergeable (non-special) tokens of a vocabulary as `(rank, bytes)`.
fn mergeable_tokens(bpe: &tiktoken_rs::CoreBPE) -> BuildResult<Vec<(u32, Vec<u8>)>> {
    let special_ranks: HashSet<u32> =
        bpe.special_tokens().into_iter().flat_map(|text| bpe.encode_with_special_tokens(text)).collect();
    let mut tokens = Vec::new();
    let mut rank = 0;
    let mut gap = 0;
    while gap < RANK_GAP_LIMIT {
        match bpe.decode_bytes(&[rank]) {
            Ok(bytes) if !special_ranks.contains(&rank) => {
                tokens.push((rank, bytes));
                gap = 0;
            }
            Ok(_) => gap = 0,
            Err(_) => gap += 1,
        }
        rank += 1;
    }
    let singles: HashSet<&[u8]> =
        tokens.iter().filter(|(_, bytes)| bytes.len() == 1).map(|(_, bytes)| bytes.as_slice()).collect();
    if singles.len() != 256 {
        return Err("a vocabulary lacks some single-byte tokens".into());
    }
    Ok(tokens)
}

/// Writes the index, the byte blob, the short-token table, the sides and the
/// character table of one vocabulary.
fn write_vocab_table(out_dir: &Path, name: &str, tokens: &[(u32, Vec<u8>)]) -> BuildResult<()> {
    let write = |what: &str, bytes: &[u8]| fs::write(out_dir.join(format!("bpe_{name}_{what}.bin")), bytes);
    let (buckets, entries, blob) = index(name, tokens)?;
    write("buckets", &le_bytes(&buckets))?;
    write("entries", &le_bytes(&entries))?;
    write("blob", &blob)?;
    write("short", &short_table(tokens))?;
    write("pairs", &pair_set(tokens))?;
    let rank_of: HashMap<&[u8], u32> = tokens.iter().map(|(rank, bytes)| (bytes.as_slice(), *rank)).collect();
    write("sides", &sides(&token_splits(tokens, &rank_of)))?;
    let (char_index, char_pages, char_entries) = char_table(name, tokens)?;
    write("char_index", &char_index)?;
    write("char_pages", &le_bytes(&char_pages))?;
    write("char_entries", &le_bytes(&char_entries))?;
    Ok(())
}

/// Little-endian bytes of a table of words.
fn le_bytes<T: Copy + ToLe>(words: &[T]) -> Vec<u8> {
    words.iter().flat_map(|word| word.to_le()).collect()
}

/// A word written little-endian.
trait ToLe {
    fn to_le(self) -> Vec<u8>;
}

macro_rules! to_le {
    ($($word:ty),*) => {
        $(impl ToLe for $word {
            fn to_le(self) -> Vec<u8> {
                self.to_le_bytes().to_vec()
            }
        })*
    };
}
to_le!(i16, u16, u32, u64);

/// The vocabulary index (see `layout`, "Vocabulary index"): bucket records,
/// entries and blob.
fn index(name: &str, tokens: &[(u32, Vec<u8>)]) -> BuildResult<(Vec<i16>, Vec<u32>, Vec<u8>)> {
    let buckets = layout::bucket_count(tokens.len());
    let mut placed = Vec::with_capacity(tokens.len());
    for (rank, bytes) in tokens {
        if *rank > layout::MAX_RANK || bytes.is_empty() || bytes.len() > layout::MAX_TOKEN_LEN {
            return Err(format!("{name}: token of rank {rank} does not fit an index entry").into());
        }
        let hash = layout::key_hash(bytes);
        let entry = layout::pack_entry(*rank, bytes.len(), layout::entry_tag(hash));
        placed.push((layout::bucket_of(hash, buckets), entry, bytes.as_slice()));
    }
    placed.sort_by_key(|&(bucket, entry, _)| (bucket, entry));
    let blob_len: usize = tokens.iter().map(|(_, bytes)| bytes.len()).sum();
    let entry_share = layout::share(tokens.len(), buckets);
    let blob_share = layout::share(blob_len, buckets);
    let mut records = Vec::with_capacity(2 * (buckets + 1));
    let mut entries = Vec::with_capacity(tokens.len());
    let mut blob = Vec::new();
    let mut next = placed.iter().peekable();
    for bucket in 0..=buckets {
        for (actual, share) in [(entries.len(), entry_share), (blob.len(), blob_share)] {
            let delta = actual as i64 - layout::estimate(bucket, share) as i64;
            records.push(i16::try_from(delta).map_err(|_| format!("{name}: bucket {bucket} is {delta} from its estimate"))?);
        }
        while let Some((_, entry, bytes)) = next.next_if(|(b, _, _)| *b == bucket) {
            entries.push(*entry);
            blob.extend_from_slice(bytes);
        }
    }
    Ok((records, entries, blob))
}

/// The short-token table (see `layout`): single-byte ranks, and the byte pairs
/// that are tokens as a bit set with counts and ranks.
fn short_table(tokens: &[(u32, Vec<u8>)]) -> Vec<u8> {
    let mut singles = vec![0u32; layout::SHORT_SINGLES];
    let mut pairs = vec![None; 1 << 16];
    for (rank, bytes) in tokens {
        match bytes[..] {
            [byte] => singles[usize::from(byte)] = *rank,
            [first, second] => pairs[usize::from(first) << 8 | usize::from(second)] = Some(*rank),
            _ => {}
        }
    }
    let mut words = vec![0u64; layout::PAIR_WORDS];
    let mut before = vec![0u32; layout::PAIR_WORDS];
    let mut ranks = Vec::new();
    for (word, chunk) in pairs.chunks(64).enumerate() {
        before[word] = ranks.len() as u32;
        for (bit, rank) in chunk.iter().enumerate() {
            if let Some(rank) = rank {
                words[word] |= 1 << bit;
                ranks.push(*rank);
            }
        }
    }
    let records: Vec<u8> =
        words.iter().zip(&before).flat_map(|(word, before)| [le_bytes(&[*word]), le_bytes(&[*before, 0])].concat()).collect();
    [le_bytes(&singles), records, le_bytes(&ranks)].concat()
}

/// The bit set of the byte pairs that are tokens (see `layout`).
fn pair_set(tokens: &[(u32, Vec<u8>)]) -> Vec<u8> {
    let mut set = vec![0u8; layout::PAIR_SET_BYTES];
    for (_, bytes) in tokens {
        if let [first, second] = bytes[..] {
            let pair = usize::from(first) << 8 | usize::from(second);
            set[pair / 8] |= 1 << (pair % 8);
        }
    }
    set
}

/// Every way a token splits into two tokens, as `(left, right, joined)` ranks.
fn token_splits(tokens: &[(u32, Vec<u8>)], rank_of: &HashMap<&[u8], u32>) -> Vec<(u32, u32, u32)> {
    let mut splits = Vec::new();
    for (joined, bytes) in tokens {
        for split in 1..bytes.len() {
            if let (Some(&left), Some(&right)) = (rank_of.get(&bytes[..split]), rank_of.get(&bytes[split..])) {
                splits.push((left, right, *joined));
            }
        }
    }
    splits
}

/// The bit sets of the ranks that occur as left and as right half of a split
/// of a token into two tokens (from [`token_splits`]).
fn sides(splits: &[(u32, u32, u32)]) -> Vec<u8> {
    let max_rank = splits.iter().map(|&(left, right, _)| left.max(right) as usize).max().unwrap_or(0);
    let side_len = max_rank / 8 + 1;
    let mut sides = vec![0u8; 2 * side_len];
    for &(left, right, _) in splits {
        sides[left as usize / 8] |= 1 << (left % 8);
        sides[side_len + right as usize / 8] |= 1 << (right % 8);
    }
    sides
}

/// The character table of one vocabulary (see `layout`, "Character
/// table"): index, pages and entries; for each character of two or three UTF-8 bytes that is a token,
/// its rank and the neighbouring bytes next to which it must still be merged
/// from bytes.
///
/// Merging may start from such a character `c` as one part, instead of its
/// bytes, when that cannot change the result. Let `M` be the highest rank of
/// the merges that build `c` from its bytes on their own. Until `c` is
/// complete, some merge inside it of rank at most `M` is always possible, so
/// nothing of rank above `M` touches its bytes, and merges elsewhere happen
/// as they would with `c` already whole. Hence the result is the same if no
/// token of rank at most `M` could join a part of `c` with the outside (a
/// token ending in a proper prefix of `c`, or starting with a proper suffix)
/// and no token of rank at most `M` joins `c` whole with a neighbour (which
/// pre-forming would allow earlier). Which such tokens exist depends on the
/// byte next to `c`, so the table keeps, per character, the bit set of the
/// preceding bytes (continuation bytes) and of the following bytes (lead
/// bytes) for which one does; merging uses the whole character only when
/// neither neighbour is in its set. Nothing in the argument depends on what
/// the neighbours are made of, so it applies to one character after another
/// and a piece may start with many of them whole. The tests compare the
/// counts with tiktoken on text made of such characters.
fn char_table(name: &str, tokens: &[(u32, Vec<u8>)]) -> BuildResult<(Vec<u8>, Vec<u16>, Vec<u64>)> {
    let rank_of: HashMap<&[u8], u32> = tokens.iter().map(|(rank, bytes)| (bytes.as_slice(), *rank)).collect();
    let splits = token_splits(tokens, &rank_of);
    fn lower<K: std::hash::Hash + Eq>(map: &mut HashMap<K, u32>, key: K, rank: u32) {
        let entry = map.entry(key).or_insert(rank);
        *entry = (*entry).min(rank);
    }
    // (part, byte) -> lowest rank of a token made of more bytes ending in
    // `byte` followed by `part` (of one or two bytes), and of one starting
    // with `part` followed by `byte`.
    let mut ending_in: HashMap<(&[u8], u8), u32> = HashMap::new();
    let mut starting_with: HashMap<(&[u8], u8), u32> = HashMap::new();
    for (rank, bytes) in tokens {
        for len in 1..bytes.len().min(3) {
            let cut = bytes.len() - len;
            lower(&mut ending_in, (&bytes[cut..], bytes[cut - 1]), *rank);
            lower(&mut starting_with, (&bytes[..len], bytes[len]), *rank);
        }
    }
    let bytes_of: HashMap<u32, &[u8]> = tokens.iter().map(|(rank, bytes)| (*rank, bytes.as_slice())).collect();
    // (token, byte) -> lowest rank of a token joining a part that ends in
    // `byte` with `token`, and `token` with a part that starts with `byte`.
    let mut joined_after: HashMap<(u32, u8), u32> = HashMap::new();
    let mut joined_before: HashMap<(u32, u8), u32> = HashMap::new();
    for &(left, right, joined) in &splits {
        if let Some(&last) = bytes_of.get(&left).and_then(|bytes| bytes.last()) {
            lower(&mut joined_after, (right, last), joined);
        }
        if let Some(&first) = bytes_of.get(&right).and_then(|bytes| bytes.first()) {
            lower(&mut joined_before, (left, first), joined);
        }
    }
    fn reaches<K: std::hash::Hash + Eq>(map: &HashMap<K, u32>, key: K, limit: u32) -> bool {
        map.get(&key).is_some_and(|&rank| rank <= limit)
    }

    let mut entries: Vec<[u64; 3]> = vec![[0; 3]]; // id 0: no entry
    let mut ids = vec![0u16; layout::CHAR_TABLE_CODE_POINTS];
    for code_point in 0x80..layout::CHAR_TABLE_CODE_POINTS as u32 {
        let Some(c) = char::from_u32(code_point) else {
            continue;
        };
        let mut buf = [0u8; 4];
        let bytes = c.encode_utf8(&mut buf).as_bytes();
        let Some(&rank) = rank_of.get(bytes) else {
            continue;
        };
        let Some(limit) = highest_merge(bytes, &rank_of) else {
            continue;
        };
        let mut before = 0u64;
        for byte in layout::CONTINUATION_BYTES {
            let straddles = (1..bytes.len()).any(|len| reaches(&ending_in, (&bytes[..len], byte), limit))
                || reaches(&joined_after, (rank, byte), limit);
            if straddles {
                before |= 1 << (byte - layout::CONTINUATION_BYTES.start());
            }
        }
        let mut after = 0u64;
        for byte in layout::LEAD_BYTES {
            let straddles = (1..bytes.len()).any(|cut| reaches(&starting_with, (&bytes[cut..], byte), limit))
                || reaches(&joined_before, (rank, byte), limit);
            if straddles {
                after |= 1 << (byte - layout::LEAD_BYTES.start());
            }
        }
        ids[code_point as usize] = u16::try_from(entries.len()).map_err(|_| format!("{name}: too many character tokens"))?;
        entries.push([u64::from(rank), before, after]);
    }

    let (index, pages) = paged(&ids, layout::CHAR_PAGE_SIZE, "character")?;
    Ok((index, pages, entries.into_iter().flatten().collect()))
}

/// Merges `bytes` on their own exactly as tiktoken does; if they end as one
/// token, the highest rank of the merges made on the way.
fn highest_merge(bytes: &[u8], rank_of: &HashMap<&[u8], u32>) -> Option<u32> {
    let mut bounds: Vec<usize> = (0..=bytes.len()).collect();
    let mut highest = 0;
    while bounds.len() > 2 {
        let best = (0..bounds.len() - 2).filter_map(|i| Some((*rank_of.get(&bytes[bounds[i]..bounds[i + 2]])?, i))).min()?;
        highest = highest.max(best.0);
        bounds.remove(best.1 + 1);
    }
    Some(highest)
}

/// Writes the two-level code point → class table.
fn write_class_tables(out_dir: &Path) -> BuildResult<()> {
    const CODE_POINTS: usize = 0x11_0000;
    let mut classes = vec![layout::CLASS_OTHER; CODE_POINTS];
    let assignments = [
        (r"\p{M}", layout::CLASS_MARK),
        (r"[\p{Lu}\p{Lt}]", layout::CLASS_UPPER),
        (r"\p{Ll}", layout::CLASS_LOWER),
        (r"[\p{Lm}\p{Lo}]", layout::CLASS_LETTER_OTHER),
        (r"\p{N}", layout::CLASS_NUMBER),
        (r"\s", layout::CLASS_SPACE),
        (r"[\r\n]", layout::CLASS_NEWLINE),
    ];
    for (pattern, class) in assignments {
        for (start, end) in class_ranges(pattern)? {
            for code_point in start..=end {
                let current = &mut classes[code_point as usize];
                let overlap_allowed = class == layout::CLASS_NEWLINE && *current == layout::CLASS_SPACE;
                if *current != layout::CLASS_OTHER && !overlap_allowed {
                    return Err(format!("{pattern} overlaps another class at U+{code_point:04X}").into());
                }
                *current = class;
            }
        }
    }
    // Sanity check: the letter classes together are exactly \p{L}.
    for (start, end) in class_ranges(r"\p{L}")? {
        for code_point in start..=end {
            let class = classes[code_point as usize];
            if !matches!(class, layout::CLASS_UPPER | layout::CLASS_LOWER | layout::CLASS_LETTER_OTHER) {
                return Err(format!("U+{code_point:04X} is in \\p{{L}} but not a letter class").into());
            }
        }
    }

    let (index, pages) = paged(&classes, layout::CLASS_PAGE_SIZE, "class")?;
    fs::write(out_dir.join("bpe_class_index.bin"), index)?;
    fs::write(out_dir.join("bpe_class_pages.bin"), pages)?;
    Ok(())
}

/// A table indexed by code point, split into pages of `page_size` entries with the
/// repeated pages stored once: the page number of each page (the index), and the distinct
/// pages one after another. `what` names the table in the error for more than 256 pages.
fn paged<T: Copy + Eq + std::hash::Hash>(values: &[T], page_size: usize, what: &str) -> BuildResult<(Vec<u8>, Vec<T>)> {
    let mut page_ids: HashMap<&[T], u8> = HashMap::new();
    let mut pages = Vec::new();
    let mut index = Vec::with_capacity(values.len() / page_size);
    for page in values.chunks(page_size) {
        let next_id = page_ids.len();
        let id = match page_ids.get(page) {
            Some(&id) => id,
            None => {
                let id = u8::try_from(next_id).map_err(|_| format!("more than 256 distinct {what} pages"))?;
                page_ids.insert(page, id);
                pages.extend_from_slice(page);
                id
            }
        };
        index.push(id);
    }
    Ok((index, pages))
}

/// The code point ranges of a single-class regex, as `regex-syntax` parses it.
fn class_ranges(pattern: &str) -> BuildResult<Vec<(u32, u32)>> {
    use regex_syntax::hir::{Class, HirKind};
    let hir = regex_syntax::Parser::new().parse(pattern)?;
    match hir.kind() {
        HirKind::Class(Class::Unicode(class)) => {
            Ok(class.ranges().iter().map(|range| (range.start() as u32, range.end() as u32)).collect())
        }
        _ => Err(format!("{pattern} is not a Unicode class").into()),
    }
}
