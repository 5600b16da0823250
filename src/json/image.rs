//! Image tokens by each provider's published rule, and image dimensions read from the
//! header of base64 PNG, JPEG, GIF or WebP data.

use crate::tokens::Count;
use base64::Engine;

/// Dimensions assumed when an image's size cannot be read (a URL, an unknown encoding).
/// The count is then flagged as an estimate.
pub const DEFAULT_DIMENSIONS: (u32, u32) = (1024, 1024);

/// Whose published rule turns an image into tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageRule {
    /// OpenAI: 85 tokens at low detail; at high (or auto) detail the image is scaled to fit
    /// 2048x2048, then its shortest side to 768, and costs 85 + 170 per 512px tile.
    OpenAi {
        /// `"detail": "low"`.
        low_detail: bool,
    },
    /// Anthropic: width * height / 750 after scaling the long edge to at most 1568 pixels,
    /// at most 1600 tokens. Anthropic calls this an approximation, so it is an estimate.
    Anthropic,
    /// Gemini: 258 tokens when both sides are at most 384 pixels, otherwise 258 per 768x768
    /// tile. Documented for Gemini 2.x only, so always an estimate.
    Gemini,
}

impl ImageRule {
    /// Tokens of an image of `dimensions` (width, height); `None` uses
    /// [`DEFAULT_DIMENSIONS`] and flags the count as an estimate.
    pub fn tokens(self, dimensions: Option<(u32, u32)>) -> Count {
        let (width, height) = dimensions.unwrap_or(DEFAULT_DIMENSIONS);
        let (width, height) = (u64::from(width.max(1)), u64::from(height.max(1)));
        let tokens = match self {
            ImageRule::OpenAi { low_detail: true } => 85,
            ImageRule::OpenAi { low_detail: false } => openai_tiles(width, height),
            ImageRule::Anthropic => anthropic_area(width, height),
            ImageRule::Gemini => gemini_tiles(width, height),
        };
        let tokens = u32::try_from(tokens).unwrap_or(u32::MAX);
        let exact = match self {
            ImageRule::OpenAi { low_detail } => low_detail || dimensions.is_some(),
            ImageRule::Anthropic | ImageRule::Gemini => false,
        };
        if exact { Count::exact(tokens) } else { Count::estimate(tokens) }
    }
}

/// `(width, height)` scaled down (never up), keeping the aspect ratio, until its long side
/// (`long`) or its short side (`!long`) is at most `limit`.
fn fit(width: u64, height: u64, limit: u64, long: bool) -> (u64, u64) {
    let side = if long { width.max(height) } else { width.min(height) };
    if side <= limit {
        return (width, height);
    }
    // Integer scaling, rounding down as image resizers do; never below one pixel.
    ((width * limit / side).max(1), (height * limit / side).max(1))
}

fn openai_tiles(width: u64, height: u64) -> u64 {
    let (w, h) = fit(width, height, 2048, true);
    let (w, h) = fit(w, h, 768, false);
    85 + 170 * w.div_ceil(512) * h.div_ceil(512)
}

fn anthropic_area(width: u64, height: u64) -> u64 {
    let (w, h) = fit(width, height, 1568, true);
    (w * h).div_ceil(750).min(1600)
}

fn gemini_tiles(width: u64, height: u64) -> u64 {
    if width <= 384 && height <= 384 { 258 } else { 258 * width.div_ceil(768) * height.div_ceil(768) }
}

/// Base64 characters decoded at most to find an image's dimensions (JPEG headers can sit
/// behind large EXIF segments).
const HEADER_BASE64_LIMIT: usize = 256 * 1024;

/// The dimensions in the header of base64 image data, or of a `data:` URL's payload.
pub fn base64_dimensions(data: &str) -> Option<(u32, u32)> {
    let payload = match data.strip_prefix("data:") {
        Some(url) => url.split_once(";base64,")?.1,
        None => data,
    };
    let mut prefix = &payload[..payload.len().min(HEADER_BASE64_LIMIT)];
    prefix = &prefix[..prefix.len() - prefix.len() % 4];
    let bytes = base64::engine::general_purpose::STANDARD.decode(prefix).ok()?;
    dimensions(&bytes)
}

/// The dimensions in a PNG, GIF, WebP or JPEG header.
pub fn dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some((be32(bytes, 16)?, be32(bytes, 20)?));
    }
    if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        return Some((u32::from(le16(bytes, 6)?), u32::from(le16(bytes, 8)?)));
    }
    if bytes.starts_with(b"RIFF") && bytes.get(8..12) == Some(b"WEBP") {
        return webp_dimensions(bytes);
    }
    if bytes.starts_with(b"\xff\xd8") {
        return jpeg_dimensions(bytes);
    }
    None
}

fn webp_dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    match bytes.get(12..16)? {
        b"VP8 " => Some((u32::from(le16(bytes, 26)? & 0x3fff), u32::from(le16(bytes, 28)? & 0x3fff))),
        b"VP8L" => {
            let bits = u32::from_le_bytes(bytes.get(21..25)?.try_into().ok()?);
            Some(((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1))
        }
        b"VP8X" => Some((le24(bytes, 24)? + 1, le24(bytes, 27)? + 1)),
        _ => None,
    }
}

/// Walks the JPEG segments to the first start-of-frame marker.
fn jpeg_dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    let mut at = 2;
    loop {
        while *bytes.get(at)? != 0xff {
            at += 1;
        }
        while *bytes.get(at)? == 0xff {
            at += 1;
        }
        let marker = *bytes.get(at)?;
        at += 1;
        if matches!(marker, 0xd8 | 0x01 | 0xd0..=0xd7) {
            continue; // markers without a length
        }
        let length = usize::from(be16(bytes, at)?);
        let is_frame = matches!(marker, 0xc0..=0xcf) && !matches!(marker, 0xc4 | 0xc8 | 0xcc);
        if is_frame {
            return Some((u32::from(be16(bytes, at + 5)?), u32::from(be16(bytes, at + 3)?)));
        }
        at += length;
    }
}

fn be16(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}

fn le16(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}

fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

fn le24(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at + 3)?;
    Some(u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_matches_the_published_examples() {
        // OpenAI's vision guide: 1024x1024 high detail = 765; 2048x4096 = 1105; low = 85.
        let high = ImageRule::OpenAi { low_detail: false };
        assert_eq!(high.tokens(Some((1024, 1024))), Count::exact(765));
        assert_eq!(high.tokens(Some((2048, 4096))), Count::exact(1105));
        assert_eq!(ImageRule::OpenAi { low_detail: true }.tokens(Some((4096, 4096))), Count::exact(85));
        assert_eq!(high.tokens(None), Count::estimate(765));
    }

    #[test]
    fn anthropic_and_gemini_are_estimates() {
        // Anthropic's vision guide: 1092x1092 is about 1590 tokens; 200x200 about 54.
        assert_eq!(ImageRule::Anthropic.tokens(Some((1092, 1092))), Count::estimate(1590));
        assert_eq!(ImageRule::Anthropic.tokens(Some((200, 200))), Count::estimate(54));
        assert_eq!(ImageRule::Anthropic.tokens(Some((8000, 8000))), Count::estimate(1600));
        assert_eq!(ImageRule::Gemini.tokens(Some((384, 300))), Count::estimate(258));
        assert_eq!(ImageRule::Gemini.tokens(Some((1000, 700))), Count::estimate(516));
    }

    #[test]
    fn reads_dimensions_from_headers() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&640u32.to_be_bytes());
        png.extend_from_slice(&480u32.to_be_bytes());
        assert_eq!(dimensions(&png), Some((640, 480)));
        let gif = b"GIF89a\x20\x03\x58\x02rest";
        assert_eq!(dimensions(gif), Some((800, 600)));
        // SOI, an APP0 segment of length 4, then SOF0 with height 300 and width 500.
        let jpeg = b"\xff\xd8\xff\xe0\x00\x04ab\xff\xc0\x00\x11\x08\x01\x2c\x01\xf4\x03";
        assert_eq!(dimensions(jpeg), Some((500, 300)));
        let mut webp = b"RIFF\0\0\0\0WEBPVP8X\0\0\0\0\0\0\0\0".to_vec();
        webp.extend_from_slice(&[0x7f, 0x02, 0x00, 0xdf, 0x01, 0x00]);
        assert_eq!(dimensions(&webp), Some((640, 480)));
        assert_eq!(dimensions(b"not an image"), None);
        let encoded = base64::engine::general_purpose::STANDARD.encode(&png);
        assert_eq!(base64_dimensions(&format!("data:image/png;base64,{encoded}")), Some((640, 480)));
        assert_eq!(base64_dimensions(&encoded), Some((640, 480)));
        assert_eq!(base64_dimensions("https://example.com/cat.png"), None);
    }
}
