/*
 * summary_demo: archive compaction with a scripted stand-in for the agent's LLM.
 *
 * A long session of build-and-fix turns runs under the `summary` strategy. When
 * ctxwin_window_needs_summary() says so, the agent writes the summary request, "sends" it
 * to its LLM (here a deterministic function that reads the request), and hands the answer
 * to ctxwin_window_set_summary(). The compaction records are printed at the end, and the
 * window is saved, loaded back and compared with the original: the same export, byte for
 * byte, and the same view item by item (the program fails otherwise).
 *
 * Run it from the repository root: make demo
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctxwin.h"

static void check(ctxwin_status rc, const ctxwin_window *w, const char *what) {
    if (rc == CTXWIN_OK) {
        return;
    }
    char msg[256] = "";
    ctxwin_window_last_error(w, msg, sizeof msg, NULL);
    fprintf(stderr, "%s failed: %s (%s)\n", what, ctxwin_status_str(rc), msg);
    exit(1);
}

/* The stand-in LLM: the task is the previous summary's (or the first user request it sees);
 * the newest user request is pending, the few before it are listed as done. */
static void scripted_llm(const char *request, char *answer, size_t cap) {
    enum { KEEP = 6 };
    char task[160] = "", lines[KEEP][160];
    const char *previous = strstr(request, "<previous_summary>\n");
    if (previous != NULL) {
        sscanf(previous + strlen("<previous_summary>\n"), "Original task: %159[^\n]", task);
    }
    int steps = 0;
    for (const char *p = strstr(request, "] USER:\n"); p != NULL; p = strstr(p + 1, "] USER:\n")) {
        char *line = lines[steps % KEEP];
        line[0] = '\0';
        sscanf(p + strlen("] USER:\n"), "%159[^\n]", line);
        if (task[0] == '\0') {
            snprintf(task, sizeof task, "%s", line);
        }
        steps++;
    }
    size_t n = (size_t)snprintf(answer, cap,
                                "Original task: %s\nProgress: %d more requests handled; earlier ones are in the "
                                "compaction records.\nWorking memory: the build uses make; tests live in tests/.\nLedger:",
                                task, steps);
    for (int i = steps > KEEP ? steps - KEEP : 0; i < steps && n < cap; i++) {
        n += (size_t)snprintf(answer + n, cap - n, "\n  [%s] %s", i + 1 < steps ? "done" : "pending", lines[i % KEEP]);
    }
}

int main(int argc, char **argv) {
    const char *model = "gpt-4o";
    ctxwin_window *w = NULL;
    if (ctxwin_window_new(model, strlen(model), &w) != CTXWIN_OK) {
        return 1;
    }
    /* A tiny context limit keeps the demo short. The output reserve is set explicitly: its
     * default ("auto", a quarter of the limit) would leave less room than the 85% threshold,
     * and the budget backstop would prune before any summary is asked for. */
    const char *config = "{\"strategy\":\"summary\",\"context_limit\":4000,\"threshold\":0.85,"
                         "\"summary_budget\":400,\"output_reserve\":300}";
    check(ctxwin_window_configure(w, config, strlen(config)), w, "configure");
    const char *system = "You are a build agent. Fix what breaks.";
    check(ctxwin_window_push(w, CTXWIN_KIND_SYSTEM, system, strlen(system), NULL), w, "push");

    printf("\n=== summary strategy: context limit 4000, summarise at 85%% ===\n");
    char text[2048], answer[2048];
    for (int turn = 0; turn < 40; turn++) {
        if (turn == 0) {
            snprintf(text, sizeof text, "Port the project from Makefiles to CMake without breaking the tests.");
        } else {
            snprintf(text, sizeof text, "Now convert src/module_%02d/Makefile and run its tests.", turn);
        }
        check(ctxwin_window_push(w, CTXWIN_KIND_USER, text, strlen(text), NULL), w, "push");
        snprintf(text, sizeof text, "{\"name\":\"run\",\"arguments\":{\"cmd\":\"make -C src/module_%02d test\"}}", turn);
        check(ctxwin_window_push(w, CTXWIN_KIND_TOOL_CALL, text, strlen(text), NULL), w, "push");
        size_t n = 0;
        for (int line = 0; line < 12 && n + 100 < sizeof text; line++) {
            n += (size_t)snprintf(text + n, sizeof text - n, "test_%02d_%02d ... ok (%d ms)\n", turn, line, 3 + line * 7);
        }
        check(ctxwin_window_push(w, CTXWIN_KIND_TOOL_RESULT, text, n, NULL), w, "push");
        snprintf(text, sizeof text, "src/module_%02d now builds with CMake; all 12 tests pass.", turn);
        check(ctxwin_window_push(w, CTXWIN_KIND_ASSISTANT, text, strlen(text), NULL), w, "push");
        check(ctxwin_window_end_turn(w, NULL), w, "end_turn");

        while (ctxwin_window_needs_summary(w)) {
            size_t needed = 0;
            check(ctxwin_window_summary_request(w, NULL, 0, &needed), w, "summary_request");
            char *request = malloc(needed + 1);
            check(ctxwin_window_summary_request(w, request, needed + 1, &needed), w, "summary_request");
            uint32_t generation = ctxwin_window_generation(w);
            scripted_llm(request, answer, sizeof answer);
            free(request);
            ctxwin_count before, after;
            check(ctxwin_window_live_tokens(w, &before), w, "live_tokens");
            check(ctxwin_window_set_summary(w, generation, answer, strlen(answer)), w, "set_summary");
            check(ctxwin_window_live_tokens(w, &after), w, "live_tokens");
            printf("turn %2d: ── compaction #%zu ── request of %zu bytes; live tokens %d -> %d; "
                   "the request now starts at message %zu\n",
                   turn + 1, ctxwin_window_compaction_count(w), needed, before.tokens, after.tokens,
                   ctxwin_window_start(w));
        }
    }

    printf("\ncompaction records (nothing archived is deleted: %zu messages in the ledger):\n",
           ctxwin_window_message_count(w));
    for (size_t i = 0; i < ctxwin_window_compaction_count(w); i++) {
        size_t needed = 0;
        check(ctxwin_window_compaction_info(w, i, NULL, 0, &needed), w, "compaction_info");
        char *json = malloc(needed + 1);
        check(ctxwin_window_compaction_info(w, i, json, needed + 1, NULL), w, "compaction_info");
        printf("%s\n", json);
        free(json);
    }
    size_t needed = 0;
    check(ctxwin_window_summary(w, answer, sizeof answer, &needed), w, "summary");
    printf("\nsummary sent after the system prompt:\n%s\n", answer);

    const char *path = argc > 1 ? argv[1] : "summary_demo.json"; /* where to save the window */
    check(ctxwin_window_save(w, path, strlen(path)), w, "save");
    ctxwin_window *loaded = NULL;
    if (ctxwin_window_load(path, strlen(path), &loaded) != CTXWIN_OK) {
        char why[256] = "";
        ctxwin_last_error(why, sizeof why, NULL); /* a constructor explains itself per thread */
        fprintf(stderr, "load failed: %s\n", why);
        return 1;
    }
    /* The loaded window is the saved one: the same document, byte for byte (ledger, counts,
     * boundary, summary, compaction records, generation), and the same view. */
    char *exported[2];
    const ctxwin_window *both[2] = {w, loaded};
    for (int i = 0; i < 2; i++) {
        check(ctxwin_window_export(both[i], NULL, 0, &needed), both[i], "export");
        exported[i] = malloc(needed + 1);
        check(ctxwin_window_export(both[i], exported[i], needed + 1, NULL), both[i], "export");
    }
    int same = strcmp(exported[0], exported[1]) == 0 && ctxwin_window_view_len(w) == ctxwin_window_view_len(loaded);
    for (size_t i = 0; same && i < ctxwin_window_view_len(w); i++) {
        ctxwin_item a, b;
        check(ctxwin_window_view_get(w, i, &a), w, "view_get");
        check(ctxwin_window_view_get(loaded, i, &b), loaded, "view_get");
        same = a.type == b.type && a.index == b.index && a.text_len == b.text_len &&
               (a.text_len == 0 || memcmp(a.text, b.text, a.text_len) == 0);
    }
    printf("\nsaved to %s and loaded back: %s (export of %zu bytes, %zu view items, start %zu, "
           "%zu compaction records, generation %u)\n",
           path, same ? "identical" : "DIFFERENT", strlen(exported[0]), ctxwin_window_view_len(loaded),
           ctxwin_window_start(loaded), ctxwin_window_compaction_count(loaded), ctxwin_window_generation(loaded));
    free(exported[0]);
    free(exported[1]);
    if (!same) {
        return 1;
    }
    ctxwin_window_free(loaded);
    ctxwin_window_free(w);
    return 0;
}
