//! The core's modules import each other in one direction only: no import circles between the
//! top-level modules of `src/` (the C shims in `src/ffi/` and the program in `src/bin/` sit on
//! top and are left out). Each `crate::` path in a module's code (doc comments, comments and
//! `#[cfg(test)]` modules left out) is an edge from the module to the top-level module it
//! names; the test fails naming a circle if the graph has one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module's code without comments and without its `#[cfg(test)]` modules (which sit at
/// the end of a file by the project's style).
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod ") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines().map(|line| line.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// The top-level modules named by `crate::` paths in `code`, braces included
/// (`crate::{a, b::c}`).
fn named(code: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            names.extend(group.split(',').filter_map(|item| item.trim().split("::").next()).map(str::to_owned));
        } else {
            let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
            names.insert(rest[..end].to_owned());
        }
    }
    names.retain(|name| !name.is_empty());
    names
}

/// A circle in `graph`, if any, as the modules along it.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut found = path[at..].to_vec();
            found.push(node.to_owned());
            return Some(found);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_core_has_no_import_circles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let top = |path: &Path| {
        let relative = path.strip_prefix(&src).unwrap();
        let first = relative.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
        first.trim_end_matches(".rs").to_owned()
    };
    let modules: BTreeSet<String> =
        files.iter().map(|f| top(f)).filter(|m| !["lib", "ffi", "bin"].contains(&m.as_str())).collect();
    assert!(modules.contains("window") && modules.contains("strategy") && modules.contains("json"), "{modules:?}");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let module = top(file);
        if !modules.contains(&module) {
            continue;
        }
        let edges = graph.entry(module.clone()).or_default();
        for name in named(&code(&std::fs::read_to_string(file).unwrap())) {
            if name != module && modules.contains(&name) {
                edges.insert(name);
            }
        }
    }
    assert!(graph["window"].contains("strategy"), "the scan sees the window's imports: {:?}", graph["window"]);
    assert_eq!(circle(&graph), None, "an import circle between the core's modules");
}

#[test]
fn a_circle_is_found() {
    let graph: BTreeMap<String, BTreeSet<String>> = [("a", vec!["b"]), ("b", vec!["c"]), ("c", vec!["a"]), ("d", vec!["a"])]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.into_iter().map(str::to_owned).collect()))
        .collect();
    assert_eq!(circle(&graph), Some(vec!["a".to_owned(), "b".to_owned(), "c".to_owned(), "a".to_owned()]));
    assert_eq!(
        named("use crate::{tokens::Count, view};\nlet x = crate::json::parse(y);"),
        ["json", "tokens", "view"].map(str::to_owned).into()
    );
}
