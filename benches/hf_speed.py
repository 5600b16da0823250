#!/usr/bin/env python3
"""Peer timing for benches/loaded.rs: Hugging Face `tokenizers` counting texts on one thread.

Usage: hf_speed.py TOKENIZER_JSON TEXTS_JSONL ROUNDS

Prints the median over ROUNDS of the CPU seconds spent in `len(encode(text,
add_special_tokens=False).ids)` over all texts (run with RAYON_NUM_THREADS=1), then the sum of
the counts (checked against ours by the caller).
"""

import json
import sys
import time

from tokenizers import Tokenizer

path, texts_path, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
tokenizer = Tokenizer.from_file(path)
tokenizer.no_truncation()
tokenizer.no_padding()
with open(texts_path, encoding="utf-8") as f:
    texts = [json.loads(line) for line in f]
samples, total = [], 0
for _ in range(rounds):
    start = time.process_time()
    total = sum(len(tokenizer.encode(text, add_special_tokens=False).ids) for text in texts)
    samples.append(time.process_time() - start)
samples.sort()
print(samples[len(samples) // 2])
print(total)
