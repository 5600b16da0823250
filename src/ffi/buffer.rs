//! Strings out through the caller's buffer: `(char *buf, size_t cap, size_t *needed)`.

use super::error::{FfiError, ctxwin_status};
use libc::c_char;

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
        // SAFETY: `needed` is NULL or writable, as `new`'s caller promised.
        if let Some(needed) = unsafe { self.needed.as_mut() } {
            *needed = text.len();
        }
        if self.cap == 0 {
            return Ok(());
        }
        let mut copy = text.len().min(self.cap - 1);
        while !text.is_char_boundary(copy) {
            copy -= 1;
        }
        // SAFETY: `buf` holds `cap` writable bytes (`new` checked it is not NULL when `cap` is
        // not 0) and `copy + 1 <= cap`; `text` is the library's own memory, not the caller's.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), self.buf.cast::<u8>(), copy);
            *self.buf.add(copy) = 0;
        }
        if text.len() < self.cap {
            Ok(())
        } else {
            Err(FfiError::new(
                ctxwin_status::BufferTooSmall,
                format!("buffer of {} bytes is too small: {} needed including the NUL", self.cap, text.len() + 1),
            ))
        }
    }
}
