//! The library's runtime version, to compare with the header's `CTXWIN_VERSION_*` macros.

use super::boundary::ffi_boundary;
use libc::c_char;

/// The library version as a string, for example "0.2.0".
///
/// Returns a NUL-terminated string with static lifetime; do not free it.
///
/// Thread-safety: safe to call from any thread.
///
/// Since: 0.1
#[unsafe(no_mangle)]
#[must_use]
pub extern "C" fn ctxwin_version() -> *const c_char {
    ffi_boundary! { concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast() }
}

/// The library version as `MAJOR * 1000000 + MINOR * 1000 + PATCH`, equal to
/// `CTXWIN_VERSION_NUMBER` when the header and the library match.
///
/// Thread-safety: safe to call from any thread.
///
/// Since: 0.1
#[unsafe(no_mangle)]
#[must_use]
pub extern "C" fn ctxwin_version_number() -> u32 {
    ffi_boundary! { version_number() }
}

/// [`ctxwin_version_number`]'s value, computed from Cargo's version at compile time.
const fn version_number() -> u32 {
    const fn parse(s: &str) -> u32 {
        let bytes = s.as_bytes();
        let mut i = 0;
        let mut n = 0;
        while i < bytes.len() {
            n = n * 10 + (bytes[i] - b'0') as u32;
            i += 1;
        }
        n
    }
    parse(env!("CARGO_PKG_VERSION_MAJOR")) * 1_000_000
        + parse(env!("CARGO_PKG_VERSION_MINOR")) * 1_000
        + parse(env!("CARGO_PKG_VERSION_PATCH"))
}
