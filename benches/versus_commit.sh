#!/bin/sh
# Counting speed of this tree's engine against an earlier commit's, built side by side and run
# alternately on the same machine, on the same mixed corpus (tests/support/count_speed.rs,
# compiled against both). Prints the median MB/s of each and their ratio, per encoding.
#
# Usage: benches/versus_commit.sh [REV] [RUNS]
#   REV   default f8f4e8a: the engine when issue 16 ("no slower than today on the mixed
#         corpus") was filed
#   RUNS  alternating runs of each build, default 5
set -eu
rev=${1:-f8f4e8a}
runs=${2:-5}
root=$(git rev-parse --show-toplevel)
target=${CARGO_TARGET_DIR:-$root/target}
work=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$work/old" >/dev/null 2>&1; rm -rf "$work"' EXIT

git -C "$root" worktree add --quiet --detach "$work/old" "$rev"
# The earlier tree gets today's harness and corpus generator as an example of its own.
mkdir -p "$work/old/examples"
for file in count_speed.rs corpus.rs rng.rs cpu_time.rs; do
    cp "$root/tests/support/$file" "$work/old/examples/$file"
done
(cd "$work/old" && CARGO_TARGET_DIR="$work/target" cargo build --quiet --release --example count_speed)
(cd "$root" && cargo build --quiet --release --example count_speed)

for i in $(seq "$runs"); do
    "$work/target/release/examples/count_speed" | sed 's/^/old /'
    "$target/release/examples/count_speed" | sed 's/^/new /'
done > "$work/results"

echo "mixed corpus, $runs alternating runs of each build (medians of 9 rounds each), MB/s:"
for encoding in o200k_base cl100k_base; do
    median() { grep "^$1 $encoding " "$work/results" | awk '{ print $3 }' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
    old=$(median old)
    new=$(median new)
    echo "$encoding: $rev $old, this tree $new, ratio $(awk "BEGIN { printf \"%.2f\", $new / $old }")x"
done
