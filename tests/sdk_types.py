"""Validates request bodies ctxwin rendered against the providers' own SDK request types.

Reads JSON Lines of {"format": <ctxwin format key>, "body": <request body>} (written by
tests/request_structure.rs when CTXWIN_REQUEST_BODIES names a file) and validates each body
with pydantic against the official Python SDKs' types:

- openai_chat: openai.types.chat.CompletionCreateParams
- openai_responses: openai.types.responses.ResponseCreateParams
- anthropic: anthropic.types.MessageCreateParams, each message also against MessageParam
  with extra fields forbidden (the API refuses them; the TypedDicts alone allow them)
- gemini: google.genai.types.Content for every content and the systemInstruction (pydantic
  models that forbid extra fields; the REST body's camelCase names are their aliases)

Prints the count of bodies validated per format and the SDK versions; exits 1 on the first
bodies a type refuses (up to 5 shown).

    python3 tests/sdk_types.py bodies.jsonl
"""

import json
import sys
from importlib.metadata import version

from pydantic import ConfigDict, TypeAdapter, ValidationError

import anthropic.types as anthropic_types
import openai.types.chat as chat_types
import openai.types.responses as responses_types
from google.genai import types as genai_types


def strict(typed_dict):
    """`typed_dict` validated with extra keys forbidden, nested TypedDicts included."""
    return TypeAdapter(typed_dict, config=ConfigDict(extra="forbid"))


def main(path):
    chat = TypeAdapter(chat_types.CompletionCreateParams)
    responses = TypeAdapter(responses_types.ResponseCreateParams)
    anthropic_body = TypeAdapter(anthropic_types.MessageCreateParams)
    anthropic_message = strict(anthropic_types.MessageParam)
    gemini_contents = TypeAdapter(list[genai_types.Content])
    gemini_content = TypeAdapter(genai_types.Content)

    def validate(fmt, body):
        if fmt == "openai_chat":
            chat.validate_python(body)
        elif fmt == "openai_responses":
            responses.validate_python(body)
        elif fmt == "anthropic":
            anthropic_body.validate_python(body)
            for message in body["messages"]:
                anthropic_message.validate_python(message)
        elif fmt == "gemini":
            gemini_contents.validate_python(body["contents"])
            if "systemInstruction" in body:
                gemini_content.validate_python(body["systemInstruction"])
        else:
            raise ValueError(f"unknown format {fmt}")

    counts, failures = {}, []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            record = json.loads(line)
            fmt, body = record["format"], record["body"]
            counts[fmt] = counts.get(fmt, 0) + 1
            try:
                validate(fmt, body)
            except ValidationError as error:
                failures.append(f"line {number} ({fmt}): {error}\n{json.dumps(body)[:2000]}")
    sdks = ", ".join(f"{name} {version(name)}" for name in ["openai", "anthropic", "google-genai", "pydantic"])
    print(f"SDK types ({sdks}): " + ", ".join(f"{fmt} {n} bodies" for fmt, n in sorted(counts.items())))
    if len(counts) < 4:
        print(f"expected bodies of all four formats, got {sorted(counts)}")
        return 1
    if failures:
        print(f"{len(failures)} bodies refused by the SDK types; the first:")
        print("\n\n".join(failures[:5]))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
