//! Saving and restoring windows, and the caller's ids that tie messages to its own rows.
//! Thin shims over [`crate::persist`]; the format is documented in docs/persistence.md.

use super::boundary::{bytes_arg, ffi_boundary, out_arg, slice_arg, try_mut, try_ref};
use super::buffer::OutBuffer;
use super::error::{FfiError, ctxwin_status};
use super::handle::ctxwin_window;
use super::last_error;
use crate::persist;
use crate::window::Window;
use libc::c_char;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Runs a constructor and writes `*out` only when it succeeds.
///
/// # Safety
/// `out` is NULL or writable.
unsafe fn construct(out: *mut *mut ctxwin_window, build: impl FnOnce() -> Result<Window, FfiError>) -> ctxwin_status {
    // SAFETY: forwarded from this function's contract.
    let outcome = unsafe { out_arg(out, "out") }.and_then(|out| {
        *out = ctxwin_window::into_raw(build()?);
        Ok(())
    });
    last_error::settle(outcome)
}

/// Borrows the file path `(ptr, len)`: any bytes but NUL (paths need not be UTF-8).
///
/// # Safety
/// `ptr` is NULL or valid for `len` bytes.
pub(super) unsafe fn path_arg<'a>(ptr: *const c_char, len: usize) -> Result<&'a Path, FfiError> {
    // SAFETY: forwarded from this function's contract.
    let bytes = unsafe { bytes_arg(ptr, len, "path") }?;
    if bytes.is_empty() || bytes.contains(&0) {
        return Err(FfiError::new(ctxwin_status::InvalidArg, "path must be non-empty and contain no NUL byte"));
    }
    Ok(Path::new(OsStr::from_bytes(bytes)))
}

/// Borrows the saved document `(ptr, len)`: bytes that are not UTF-8 are a damaged document
/// (PARSE, as a truncated one is), not a caller's bad string.
///
/// # Safety
/// `ptr` is NULL or valid for `len` bytes.
unsafe fn document_arg<'a>(ptr: *const c_char, len: usize) -> Result<&'a str, FfiError> {
    // SAFETY: forwarded from this function's contract.
    let bytes = unsafe { bytes_arg(ptr, len, "json") }?;
    Ok(persist::document_text(bytes)?)
}

/// Ties message `index` to the caller's id for it, typically the database row that stores
/// it. Ids are saved and exported with the window, and `ctxwin_window_import_checked`
/// compares them with the caller's rows. Setting an id again replaces it.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG`, or `CTXWIN_STATUS_OUT_OF_RANGE` when
/// `index >= ctxwin_window_message_count(w)`.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_set_external_id(w: *mut ctxwin_window, index: usize, id: i64) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update(|window| Ok(window.set_external_id(index, id)?))
    }
}

/// Writes the window as a versioned JSON document (`{"format":"ctxwin-window","version":1,…}`,
/// described in docs/persistence.md): model, settings, overhead, every message with its count, text
/// (if retained), tool call id, provider JSON and external id, the boundary, the summary
/// state and compaction records, and the generation, then (since 0.3) a checksum that
/// `ctxwin_window_import` and `ctxwin_window_load` verify. The document is written into
/// `buf` as it is made, never held whole; a length query only counts it.
///
/// Parameters: `buf`, `cap`, `needed` follow the string-out convention;
/// `needed` may be NULL.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG` or `CTXWIN_STATUS_BUFFER_TOO_SMALL`.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle; `buf` is NULL or valid for `cap` bytes; `needed` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_export(
    w: *const ctxwin_window,
    buf: *mut c_char,
    cap: usize,
    needed: *mut usize,
) -> ctxwin_status {
    ffi_boundary! {
        try_ref!(w).inspect(|window| {
            // SAFETY: forwarded from this function's contract.
            let out = unsafe { OutBuffer::new(buf, cap, needed) }?;
            out.stream(|out| persist::write_document(window, out))
        })
    }
}

/// Creates a window from a document written by `ctxwin_window_export` or
/// `ctxwin_window_save`: the same ledger, boundary, summary, records and generation.
///
/// Parameters: `json`, `len` is borrowed UTF-8; `out` receives a new caller-owned handle
/// (release it with `ctxwin_window_free`), written only on success.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG`, `CTXWIN_STATUS_PARSE` (truncated,
/// corrupted or inconsistent, bytes that are not UTF-8 included: since 0.3 a document cut
/// inside a character is PARSE, not `CTXWIN_STATUS_INVALID_UTF8`) or
/// `CTXWIN_STATUS_UNSUPPORTED` (a newer format version, or a strategy this version lacks).
/// `ctxwin_last_error` explains a failure, naming the damaged field
/// (`messages[3].kind: expected 0 to 5`).
///
/// Thread-safety: safe to call from any thread.
///
/// Since: 0.1
///
/// # Safety
/// `json` is NULL or valid for `len` bytes; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_import(json: *const c_char, len: usize, out: *mut *mut ctxwin_window) -> ctxwin_status {
    ffi_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe {
            construct(out, || Ok(persist::import(document_arg(json, len)?)?))
        }
    }
}

/// `ctxwin_window_import`, then checks the window against the caller's rows: message `i`
/// must carry external id `ids[i]` (see `ctxwin_window_set_external_id`), for every message.
///
/// Parameters: `ids`, `n_ids` is a borrowed array of the caller's ids, one per message in
/// order; `out` as for `ctxwin_window_import`.
///
/// Returns what `ctxwin_window_import` returns, or `CTXWIN_STATUS_MISMATCH` when the counts
/// differ or a message's id is missing or different (nothing is created);
/// `ctxwin_last_error` explains a failure.
///
/// Thread-safety: safe to call from any thread.
///
/// Since: 0.1
///
/// # Safety
/// `json` is NULL or valid for `len` bytes; `ids` is NULL or valid for `n_ids` elements;
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_import_checked(
    json: *const c_char,
    len: usize,
    ids: *const i64,
    n_ids: usize,
    out: *mut *mut ctxwin_window,
) -> ctxwin_status {
    ffi_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe {
            construct(out, || Ok(persist::import_checked(document_arg(json, len)?, slice_arg(ids, n_ids, "ids")?)?))
        }
    }
}

/// Replaces the contents of `w` with a document written by `ctxwin_window_export` or
/// `ctxwin_window_save`, checked against the caller's ids when `ids` is not NULL (as
/// `ctxwin_window_import_checked`). On failure `w` is unchanged and
/// `ctxwin_window_last_error` names the damaged field.
///
/// Everything `w` held is replaced by the document's, not only the messages: the model (so a
/// window made for one model and restored from another's document counts for the
/// document's: `ctxwin_window_model` tells), every setting (`configure` keys, the format and
/// budget included), the overhead, the calibration, the boundary, the summaries and the
/// generation. Only a tokenizer set on `w` (`ctxwin_window_set_tokenizer`) stays, and the
/// restored messages are recounted with it; `ctxwin_window_tokenizer_changed` tells whether
/// the document was counted with another. To keep `w`'s model or settings, set them again
/// after the restore (`ctxwin_window_set_model`, `ctxwin_window_configure`).
///
/// Parameters: `w` is borrowed mutably; `json`, `len` is borrowed UTF-8; `ids`, `n_ids` is
/// NULL, 0 (no check) or a borrowed array.
///
/// Returns the statuses of `ctxwin_window_import_checked`.
///
/// Thread-safety: `w` must not be in use by another thread.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle; `json` is NULL or valid for `len` bytes; `ids` is NULL or
/// valid for `n_ids` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_restore(
    w: *mut ctxwin_window,
    json: *const c_char,
    len: usize,
    ids: *const i64,
    n_ids: usize,
) -> ctxwin_status {
    ffi_boundary! {
        try_mut!(w).update(|window| {
            let checked = !ids.is_null();
            // SAFETY: forwarded from this function's contract.
            let (json, ids) = unsafe { (document_arg(json, len)?, slice_arg(ids, n_ids, "ids")?) };
            let tokenizer = window.model().tokenizer().cloned();
            *window = if checked { persist::import_checked(json, ids)? } else { persist::import(json)? };
            if let Some(tokenizer) = tokenizer {
                window.set_tokenizer(tokenizer);
            }
            Ok(())
        })
    }
}

/// Saves the window to the file `path` atomically: the document is written to a temporary
/// file in the same directory, flushed to disk, renamed over `path`, and the directory is
/// flushed. A crash at any moment leaves the old file or the new one, never a broken one
/// (at worst a stray hidden `.NAME.ctxwin-PID-N.tmp` file, which the next save to the same
/// name removes once process PID has ended; only such files owned by the caller's user).
///
/// The file keeps its permission bits; a new file is created private (0600, less the
/// umask). A symbolic link is followed: the link stays and the file it names is replaced
/// (a dangling link creates that file). A path that names something other than a regular
/// file (a FIFO, a device, a directory) is refused and left as it is.
///
/// Parameters: `path`, `len` is a borrowed file path (bytes, not NUL-terminated).
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG`, `CTXWIN_STATUS_INVALID_ARG` (an
/// empty path or one with a NUL byte), `CTXWIN_STATUS_OUT_OF_RANGE` (a document above the
/// 1 GiB `ctxwin_window_load` reads; nothing is written) or `CTXWIN_STATUS_IO` (not a
/// regular file, or a system error: the message names the path and the reason).
///
/// Thread-safety: `w` must not be in use by another thread. Saving two windows to the same
/// path at once leaves one of them.
///
/// Since: 0.1
///
/// # Safety
/// `w` is NULL or a live handle; `path` is NULL or valid for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_save(w: *const ctxwin_window, path: *const c_char, len: usize) -> ctxwin_status {
    ffi_boundary! {
        try_ref!(w).inspect(|window| {
            // SAFETY: forwarded from this function's contract.
            let path = unsafe { path_arg(path, len) }?;
            Ok(persist::save(window, path)?)
        })
    }
}

/// Creates a window from the file `path` written by `ctxwin_window_save`.
///
/// Parameters: `path`, `len` is a borrowed file path; `out` receives a new caller-owned
/// handle (release it with `ctxwin_window_free`), written only on success.
///
/// The file is opened without blocking and read only if it is a regular file of at most
/// 1 GiB, so a FIFO, a device (`/dev/zero`) or a huge file is refused at once.
///
/// Returns `CTXWIN_STATUS_OK`, `CTXWIN_STATUS_NULL_ARG`, `CTXWIN_STATUS_INVALID_ARG` (bad
/// path), `CTXWIN_STATUS_IO` (unreadable, or not a regular file), `CTXWIN_STATUS_OUT_OF_RANGE`
/// (larger than 1 GiB), `CTXWIN_STATUS_PARSE` (truncated, corrupted or inconsistent) or
/// `CTXWIN_STATUS_UNSUPPORTED` (a newer format version). Nothing is
/// created on failure; `ctxwin_last_error` explains it (the path and the system error, or
/// the damaged field).
///
/// Thread-safety: safe to call from any thread.
///
/// Since: 0.1
///
/// # Safety
/// `path` is NULL or valid for `len` bytes; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ctxwin_window_load(path: *const c_char, len: usize, out: *mut *mut ctxwin_window) -> ctxwin_status {
    ffi_boundary! {
        // SAFETY: forwarded from this function's contract.
        unsafe {
            construct(out, || Ok(persist::load(path_arg(path, len)?)?))
        }
    }
}
