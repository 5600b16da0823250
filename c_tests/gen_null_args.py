#!/usr/bin/env python3
"""Generates the C test suite `suite_null_args` from include/ctxwin.h.

Every exported function is called with NULL in each of its pointer parameters in turn, the
other arguments valid. What the call must do is read from the header's own doc comments:

- a required pointer: a status function returns CTXWIN_STATUS_NULL_ARG, leaves the window as
  it was and names the parameter in last_error and in the thread's ctxwin_last_error (unless
  its doc says it "never records a failure"); a function returning a value returns 0 (when
  the NULL is the handle) or at least returns (any other pointer: there is no status to give);
- an out-parameter the doc calls optional ("`out` may be NULL", "`*needed` (may be NULL)"):
  the call does not return NULL_ARG;
- a string in, (const char *p, size_t len): (NULL, len > 0) is NULL_ARG, (NULL, 0) is the
  empty string (never NULL_ARG);
- a buffer out, (char *buf, size_t cap): (NULL, cap > 0) is NULL_ARG, (NULL, 0) is a length
  query (never NULL_ARG);
- a void function taking a handle must document "NULL is a no-op", and is called with NULL.

A parameter the generator has no rule for stops it with an error naming the function, so a
new function cannot escape the test: teach the generator (a sample value in SAMPLE_TEXT, a
type in OUT_TYPES or BY_VALUE) and the suite covers it.

Usage: gen_null_args.py include/ctxwin.h > target/c/null_args.c
"""

import re
import sys

DECLARATION = re.compile(
    r"/\*\*(?P<doc>(?:(?!\*/).)*)\*/\s*"
    r"(?P<ret>[A-Za-z_][\w\s\*]*?)\s*\b(?P<name>ctxwin_\w+)\s*\((?P<params>[^)]*)\)\s*;",
    re.S,
)
HANDLE = "ctxwin_window"
TOKENIZER = "ctxwin_tokenizer"
# The smallest tokenizer.json: a character-level BPE model of one token.
SAMPLE_TOKENIZER = '{"model":{"type":"BPE","vocab":{"h":0},"merges":[]}}'

# Valid text for string parameters, by parameter name.
SAMPLE_TEXT = {
    "model": "gpt-4o",
    "json": "{}",
    "text": "hello",
    "path": "target/c/null_args_window.json",
    "call_id": "call_1",
    "name": "ls",
    "arguments": "{}",
    "base": "{}",
    "data": SAMPLE_TOKENIZER,
    "options": "{}",
}
# Input arrays `(const T *ptr, size_t n)`: a valid one-element array by element type.
SAMPLE_ARRAY = {"int64_t": "sample_ids", "ctxwin_part": "sample_parts"}
# Out-parameter types: a zero-initialised local receives the result.
OUT_TYPES = {
    "size_t", "int32_t", "uint32_t", "int64_t", "bool", "double",
    "ctxwin_count", "ctxwin_turn_info", "ctxwin_item", "ctxwin_error_info",
    "ctxwin_request_info", "ctxwin_cache_stats", "ctxwin_message",
}
# Input structs passed by pointer: a valid value by type.
IN_TYPES = {"ctxwin_error_info": "sample_error"}
# By-value parameters: a valid value by type, with per-name overrides.
BY_VALUE = {
    "int32_t": "1",
    "uint32_t": "0",
    "int64_t": "0",
    "size_t": "0",
    "bool": "false",
    "double": "0.0",
    "ctxwin_count": "one_token",
}
BY_NAME = {"kind": "CTXWIN_KIND_USER"}
# Return types whose "NULL handle" value is 0 / false.
ZERO_RETURNS = {"size_t", "int32_t", "uint32_t", "int64_t", "bool"}


class Unknown(Exception):
    """A function the generator does not know how to call."""


def normalise(ctype):
    """`const struct ctxwin_window*` -> `const ctxwin_window *`."""
    tokens = re.findall(r"\w+|\*", ctype)
    words = [t for t in tokens if t not in ("*", "struct")]
    stars = tokens.count("*")
    return " ".join(words) + (" " + "*" * stars if stars else "")


def split_param(text):
    match = re.match(r"(.*?)(\w+)$", text.strip(), re.S)
    return normalise(match.group(1)), match.group(2)


def doc_text(raw):
    return " ".join(line.strip().lstrip("*").strip() for line in raw.splitlines())


def declarations(header):
    seen = {}
    for m in DECLARATION.finditer(header):
        ret = normalise(re.sub(r"\bCTXWIN_\w+(\([^)]*\))?", "", m.group("ret")))
        raw = m.group("params").strip()
        params = [] if raw in ("", "void") else [split_param(p) for p in raw.split(",")]
        decl = (ret, params, doc_text(m.group("doc")))
        name = m.group("name")
        if name in seen and seen[name][:2] != decl[:2]:
            sys.exit(f"gen_null_args: {name} is declared twice with different signatures")
        seen[name] = decl
    return seen


def optional(doc, name):
    """True when the doc says the pointer `name` may be NULL (unconditionally)."""
    pattern = rf"`\*?{name}`\s*(?::|\()?\s*may be NULL(?! when)"
    return re.search(pattern, doc) is not None


def classify(fname, params):
    """Pairs each pointer parameter with its role; raises Unknown for anything else."""
    roles, i = [], 0
    while i < len(params):
        ctype, name = params[i]
        following = params[i + 1] if i + 1 < len(params) else None
        if ctype in (f"{HANDLE} *", f"const {HANDLE} *"):
            roles.append(("handle", i))
        elif ctype == f"{HANDLE} **":
            roles.append(("new_handle", i))
        elif ctype == f"{TOKENIZER} *":
            roles.append(("handle", i))
        elif ctype == f"const {TOKENIZER} *":
            roles.append(("tokenizer", i))
        elif ctype == f"{TOKENIZER} **":
            roles.append(("new_tokenizer", i))
        elif ctype == "const char *" and following and following[0] == "size_t":
            if name not in SAMPLE_TEXT:
                raise Unknown(f"{fname}: no sample text for string parameter '{name}' (add it to SAMPLE_TEXT)")
            roles.append(("text", i))
            i += 1
        elif ctype == "char *" and following and following[0] == "size_t":
            roles.append(("buffer", i))
            i += 1
        elif ctype.startswith("const ") and ctype.endswith(" *") and following and following[0] == "size_t":
            if ctype[len("const "):-2] not in SAMPLE_ARRAY:
                raise Unknown(f"{fname}: no sample array for '{ctype} {name}' (add it to SAMPLE_ARRAY)")
            roles.append(("array", i))
            i += 1
        elif ctype.endswith(" *") and ctype[:-2] in OUT_TYPES:
            roles.append(("out", i))
        elif ctype.startswith("const ") and ctype.endswith(" *") and ctype[len("const "):-2] in IN_TYPES:
            roles.append(("in", i))
        elif "*" in ctype:
            raise Unknown(f"{fname}: no rule for pointer parameter '{ctype} {name}'")
        elif ctype not in BY_VALUE and name not in BY_NAME:
            raise Unknown(f"{fname}: no value for parameter '{ctype} {name}'")
        i += 1
    return roles


def arguments(params, roles, null_at, null_len):
    """The argument list with NULL at parameter `null_at`; `null_len` is its length if paired."""
    paired = {i for role, i in roles if role in ("text", "buffer", "array")}
    args, i = [], 0
    while i < len(params):
        ctype, name = params[i]
        role = next((r for r, j in roles if j == i), None)
        if role == "handle":
            args.append("NULL" if i == null_at else "w")
        elif role == "new_handle":
            args.append("NULL" if i == null_at else "&created")
        elif role == "tokenizer":
            args.append("NULL" if i == null_at else "tok")
        elif role == "new_tokenizer":
            args.append("NULL" if i == null_at else "&created_tok")
        elif role == "text":
            sample = SAMPLE_TEXT[name]
            args += (["NULL", null_len] if i == null_at else [c_string(sample), str(len(sample.encode()))])
        elif role == "buffer":
            args += (["NULL", null_len] if i == null_at else ["buffer", "sizeof buffer"])
        elif role == "array":
            args += (["NULL", null_len] if i == null_at else [SAMPLE_ARRAY[ctype[len("const "):-2]], "1"])
        elif role == "out":
            args.append("NULL" if i == null_at else f"&out_{name}")
        elif role == "in":
            args.append("NULL" if i == null_at else "&" + IN_TYPES[ctype[len("const "):-2]])
        else:
            args.append(BY_NAME.get(name, BY_VALUE.get(ctype)))
        i += 2 if i in paired else 1
    return args


def c_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def test_case(fname, ret, params, doc, roles, role, index, null_len):
    """The C body of one case: `fname` with NULL at parameter `index`."""
    ctype, pname = params[index]
    call = f"{fname}({', '.join(arguments(params, roles, index, null_len))})"
    status = ret == "ctxwin_status"
    empty_ok = role in ("text", "buffer", "array") and null_len == "0"
    if role == "handle" and ret == "void" and params[index][0] == f"{TOKENIZER} *":
        # The free function of a tokenizer handle: the case frees the sample itself.
        call = f"{fname}(NULL)"
    if role == "handle" and ret == "void":
        if "NULL is a no-op" not in doc:
            raise Unknown(f"{fname}: void function taking a handle must document 'NULL is a no-op'")
        expect = None
    elif role == "out" and optional(doc, pname) or empty_ok:
        expect = "not_null_arg" if status else None
    elif status:
        expect = "null_arg"
    elif role == "handle" and ret in ZERO_RETURNS:
        expect = "zero"
    elif role == "handle" and ret == "const char *":
        expect = "not_null"
    elif ret in ZERO_RETURNS or ret in ("void", "const char *"):
        expect = None  # no status to report a non-handle NULL with: it must only return
    else:
        raise Unknown(f"{fname}: no rule for return type '{ret}'")

    lines = []
    for otype, oname in params:
        if otype.endswith(" *") and otype[:-2] in OUT_TYPES:
            lines.append(f"    {otype[:-2]} out_{oname};")
            lines.append(f"    memset(&out_{oname}, 0, sizeof out_{oname});")
    lines += [
        "    ctxwin_window *w = null_args_window();",
        "    ctxwin_window *created = NULL;",
        "    ctxwin_tokenizer *tok = NULL, *created_tok = NULL;",
        f"    if (ctxwin_tokenizer_from_bytes({c_string(SAMPLE_TOKENIZER)}, {len(SAMPLE_TOKENIZER)}, NULL, 0, &tok) != CTXWIN_OK) {{",
        '        fprintf(stderr, "null_args: sample tokenizer failed\\n");',
        "        exit(2);",
        "    }",
        "    char buffer[256];",
        "    const ctxwin_count one_token = {1, true};",
        "    const int64_t sample_ids[1] = {1};",
        '    const ctxwin_part sample_parts[1] = {{CTXWIN_KIND_USER, "hello", 5, NULL, 0, NULL, 0}};',
        "    const ctxwin_error_info sample_error = {CTXWIN_ERR_CAT_CONTEXT_OVERFLOW, 100, 150, 50};",
        "    size_t messages_before = ctxwin_window_message_count(w);",
        "    (void)created_tok; (void)created; (void)buffer; (void)one_token; (void)sample_ids; (void)sample_parts; (void)sample_error;",
    ]
    if expect is None:
        if ret == "void":
            lines.append(f"    {call};")
        else:
            # Kept in a variable: gcc's warn_unused_result (CTXWIN_NODISCARD) ignores (void).
            lines.append(f"    {ret} result = {call};")
            lines.append("    (void)result;")
    else:
        got_type = {"zero": "int64_t", "not_null": "const void *"}.get(expect, "int32_t")
        lines.append(f"    {got_type} got = ({got_type}){call};")
        if expect == "null_arg":
            lines.append("    CHECK_STATUS(got, CTXWIN_STATUS_NULL_ARG);")
            records = "never records a failure" not in doc
            if role != "handle" and records and any(r == "handle" for r, _ in roles):
                lines.append(f'    CHECK(strstr(last_error(w), "{pname}") != NULL);')
                lines.append("    CHECK(ctxwin_window_message_count(w) == messages_before);")
            if records:
                lines.append(f'    CHECK(strstr(thread_last_error(), "{pname}") != NULL);')
        elif expect == "not_null_arg":
            lines.append("    CHECK(got != CTXWIN_STATUS_NULL_ARG);")
        elif expect == "zero":
            lines.append("    CHECK(got == 0);")
            lines.append(f'    CHECK(strcmp(thread_last_error(), "{pname} is NULL") == 0);')
        else:
            lines.append("    CHECK(got != NULL);")
    lines += [
        "    (void)messages_before;",
        "    ctxwin_window_free(created);",
        "    ctxwin_tokenizer_free(created_tok);",
        "    ctxwin_tokenizer_free(tok);",
        "    ctxwin_window_free(w);",
    ]
    return "\n".join(lines)


def generate(header_path):
    with open(header_path, encoding="utf-8") as f:
        header = f.read()
    decls = declarations(header)
    if not decls:
        sys.exit(f"gen_null_args: no function declarations found in {header_path}")
    code = re.sub(r"/\*.*?\*/|//[^\n]*", "", header, flags=re.S)
    unparsed = set(re.findall(r"\b(ctxwin_\w+)\s*\(", code)) - set(decls)
    if unparsed:
        sys.exit(f"gen_null_args: functions without a parsable doc comment: {', '.join(sorted(unparsed))}")
    cases, problems = [], []
    for fname, (ret, params, doc) in sorted(decls.items()):
        try:
            roles = classify(fname, params)
            for role, index in roles:
                lengths = ["5", "0"] if role in ("text", "buffer", "array") else [None]
                for null_len in lengths:
                    suffix = {None: "", "5": "_with_length", "0": "_empty"}[null_len]
                    body = test_case(fname, ret, params, doc, roles, role, index, null_len)
                    cases.append((f"{fname}__{params[index][1]}{suffix}", body))
        except Unknown as problem:
            problems.append(str(problem))
    if problems:
        sys.exit("gen_null_args: cannot call every function with NULL arguments:\n  " + "\n  ".join(problems))

    out = [
        "/* Generated by c_tests/gen_null_args.py from include/ctxwin.h: do not edit. */",
        "/* Every exported function, called with NULL in each pointer parameter in turn. */",
        "#include <stdlib.h>",
        '#include "harness.h"',
        "",
        "/* A window with a pinned system prompt and one completed turn. */",
        "static ctxwin_window *null_args_window(void) {",
        '    ctxwin_window *w = new_window("gpt-4o");',
        '    if (push_str(w, CTXWIN_KIND_SYSTEM, "be brief") || push_str(w, CTXWIN_KIND_USER, "hi") ||',
        '        push_str(w, CTXWIN_KIND_ASSISTANT, "hello") || ctxwin_window_end_turn(w, NULL)) {',
        '        fprintf(stderr, "null_args_window: setup failed\\n");',
        "        exit(2);",
        "    }",
        "    return w;",
        "}",
        "",
    ]
    for name, body in cases:
        out += [f"static void {name}(void) {{", body, "}", ""]
    out.append("void suite_null_args(void) {")
    out += [f'    harness_run("{name}", {name});' for name, _ in cases]
    out.append("}")
    functions = len(decls)
    out.append(f"/* {len(cases)} cases over {functions} functions. */")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.stdout.write(generate(sys.argv[1]))
