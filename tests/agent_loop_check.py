#!/usr/bin/env python3
"""Checks what an agent loop example (examples/agent_loop/) printed: every request body parses
as JSON (no key twice) in the provider's shape, holds every tool call the stand-in provider
made so far, each answered by its result right after the step that made it, and keeps each
step's thinking as the provider needs it back. Usage: agent_loop_check.py FORMAT < output"""
import json
import re
import sys

STEPS = 6  # two tasks of three model steps each (examples/agent_loop/standin.c)


def strict(pairs):
    keys = [k for k, _ in pairs]
    dupes = {k for k in keys if keys.count(k) > 1}
    if dupes:
        raise ValueError(f"key given twice: {sorted(dupes)}")
    return dict(pairs)


def chat(body):
    messages = body["messages"]
    assert messages[0]["role"] == "system", "the system prompt comes first"
    calls, results = [], []
    for i, m in enumerate(messages):
        if m["role"] == "assistant" and m.get("tool_calls"):
            ids = [c["id"] for c in m["tool_calls"]]
            answers = [r["tool_call_id"] for r in messages[i + 1 : i + 1 + len(ids)] if r["role"] == "tool"]
            assert sorted(answers) == sorted(ids), f"the calls {ids} are answered by {answers}"
            calls += ids
        if m["role"] == "tool":
            results.append(m["tool_call_id"])
    return calls, results, 0


def responses(body):
    items = body["input"]
    assert items[0].get("role") in ("system", "developer"), "the system prompt comes first"
    calls = [it["call_id"] for it in items if it.get("type") == "function_call"]
    results = [it["call_id"] for it in items if it.get("type") == "function_call_output"]
    for n, it in enumerate(items):
        if it.get("type") == "function_call_output":
            assert it["call_id"] in calls[: len([x for x in items[:n] if x.get("type") == "function_call"])], \
                f"{it['call_id']} is answered before it is called"
    reasoning = [it for it in items if it.get("type") == "reasoning"]
    assert all(it.get("encrypted_content") for it in reasoning), "reasoning goes back with its encrypted content"
    return calls, results, len(reasoning)


def anthropic(body):
    assert isinstance(body["system"], list) and body["system"], "the system prompt is under 'system'"
    messages = body["messages"]
    assert messages[0]["role"] == "user", "the conversation starts with the user"
    calls, results, thinking = [], [], 0
    for i, m in enumerate(messages):
        assert i == 0 or m["role"] != messages[i - 1]["role"], "roles alternate"
        blocks = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
        if m["role"] == "assistant":
            assert blocks[0]["type"] == "thinking" and blocks[0]["signature"], "each step starts with its signed thinking"
            thinking += 1
            ids = [b["id"] for b in blocks if b["type"] == "tool_use"]
            if ids:
                nxt = messages[i + 1]["content"]
                answers = [b["tool_use_id"] for b in nxt if b["type"] == "tool_result"]
                assert sorted(answers) == sorted(ids), f"the calls {ids} are answered by {answers}"
            calls += ids
        results += [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
    return calls, results, thinking


def gemini(body):
    assert body["systemInstruction"]["parts"], "the system prompt is the systemInstruction"
    contents = body["contents"]
    assert contents[0]["role"] == "user", "the conversation starts with the user"
    calls, results, thinking = [], [], 0
    for i, c in enumerate(contents):
        parts = c["parts"]
        names = [p["functionCall"]["name"] for p in parts if "functionCall" in p]
        if c["role"] == "model":
            thinking += sum(1 for p in parts if p.get("thought"))
            if names:
                first = next(p for p in parts if "functionCall" in p)
                assert first.get("thoughtSignature"), "a step's first call keeps its thought signature"
                answers = [p["functionResponse"]["name"] for p in contents[i + 1]["parts"] if "functionResponse" in p]
                assert answers == names, f"the calls {names} are answered by {answers}, in order"
        calls += names
        results += [p["functionResponse"]["name"] for p in parts if "functionResponse" in p]
    return calls, results, thinking


SHAPES = {"openai_chat": chat, "openai_responses": responses, "anthropic": anthropic, "gemini": gemini}


def main():
    shape = SHAPES[sys.argv[1]]
    expected_calls = None
    bodies = 0
    summary = None
    for number, line in enumerate(sys.stdin, 1):
        line = line.rstrip("\n")
        said = re.match(r"# request (\d+): .* the stand-in made (\d+) calls so far", line)
        if said:
            expected_calls = int(said.group(2))
            continue
        if line.startswith("# ") and "requests" in line:
            summary = line
            continue
        if line.startswith("#"):
            continue
        try:
            body = json.loads(line, object_pairs_hook=strict)
            calls, results, thinking = shape(body)
            assert expected_calls is not None, "a body without its request line"
            assert len(calls) == expected_calls, f"{len(calls)} calls in the body, the stand-in made {expected_calls}"
            assert len(set(calls)) == len(calls) or sys.argv[1] == "gemini", f"a call id twice: {calls}"
            assert len(results) == len(calls), f"{len(results)} results for {len(calls)} calls"
            # Every step answered so far left its thinking (Chat Completions returns none).
            if sys.argv[1] != "openai_chat":
                assert thinking == bodies, f"{thinking} steps of thinking in request {bodies + 1}"
        except (ValueError, KeyError, AssertionError, StopIteration, IndexError, TypeError) as e:
            sys.exit(f"{sys.argv[1]}: line {number}: {type(e).__name__}: {e}")
        bodies += 1
        expected_calls = None
    if bodies != STEPS:
        sys.exit(f"{sys.argv[1]}: {bodies} request bodies, expected {STEPS}")
    if summary is None or not summary.startswith(f"# {STEPS} requests"):
        sys.exit(f"{sys.argv[1]}: the usage of {STEPS} requests was not observed: {summary}")
    print(f"{sys.argv[1]}: {bodies} request bodies, every call answered, thinking kept")


main()
