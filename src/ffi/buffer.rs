//! Strings out through the caller's buffer: `(char *buf, size_t cap, size_t *needed)`.

use super::error::{FfiError, ctxwin_status};
use libc::c_char;

/// Copies `text` into `buf` as a NUL-terminated string and stores its full length (without
/// the NUL) in `*needed` when `needed` is not NULL.
///
/// Writes at most `cap` bytes including the NUL. When `text` does not fit, writes the longest
/// prefix that ends on a character boundary and returns BUFFER_TOO_SMALL. `cap = 0` (with
/// `buf` NULL or not) only queries the length and succeeds.
///
/// # Safety
/// `buf` is NULL or points to `cap` writable bytes; `needed` is NULL or writable.
pub unsafe fn write_str(text: &str, buf: *mut c_char, cap: usize, needed: *mut usize) -> Result<(), FfiError> {
    if buf.is_null() && cap != 0 {
        return Err(FfiError::new(ctxwin_status::NullArg, format!("buf is NULL but cap is {cap}")));
    }
    // SAFETY: `needed` is NULL or writable per this function's contract.
    if let Some(needed) = unsafe { needed.as_mut() } {
        *needed = text.len();
    }
    if cap == 0 {
        return Ok(());
    }
    let mut copy = text.len().min(cap - 1);
    while !text.is_char_boundary(copy) {
        copy -= 1;
    }
    // SAFETY: `buf` holds `cap` writable bytes and `copy + 1 <= cap`; `text` does not overlap
    // the caller's buffer (it is the library's own memory).
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), copy);
        *buf.add(copy) = 0;
    }
    fits(text.len(), cap)
}

fn fits(len: usize, cap: usize) -> Result<(), FfiError> {
    if len < cap {
        Ok(())
    } else {
        Err(FfiError::new(
            ctxwin_status::BufferTooSmall,
            format!("buffer of {cap} bytes is too small: {} needed including the NUL", len + 1),
        ))
    }
}
