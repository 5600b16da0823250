#!/usr/bin/env python3
"""Compare fastbpe's token counts with OpenAI's own Python `tiktoken`.

Usage:
    python3 tests/tiktoken_reference.py CORPUS COUNT_BIN [--assets DIR] [--encodings NAME ...]

CORPUS     JSON lines, one JSON string per line (examples/gen_corpus.rs).
COUNT_BIN  the built `count_corpus` example; it is run as
           `COUNT_BIN <encoding> CORPUS` and prints one count per line.
--assets   directory holding o200k_base.tiktoken, cl100k_base.tiktoken,
           p50k_base.tiktoken and r50k_base.tiktoken; default: the `assets`
           folder of tiktoken-rs 0.12.1 in the cargo registry.

The Python encodings are built offline: tiktoken's own constructors in
`tiktoken_ext.openai_public` (so its own regexes and special tokens) are used,
with their vocabulary download redirected to the local files. Every string is
checked under every encoding with `encode_ordinary`; a string passes when all
encodings agree. Prints mismatches and a final `N passed, M failed` line;
exits 1 on any failure.
"""

import argparse
import glob
import os
import subprocess
import sys

import tiktoken
import tiktoken.load
import tiktoken_ext.openai_public as openai_public
from count_compare import compare, read_corpus

ENCODINGS = ["o200k_base", "o200k_harmony", "cl100k_base", "p50k_base", "r50k_base"]


def default_assets():
    cargo_home = os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo"))
    pattern = os.path.join(cargo_home, "registry", "src", "*", "tiktoken-rs-0.12.1", "assets")
    found = sorted(glob.glob(pattern))
    if not found:
        sys.exit(f"no tiktoken-rs 0.12.1 assets under {pattern}; run `cargo fetch` or pass --assets")
    return found[0]


def offline_encodings(assets, names):
    """tiktoken Encodings from tiktoken's own constructors, reading local files."""

    def local_bpe(url, expected_hash=None):
        return tiktoken.load.load_tiktoken_bpe(os.path.join(assets, url.rsplit("/", 1)[-1]))

    openai_public.load_tiktoken_bpe = local_bpe
    encodings = {}
    for name in names:
        params = dict(getattr(openai_public, name)())
        params.pop("explicit_n_vocab", None)
        encodings[name] = tiktoken.Encoding(**params)
    return encodings


def our_counts(count_bin, name, corpus):
    out = subprocess.run([count_bin, name, corpus], check=True, capture_output=True, text=True)
    return [int(line) for line in out.stdout.split()]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus")
    parser.add_argument("count_bin")
    parser.add_argument("--assets", default=None)
    parser.add_argument("--encodings", nargs="+", default=ENCODINGS, choices=ENCODINGS)
    args = parser.parse_args()

    texts = read_corpus(args.corpus)
    encodings = offline_encodings(args.assets or default_assets(), args.encodings)
    print(f"tiktoken {tiktoken.__version__}")
    runs = [(name, lambda name=name: our_counts(args.count_bin, name, args.corpus),
             lambda encoding=encoding: [len(encoding.encode_ordinary(text)) for text in texts])
            for name, encoding in encodings.items()]
    compare(texts, runs, "tiktoken")

if __name__ == "__main__":
    main()
