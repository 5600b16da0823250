//! Restoring a host agent's session through the C API (issue 12): for every turn, its four
//! host messages (the user's question; thinking, text and two tool calls; both results; the
//! answer) are pushed with `ctxwin_window_push_message` (`out` NULL: counted only if needed),
//! the turn's provider figure is set after the fact with `ctxwin_window_set_turn_count`, and
//! the turn ends. 500 and 2,000 turns, medians of several runs: linear when 2,000 turns take
//! about four times as long as 500. Times are the CPU time of the restoring thread (the
//! machine is shared: wall time would count the waits of a descheduled run).
//!
//! Baselines in the same run: the same restore asking `push_message` for each count (`out`
//! non-NULL, so every part is counted at once, as before counts were deferred); and what an
//! adapter had to do before `set_count` existed to record a count learned after the push:
//! truncate to the turn's start, push it again with the counts (`push_counted`), end the turn
//! again.
//!
//! Goal: the 2,000-turn restore under 5 ms.
//!
//! Instructions (robust on a loaded machine): `RESTORE_PROFILE=2000 valgrind --tool=callgrind
//! --toggle-collect='restore::restore' target/release/deps/restore-*` runs one restore of 2,000
//! turns (`RESTORE_PROFILE=2000,counted` the counted baseline).

use ctxwin::ffi::count::ctxwin_count;
use ctxwin::ffi::host::{ctxwin_part, ctxwin_window_push_message, ctxwin_window_set_turn_count};
use ctxwin::ffi::window::{
    CTXWIN_KIND_ASSISTANT, CTXWIN_KIND_THINKING, CTXWIN_KIND_TOOL_CALL, CTXWIN_KIND_TOOL_RESULT, CTXWIN_KIND_USER,
    ctxwin_window_end_turn, ctxwin_window_free, ctxwin_window_message_count, ctxwin_window_new, ctxwin_window_push_counted,
    ctxwin_window_set_budget, ctxwin_window_start, ctxwin_window_truncate,
};
use ctxwin::ffi::{ctxwin_status, ctxwin_window};

/// CPU seconds this thread has run: unlike wall time, not inflated by the waits of a loaded
/// machine (a run longer than a time slice is descheduled behind the other processes).
fn cpu_seconds() -> f64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid clock id and out-pointer.
    assert_eq!(unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) }, 0);
    now.tv_sec as f64 + now.tv_nsec as f64 * 1e-9
}

const RUNS: usize = 9;

/// One block of a host message: kind, text, call id.
type Block = (i32, String, String);

/// The agent's session file: each turn's host messages and the provider's figure for it.
fn session(turns: usize) -> Vec<(Vec<Vec<Block>>, i32)> {
    (0..turns)
        .map(|t| {
            let (a, b) = (format!("c{t}a"), format!("c{t}b"));
            let messages = vec![
                vec![(
                    CTXWIN_KIND_USER,
                    format!("turn {t}: what is in src/ and why does the build take so long?"),
                    String::new(),
                )],
                vec![
                    (CTXWIN_KIND_THINKING, "I should list the directory and count the lines of each file.".into(), String::new()),
                    (CTXWIN_KIND_ASSISTANT, "Let me look.".into(), String::new()),
                    (CTXWIN_KIND_TOOL_CALL, r#"{"cmd":"ls src"}"#.into(), a.clone()),
                    (CTXWIN_KIND_TOOL_CALL, r#"{"cmd":"wc -l src/*"}"#.into(), b.clone()),
                ],
                vec![
                    (CTXWIN_KIND_TOOL_RESULT, "120 lib.rs\n340 window.rs\n80 message.rs".into(), b),
                    (CTXWIN_KIND_TOOL_RESULT, "lib.rs window.rs message.rs".into(), a),
                ],
                vec![(CTXWIN_KIND_ASSISTANT, "Three files: the root, the ledger and the messages.".into(), String::new())],
            ];
            (messages, 60 + (t as i32 * 37) % 90)
        })
        .collect()
}

fn new_window() -> *mut ctxwin_window {
    let mut w = std::ptr::null_mut();
    // SAFETY: a valid model string and out-pointer.
    unsafe {
        assert_eq!(ctxwin_window_new(c"gpt-4o".as_ptr(), 6, &mut w), ctxwin_status::Ok);
        assert_eq!(ctxwin_window_set_budget(w, 20_000), ctxwin_status::Ok);
    }
    w
}

/// Pushes a host message of at most four blocks, from the stack as a C host would; asks for
/// its count when `counted`.
fn push(w: *mut ctxwin_window, blocks: &[Block], host_id: i64, counted: bool) {
    let mut parts = [ctxwin_part::borrowing(0, &[], &[], &[]); 4];
    for (part, (kind, text, id)) in parts.iter_mut().zip(blocks) {
        let name: &[u8] = if *kind == CTXWIN_KIND_TOOL_CALL { b"shell" } else { &[] };
        *part = ctxwin_part::borrowing(*kind, text.as_bytes(), id.as_bytes(), name);
    }
    let mut count = ctxwin_count { tokens: 0, exact: false };
    let out = if counted { &mut count as *mut ctxwin_count } else { std::ptr::null_mut() };
    // SAFETY: `w` is live; the parts point into `blocks`, alive for the call.
    let status = unsafe { ctxwin_window_push_message(w, parts.as_ptr(), blocks.len(), host_id, out) };
    assert_eq!(status, ctxwin_status::Ok);
}

/// Restores `session` with counts set after the fact, asking for each push's count when
/// `counted`; returns (CPU seconds, start).
#[inline(never)]
fn restore(session: &[(Vec<Vec<Block>>, i32)], counted: bool) -> (f64, usize) {
    let started = cpu_seconds();
    let w = new_window();
    let mut host_id = 0;
    for (turn, (messages, tokens)) in session.iter().enumerate() {
        for blocks in messages {
            push(w, blocks, host_id, counted);
            host_id += 1;
        }
        // SAFETY: `w` is live.
        unsafe {
            assert_eq!(ctxwin_window_set_turn_count(w, turn, ctxwin_count { tokens: *tokens, exact: true }), ctxwin_status::Ok);
            assert_eq!(ctxwin_window_end_turn(w, std::ptr::null_mut()), ctxwin_status::Ok);
        }
    }
    let seconds = cpu_seconds() - started;
    // SAFETY: `w` is live, then freed once.
    let start = unsafe { ctxwin_window_start(w) };
    unsafe { ctxwin_window_free(w) };
    (seconds, start)
}

/// The adapter's way: push the turn, end it, then truncate to its start and push it again
/// with the counts it learned (one count per ledger message, the turn's figure on its first).
fn readapt(session: &[(Vec<Vec<Block>>, i32)]) -> (f64, usize) {
    let started = cpu_seconds();
    let w = new_window();
    let mut host_id = 0;
    for (messages, tokens) in session {
        // SAFETY: `w` is live throughout.
        unsafe {
            let first = ctxwin_window_message_count(w);
            for blocks in messages {
                push(w, blocks, host_id, false);
                host_id += 1;
            }
            assert_eq!(ctxwin_window_end_turn(w, std::ptr::null_mut()), ctxwin_status::Ok);
            assert_eq!(ctxwin_window_truncate(w, first), ctxwin_status::Ok);
            for (i, (kind, _, _)) in messages.iter().flatten().enumerate() {
                let count = ctxwin_count { tokens: if i == 0 { *tokens } else { 0 }, exact: true };
                assert_eq!(ctxwin_window_push_counted(w, *kind, count), ctxwin_status::Ok);
            }
            assert_eq!(ctxwin_window_end_turn(w, std::ptr::null_mut()), ctxwin_status::Ok);
        }
    }
    let seconds = cpu_seconds() - started;
    // SAFETY: `w` is live, then freed once.
    let start = unsafe { ctxwin_window_start(w) };
    unsafe { ctxwin_window_free(w) };
    (seconds, start)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    // `RESTORE_PROFILE=<turns>[,counted]`: one restore only, for instruction counts.
    if let Some(profile) = std::env::var_os("RESTORE_PROFILE") {
        let profile = profile.to_string_lossy().into_owned();
        let turns = profile.split(',').next().and_then(|t| t.parse().ok()).unwrap_or(2000);
        println!("start {}", restore(&session(turns), profile.ends_with(",counted")).1);
        return;
    }
    println!(
        "restore: a host agent's session through the C API, counts set after the fact (CPU time of the thread, medians of {RUNS} runs)"
    );
    let mut medians = Vec::new();
    for turns in [500, 2000] {
        let file = session(turns);
        let (mut ours, mut counted, mut theirs) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..RUNS {
            // Alternated, so all see the same machine load.
            let (seconds, start) = restore(&file, false);
            let (at_push, at_push_start) = restore(&file, true);
            let (baseline, baseline_start) = readapt(&file);
            assert_eq!(start, at_push_start, "counting at the push gives the same boundary");
            assert_eq!(start, baseline_start, "both ways give the same boundary");
            assert!(start > 0, "the session must exercise pruning");
            ours.push(seconds);
            counted.push(at_push);
            theirs.push(baseline);
        }
        let (ours, counted, theirs) = (median(ours), median(counted), median(theirs));
        println!(
            "  {turns:>5} turns ({} messages): push_message (out NULL) + set_turn_count + end_turn {:.2} ms; \
             counted at the push {:.2} ms ({:.1}x); truncate and re-push {:.2} ms ({:.1}x)",
            turns * 8,
            ours * 1e3,
            counted * 1e3,
            counted / ours,
            theirs * 1e3,
            theirs / ours
        );
        medians.push(ours);
    }
    println!("  2000 / 500 turns: {:.2}x (linear: 4x; goal: 2,000 turns under 5 ms)", medians[1] / medians[0]);
}
