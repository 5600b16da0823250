//! Strings out through the caller's buffer: `(char *buf, size_t cap, size_t *needed)`.

use super::error::{FfiError, ctxwin_status};
use libc::c_char;
use std::io::{self, Write};

/// A caller's output buffer, checked before the function does any work, so that a NULL
/// buffer is reported as NULL_ARG whatever else would fail.
pub struct OutBuffer {
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
}

impl OutBuffer {
    /// Checks the caller's buffer: `buf` may be NULL only when `cap` is 0 (a length query);
    /// `needed` may be NULL.
    ///
    /// # Safety
    /// `buf` is NULL or points to `cap` writable bytes and `needed` is NULL or writable, both
    /// until the [`OutBuffer`] is dropped.
    pub unsafe fn new(buf: *mut c_char, cap: usize, needed: *mut usize) -> Result<OutBuffer, FfiError> {
        if buf.is_null() && cap != 0 {
            return Err(FfiError::new(ctxwin_status::NullArg, format!("buf is NULL but cap is {cap}")));
        }
        Ok(OutBuffer { buf, cap, needed })
    }

    /// Copies `text` into the buffer as a NUL-terminated string and stores its full length
    /// (without the NUL) in `*needed` when `needed` is not NULL.
    ///
    /// Writes at most `cap` bytes including the NUL. When `text` does not fit, writes the
    /// longest prefix that ends on a character boundary and returns BUFFER_TOO_SMALL. `cap = 0`
    /// only queries the length and succeeds.
    pub fn write(self, text: &str) -> Result<(), FfiError> {
        self.stream(|out| out.write_all(text.as_bytes()))
    }

    /// [`OutBuffer::write`] for UTF-8 text that `produce` writes piece by piece: the text is
    /// copied into the caller's buffer as it comes and never held whole, so a length query
    /// (`cap = 0`) only counts it. `produce` fails only if its writer does, which this one
    /// never does.
    pub fn stream(self, produce: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<(), FfiError> {
        let room = if self.buf.is_null() || self.cap == 0 {
            &mut [][..]
        } else {
            // SAFETY: `buf` holds `cap` writable bytes (`new` checked it is not NULL when
            // `cap` is not 0), of which the first `cap - 1` receive text, the last the NUL.
            unsafe { std::slice::from_raw_parts_mut(self.buf.cast::<u8>(), self.cap - 1) }
        };
        let mut sink = Sink { room, written: 0, total: 0, first_left_out: None };
        // The sink never fails, so neither does a producer that only writes to it.
        produce(&mut sink).expect("writing to memory cannot fail");
        // SAFETY: `needed` is NULL or writable, as `new`'s caller promised.
        if let Some(needed) = unsafe { self.needed.as_mut() } {
            *needed = sink.total;
        }
        if self.cap == 0 {
            return Ok(());
        }
        let copy = sink.boundary();
        // SAFETY: `copy <= cap - 1` and `buf` holds `cap` writable bytes.
        unsafe { *self.buf.add(copy) = 0 };
        if sink.total < self.cap {
            Ok(())
        } else {
            Err(FfiError::new(
                ctxwin_status::BufferTooSmall,
                format!("buffer of {} bytes is too small: {} needed including the NUL", self.cap, sink.total + 1),
            ))
        }
    }
}

/// Where streamed text goes: as much as fits into the caller's room, the rest only counted.
struct Sink<'a> {
    room: &'a mut [u8],
    written: usize,
    total: usize,
    /// The first byte that did not fit.
    first_left_out: Option<u8>,
}

impl Sink<'_> {
    /// How many of the written bytes to keep: all of them, less a character cut at the end.
    fn boundary(&self) -> usize {
        let left_out = |at: usize| if at < self.written { self.room.get(at).copied() } else { self.first_left_out };
        let mut copy = self.written;
        // A byte 0b10xxxxxx continues a character: the text must not end just before one.
        while copy > 0 && left_out(copy).is_some_and(|byte| byte & 0xC0 == 0x80) {
            copy -= 1;
        }
        copy
    }
}

impl Write for Sink<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let fits = bytes.len().min(self.room.len() - self.written);
        self.room[self.written..self.written + fits].copy_from_slice(&bytes[..fits]);
        self.written += fits;
        if fits < bytes.len() && self.first_left_out.is_none() {
            self.first_left_out = Some(bytes[fits]);
        }
        self.total += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Streams `pieces` into a buffer of `cap` bytes: the status, what the buffer holds, needed.
    fn streamed(pieces: &[&str], cap: usize) -> (ctxwin_status, String, usize) {
        let mut buf = vec![0x55u8; cap];
        let mut needed = usize::MAX;
        let ptr = if cap == 0 { std::ptr::null_mut() } else { buf.as_mut_ptr().cast() };
        // SAFETY: `ptr` is NULL with cap 0 or holds `cap` bytes; `needed` is writable.
        let out = unsafe { OutBuffer::new(ptr, cap, &mut needed) }.unwrap();
        let status = match out.stream(|out| pieces.iter().try_for_each(|piece| out.write_all(piece.as_bytes()))) {
            Ok(()) => ctxwin_status::Ok,
            Err(e) => e.status,
        };
        let text = buf.iter().position(|&b| b == 0).map_or(String::new(), |end| String::from_utf8(buf[..end].to_vec()).unwrap());
        (status, text, needed)
    }

    #[test]
    fn streamed_text_is_cut_on_a_character_boundary_like_written_text() {
        let pieces = ["ab", "\u{e9}", "\u{20ac}x", "", "\u{1f600}"];
        let whole: String = pieces.concat();
        assert_eq!(streamed(&pieces, 0), (ctxwin_status::Ok, String::new(), whole.len()));
        for cap in 1..whole.len() + 3 {
            let (status, text, needed) = streamed(&pieces, cap);
            let mut expected = whole.len().min(cap - 1);
            while !whole.is_char_boundary(expected) {
                expected -= 1;
            }
            assert_eq!(needed, whole.len());
            assert_eq!(text, whole[..expected], "cap {cap}");
            let fits = whole.len() < cap;
            assert_eq!(status, if fits { ctxwin_status::Ok } else { ctxwin_status::BufferTooSmall }, "cap {cap}");
        }
    }
}
