/*
 * agent_demo: a C agent loop on ctxwin.
 *
 * Replays a deterministic, tool-using coding session: each turn the user asks about a file of
 * this repository, the assistant thinks, calls a read_file tool, gets the real file back (so
 * token counts are real) and answers. After each turn the agent calls ctxwin_window_end_turn;
 * its request builder would then send messages [start, count) plus its system prompt.
 *
 * The session runs twice: with gpt-4o (exact counts) and with claude-sonnet-4-5 (estimates,
 * printed with a leading ~).
 *
 * Run it from the repository root: make demo
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctxwin.h"

#define HISTORY_BUDGET 24000

static const char *const FILES[] = {
    "README.md",          "Cargo.toml",           "src/window.rs",        "src/config.rs",
    "src/ffi/window.rs",  "src/tokens/models.rs", "c_tests/test_window.c", "Makefile",
    "src/ffi/handle.rs",  "src/strategy/sliding.rs", "build.rs",          "src/ffi/boundary.rs",
};
static const char *const QUESTIONS[] = {
    "Read %s and tell me what it is for.",
    "Open %s. Is there anything in it that could panic across the FFI boundary?",
    "Look at %s and list every public item with a one-line description.",
    "Check %s for error paths that lose data the caller pushed.",
};

/* Reads a whole file into a NUL-terminated buffer the caller frees; NULL on failure. */
static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf != NULL && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n - 1 == 0) {
            char *grown = realloc(buf, cap * 2);
            if (grown == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf != NULL) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

static void check(ctxwin_status rc, ctxwin_window *w, const char *what) {
    if (rc == CTXWIN_OK) {
        return;
    }
    char msg[256] = "";
    ctxwin_window_last_error(w, msg, sizeof msg, NULL);
    fprintf(stderr, "%s failed: %s (%s)\n", what, ctxwin_status_str(rc), msg);
    exit(1);
}

static void push(ctxwin_window *w, int32_t kind, const char *text, size_t len) {
    check(ctxwin_window_push(w, kind, text, len, NULL), w, "push");
}

static const char *shown(ctxwin_count c, char *buf, size_t cap) {
    ctxwin_format_count(c, buf, cap);
    return buf;
}

static void run_session(const char *model) {
    ctxwin_window *w = NULL;
    if (ctxwin_window_new(model, strlen(model), &w) != CTXWIN_OK) {
        fprintf(stderr, "cannot create a window\n");
        exit(1);
    }
    check(ctxwin_window_set_budget(w, HISTORY_BUDGET), w, "set_budget");
    const char *system = "You are a careful coding agent. Use read_file to look at files before answering.";
    ctxwin_count system_count;
    check(ctxwin_count_text(model, strlen(model), system, strlen(system), &system_count), w, "count");
    check(ctxwin_window_set_overhead(w, system_count.tokens, 180), w, "set_overhead");

    printf("\n=== %s: history budget %d tokens, context limit %d ===\n", model, HISTORY_BUDGET,
           ctxwin_model_context_limit(model, strlen(model)));
    printf("%5s  %-26s %8s %8s %7s\n", "turn", "file read", "turn", "live", "start");

    const size_t nfiles = sizeof FILES / sizeof FILES[0];
    const size_t turns = 2 * nfiles;
    for (size_t t = 0; t < turns; t++) {
        const char *path = FILES[(t * 7) % nfiles];
        char text[512];
        snprintf(text, sizeof text, QUESTIONS[t % 4], path);
        push(w, CTXWIN_KIND_USER, text, strlen(text));
        snprintf(text, sizeof text, "The user wants me to look at %s; I should read it first.", path);
        push(w, CTXWIN_KIND_THINKING, text, strlen(text));
        snprintf(text, sizeof text, "{\"name\":\"read_file\",\"arguments\":{\"path\":\"%s\"}}", path);
        push(w, CTXWIN_KIND_TOOL_CALL, text, strlen(text));
        size_t len = 0;
        char *contents = read_file(path, &len);
        if (contents == NULL) {
            const char *missing = "error: file not found";
            push(w, CTXWIN_KIND_TOOL_RESULT, missing, strlen(missing));
        } else {
            push(w, CTXWIN_KIND_TOOL_RESULT, contents, len);
            free(contents);
        }
        snprintf(text, sizeof text,
                 "%s is %zu bytes. Its main job is covered above; nothing in it needs changing for this request.",
                 path, len);
        push(w, CTXWIN_KIND_ASSISTANT, text, strlen(text));

        size_t pruned = 0;
        check(ctxwin_window_end_turn(w, &pruned), w, "end_turn");
        ctxwin_turn_info info;
        check(ctxwin_window_turn_info(w, t, &info), w, "turn_info");
        ctxwin_count live;
        check(ctxwin_window_live_tokens(w, &live), w, "live_tokens");
        char a[16], b[16];
        printf("%5zu  %-26s %8s %8s %7zu\n", t + 1, path, shown(info.tokens, a, sizeof a),
               shown(live, b, sizeof b), ctxwin_window_start(w));
        if (pruned > 0) {
            printf("       ── context ── %zu oldest turn%s left the window; the request now starts at message %zu\n",
                   pruned, pruned == 1 ? "" : "s", ctxwin_window_start(w));
        }
    }

    /* What the request builder sends now. */
    size_t first_live = ctxwin_window_first_live_turn(w);
    printf("next request: system prompt + messages %zu..%zu (turns %zu..%zu of %zu), %zu turns pruned\n",
           ctxwin_window_start(w), ctxwin_window_message_count(w), first_live + 1, ctxwin_window_turn_count(w),
           ctxwin_window_turn_count(w), first_live);
    ctxwin_window_free(w);
}

int main(void) {
    run_session("gpt-4o");
    run_session("claude-sonnet-4-5");
    return 0;
}
