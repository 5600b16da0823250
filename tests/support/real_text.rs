//! A deterministic corpus of real text from files on the machine: source code, documentation
//! prose and configuration files, as an agent reads them.
//!
//! Sources, each listed sorted by path:
//! - code: the `.rs`, `.c`, `.h`, `.py` and `.sh` files of the crates in cargo's registry
//!   (`$CARGO_HOME/registry/src`);
//! - documentation: the crates' `.md` files, and the Rust toolchain's books (the book, the
//!   reference, Rust by Example, the Nomicon, the edition guide, cargo's and rustc's books),
//!   the text of their HTML pages' `<main>` (tags dropped, entities decoded);
//! - data: the crates' `.toml`, `.json`, `.yml` files and `/usr/share/doc/*/copyright`.
//!
//! Each text is a run of whole lines from one file picked by a seeded generator (45% code,
//! 45% documentation, 10% data), 200 to 4,000 bytes long (log-uniform). The same files give
//! the same texts on every run. Included with `#[path]` by the targets that need it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

#[path = "rng.rs"]
mod rng;
pub use rng::Rng;

/// Where a text came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Code,
    Docs,
    Data,
}

/// The shortest text the corpus holds, in bytes.
pub const MIN_BYTES: usize = 200;
const MAX_BYTES: usize = 4000;

/// `count` texts of real text (see the module's documentation), with their kind.
///
/// Panics when a source group has no readable file (no cargo registry, no toolchain docs).
pub fn texts(count: usize, seed: u64) -> Vec<(Kind, String)> {
    excerpts(count, seed).into_iter().map(|excerpt| (excerpt.kind, excerpt.text)).collect()
}

/// One text of the corpus with where it came from.
#[derive(Clone, Debug)]
pub struct Excerpt {
    pub kind: Kind,
    /// The file's path below its source root (a crate's directory in cargo's registry, the
    /// toolchain's HTML books, `/usr/share/doc`), as an agent's tools would name it.
    pub path: String,
    /// The 1-based line of the file the text starts at.
    pub line: usize,
    pub text: String,
}

/// `count` texts of real text with their file and line: the same texts as [`texts`] gives
/// for `seed`.
pub fn excerpts(count: usize, seed: u64) -> Vec<Excerpt> {
    let groups = [(Kind::Code, code_files()), (Kind::Docs, doc_files()), (Kind::Data, data_files())];
    for (kind, files) in &groups {
        assert!(!files.is_empty(), "no {kind:?} files found for the real-text corpus");
    }
    let mut rng = Rng::new(seed);
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let roll = rng.below(100);
        let (kind, files) = &groups[if roll < 45 {
            0
        } else if roll < 90 {
            1
        } else {
            2
        }];
        let path = &files[rng.below(files.len())];
        let Some(content) = read(path) else { continue };
        let want = (MIN_BYTES as f64 * ((MAX_BYTES / MIN_BYTES) as f64).powf(rng.below(1001) as f64 / 1000.0)) as usize;
        if let Some((line, text)) = excerpt(&content, want, &mut rng) {
            out.push(Excerpt { kind: *kind, path: relative(path), line, text });
        }
    }
    out
}

/// `path` below its source root: what follows the registry's index directory, the
/// toolchain's `html` directory or `/usr/share/doc`.
fn relative(path: &Path) -> String {
    let text = path.to_string_lossy();
    let registry = cargo_registry();
    if let Ok(rest) = path.strip_prefix(&registry) {
        // <index>/<crate-version>/...: the crate's directory on.
        return rest.components().skip(1).collect::<PathBuf>().to_string_lossy().into_owned();
    }
    for root in ["/share/doc/rust/html/", "/usr/share/doc/"] {
        if let Some(at) = text.find(root) {
            return text[at + root.len()..].to_owned();
        }
    }
    path.file_name().map_or_else(String::new, |name| name.to_string_lossy().into_owned())
}

/// A run of whole lines of `content`, starting at a random line, at least `want` bytes
/// (or to the end of the file), with its 1-based first line; None when that leaves fewer
/// than `MIN_BYTES`.
fn excerpt(content: &str, want: usize, rng: &mut Rng) -> Option<(usize, String)> {
    let lines: Vec<&str> = content.split_inclusive('\n').collect();
    let start = rng.below(lines.len().max(1));
    let mut text = String::new();
    for line in &lines[start.min(lines.len())..] {
        if text.len() >= want {
            break;
        }
        text.push_str(line);
    }
    let text = text.trim_end_matches('\n').to_owned();
    (text.trim().len() >= MIN_BYTES).then_some((start + 1, text))
}

fn read(path: &Path) -> Option<String> {
    let content = std::fs::read_to_string(path).ok()?;
    if path.extension().is_some_and(|e| e == "html") {
        return Some(html_text(&content));
    }
    Some(content)
}

/// The text of an HTML page's `<main>` element (the whole page without one): tags dropped,
/// `<script>`/`<style>` contents dropped, the common entities decoded, blank lines collapsed.
fn html_text(page: &str) -> String {
    let body = match (page.find("<main"), page.rfind("</main>")) {
        (Some(start), Some(end)) if start < end => &page[start..end],
        _ => page,
    };
    let mut text = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(open) = rest.find('<') {
        text.push_str(&rest[..open]);
        rest = &rest[open..];
        let skip_to = ["<script", "<style"].iter().find(|tag| rest.starts_with(**tag)).map(|tag| format!("</{}>", &tag[1..]));
        let end = match skip_to {
            Some(close) => rest.find(&close).map(|at| at + close.len()),
            None => rest.find('>').map(|at| at + 1),
        };
        rest = &rest[end.unwrap_or(rest.len())..];
    }
    text.push_str(rest);
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&");
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines() {
        blank = if line.trim().is_empty() { blank + 1 } else { 0 };
        if blank <= 1 {
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    out
}

fn cargo_registry() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")))
        .expect("CARGO_HOME or HOME is set")
        .join("registry")
        .join("src")
}

fn registry_files(extensions: &[&str]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    collect(
        &cargo_registry(),
        &mut |path| path.extension().and_then(|e| e.to_str()).is_some_and(|e| extensions.contains(&e)),
        &mut files,
    );
    files.sort();
    files
}

fn code_files() -> Vec<PathBuf> {
    registry_files(&["rs", "c", "h", "py", "sh"])
}

fn doc_files() -> Vec<PathBuf> {
    let mut files = registry_files(&["md"]);
    if let Some(html) = toolchain_html() {
        let mut pages = Vec::new();
        for book in ["book", "reference", "rust-by-example", "nomicon", "edition-guide", "cargo", "rustc"] {
            collect(
                &html.join(book),
                &mut |path| {
                    path.extension().is_some_and(|e| e == "html")
                        && !path.file_name().is_some_and(|n| n == "print.html" || n == "404.html" || n == "toc.html")
                },
                &mut pages,
            );
        }
        pages.sort();
        files.extend(pages);
    }
    files
}

fn data_files() -> Vec<PathBuf> {
    let mut files = registry_files(&["toml", "json", "yml", "yaml"]);
    let mut copyrights = Vec::new();
    collect(Path::new("/usr/share/doc"), &mut |path| path.file_name().is_some_and(|n| n == "copyright"), &mut copyrights);
    copyrights.sort();
    files.extend(copyrights);
    files
}

/// The HTML documentation of the toolchain `rustc` runs (`rustc --print sysroot`).
fn toolchain_html() -> Option<PathBuf> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = std::process::Command::new(rustc).args(["--print", "sysroot"]).output().ok()?;
    let sysroot = String::from_utf8(out.stdout).ok()?;
    let html = Path::new(sysroot.trim()).join("share/doc/rust/html");
    html.is_dir().then_some(html)
}

fn collect(dir: &Path, keep: &mut dyn FnMut(&Path) -> bool, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => collect(&path, keep, files),
            Ok(kind) if kind.is_file() && keep(&path) => files.push(path),
            _ => {}
        }
    }
}
