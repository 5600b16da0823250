/* Summary, view and render together through the C API: a Chat Completions session whose
 * first two turns are archived by a summary, whose long tool output tiered compaction cuts,
 * and one of whose tool calls was never answered. */
#include <stdlib.h>
#include "harness.h"

static const char *SUMMARY = "Summary: the user set a task; two turns of it are done.";

/* Pushes one JSON message (or array). */
static void push_json(ctxwin_window *w, const char *json) {
    CHECK_OK(ctxwin_window_push_json(w, json, strlen(json)));
}

static ctxwin_window *session(void) {
    ctxwin_window *w = new_window("gpt-4o");
    /* The first turn is archived whole, its question too: the task is not pinned. */
    const char *config =
        "{\"strategy\":\"tiered\",\"tool_output_max_lines\":6,\"history_budget\":100000,\"pin_task\":false}";
    CHECK_OK(ctxwin_window_configure(w, config, strlen(config)));
    CHECK_OK(ctxwin_window_set_overhead(w, 120, 80));
    push_json(w, "{\"role\":\"system\",\"content\":\"You are a coding agent.\"}");
    for (int turn = 0; turn < 2; turn++) {
        push_json(w, "[{\"role\":\"user\",\"content\":\"ARCHIVED please start the task\"},"
                     "{\"role\":\"assistant\",\"content\":\"ARCHIVED started\"}]");
    }
    push_json(w, "{\"role\":\"user\",\"content\":\"LIVE list the files in src/\"}");
    push_json(w, "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":["
                 "{\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"ls\",\"arguments\":\"{}\"}},"
                 "{\"id\":\"call_b\",\"type\":\"function\",\"function\":{\"name\":\"du\",\"arguments\":\"{}\"}}]}");
    char result[2048] = "{\"role\":\"tool\",\"tool_call_id\":\"call_a\",\"content\":\"";
    for (int i = 0; i < 40; i++) {
        char line[32];
        snprintf(line, sizeof line, "src/file_%d.rs\\n", i);
        strcat(result, line);
    }
    strcat(result, "\"}");
    push_json(w, result);
    push_json(w, "{\"role\":\"assistant\",\"content\":\"LIVE forty files\"}");
    push_json(w, "[{\"role\":\"user\",\"content\":\"LIVE thanks\"},{\"role\":\"assistant\",\"content\":\"LIVE done\"}]");
    CHECK_OK(ctxwin_window_end_turn(w, NULL));
    /* Two turns leave the window by hand, then a summary archives them. */
    CHECK_OK(ctxwin_window_drop_oldest_turn(w));
    CHECK_OK(ctxwin_window_drop_oldest_turn(w));
    CHECK(ctxwin_window_needs_summary(w));
    size_t needed = 0;
    CHECK_OK(ctxwin_window_summary_request(w, NULL, 0, &needed));
    char *prompt = malloc(needed + 1);
    CHECK_OK(ctxwin_window_summary_request(w, prompt, needed + 1, &needed));
    CHECK(strstr(prompt, "ARCHIVED please start the task") != NULL);
    free(prompt);
    CHECK_OK(ctxwin_window_set_summary(w, ctxwin_window_generation(w), SUMMARY, strlen(SUMMARY)));
    size_t removed = 0;
    CHECK_OK(ctxwin_window_compact(w, &removed));
    CHECK(removed == 1); /* the long output, cut */
    return w;
}

/* The rendered request, in a malloc'd buffer. */
static char *render(const ctxwin_window *w) {
    size_t needed = 0;
    CHECK_OK(ctxwin_window_render_json(w, NULL, 0, &needed));
    char *json = malloc(needed + 1);
    CHECK_OK(ctxwin_window_render_json(w, json, needed + 1, &needed));
    CHECK(strlen(json) == needed);
    return json;
}

static int item_is(const ctxwin_item *item, const char *text) {
    return item->text != NULL && item->text_len == strlen(text) && memcmp(item->text, text, item->text_len) == 0;
}

static void the_view_holds_the_summary_a_cut_output_and_a_cancelled_result(void) {
    ctxwin_window *w = session();
    size_t n = ctxwin_window_view_len(w);
    int summaries = 0, truncated = 0, cancelled = 0;
    size_t summary_at = n;
    int64_t items = 0;
    for (size_t i = 0; i < n; i++) {
        ctxwin_item item;
        CHECK_OK(ctxwin_window_view_get(w, i, &item));
        items += item.tokens.tokens;
        if (item.type == CTXWIN_ITEM_SYNTHETIC && item.kind == CTXWIN_KIND_USER && item_is(&item, SUMMARY)) {
            summaries++;
            summary_at = i;
        }
        if (item.type == CTXWIN_ITEM_TRUNCATED && item.kind == CTXWIN_KIND_TOOL_RESULT) truncated++;
        if (item.type == CTXWIN_ITEM_SYNTHETIC && item.kind == CTXWIN_KIND_TOOL_RESULT) {
            cancelled++;
            CHECK(item.index == 7); /* the unanswered call_b */
        }
        if (item.text != NULL) {
            CHECK(item.text_len < 8 || memcmp(item.text, "ARCHIVED", 8) != 0);
        }
    }
    CHECK(summaries == 1 && summary_at == 1); /* right after the pinned system prompt */
    CHECK(truncated == 1 && cancelled == 1);
    ctxwin_count live = {0, false};
    CHECK_OK(ctxwin_window_live_tokens(w, &live));
    CHECK(live.tokens == 120 + 80 + items);
    ctxwin_window_free(w);
}

static void render_sends_the_view_and_survives_a_restart(void) {
    ctxwin_window *w = session();
    char *json = render(w);
    CHECK(json[0] == '[');
    CHECK(strstr(json, SUMMARY) != NULL);
    CHECK(strstr(json, "lines truncated") != NULL);
    CHECK(strstr(json, "src/file_39.rs") != NULL && strstr(json, "src/file_20.rs") == NULL);
    CHECK(strstr(json, "\"tool_call_id\":\"call_b\"") != NULL);
    CHECK(strstr(json, "Tool call cancelled") != NULL);
    CHECK(strstr(json, "ARCHIVED") == NULL);
    /* The cancelled result follows the cut one, which follows the calls. */
    const char *calls = strstr(json, "\"tool_calls\"");
    const char *cut = strstr(json, "\"tool_call_id\":\"call_a\"");
    const char *answer = strstr(json, "\"tool_call_id\":\"call_b\"");
    CHECK(calls != NULL && cut != NULL && answer != NULL && calls < cut && cut < answer);
    /* The rendered array is valid Chat Completions JSON: a fresh window takes it. */
    ctxwin_window *fresh = new_window("gpt-4o");
    CHECK_OK(ctxwin_window_push_json(fresh, json, strlen(json)));
    ctxwin_window_free(fresh);
    /* Export and import: the same request. */
    size_t needed = 0;
    CHECK_OK(ctxwin_window_export(w, NULL, 0, &needed));
    char *saved = malloc(needed + 1);
    CHECK_OK(ctxwin_window_export(w, saved, needed + 1, &needed));
    ctxwin_window *restored = NULL;
    CHECK_OK(ctxwin_window_import(saved, needed, &restored));
    if (restored != NULL) {
        char *again = render(restored);
        CHECK(strcmp(again, json) == 0);
        CHECK(ctxwin_window_view_len(restored) == ctxwin_window_view_len(w));
        CHECK(ctxwin_window_generation(restored) == ctxwin_window_generation(w));
        free(again);
        ctxwin_window_free(restored);
    }
    free(saved);
    free(json);
    ctxwin_window_free(w);
}

void suite_integration(void) {
    harness_run("the_view_holds_the_summary_a_cut_output_and_a_cancelled_result",
                the_view_holds_the_summary_a_cut_output_and_a_cancelled_result);
    harness_run("render_sends_the_view_and_survives_a_restart", render_sends_the_view_and_survives_a_restart);
}
