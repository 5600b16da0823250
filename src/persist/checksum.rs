//! The saved document's checksum, which makes a corrupted document fail to load instead of
//! loading as a different window: the member `"checksum":"crc32:xxxxxxxx"`, written last,
//! holds the CRC-32 (IEEE, as zlib's `crc32` computes it) of the document's compact JSON
//! without that member, its other members in the order they appear. A document without the
//! member (written before 0.3, or edited by hand and the member removed) loads unchecked; one
//! whose checksum sits under another name (a damaged name) is refused.
//!
//! The sum is over the document's meaning, not its bytes: the same document re-indented
//! still loads, but any changed value, name or order is refused.

use crate::error::{Error, ErrorKind, Result};
use serde_json::Value;
use std::io::{self, Write};

/// The member that holds the checksum.
pub const FIELD: &str = "checksum";

/// A writer that passes what it is given on to `inner` and sums it.
pub struct Summing<W> {
    inner: W,
    hasher: crc32fast::Hasher,
}

impl<W: Write> Summing<W> {
    /// Sums what is written to `inner`.
    pub fn new(inner: W) -> Summing<W> {
        Summing { inner, hasher: crc32fast::Hasher::new() }
    }

    /// Sums `bytes` without writing them.
    pub fn sum_only(&mut self, bytes: &[u8]) {
        self.hasher.update(bytes);
    }

    /// The checksum as the document states it (`crc32:` and eight hexadecimal digits), and
    /// the writer.
    pub fn finish(self) -> (String, W) {
        (format!("crc32:{:08x}", self.hasher.finalize()), self.inner)
    }
}

impl<W: Write> Write for Summing<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let written = self.inner.write(bytes)?;
        self.hasher.update(&bytes[..written]);
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Removes the checksum from a parsed `document` and checks it against the rest: PARSE,
/// naming `checksum`, when it is not a string or does not match. A document without one
/// passes.
pub fn verify(document: &mut Value) -> Result<()> {
    let Some(members) = document.as_object_mut() else { return Ok(()) };
    let Some(stated) = members.shift_remove(FIELD) else {
        // A checksum under another name is a damaged name, which must not turn the check off.
        if let Some((name, _)) = members.iter().find(|(_, value)| value.as_str().is_some_and(is_checksum)) {
            return Err(Error::new(
                ErrorKind::Parse,
                format!("checksum: the member {name:?} holds a checksum: the document was corrupted"),
            ));
        }
        return Ok(());
    };
    let mut sum = Summing::new(io::sink());
    serde_json::to_writer(&mut sum, document).expect("a JSON value serializes");
    let (actual, _) = sum.finish();
    match stated.as_str() {
        Some(stated) if stated == actual => Ok(()),
        Some(stated) => Err(Error::new(
            ErrorKind::Parse,
            format!(
                "checksum: the document states {stated} but its contents sum to {actual}: it was corrupted (or edited: \
                 remove the \"checksum\" member to load a document edited on purpose)"
            ),
        )),
        None => Err(Error::new(ErrorKind::Parse, "checksum: expected \"crc32:\" and eight hexadecimal digits")),
    }
}

/// Whether `text` has the shape of a checksum: `crc32:` and eight lowercase hexadecimal
/// digits.
fn is_checksum(text: &str) -> bool {
    text.strip_prefix("crc32:").is_some_and(|hex| hex.len() == 8 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_as_zlib_does() {
        // zlib.crc32(b"123456789") == 0xcbf43926, the CRC-32 check value.
        let mut sum = Summing::new(Vec::new());
        sum.write_all(b"12345").unwrap();
        sum.sum_only(b"6789");
        let (label, written) = sum.finish();
        assert_eq!(label, "crc32:cbf43926");
        assert_eq!(written, b"12345");
    }

    #[test]
    fn a_document_loads_only_with_its_own_checksum_or_none() {
        let body = r#"{"format":"x","messages":[{"text":"hello"}],"n":1.5}"#;
        let (label, _) = {
            let mut sum = Summing::new(io::sink());
            sum.write_all(body.as_bytes()).unwrap();
            sum.finish()
        };
        let with = |sum: &str| format!("{},\"checksum\":\"{sum}\"}}", &body[..body.len() - 1]);
        let mut ok: Value = serde_json::from_str(&with(&label)).unwrap();
        verify(&mut ok).unwrap();
        assert_eq!(ok.to_string(), body, "the member is removed, the order kept");
        // Re-indented, the same document.
        let pretty = serde_json::to_string_pretty(&serde_json::from_str::<Value>(&with(&label)).unwrap()).unwrap();
        verify(&mut serde_json::from_str(&pretty).unwrap()).unwrap();
        let mut none: Value = serde_json::from_str(body).unwrap();
        verify(&mut none).unwrap();
        for damaged in [with(&label).replace("hello", "hellp"), with(&label).replace("1.5", "1.4"), with("crc32:00000000")] {
            let err = verify(&mut serde_json::from_str(&damaged).unwrap()).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Parse);
            assert!(err.message().starts_with("checksum: the document states crc32:"), "{}", err.message());
        }
        let err = verify(&mut serde_json::from_str(&with(&label).replace(&format!("\"{label}\""), "7")).unwrap()).unwrap_err();
        assert!(err.message().starts_with("checksum: expected"), "{}", err.message());
        // The member's name damaged: refused, not read as a document without a checksum.
        let err = verify(&mut serde_json::from_str(&with(&label).replace("checksum", "checksuo")).unwrap()).unwrap_err();
        assert_eq!(err.message(), "checksum: the member \"checksuo\" holds a checksum: the document was corrupted");
    }
}
