//! The "start here" index at the top of `include/ctxwin.h` names only functions the header
//! declares, in the order an agent calls them (the header itself is drift-checked by
//! `make check-header`).

const HEADER: &str = include_str!("../include/ctxwin.h");

fn start_here() -> &'static str {
    let start = HEADER.find("Start here").expect("the header opens with a start-here index");
    let end = start + HEADER[start..].find("API conventions").expect("the conventions follow the index");
    &HEADER[start..end]
}

fn declared(name: &str) -> bool {
    HEADER.lines().any(|line| !line.trim_start().starts_with('*') && line.contains(&format!(" {name}(")))
}

#[test]
fn the_index_names_declared_functions_in_the_order_of_use() {
    let index = start_here();
    let names: Vec<&str> =
        index.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|word| word.starts_with("ctxwin_")).collect();
    assert!(names.len() >= 25, "{names:?}");
    for name in &names {
        assert!(declared(name), "the index names {name}, which the header does not declare");
    }
    let position = |name: &str| index.find(name).unwrap_or_else(|| panic!("{name} is not in the index"));
    let order = [
        "ctxwin_window_new",
        "ctxwin_window_configure",
        "ctxwin_window_push",
        "ctxwin_window_end_turn",
        "ctxwin_window_view_get",
        "ctxwin_window_summary_request",
        "ctxwin_last_error",
        "ctxwin_window_save",
    ];
    for pair in order.windows(2) {
        assert!(position(pair[0]) < position(pair[1]), "{} comes before {}", pair[0], pair[1]);
    }
    assert!(HEADER.find("Start here") < HEADER.find("ctxwin_window_new("), "the index comes first");
}
