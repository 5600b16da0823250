//! The panic boundary and the argument checks every exported function shares.
//!
//! Every exported body runs inside [`ffi_boundary!`]: a panic never unwinds into C. Functions
//! on a handle also poison it (see `handle.rs`).

use super::error::{FfiError, ctxwin_status};
use libc::c_char;

/// What an exported function returns when its handle argument is NULL or when a panic was
/// caught before any handle could be poisoned.
pub trait Fallback {
    /// The value for a NULL required argument.
    fn null_arg() -> Self;
    /// The value after a caught panic.
    fn panicked() -> Self;
}

impl Fallback for ctxwin_status {
    fn null_arg() -> Self {
        ctxwin_status::NullArg
    }
    fn panicked() -> Self {
        ctxwin_status::Panic
    }
}

macro_rules! zero_fallback {
    ($($t:ty => $zero:expr),* $(,)?) => {$(
        impl Fallback for $t {
            fn null_arg() -> Self { $zero }
            fn panicked() -> Self { $zero }
        }
    )*};
}
zero_fallback!(usize => 0, u32 => 0, i32 => 0, bool => false, () => ());

/// Functions returning a static string never return NULL: the fallback is "".
impl Fallback for *const c_char {
    fn null_arg() -> Self {
        c"".as_ptr()
    }
    fn panicked() -> Self {
        c"".as_ptr()
    }
}

/// Runs an exported function's body, turning a panic into the return type's
/// [`Fallback::panicked`] value.
macro_rules! ffi_boundary {
    ($($body:tt)*) => {
        match ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(|| { $($body)* })) {
            Ok(value) => value,
            Err(_) => {
                $crate::ffi::last_error::record("internal error: the library caught a panic");
                $crate::ffi::boundary::Fallback::panicked()
            }
        }
    };
}
pub(crate) use ffi_boundary;

/// Borrows a `*const` handle, or returns the function's [`Fallback::null_arg`] value.
macro_rules! try_ref {
    ($ptr:expr) => {
        // SAFETY: the caller passes NULL or a live handle from this library (documented on
        // every function); NULL is handled here.
        match unsafe { $ptr.as_ref() } {
            Some(handle) => handle,
            None => {
                $crate::ffi::last_error::record(concat!(stringify!($ptr), " is NULL"));
                return $crate::ffi::boundary::Fallback::null_arg();
            }
        }
    };
}
pub(crate) use try_ref;

/// Borrows a `*mut` handle, or returns the function's [`Fallback::null_arg`] value.
macro_rules! try_mut {
    ($ptr:expr) => {
        // SAFETY: as for `try_ref!`, and the caller does not use the handle from another
        // thread at the same time (documented on every function).
        match unsafe { $ptr.as_mut() } {
            Some(handle) => handle,
            None => {
                $crate::ffi::last_error::record(concat!(stringify!($ptr), " is NULL"));
                return $crate::ffi::boundary::Fallback::null_arg();
            }
        }
    };
}
pub(crate) use try_mut;

/// Borrows the UTF-8 string `(ptr, len)`. `(NULL, 0)` is the empty string.
///
/// # Safety
/// `ptr` is NULL or points to `len` readable bytes that stay unchanged during the call.
pub unsafe fn str_arg<'a>(ptr: *const c_char, len: usize, name: &str) -> Result<&'a str, FfiError> {
    // SAFETY: forwarded from this function's contract.
    let bytes = unsafe { bytes_arg(ptr, len, name) }?;
    std::str::from_utf8(bytes).map_err(|e| {
        FfiError::new(
            ctxwin_status::InvalidUtf8,
            format!("{name} is not valid UTF-8: invalid byte at offset {}", e.valid_up_to()),
        )
    })
}

/// Borrows the bytes `(ptr, len)`. `(NULL, 0)` is empty; NULL with a length is NULL_ARG.
///
/// # Safety
/// `ptr` is NULL or points to `len` readable bytes that stay unchanged during the call.
pub unsafe fn bytes_arg<'a>(ptr: *const c_char, len: usize, name: &str) -> Result<&'a [u8], FfiError> {
    // SAFETY: forwarded from this function's contract.
    unsafe { slice_arg(ptr.cast::<u8>(), len, name) }
}

/// Borrows the array `(ptr, len)` of `len` elements. `(NULL, 0)` is empty; NULL with a length
/// is NULL_ARG.
///
/// # Safety
/// `ptr` is NULL or points to `len` readable, aligned, initialised `T`s that stay unchanged during the
/// call.
pub unsafe fn slice_arg<'a, T>(ptr: *const T, len: usize, name: &str) -> Result<&'a [T], FfiError> {
    if ptr.is_null() {
        return if len == 0 {
            Ok(&[])
        } else {
            Err(FfiError::new(ctxwin_status::NullArg, format!("{name} is NULL but its length is {len}")))
        };
    }
    if len.checked_mul(size_of::<T>()).is_none_or(|bytes| bytes > isize::MAX as usize) {
        return Err(FfiError::new(ctxwin_status::InvalidArg, format!("{name} length {len} is impossible")));
    }
    // SAFETY: non-NULL, size bounded by isize::MAX, and readable per this function's contract.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// Borrows the required out-parameter `ptr`.
///
/// # Safety
/// `ptr` is NULL or points to a writable `T`.
pub unsafe fn out_arg<'a, T>(ptr: *mut T, name: &str) -> Result<&'a mut T, FfiError> {
    // SAFETY: forwarded from this function's contract.
    unsafe { ptr.as_mut() }.ok_or_else(|| FfiError::new(ctxwin_status::NullArg, format!("{name} is NULL")))
}

/// Borrows the required in-parameter `ptr`.
///
/// # Safety
/// `ptr` is NULL or points to a readable `T` that stays unchanged during the call.
pub unsafe fn in_arg<'a, T>(ptr: *const T, name: &str) -> Result<&'a T, FfiError> {
    // SAFETY: forwarded from this function's contract.
    unsafe { ptr.as_ref() }.ok_or_else(|| FfiError::new(ctxwin_status::NullArg, format!("{name} is NULL")))
}

/// Stores `value` in the optional out-parameter `ptr`; NULL stores nothing.
///
/// # Safety
/// `ptr` is NULL or points to a writable `T`.
pub unsafe fn write_optional<T>(ptr: *mut T, value: T) {
    // SAFETY: forwarded from this function's contract.
    if let Some(out) = unsafe { ptr.as_mut() } {
        *out = value;
    }
}
