//! The README is short and the reference lives in `docs/`: every page there is linked from the
//! README, and every relative link of the README and the pages leads to a file that exists and,
//! where it names a section (`page.md#section`), to a heading of that file.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    pages.sort();
    pages
}

/// The targets of the inline links `[text](target)` of a Markdown text, outside code blocks.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            found.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    found
}

/// GitHub's anchor of a heading: lower case, spaces to hyphens, punctuation but `-` and `_` dropped.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut in_code = false;
    let mut set = BTreeSet::new();
    for line in text.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        }
        if in_code || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#').trim();
        let anchor: String = title
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        set.insert(anchor);
    }
    set
}

#[test]
fn every_page_of_docs_is_linked_from_the_readme() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let linked: BTreeSet<String> = links(&readme).into_iter().map(|link| link.split('#').next().unwrap().to_string()).collect();
    let pages = pages();
    assert!(pages.len() >= 10, "{pages:?}");
    for page in pages {
        let name = format!("docs/{}", page.file_name().unwrap().to_str().unwrap());
        assert!(linked.contains(&name), "the README does not link {name}");
    }
}

#[test]
fn every_relative_link_leads_to_a_file_and_a_heading() {
    let mut files = vec![root().join("README.md")];
    files.extend(pages());
    let mut checked = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for link in links(&text) {
            if link.starts_with("http://") || link.starts_with("https://") {
                continue;
            }
            let (path, anchor) = link.split_once('#').map_or((link.as_str(), None), |(p, a)| (p, Some(a)));
            let target = if path.is_empty() { file.clone() } else { file.parent().unwrap().join(path) };
            assert!(target.exists(), "{}: the link {link} leads nowhere", file.display());
            if let Some(anchor) = anchor {
                let headings = anchors(&std::fs::read_to_string(&target).unwrap());
                assert!(headings.contains(anchor), "{}: {link}: no such heading in {}", file.display(), target.display());
            }
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} links");
}
