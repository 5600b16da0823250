//! Deterministic, seedable generator of varied test and benchmark text.
//!
//! Everything is derived from a `u64` seed with a SplitMix64 generator, so the
//! same seed gives the same strings on every machine, without network or data
//! files. Fragments cover prose in several scripts, source code, JSON tool
//! output, base64 and hex ids, digit and punctuation runs, white-space and
//! newline mixtures (`\r\n` included), English contractions in every case,
//! combining marks, emoji ZWJ sequences and arbitrary code points.
//!
//! Shared by several test, bench and example targets, each of which uses a part of it.
#![allow(dead_code)]

// The shared generator, re-exported: a target that includes this file needs nothing else.
#[path = "rng.rs"]
mod rng;
pub use rng::Rng;

const ENGLISH: &[&str] = &[
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "lazy",
    "dog",
    "token",
    "context",
    "window",
    "agent",
    "model",
    "counting",
    "is",
    "not",
    "what",
    "we",
    "expected",
    "and",
    "however",
    "Internationalization",
    "GPT",
    "OpenAI",
    "McDonald",
    "iPhone",
    "NASA",
    "I",
    "don't",
    "it's",
    "they're",
    "we've",
    "I'm",
    "you'll",
    "he'd",
    "DON'T",
    "IT'S",
    "They'Re",
    "WE'VE",
    "I'M",
    "YOU'LL",
    "HE'D",
    "Bob's",
    "BOB'S",
    "it’s",
    "can't",
    "won't",
    "o'clock",
];
const GERMAN: &[&str] = &[
    "Straße",
    "Größenordnung",
    "Donaudampfschifffahrtsgesellschaft",
    "über",
    "schön",
    "Mädchen",
    "Fußgängerübergang",
    "und",
    "der",
    "die",
    "das",
    "Äpfel",
    "ÖL",
    "Übermut",
    "weiß",
];
const FRENCH: &[&str] = &[
    "l'été",
    "déjà",
    "garçon",
    "où",
    "œuvre",
    "Ça",
    "naïve",
    "c'est",
    "aujourd'hui",
    "forêt",
    "élève",
    "À",
    "Noël",
    "qu'il",
    "français",
];
const RUSSIAN: &[&str] = &[
    "Привет",
    "мир",
    "быстрая",
    "коричневая",
    "лиса",
    "прыгает",
    "через",
    "ленивую",
    "собаку",
    "Москва",
    "ЁЖИК",
    "съешь",
    "ещё",
    "этих",
    "мягких",
];
const CHINESE: &[&str] = &[
    "你好",
    "世界",
    "敏捷的",
    "棕色",
    "狐狸",
    "跳过了",
    "懒狗",
    "上下文",
    "窗口",
    "计算",
    "令牌",
    "人工智能",
    "模型",
    "我们",
    "的",
];
const JAPANESE: &[&str] = &[
    "こんにちは",
    "世界",
    "カタカナ",
    "ひらがな",
    "東京",
    "トークン",
    "数える",
    "ですね",
    "ｶﾀｶﾅ",
    "日本語の文章",
    "ー",
    "はい",
    "いいえ",
    "ありがとう",
    "コンテキスト",
];
/// Frequent Han characters, plus a few rare ones.
const COMMON_HAN: &[char] = &[
    '的', '一', '是', '不', '了', '人', '我', '在', '有', '他', '这', '为', '之', '大', '来', '以', '个', '中', '上', '们', '到',
    '说', '国', '和', '地', '也', '子', '时', '道', '出', '而', '要', '于', '就', '下', '得', '可', '你', '年', '生', '自', '会',
    '那', '后', '能', '对', '着', '事', '其', '里', '所', '去', '行', '过', '家', '十', '用', '发', '天', '如', '然', '作', '方',
    '成', '者', '多', '日', '都', '三', '小', '军', '二', '无', '同', '么', '经', '法', '当', '起', '与', '好', '看', '学', '进',
    '种', '将', '还', '分', '此', '心', '前', '面', '又', '定', '见', '只', '主', '没', '公', '从', '龘', '靐', '齉', '爨', '鬱',
    '讟', '龖', '麤', '饕', '餮', '魑', '魅', '魍', '魉', '貔', '貅',
];
const ARABIC: &[&str] = &[
    "مرحبا",
    "بالعالم",
    "الثعلب",
    "البني",
    "السريع",
    "يقفز",
    "فوق",
    "الكلب",
    "الكسول",
    "نموذج",
    "اللغة",
    "العربية",
    "كِتَابٌ",
    "مُحَمَّد",
    "شُكْرًا",
];
const HINDI: &[&str] =
    &["नमस्ते", "दुनिया", "तेज़", "भूरी", "लोमड़ी", "आलसी", "कुत्ते", "के", "ऊपर", "कूदती", "है", "भाषा", "मॉडल", "क्षत्रिय", "हिन्दी"];
const OTHER_SCRIPTS: &[&str] = &[
    "Ἀθῆναι",
    "ΑΒΓΔ",
    "שָׁלוֹם",
    "안녕하세요",
    "สวัสดี",
    "ᏣᎳᎩ",
    "ǅemal",
    "ǈ",
    "ⅫⅣ",
    "①②③",
    "٣٤٥",
    "१२३",
    "ℌ𝔢𝔩𝔩𝔬",
    "𝐀𝐁𝐂",
    "ﬁnance",
    "ſtate",
    "K",
    "İstanbul",
    "ǲ",
];
const PUNCTUATION: &[&str] = &[
    ".", ",", "!", "?", ";", ":", "...", "—", "–", "-", "(", ")", "[", "]", "{", "}", "\"", "'", "’", "“", "”", "«", "»", "/",
    "//", "\\", "@", "#", "$", "%", "^", "&", "*", "+", "=", "<", ">", "|", "~", "`", "¿", "¡", "。", "、", "，", "！", "？",
    "؟", "।",
];
const SPACES: &[&str] = &[
    " ",
    "  ",
    "   ",
    "\t",
    "\n",
    "\n\n",
    "\r\n",
    "\r",
    " \n",
    "\n ",
    "\t\n",
    "    ",
    "\u{a0}",
    "\u{3000}",
    "\u{2003}",
    "\u{85}",
    "\u{2028}",
    "\u{b}",
    "\u{c}",
    " \r\n ",
    "\n\n\n\t ",
];
const EMOJI: &[&str] = &["😀", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "❤️", "🇩🇪", "🧑🏿‍💻", "✨", "🔥", "👩‍❤️‍💋‍👨", "1️⃣", "™"];
const MARKS: &[&str] = &[
    "\u{301}",
    "\u{308}",
    "\u{327}",
    "\u{20d7}",
    "\u{94d}",
    "\u{64b}",
    "\u{5b8}",
    "\u{e31}",
    "\u{302}\u{303}",
    "\u{200d}",
    "\u{fe0f}",
];
const CODE: &[&str] = &[
    "fn main() {\n    println!(\"Hello, world!\");\n}\n",
    "for (let i = 0; i < n; i++) { sum += a[i]; }",
    "def count_tokens(text: str) -> int:\n    return len(enc.encode(text))\n",
    "#include <stdio.h>\nint main(void) { return 0; }\n",
    "SELECT id, name FROM users WHERE created_at > '2024-01-01';",
    "if err != nil {\n\treturn fmt.Errorf(\"read %s: %w\", path, err)\n}",
    "const x = arr.map((v) => v * 2).filter(Boolean);",
    "    self.assertEqual(result, expected)  # TODO: fix\r\n",
    "<div class=\"container\"><span>{{ value }}</span></div>",
    "let re = Regex::new(r\"\\s+(?!\\S)\").unwrap();",
    "$ cargo build --release 2>&1 | tail -n 20",
    "x=1;y=2;z=x+y//3",
];

/// One random fragment of one of the kinds this module generates.
pub fn fragment(rng: &mut Rng) -> String {
    match rng.below(16) {
        0..=4 => prose(rng),
        5 => rng.pick(CODE).to_string(),
        6 => json(rng, 2),
        7 => base64(rng, 1, 120),
        8 => hex(rng, 1, 64),
        9 => digits(rng),
        10 => repeat_pick(rng, PUNCTUATION, 12, ""),
        11 => repeat_pick(rng, SPACES, 6, ""),
        12 => repeat_pick(rng, EMOJI, 5, ""),
        13 => marked_letters(rng),
        14 => contractions(rng),
        _ => code_points(rng, 1, 24),
    }
}

/// A string made of 1 to 8 fragments.
pub fn sample(rng: &mut Rng) -> String {
    let parts = rng.between(1, 8);
    (0..parts).map(|_| fragment(rng)).collect()
}

/// `count` strings from `seed`, always the same ones for the same arguments.
pub fn strings(seed: u64, count: usize) -> Vec<String> {
    let mut rng = Rng::new(seed);
    (0..count).map(|_| sample(&mut rng)).collect()
}

/// At least `min_bytes` of mixed text from `seed`, weighted like what an agent
/// counts: mostly prose in several scripts, plus code, JSON tool output, ids
/// and long white-space runs.
pub fn mixed_text(seed: u64, min_bytes: usize) -> String {
    let mut rng = Rng::new(seed);
    let mut text = String::with_capacity(min_bytes + 4096);
    while text.len() < min_bytes {
        match rng.below(20) {
            0..=9 => {
                for _ in 0..rng.between(3, 12) {
                    text.push_str(&prose(&mut rng));
                    text.push_str(rng.pick(&[". ", ", ", "! ", "? ", "\n", " "]));
                }
            }
            10..=12 => {
                for _ in 0..rng.between(1, 4) {
                    text.push_str(rng.pick(CODE));
                }
            }
            13..=15 => text.push_str(&json(&mut rng, 3)),
            16 => text.push_str(&base64(&mut rng, 16, 400)),
            17 => text.push_str(&hex(&mut rng, 8, 64)),
            18 => text.push_str(&" ".repeat(rng.between(8, 200))),
            _ => text.push_str(&"\n".repeat(rng.between(2, 6))),
        }
    }
    text
}

/// Writing systems of the generated prose.
#[derive(Clone, Copy, PartialEq)]
enum Script {
    English,
    German,
    French,
    Russian,
    Chinese,
    Japanese,
    Arabic,
    Hindi,
    Other,
}

/// A sentence fragment: common words mixed with synthetic ones, so the text
/// has a long tail of rare words as real prose does.
fn prose(rng: &mut Rng) -> String {
    use Script::*;
    let script = rng.pick(&[English, English, English, German, French, Russian, Chinese, Japanese, Arabic, Hindi, Other]);
    let separator = if matches!(script, Chinese | Japanese) { "" } else { " " };
    let words: Vec<String> = (0..rng.between(1, 12)).map(|_| word(rng, script)).collect();
    let mut out = words.join(separator);
    if rng.below(3) == 0 {
        out.push_str(rng.pick(PUNCTUATION));
    }
    out
}

/// One word: a common one, or (one time in five) a synthetic one.
fn word(rng: &mut Rng, script: Script) -> String {
    let common = match script {
        Script::English => ENGLISH,
        Script::German => GERMAN,
        Script::French => FRENCH,
        Script::Russian => RUSSIAN,
        Script::Chinese => CHINESE,
        Script::Japanese => JAPANESE,
        Script::Arabic => ARABIC,
        Script::Hindi => HINDI,
        Script::Other => OTHER_SCRIPTS,
    };
    if rng.below(5) >= 1 {
        return rng.pick(common).to_string();
    }
    let syllables: &[&str] = match script {
        Script::English | Script::Other => {
            &["con", "tra", "ment", "ing", "er", "pre", "ab", "ly", "tion", "st", "o", "ex", "un", "ed", "s", "qu", "ize", "ph"]
        }
        Script::German => &["sch", "ung", "keit", "ver", "ge", "ä", "ö", "ü", "ß", "ein", "en", "lich", "st", "Zu", "be", "heit"],
        Script::French => &["é", "è", "ê", "ç", "tion", "eau", "ou", "qu", "ent", "ai", "re", "ô", "l'", "d'", "ille", "ie"],
        Script::Russian => &["при", "ств", "ова", "ние", "ка", "ть", "ый", "по", "ра", "зо", "щи", "ёж", "ъе", "ль", "ю", "Я"],
        Script::Arabic => &["ال", "مح", "ت", "ي", "ون", "ة", "َ", "ُ", "ِ", "ّ", "ك", "ش", "ع", "ر", "س", "ل"],
        Script::Hindi => &["क", "ष", "ि", "ी", "ु", "्", "र", "ं", "ा", "स", "ॉ", "ज़", "त", "न", "म", "ह"],
        Script::Chinese => {
            return (0..rng.between(1, 4)).map(|_| rng.pick(COMMON_HAN)).collect();
        }
        Script::Japanese => {
            return (0..rng.between(1, 5))
                .map(|_| match rng.below(3) {
                    0 => char::from_u32(0x3041 + rng.below(0x56) as u32).unwrap_or('あ'),
                    1 => char::from_u32(0x30A1 + rng.below(0x5A) as u32).unwrap_or('ア'),
                    _ => rng.pick(COMMON_HAN),
                })
                .collect();
        }
    };
    let mut out: String = (0..rng.between(1, 4)).map(|_| rng.pick(syllables)).collect();
    if script == Script::English && rng.below(8) == 0 {
        out = out.to_uppercase();
    }
    out
}

fn repeat_pick(rng: &mut Rng, items: &[&str], max: usize, separator: &str) -> String {
    let n = rng.between(1, max);
    let picked: Vec<&str> = (0..n).map(|_| rng.pick(items)).collect();
    picked.join(separator)
}

fn json(rng: &mut Rng, depth: usize) -> String {
    let keys = ["id", "name", "status", "path", "line", "message", "items", "ok", "score", "created_at"];
    let fields = rng.between(1, 5);
    let mut out = String::from("{");
    for i in 0..fields {
        if i > 0 {
            out.push_str(if rng.below(2) == 0 { ", " } else { ",\n  " });
        }
        out.push('"');
        out.push_str(rng.pick(&keys));
        out.push_str("\": ");
        match rng.below(if depth > 0 { 6 } else { 5 }) {
            0 => out.push_str(&(rng.next_u64() % 1_000_000).to_string()),
            1 => out.push_str(&format!("\"{}\"", prose(rng).replace('"', "'"))),
            2 => out.push_str(&format!("\"{}\"", hex(rng, 32, 32))),
            3 => out.push_str(rng.pick(&["true", "false", "null", "-1.5e-3", "[]"])),
            4 => out.push_str(&format!("\"/home/user/src/{}.rs\"", hex(rng, 6, 6))),
            _ => out.push_str(&json(rng, depth - 1)),
        }
    }
    out.push('}');
    out
}

fn base64(rng: &mut Rng, min: usize, max: usize) -> String {
    let len = rng.between(min, max);
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out: String = (0..len).map(|_| rng.pick(ALPHABET) as char).collect();
    out.push_str(&"=".repeat(rng.below(3)));
    out
}

fn hex(rng: &mut Rng, min: usize, max: usize) -> String {
    let len = rng.between(min, max);
    const DIGITS: &[u8] = b"0123456789abcdef";
    (0..len).map(|_| rng.pick(DIGITS) as char).collect()
}

fn digits(rng: &mut Rng) -> String {
    let len = rng.between(1, 40);
    let mut out: String = (0..len).map(|_| char::from(b'0' + rng.below(10) as u8)).collect();
    if rng.below(3) == 0 {
        out.push_str(rng.pick(&[".", ",", " ", "e", "%", "٣", "²"]));
        out.push_str(&(rng.next_u64() % 1000).to_string());
    }
    out
}

fn marked_letters(rng: &mut Rng) -> String {
    let mut out = String::new();
    for _ in 0..rng.between(1, 10) {
        match rng.below(4) {
            0 => {}
            1 => out.push(rng.pick(&['a', 'E', 'ı', 'ß', 'Ω', 'й', 'ক', ' ', '\''])),
            _ => out.push_str(rng.pick(&["a", "B", "x", "Z", "क", "ع", "ο"])),
        }
        for _ in 0..rng.below(3) {
            out.push_str(rng.pick(MARKS));
        }
    }
    out
}

fn contractions(rng: &mut Rng) -> String {
    const APOSTROPHES: &[&str] = &["'", "'", "’", "`"];
    const SUFFIXES: &[&str] = &[
        "s", "S", "t", "T", "re", "RE", "Re", "rE", "ve", "VE", "Ve", "m", "M", "ll", "LL", "Ll", "lL", "d", "D", "ſ", "x", "",
        "sa", "llama", "ver",
    ];
    let mut out = String::new();
    for _ in 0..rng.between(1, 4) {
        out.push_str(rng.pick(&["I", "you", "WE", "They", "it", "Bob", "", " ", "don", "ŒUVRE", "ǅ", "9"]));
        out.push_str(rng.pick(APOSTROPHES));
        out.push_str(rng.pick(SUFFIXES));
        out.push_str(rng.pick(&["", " ", "\n", ".", "'"]));
    }
    out
}

fn code_points(rng: &mut Rng, min: usize, max: usize) -> String {
    let len = rng.between(min, max);
    const RANGES: &[(u32, u32)] = &[
        (0x00, 0x7F),
        (0x80, 0x2FF),
        (0x300, 0x36F),
        (0x370, 0x1FFF),
        (0x2000, 0x206F),
        (0x2070, 0x2FFF),
        (0x3000, 0x9FFF),
        (0xA000, 0xD7FF),
        (0xE000, 0xFFFF),
        (0x1_0000, 0x1_FFFF),
        (0x2_0000, 0x10_FFFF),
    ];
    (0..len)
        .filter_map(|_| {
            let (lo, hi) = rng.pick(RANGES);
            char::from_u32(lo + rng.below((hi - lo + 1) as usize) as u32)
        })
        .collect()
}

/// Lines as agents count them, at least `min_bytes` of them, made to meet every rule of
/// where the memo of lines may cut a text (`src/tokens/lines.rs`): indentation of spaces,
/// tabs and Unicode spaces, lines starting with `/`, every line ending (`\r\n`, a lone
/// `\r`, blank lines, white space before the newline), the text's fragments, and now and
/// then a line of kilobytes, of words or of one unbroken run.
pub fn lines(rng: &mut Rng, min_bytes: usize) -> String {
    const INDENTS: &[&str] = &["", "", "", "  ", "    ", "\t", " \t", "\u{3000}", "\u{a0}", "\u{85}", "        "];
    const STARTS: &[&str] = &["", "", "", "", "/", "//", "*/", "/// ", "'s ", "- ", "# ", "}", "\u{2028}"];
    const ENDS: &[&str] = &["\n", "\n", "\n", "\r\n", "\n\n", " \n", "  \r\n", "\n \n", "\r", "\n\t\n", ""];
    let mut text = String::with_capacity(min_bytes + 8192);
    while text.len() < min_bytes {
        text.push_str(rng.pick(INDENTS));
        text.push_str(rng.pick(STARTS));
        match rng.below(40) {
            0 => (0..rng.between(600, 1400)).for_each(|_| {
                text.push_str(rng.pick(ENGLISH));
                text.push(' ');
            }),
            1 => text.push_str(&base64(rng, 5000, 9000)),
            _ => (0..rng.between(1, 6)).for_each(|_| text.push_str(&fragment(rng))),
        }
        text.push_str(rng.pick(ENDS));
    }
    text
}
