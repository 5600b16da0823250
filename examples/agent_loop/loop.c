#include "loop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "standin.h"

static const char *const SYSTEM = "You are a coding agent. Read before you answer; run the tests after a change.";
static const char *const TASKS[] = {
    "Explain how the lexer in src/ finds the next token.",
    "Now explain the parser, and check its tests pass.",
};
#define MAX_STEPS 8
#define MAX_CALLS 4

int failed(ctxwin_status rc, const ctxwin_window *w, const char *what) {
    if (rc == CTXWIN_OK) return 0;
    char why[512] = "";
    if (w != NULL) ctxwin_window_last_error(w, why, sizeof why, NULL);
    else ctxwin_last_error(why, sizeof why, NULL);
    fprintf(stderr, "%s: %s: %s\n", what, ctxwin_status_str(rc), why);
    return 1;
}

int push_results_by_id(ctxwin_window *w, const tool_run *runs, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (failed(ctxwin_window_push_tool(w, CTXWIN_KIND_TOOL_RESULT, runs[i].call_id, runs[i].call_id_len,
                                           runs[i].output, runs[i].output_len, NULL),
                   w, "push_tool"))
            return 1;
    }
    return 0;
}

/* The agent's tools, canned: read_file gives a source file of a few dozen lines, list_dir a
 * listing, run_tests a test report. */
static void run_tool(tool_run *run, const char *arguments, size_t arguments_len) {
    size_t n = 0, cap = sizeof run->output;
    if (run->name_len == 9 && memcmp(run->name, "read_file", 9) == 0) {
        n += (size_t)snprintf(run->output, cap, "/* %.*s */\n#include <stdio.h>\n", (int)arguments_len, arguments);
        for (int line = 0; line < 24 && n + 80 < cap; line++)
            n += (size_t)snprintf(run->output + n, cap - n, "static int step_%02d(int c) { return c + %d; }\n", line, line * 3);
    } else if (run->name_len == 8 && memcmp(run->name, "list_dir", 8) == 0) {
        n = (size_t)snprintf(run->output, cap, "%.*s:\nlexer.c\nlexer.h\nparser.c\nparser.h\nmain.c\n", (int)arguments_len, arguments);
    } else {
        n = (size_t)snprintf(run->output, cap, "running %.*s\n12 passed, 0 failed (0.41 s)\n", (int)arguments_len, arguments);
    }
    run->output_len = n < cap ? n : cap - 1;
}

/* Prepares the next request and returns its body (caller frees), sized by asking first. */
static char *next_request(ctxwin_window *w, const agent_format *f, int request, int calls) {
    ctxwin_request_info info;
    if (failed(ctxwin_window_prepare(w, &info), w, "prepare")) return NULL;
    size_t needed = 0;
    if (failed(ctxwin_window_render_request(w, f->base, strlen(f->base), NULL, 0, &needed), w, "render_request")) return NULL;
    char *body = malloc(needed + 1);
    if (body == NULL || failed(ctxwin_window_render_request(w, f->base, strlen(f->base), body, needed + 1, NULL), w,
                               "render_request")) {
        free(body);
        return NULL;
    }
    printf("# request %d: %zu items, %lld tokens, the first %zu (%lld tokens) as in the request before; "
           "the stand-in made %d calls so far\n",
           request, info.view_len, (long long)info.tokens, info.stable_items, (long long)info.stable_tokens, calls);
    printf("%s\n", body);
    return body;
}

/* Reads the tool calls the window holds from message `from` on, and runs them. */
static size_t run_calls(const ctxwin_window *w, size_t from, tool_run *runs) {
    size_t n = 0;
    for (size_t i = from; i < ctxwin_window_message_count(w) && n < MAX_CALLS; i++) {
        ctxwin_message m;
        if (ctxwin_window_message_get(w, i, &m) != CTXWIN_OK || m.kind != CTXWIN_KIND_TOOL_CALL) continue;
        runs[n] = (tool_run){m.call_id, m.call_id_len, m.name, m.name_len, "", 0};
        run_tool(&runs[n], m.text, m.text_len);
        n++;
    }
    return n;
}

int run_agent(const agent_format *f) {
    ctxwin_window *w = NULL;
    if (failed(ctxwin_window_new(f->model, strlen(f->model), &w), NULL, "new")) return 1;
    char settings[64];
    snprintf(settings, sizeof settings, "{\"format\":\"%s\"}", f->format);
    ctxwin_count tools = {0, false};
    int rc = failed(ctxwin_window_configure(w, settings, strlen(settings)), w, "configure") ||
             failed(ctxwin_count_tools_json(f->model, strlen(f->model), f->tools, strlen(f->tools), &tools), NULL, "count_tools") ||
             failed(ctxwin_window_set_overhead(w, 0, tools.tokens), w, "set_overhead") ||
             failed(ctxwin_window_push(w, CTXWIN_KIND_SYSTEM, SYSTEM, strlen(SYSTEM), NULL), w, "push system");
    standin provider = {f->format, f->model, 0, 0, 0, {NULL, 0, 0}, {NULL, 0, 0}, {NULL, 0, 0}};
    int request = 0;
    for (size_t task = 0; rc == 0 && task < sizeof TASKS / sizeof TASKS[0]; task++) {
        rc = failed(ctxwin_window_push(w, CTXWIN_KIND_USER, TASKS[task], strlen(TASKS[task]), NULL), w, "push user");
        for (int step = 0; rc == 0; step++) {
            if (step == MAX_STEPS) {
                fprintf(stderr, "the model did not finish the task in %d steps\n", MAX_STEPS);
                rc = 1;
                break;
            }
            char *body = next_request(w, f, ++request, standin_calls(&provider));
            if (body == NULL) {
                rc = 1;
                break;
            }
            int refused = standin_reply(&provider, body, strlen(body));
            free(body);
            if (refused) {
                fprintf(stderr, "the provider refused the request: %s\n", provider.response.data);
                rc = 1;
                break;
            }
            /* The usage object of the answer, judged against the request just prepared. */
            rc = failed(ctxwin_window_observe_last_usage_json(w, provider.response.data, provider.response.len), w,
                        "observe_last_usage_json");
            size_t from = ctxwin_window_message_count(w);
            /* What to push from each provider's response: docs/pushing-responses.md. */
            rc = rc || failed(ctxwin_window_push_json(w, provider.message.data, provider.message.len), w, "push_json");
            tool_run runs[MAX_CALLS];
            size_t n = rc ? 0 : run_calls(w, from, runs);
            if (n == 0) break; /* the final answer */
            rc = f->push_results(w, runs, n);
        }
        rc = rc || failed(ctxwin_window_end_turn(w, NULL), w, "end_turn");
    }
    ctxwin_cache_stats stats = {0, 0, 0};
    if (rc == 0 && !failed(ctxwin_window_cache_stats(w, &stats), w, "cache_stats"))
        printf("# %llu requests, %llu prompt tokens, %llu of them cached\n", (unsigned long long)stats.requests,
               (unsigned long long)stats.prompt_tokens, (unsigned long long)stats.cached_tokens);
    standin_free(&provider);
    ctxwin_window_free(w);
    return rc;
}
