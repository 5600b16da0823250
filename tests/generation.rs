//! The generation: a view that only grows keeps it, any other change of what the view sends
//! moves it, and a summary answered steps late is taken while the steps it covers are still
//! the next to archive.

use ctxwin::view::ItemType;
use ctxwin::{Count, ErrorKind, Kind, Window};

/// What the view sends, item by item (tokens left out).
type Sent = Vec<(ItemType, Kind, usize, Option<String>)>;

fn sent(window: &Window) -> Sent {
    (0..window.view_len())
        .map(|i| window.view_item(i).unwrap())
        .map(|item| (item.item_type, item.kind, item.index, item.text.map(str::to_owned)))
        .collect()
}

/// One step of a one-task tool loop: a call and its output of `lines` lines.
fn step(window: &mut Window, call: usize, lines: usize) {
    let id = format!("c{call}");
    window.push_tool_call(&id, "read", &format!(r#"{{"path":"src/m{call}.rs"}}"#)).unwrap();
    let output: String = (0..lines).map(|l| format!("line {l} of output {call}\n")).collect();
    window.push_tool(Kind::ToolResult, &id, &output).unwrap();
}

/// A tool loop of 200 steps prepared after each one, as an agent does, under every
/// treatment that rewrites the view (clearing, the step marker, dropped steps): the
/// generation moves exactly when what the view sends of the messages already in it changes,
/// or its start moves, and not when the view only grew by the step pushed. It used to move
/// at nearly every request once the view was a computed one (165 of 200).
#[test]
fn the_generation_moves_with_the_view_not_with_its_growth() {
    for config in [
        r#"{"context_limit":10000}"#,
        r#"{"context_limit":10000,"stages":["clear","sliding"],"keep_tool_results":3}"#,
        r#"{"context_limit":10000,"strategy":"tiered"}"#,
        r#"{"context_limit":10000,"strategy":"drop_oldest"}"#,
    ] {
        let mut window = Window::new("gpt-4o");
        window.configure(config).unwrap();
        window.push(Kind::User, "Fix the parser.").unwrap();
        let (mut previous, mut generation, mut start, mut count) = (sent(&window), window.generation(), 0, 1);
        let mut moves = 0;
        for call in 0..200 {
            step(&mut window, call, 30);
            window.prepare().unwrap();
            let mut grown: Sent = previous.clone();
            grown.extend((count..window.message_count()).map(|index| {
                let message = window.message(index).unwrap();
                (ItemType::Message, message.kind(), index, message.text().map(str::to_owned))
            }));
            let changed = sent(&window) != grown || window.start() != start;
            assert_eq!(window.generation() != generation, changed, "{config}: step {call}");
            moves += usize::from(changed);
            (previous, generation, start, count) = (sent(&window), window.generation(), window.start(), window.message_count());
        }
        assert!(moves > 0, "{config}: the view was rewritten");
        assert!(moves < 50, "{config}: the view changed at {moves} of 200 requests");
    }
}

/// The agent asks for a summary, goes on working while its LLM writes it, and answers with
/// the generation of the request: taken however many steps came meanwhile (it was refused
/// every time, 0 taken and 270 refused, as soon as one step came).
#[test]
fn a_summary_answered_steps_late_is_taken() {
    for during in 0..4 {
        let mut window = Window::new("gpt-4o");
        window.configure(r#"{"strategy":"summary","context_limit":10000,"summary_budget":500}"#).unwrap();
        window.push(Kind::User, "Fix the parser.").unwrap();
        let (mut taken, mut call) = (0, 0);
        for _ in 0..300 {
            step(&mut window, call, 30);
            call += 1;
            window.prepare().unwrap();
            if !window.needs_summary() {
                continue;
            }
            window.summary_request().unwrap();
            let (generation, covered) = (window.generation(), window.pending_summary().unwrap());
            for _ in 0..during {
                step(&mut window, call, 30);
                call += 1;
                window.prepare().unwrap();
            }
            let summary = format!("Read src/m0.rs to src/m{call}.rs.");
            window.set_summary(generation, &summary, 1).unwrap_or_else(|e| panic!("{during} steps late: {e}"));
            assert_eq!(window.archived_steps(), covered.end_step, "the steps the request covered are archived");
            taken += 1;
        }
        assert!(taken > 10, "{during} steps late: {taken} summaries");
    }
}

/// A sliding window drops more steps while the summary of those it dropped first is being
/// written: the generation moves, the summary still applies (its steps are still the next to
/// archive) and is taken; the steps dropped since are due in the next one.
#[test]
fn a_late_summary_is_taken_after_more_steps_left_the_view() {
    let mut window = Window::new("gpt-4o");
    window.configure(r#"{"history_budget":2000,"summary_budget":300,"low_water":1}"#).unwrap();
    window.push(Kind::User, "Fix the parser.").unwrap();
    let mut call = 0;
    while !window.needs_summary() {
        step(&mut window, call, 30);
        call += 1;
        window.prepare().unwrap();
    }
    window.summary_request().unwrap();
    let (generation, covered, start) = (window.generation(), window.pending_summary().unwrap(), window.start());
    for _ in 0..3 {
        step(&mut window, call, 30);
        call += 1;
        window.prepare().unwrap();
    }
    assert!(window.start() > start && window.generation() != generation, "more steps were dropped meanwhile");
    window.set_summary(generation, "Read the first modules.", 1).unwrap();
    assert_eq!(window.archived_steps(), covered.end_step);
    assert!(window.needs_summary(), "the steps dropped since are due next");
}

/// A late summary is refused (MISMATCH, nothing changes) when it answers another request
/// than the one pending, or when the steps it covers are no longer due: a larger budget
/// brought them back into the view.
#[test]
fn a_summary_whose_steps_are_no_longer_due_is_refused() {
    let session = || {
        let mut window = Window::new("gpt-4o");
        window.configure(r#"{"history_budget":1000,"summary_budget":40,"pin_task":false}"#).unwrap();
        for _ in 0..6 {
            window.push(Kind::User, "Please fix src/lib.rs").unwrap();
            window.push_counted(Kind::Assistant, Count::exact(290));
            window.end_turn();
        }
        window.summary_request().unwrap();
        window
    };
    let mut back = session();
    let generation = back.generation();
    back.set_budget(100_000).unwrap();
    assert_eq!(back.first_live_turn(), 0, "every turn is in the view again");
    let before = ctxwin::persist::export(&back);
    let err = back.set_summary(generation, "Fixed src/lib.rs.", 1).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Mismatch, "{}", err.message());
    assert!(err.message().contains("stale"), "{}", err.message());
    assert_eq!(ctxwin::persist::export(&back), before);
    // The generation of another request than the one pending.
    let mut other = session();
    let generation = other.generation();
    other.set_budget(500).unwrap();
    other.summary_request().unwrap();
    assert_ne!(other.generation(), generation);
    let err = other.set_summary(generation, "Fixed src/lib.rs.", 1).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Mismatch, "{}", err.message());
    other.set_summary(other.generation(), "Fixed src/lib.rs.", 1).unwrap();
}

/// A plain view (sliding, no tools) sends the pinned messages before its start: pinning a
/// dropped message sends it again, and taking the pin off stops sending it, and both move
/// the generation, though the start stays.
#[test]
fn a_pin_before_the_start_moves_the_generation() {
    let mut window = Window::new("gpt-4o");
    window.configure(r#"{"history_budget":1000,"pin_task":false,"low_water":1}"#).unwrap();
    for turn in 0..12 {
        window.push(Kind::User, &format!("Question {turn}")).unwrap();
        window.push_counted(Kind::Assistant, Count::exact(150));
        window.end_turn();
    }
    assert!(window.start() > 4, "turns were dropped");
    let (start, generation, items) = (window.start(), window.generation(), window.view_len());
    window.pin(3, true).unwrap();
    assert_eq!((window.start(), window.view_len()), (start, items + 1), "message 3 is sent again");
    assert_ne!(window.generation(), generation);
    let generation = window.generation();
    window.pin(3, false).unwrap();
    assert_eq!((window.start(), window.view_len()), (start, items));
    assert_ne!(window.generation(), generation);
}
