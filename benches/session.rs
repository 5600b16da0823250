//! A session of 1,000,000 messages in a counts-only window: `push_counted`, with `end_turn`
//! every 5 messages, under the sliding window. Prints the median time of several runs and the
//! live heap bytes per message (measured by a counting allocator).
//!
//! Goal (issue 3): under 1 s and under 64 bytes per message.

use ctxwin::{Count, Kind, Window};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Counts the bytes currently allocated, to report memory per message.
struct CountingAllocator;

static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts sizes.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE_BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE_BYTES.fetch_add(new_size, Ordering::Relaxed);
        LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

const MESSAGES: usize = 1_000_000;
const RUNS: usize = 7;

/// Runs one session and returns (seconds, live heap bytes held by the window).
fn session() -> (f64, usize) {
    let heap_before = LIVE_BYTES.load(Ordering::Relaxed);
    let started = Instant::now();
    let mut window = Window::new("gpt-4o");
    window.configure(r#"{"retain_text": false, "history_budget": 100000}"#).unwrap();
    let kinds = [Kind::User, Kind::Thinking, Kind::ToolCall, Kind::ToolResult, Kind::Assistant];
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    for i in 0..MESSAGES {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let tokens = (rng % 2000) as u32;
        window.push_counted(kinds[i % 5], Count::exact(tokens));
        if i % 5 == 4 {
            window.end_turn();
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let bytes = LIVE_BYTES.load(Ordering::Relaxed) - heap_before;
    assert!(window.first_live_turn() > 0, "the session must exercise pruning");
    drop(window);
    (seconds, bytes)
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let mut seconds = Vec::new();
    let mut bytes = 0;
    for _ in 0..RUNS {
        let (s, b) = session();
        seconds.push(s);
        bytes = b;
    }
    let time = median(&mut seconds);
    let per_message = bytes as f64 / MESSAGES as f64;
    println!("session: {MESSAGES} messages, push_counted + end_turn every 5, retain_text=false");
    println!("  median time {time:.3} s over {RUNS} runs (goal < 1 s)");
    println!("  window heap {:.1} MB = {per_message:.1} bytes per message (goal < 64)", bytes as f64 / 1e6);
}
