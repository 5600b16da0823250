//! Build step of the `bpe` module: writes its lookup tables into `OUT_DIR`.
//!
//! `build.rs` includes this file (it is not part of the library) and calls [`generate`]. It needs the build-dependencies
//! `tiktoken-rs` (the vocabularies are read through its public API, so no file
//! paths into the cargo registry are involved) and `regex-syntax` (the Unicode
//! classes are taken from the same tables the `regex` crate under tiktoken uses).
//!
//! The files written, all read by the module with `include_bytes!`:
//! `bpe_class_index.bin`, `bpe_class_pages.bin` and, per vocabulary `V` in
//! `o200k`, `cl100k`, `p50k`, `r50k`: `bpe_V_slots.bin`, `bpe_V_blob.bin`, `bpe_V_short.bin`, `bpe_V_merges.bin`, `bpe_V_sides.bin`,
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

/// Builds one of tiktoken-rs's encodings.
type Loader = fn() -> BuildResult<tiktoken_rs::CoreBPE>;

/// Reading a vocabulary scans ranks upwards from 0 and stops after this many
/// consecutive ranks that decode to nothing (tiktoken's gaps are tiny).
const RANK_GAP_LIMIT: u32 = 1 << 12;

/// Writes every table of the `bpe` module into `out_dir`.
pub fn generate(out_dir: &Path) -> BuildResult<()> {
    write_class_tables(out_dir)?;
    let vocabularies: [(&str, Loader); 4] = [
        ("o200k", || Ok(tiktoken_rs::o200k_base()?)),
        ("cl100k", || Ok(tiktoken_rs::cl100k_base()?)),
        ("p50k", || Ok(tiktoken_rs::p50k_base()?)),
        ("r50k", || Ok(tiktoken_rs::r50k_base()?)),
    ];
    for (name, load) in vocabularies {
        let tokens = mergeable_tokens(&load()?)?;
        write_vocab_table(out_dir, name, &tokens)?;
    }
    Ok(())
}

/// The mergeable (non-special) tokens of a vocabulary as `(rank, bytes)`.
fn mergeable_tokens(bpe: &tiktoken_rs::CoreBPE) -> BuildResult<Vec<(u32, Vec<u8>)>> {
    let special_ranks: HashSet<u32> = bpe
        .special_tokens()
        .into_iter()
        .flat_map(|text| bpe.encode_with_special_tokens(text))
        .collect();
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
    let singles: HashSet<&[u8]> = tokens
        .iter()
        .filter(|(_, bytes)| bytes.len() == 1)
        .map(|(_, bytes)| bytes.as_slice())
        .collect();
    if singles.len() != 256 {
        return Err("a vocabulary lacks some single-byte tokens".into());
    }
    Ok(tokens)
}

/// Writes the open-addressing table, the byte blob, the short-token table and
/// the merge table of one vocabulary.
fn write_vocab_table(out_dir: &Path, name: &str, tokens: &[(u32, Vec<u8>)]) -> BuildResult<()> {
    // Filled up to 4/5: a probe that misses reads a few more slots (with
    // their tags, in the same cache lines) for a table half the size.
    let capacity = (tokens.len() + tokens.len() / 4).next_power_of_two();
    let mask = capacity - 1;
    let mut slots = vec![0u64; capacity];
    let mut blob = Vec::new();
    for (rank, bytes) in tokens {
        if *rank > layout::MAX_RANK
            || bytes.is_empty()
            || bytes.len() > layout::MAX_TOKEN_LEN
            || blob.len() > layout::MAX_BLOB_OFFSET
        {
            return Err(
                format!("{name}: token of rank {rank} does not fit the slot layout").into(),
            );
        }
        let hash = layout::key_hash(bytes);
        let slot = layout::pack_slot(*rank, bytes.len(), blob.len(), layout::hash_tag(hash));
        blob.extend_from_slice(bytes);
        let mut index = hash as usize & mask;
        while slots[index] != 0 {
            index = (index + 1) & mask;
        }
        slots[index] = slot;
    }
    let mut short = vec![layout::NO_PAIR; layout::SHORT_TABLE_LEN];
    for (rank, bytes) in tokens {
        match bytes[..] {
            [byte] => short[layout::SINGLE_BYTE_BASE + usize::from(byte)] = *rank,
            [first, second] => short[usize::from(first) << 8 | usize::from(second)] = *rank,
            _ => {}
        }
    }
    let rank_of: HashMap<&[u8], u32> = tokens
        .iter()
        .map(|(rank, bytes)| (bytes.as_slice(), *rank))
        .collect();
    let splits = token_splits(tokens, &rank_of);
    write_char_table(out_dir, name, tokens, &rank_of, &splits)?;
    let (merges, sides) = merge_table(name, tokens, splits)?;
    fs::write(out_dir.join(format!("bpe_{name}_sides.bin")), sides)?;
    let merge_bytes: Vec<u8> = merges.iter().flat_map(|slot| slot.to_le_bytes()).collect();
    fs::write(out_dir.join(format!("bpe_{name}_merges.bin")), merge_bytes)?;
    let slot_bytes: Vec<u8> = slots.iter().flat_map(|slot| slot.to_le_bytes()).collect();
    let short_bytes: Vec<u8> = short.iter().flat_map(|rank| rank.to_le_bytes()).collect();
    fs::write(out_dir.join(format!("bpe_{name}_slots.bin")), slot_bytes)?;
    fs::write(out_dir.join(format!("bpe_{name}_blob.bin")), blob)?;
    fs::write(out_dir.join(format!("bpe_{name}_short.bin")), short_bytes)?;
    Ok(())
}

/// Every way a token splits into two tokens, as `(left, right, joined)` ranks.
fn token_splits(tokens: &[(u32, Vec<u8>)], rank_of: &HashMap<&[u8], u32>) -> Vec<(u32, u32, u32)> {
    let mut splits = Vec::new();
    for (joined, bytes) in tokens {
        for split in 1..bytes.len() {
            if let (Some(&left), Some(&right)) =
                (rank_of.get(&bytes[..split]), rank_of.get(&bytes[split..]))
            {
                splits.push((left, right, *joined));
            }
        }
    }
    splits
}

/// The table of every pair of tokens whose concatenation is a token (from
/// [`token_splits`]), and the bit sets of the ranks that occur as left and as
/// right half of such a pair.
fn merge_table(
    name: &str,
    tokens: &[(u32, Vec<u8>)],
    merges: Vec<(u32, u32, u32)>,
) -> BuildResult<(Vec<u64>, Vec<u8>)> {
    if tokens
        .iter()
        .any(|(rank, _)| *rank > layout::MAX_MERGE_RANK)
    {
        return Err(format!("{name}: a rank does not fit the merge slot layout").into());
    }
    let max_rank = tokens
        .iter()
        .map(|(rank, _)| *rank as usize)
        .max()
        .unwrap_or(0);
    let side_len = max_rank / 8 + 1;
    let mut sides = vec![0u8; 2 * side_len];
    for &(left, right, _) in &merges {
        sides[left as usize / 8] |= 1 << (left % 8);
        sides[side_len + right as usize / 8] |= 1 << (right % 8);
    }
    let capacity = (merges.len() * 2).next_power_of_two();
    let mask = capacity - 1;
    let mut slots = vec![0u64; capacity];
    for (left, right, joined) in merges {
        let mut index = layout::merge_hash(left, right) as usize & mask;
        while slots[index] != 0 {
            index = (index + 1) & mask;
        }
        slots[index] = layout::pack_merge(left, right, joined);
    }
    Ok((slots, sides))
}

/// Writes the character table of one vocabulary (see `layout`, "Character
/// table"): for each character of two or three UTF-8 bytes that is a token,
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
fn write_char_table(
    out_dir: &Path,
    name: &str,
    tokens: &[(u32, Vec<u8>)],
    rank_of: &HashMap<&[u8], u32>,
    splits: &[(u32, u32, u32)],
) -> BuildResult<()> {
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
    let bytes_of: HashMap<u32, &[u8]> = tokens
        .iter()
        .map(|(rank, bytes)| (*rank, bytes.as_slice()))
        .collect();
    // (token, byte) -> lowest rank of a token joining a part that ends in
    // `byte` with `token`, and `token` with a part that starts with `byte`.
    let mut joined_after: HashMap<(u32, u8), u32> = HashMap::new();
    let mut joined_before: HashMap<(u32, u8), u32> = HashMap::new();
    for &(left, right, joined) in splits {
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
        let Some(limit) = highest_merge(bytes, rank_of) else {
            continue;
        };
        let mut before = 0u64;
        for byte in layout::CONTINUATION_BYTES {
            let straddles = (1..bytes.len())
                .any(|len| reaches(&ending_in, (&bytes[..len], byte), limit))
                || reaches(&joined_after, (rank, byte), limit);
            if straddles {
                before |= 1 << (byte - layout::CONTINUATION_BYTES.start());
            }
        }
        let mut after = 0u64;
        for byte in layout::LEAD_BYTES {
            let straddles = (1..bytes.len())
                .any(|cut| reaches(&starting_with, (&bytes[cut..], byte), limit))
                || reaches(&joined_before, (rank, byte), limit);
            if straddles {
                after |= 1 << (byte - layout::LEAD_BYTES.start());
            }
        }
        ids[code_point as usize] = u16::try_from(entries.len())
            .map_err(|_| format!("{name}: too many character tokens"))?;
        entries.push([u64::from(rank), before, after]);
    }

    let (index, pages) = paged(&ids, layout::CHAR_PAGE_SIZE, "character")?;
    let page_bytes: Vec<u8> = pages.iter().flat_map(|id| id.to_le_bytes()).collect();
    let entry_bytes: Vec<u8> = entries
        .iter()
        .flatten()
        .flat_map(|word| word.to_le_bytes())
        .collect();
    fs::write(out_dir.join(format!("bpe_{name}_char_index.bin")), index)?;
    fs::write(
        out_dir.join(format!("bpe_{name}_char_pages.bin")),
        page_bytes,
    )?;
    fs::write(
        out_dir.join(format!("bpe_{name}_char_entries.bin")),
        entry_bytes,
    )?;
    Ok(())
}

/// Merges `bytes` on their own exactly as tiktoken does; if they end as one
/// token, the highest rank of the merges made on the way.
fn highest_merge(bytes: &[u8], rank_of: &HashMap<&[u8], u32>) -> Option<u32> {
    let mut bounds: Vec<usize> = (0..=bytes.len()).collect();
    let mut highest = 0;
    while bounds.len() > 2 {
        let best = (0..bounds.len() - 2)
            .filter_map(|i| Some((*rank_of.get(&bytes[bounds[i]..bounds[i + 2]])?, i)))
            .min()?;
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
                let overlap_allowed =
                    class == layout::CLASS_NEWLINE && *current == layout::CLASS_SPACE;
                if *current != layout::CLASS_OTHER && !overlap_allowed {
                    return Err(
                        format!("{pattern} overlaps another class at U+{code_point:04X}").into(),
                    );
                }
                *current = class;
            }
        }
    }
    // Sanity check: the letter classes together are exactly \p{L}.
    for (start, end) in class_ranges(r"\p{L}")? {
        for code_point in start..=end {
            let class = classes[code_point as usize];
            if !matches!(
                class,
                layout::CLASS_UPPER | layout::CLASS_LOWER | layout::CLASS_LETTER_OTHER
            ) {
                return Err(
                    format!("U+{code_point:04X} is in \\p{{L}} but not a letter class").into(),
                );
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
fn paged<T: Copy + Eq + std::hash::Hash>(
    values: &[T],
    page_size: usize,
    what: &str,
) -> BuildResult<(Vec<u8>, Vec<T>)> {
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
        HirKind::Class(Class::Unicode(class)) => Ok(class
            .ranges()
            .iter()
            .map(|range| (range.start() as u32, range.end() as u32))
            .collect()),
        _ => Err(format!("{pattern} is not a Unicode class").into()),
    }
}
