//! Counting speed of `Encoding::count` on the project's mixed corpus, for comparing two builds
//! of the engine on the same machine in the same run (`benches/versus_commit.sh` builds this
//! file against an earlier commit too). Prints one line per encoding: its name and the median
//! MB/s of the calling thread's CPU time over several rounds.
//!
//! ```text
//! cargo run --release --example count_speed
//! ```

#[path = "corpus.rs"]
mod corpus;
#[path = "cpu_time.rs"]
mod cpu_time;

use ctxwin::tokens::Encoding;

const CORPUS_BYTES: usize = 4 << 20;
const ROUNDS: usize = 9;

fn main() {
    let text = corpus::mixed_text(0x5EED, CORPUS_BYTES);
    for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
        let mut seconds: Vec<f64> = (0..ROUNDS)
            .map(|_| {
                let start = cpu_time::thread_cpu_time();
                std::hint::black_box(encoding.count(std::hint::black_box(&text)));
                (cpu_time::thread_cpu_time() - start).as_secs_f64()
            })
            .collect();
        seconds.sort_by(f64::total_cmp);
        println!("{} {:.1}", encoding.name(), text.len() as f64 / 1e6 / seconds[ROUNDS / 2]);
    }
}
