"""The comparison both reference scripts share: ctxwin's counts of a corpus against a
reference's, per family or encoding, printing mismatches and the final verdict."""

import json
import sys
import time


def read_corpus(path):
    """The corpus: JSON lines, one JSON string per line."""
    with open(path, encoding="utf-8") as corpus:
        return [json.loads(line) for line in corpus]


def compare(texts, runs, reference_name):
    """Checks every run, a (name, ours, expected) triple of the run's name and two functions
    returning one count per text, ctxwin's (`ours`) and the reference's; `expected` is called
    first (it may write the file ctxwin loads). Prints at most 20 mismatches, a line per run
    and a final `N passed, M failed` line (a text passes when every run agrees), then exits 1
    on any failure, 0 otherwise."""
    failed, shown = set(), 0
    for name, ours, expected in runs:
        started = time.time()
        want = expected()
        got = ours()
        if len(got) != len(texts):
            sys.exit(f"{name}: count_corpus printed {len(got)} counts for {len(texts)} strings")
        mismatches = 0
        for index, (text, count, reference) in enumerate(zip(texts, got, want)):
            if count != reference:
                mismatches += 1
                failed.add(index)
                if shown < 20:
                    shown += 1
                    print(f"MISMATCH {name} #{index}: ours {count}, {reference_name} {reference}: {text[:120]!r}")
        print(f"{name}: {len(texts) - mismatches}/{len(texts)} strings agree ({time.time() - started:.0f} s)")
    print(f"{len(texts) - len(failed)} passed, {len(failed)} failed")
    sys.exit(1 if failed else 0)
