/* The view, tool call pairs, the compaction strategies and recovery from overflow errors. */
#include <stdlib.h>
#include <string.h>
#include "harness.h"

static ctxwin_item item_at(const ctxwin_window *w, size_t i) {
    ctxwin_item item;
    memset(&item, 0, sizeof item);
    CHECK_OK(ctxwin_window_view_get(w, i, &item));
    return item;
}

static int item_says(const ctxwin_item *item, const char *needle) {
    char text[4096];
    size_t n = item->text_len < sizeof text - 1 ? item->text_len : sizeof text - 1;
    if (item->text == NULL) return 0;
    memcpy(text, item->text, n);
    text[n] = '\0';
    return strstr(text, needle) != NULL;
}

static ctxwin_status push_tool(ctxwin_window *w, int32_t kind, const char *id, const char *text) {
    return ctxwin_window_push_tool(w, kind, id, strlen(id), text, strlen(text), NULL);
}

static ctxwin_status configure(ctxwin_window *w, const char *json) {
    return ctxwin_window_configure(w, json, strlen(json));
}

static int64_t history_tokens(const ctxwin_window *w) {
    int64_t sum = 0;
    size_t first_user = ctxwin_window_message_count(w);
    ctxwin_turn_info first_turn;
    if (ctxwin_window_turn_info(w, 0, &first_turn) == CTXWIN_OK) first_user = first_turn.first_message;
    for (size_t i = 0; i < ctxwin_window_view_len(w); i++) {
        ctxwin_item item = item_at(w, i);
        int pinned = item.type == CTXWIN_ITEM_MESSAGE && (item.kind == CTXWIN_KIND_SYSTEM || item.index < first_user);
        if (!pinned) sum += item.tokens.tokens;
    }
    return sum;
}

static void sliding_view_is_pinned_plus_start_to_count(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(ctxwin_window_set_budget(w, 60));
    CHECK_OK(push_str(w, CTXWIN_KIND_SYSTEM, "You are a careful agent."));
    for (int t = 0; t < 12; t++) {
        CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Read the next file and summarise it for me."));
        if (t == 3) CHECK_OK(push_str(w, CTXWIN_KIND_SYSTEM, "Reminder: be brief."));
        CHECK_OK(push_str(w, CTXWIN_KIND_ASSISTANT, "Here is the summary of that file."));
        CHECK_OK(ctxwin_window_end_turn(w, NULL));
    }
    size_t start = ctxwin_window_start(w), count = ctxwin_window_message_count(w);
    CHECK(start > 0);
    size_t expected[64], n = 0;
    for (size_t i = 0; i < count; i++) {
        if (i >= start || i == 0 || i == 1 || i == 8) expected[n++] = i; /* 0 and 8 are SYSTEM, 1 the task */
    }
    CHECK(ctxwin_window_view_len(w) == n);
    for (size_t i = 0; i < n && i < ctxwin_window_view_len(w); i++) {
        ctxwin_item item = item_at(w, i);
        CHECK(item.type == CTXWIN_ITEM_MESSAGE && item.index == expected[i]);
    }
    ctxwin_item first = item_at(w, 0);
    CHECK(first.kind == CTXWIN_KIND_SYSTEM && first.text_len == strlen("You are a careful agent."));
    CHECK(first.text != NULL && memcmp(first.text, "You are a careful agent.", first.text_len) == 0);
    ctxwin_item item;
    CHECK_STATUS(ctxwin_window_view_get(w, n, &item), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK_STATUS(ctxwin_window_view_get(w, SIZE_MAX, &item), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK(strstr(last_error(w), "view item") != NULL);
    CHECK_STATUS(ctxwin_window_view_get(w, 0, NULL), CTXWIN_STATUS_NULL_ARG);
    CHECK(ctxwin_window_view_len(NULL) == 0);
    ctxwin_window_free(w);
}

static void parallel_calls_pair_and_unanswered_ones_are_cancelled(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Check both services."));
    CHECK_OK(push_tool(w, CTXWIN_KIND_TOOL_CALL, "call_a", "status\n{\"service\":\"api\"}"));
    CHECK_OK(push_tool(w, CTXWIN_KIND_TOOL_CALL, "call_b", "status\n{\"service\":\"db\"}"));
    CHECK_OK(push_tool(w, CTXWIN_KIND_TOOL_RESULT, "call_b", "db: up"));
    char report[1024];
    size_t needed = 0;
    CHECK_OK(ctxwin_window_validate(w, report, sizeof report, &needed));
    CHECK(strstr(report, "\"valid\":true") != NULL); /* the newest turn may still be running */
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "And now?")); /* the call to api was never answered */
    CHECK(ctxwin_window_view_len(w) == 6);
    ctxwin_item cancelled = item_at(w, 4);
    CHECK(cancelled.type == CTXWIN_ITEM_SYNTHETIC && cancelled.kind == CTXWIN_KIND_TOOL_RESULT);
    CHECK(cancelled.index == 1 && item_says(&cancelled, "cancelled")); /* answers call_a */
    CHECK_STATUS(ctxwin_window_view_get(w, SIZE_MAX, &cancelled), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK(cancelled.index == 1); /* untouched on failure */
    CHECK(item_at(w, 5).kind == CTXWIN_KIND_USER);
    CHECK_OK(ctxwin_window_validate(w, NULL, 0, &needed));
    CHECK(needed > 0 && needed < sizeof report);
    CHECK_OK(ctxwin_window_validate(w, report, sizeof report, NULL));
    CHECK(strstr(report, "\"valid\":false") != NULL);
    CHECK(strstr(report, "\"problem\":\"unanswered_call\"") != NULL && strstr(report, "\"call_id\":\"call_a\"") != NULL);
    CHECK_STATUS(ctxwin_window_validate(w, report, 8, &needed), CTXWIN_STATUS_BUFFER_TOO_SMALL);
    CHECK(strlen(report) == 7);
    ctxwin_window_free(w);
}

static void bad_tool_messages_are_refused_and_nothing_is_lost(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_STATUS(push_tool(w, CTXWIN_KIND_TOOL_CALL, "early", "x"), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "USER") != NULL);
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "go"));
    CHECK_OK(push_tool(w, CTXWIN_KIND_TOOL_CALL, "c1", "ls"));
    size_t count = ctxwin_window_message_count(w);
    CHECK_STATUS(push_tool(w, CTXWIN_KIND_TOOL_RESULT, "ghost", "?"), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "ghost") != NULL && strstr(last_error(w), "no call with this id") != NULL);
    CHECK_STATUS(push_tool(w, CTXWIN_KIND_TOOL_CALL, "c1", "ls again"), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "c1") != NULL && strstr(last_error(w), "already pushed") != NULL);
    CHECK_OK(push_tool(w, CTXWIN_KIND_TOOL_RESULT, "c1", "a b c"));
    CHECK_STATUS(push_tool(w, CTXWIN_KIND_TOOL_RESULT, "c1", "a b c"), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "already answered") != NULL);
    CHECK_STATUS(push_tool(w, CTXWIN_KIND_ASSISTANT, "c2", "x"), CTXWIN_STATUS_INVALID_ARG);
    CHECK_STATUS(push_tool(w, CTXWIN_KIND_TOOL_CALL, "", "x"), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "empty") != NULL);
    CHECK_STATUS(ctxwin_window_push_tool(w, CTXWIN_KIND_TOOL_CALL, NULL, 3, "x", 1, NULL), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_push_tool(w, CTXWIN_KIND_TOOL_CALL, "\xff", 1, "x", 1, NULL), CTXWIN_STATUS_INVALID_UTF8);
    CHECK_STATUS(ctxwin_window_push_tool(NULL, CTXWIN_KIND_TOOL_CALL, "a", 1, "x", 1, NULL), CTXWIN_STATUS_NULL_ARG);
    CHECK(ctxwin_window_message_count(w) == count + 1); /* only the good result went in */
    ctxwin_window_free(w);
}

static void tiered_compact_cuts_long_tool_outputs(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(configure(w, "{\"strategy\":\"tiered\",\"tool_output_max_lines\":4}"));
    char output[2048] = "";
    for (int i = 0; i < 50; i++) strcat(output, "file.c: ok\n");
    for (int t = 0; t < 2; t++) {
        CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Build it."));
        CHECK_OK(push_tool(w, CTXWIN_KIND_TOOL_CALL, t == 0 ? "b0" : "b1", "make"));
        CHECK_OK(push_tool(w, CTXWIN_KIND_TOOL_RESULT, t == 0 ? "b0" : "b1", output));
        CHECK_OK(push_str(w, CTXWIN_KIND_ASSISTANT, "Built."));
        CHECK_OK(ctxwin_window_end_turn(w, NULL));
    }
    CHECK(ctxwin_window_view_len(w) == 8);
    CHECK(item_at(w, 2).type == CTXWIN_ITEM_MESSAGE); /* under budget: nothing cut yet */
    uint32_t gen = ctxwin_window_generation(w);
    size_t removed = 99;
    CHECK_OK(ctxwin_window_compact(w, &removed));
    CHECK(removed == 2); /* both build logs: a manual compact cuts the running turn's too */
    CHECK(ctxwin_window_generation(w) != gen);
    ctxwin_item cut = item_at(w, 2);
    CHECK(cut.type == CTXWIN_ITEM_TRUNCATED && cut.index == 2 && cut.kind == CTXWIN_KIND_TOOL_RESULT);
    CHECK(item_says(&cut, "[... 46 lines truncated ...]"));
    ctxwin_item newest = item_at(w, 6);
    CHECK(newest.type == CTXWIN_ITEM_TRUNCATED && newest.index == 6 && item_says(&newest, "[... 46 lines truncated ...]"));
    CHECK(item_at(w, 7).type == CTXWIN_ITEM_MESSAGE); /* its answer as itself */
    ctxwin_window_free(w);
}

static void monologue_compact_keeps_questions_and_answers(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(configure(w, "{\"strategy\":\"monologue\",\"keep_recent_turns\":1}"));
    for (int t = 0; t < 3; t++) {
        CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Why does the test fail?"));
        CHECK_OK(push_str(w, CTXWIN_KIND_THINKING, "Let me look at the log first."));
        CHECK_OK(push_tool(w, CTXWIN_KIND_TOOL_CALL, t == 0 ? "r0" : t == 1 ? "r1" : "r2", "cat log"));
        CHECK_OK(push_tool(w, CTXWIN_KIND_TOOL_RESULT, t == 0 ? "r0" : t == 1 ? "r1" : "r2", "assertion failed"));
        CHECK_OK(push_str(w, CTXWIN_KIND_ASSISTANT, "An off-by-one in the loop."));
        CHECK_OK(ctxwin_window_end_turn(w, NULL));
    }
    size_t removed = 0;
    CHECK_OK(ctxwin_window_compact(w, &removed));
    CHECK(removed == 6); /* thinking, call and result of the two older turns */
    CHECK(ctxwin_window_view_len(w) == 2 + 2 + 5);
    CHECK(item_at(w, 0).index == 0 && item_at(w, 1).index == 4 && item_at(w, 1).kind == CTXWIN_KIND_ASSISTANT);
    CHECK(item_at(w, 4).index == 10);
    ctxwin_turn_info info;
    CHECK_OK(ctxwin_window_turn_info(w, 0, &info));
    CHECK(info.live); /* its question is still sent */
    ctxwin_window_free(w);
}

static void drop_oldest_honours_every_threshold(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(configure(w, "{\"strategy\":\"drop_oldest\",\"message_threshold\":5,\"turn_threshold\":3,\"pin_task\":false}"));
    size_t pruned = 0, total = 0;
    for (int t = 0; t < 6; t++) {
        CHECK_OK(push_str(w, CTXWIN_KIND_USER, "next"));
        CHECK_OK(push_str(w, CTXWIN_KIND_ASSISTANT, "done"));
        CHECK_OK(ctxwin_window_end_turn(w, &pruned));
        total += pruned;
    }
    /* five messages at most: two whole turns of two */
    CHECK(ctxwin_window_first_live_turn(w) == 4 && total == 4);
    CHECK(ctxwin_window_view_len(w) == 4 && ctxwin_window_start(w) == 8);
    CHECK(item_at(w, 0).kind == CTXWIN_KIND_USER);
    ctxwin_window_free(w);
}

/* A one-task tool loop (one user message, then tool steps) rejected as too long: recover
 * frees the loop's oldest steps behind the step marker, keeps the task and the newest steps,
 * and the choice survives export and import and is undone by a rewind before it. When only
 * the newest steps are left it refuses, changing nothing. */
static void recover_frees_the_oldest_steps_of_a_one_task_loop(void) {
    const char *error =
        "{\"error\":{\"message\":\"This model's maximum context length is 4000 tokens. However, your "
        "messages resulted in 5500 tokens.\",\"code\":\"context_length_exceeded\"}}";
    ctxwin_error_info info;
    CHECK_OK(ctxwin_classify_error(error, strlen(error), &info));
    CHECK(info.category == CTXWIN_ERR_CAT_CONTEXT_OVERFLOW && info.excess == 1500);
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(configure(w, "{\"keep_recent_steps\": 3}"));
    const char *task = "Fix the failing build in src/main.rs";
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, task));
    char output[800];
    for (size_t i = 0; i + 1 < sizeof output; i++) output[i] = (char)(i % 40 == 39 ? '\n' : 'a' + (char)(i % 23));
    output[sizeof output - 1] = '\0';
    for (int step = 0; step < 30; step++) {
        char id[32], args[64];
        snprintf(id, sizeof id, "call_%d", step);
        snprintf(args, sizeof args, "{\"path\": \"src/m%d.rs\"}", step);
        CHECK_OK(ctxwin_window_push_tool_call(w, id, strlen(id), "read_file", 9, args, strlen(args), NULL));
        CHECK_OK(push_tool(w, CTXWIN_KIND_TOOL_RESULT, id, output));
    }
    CHECK_OK(ctxwin_window_end_turn(w, NULL));
    CHECK(ctxwin_window_turn_count(w) == 1 && ctxwin_window_start(w) == 0);
    size_t messages = ctxwin_window_message_count(w);
    int64_t before = history_tokens(w);
    size_t removed = 0;
    CHECK_OK(ctxwin_window_recover(w, &info, &removed));
    CHECK(removed > 0 && history_tokens(w) <= before - info.excess);
    /* The task, the step marker, then the steps from start, a tool call first. */
    size_t start = ctxwin_window_start(w);
    CHECK(start > 1 && start + 3 * 2 <= messages);
    ctxwin_item task_item = item_at(w, 0), marker = item_at(w, 1), first = item_at(w, 2);
    CHECK(task_item.type == CTXWIN_ITEM_MESSAGE && task_item.index == 0);
    CHECK(marker.type == CTXWIN_ITEM_SYNTHETIC && item_says(&marker, "earlier steps"));
    CHECK(first.kind == CTXWIN_KIND_TOOL_CALL && first.index == start);
    /* Pushing and ending the turn again does not undo it; export and import keep it. */
    CHECK_OK(ctxwin_window_end_turn(w, NULL));
    CHECK(ctxwin_window_start(w) == start);
    size_t len = 0;
    char *doc = export_json(w, &len);
    ctxwin_window *restored = NULL;
    CHECK_OK(ctxwin_window_import(doc, len, &restored));
    CHECK(ctxwin_window_start(restored) == start);
    free(doc);
    ctxwin_window_free(restored);
    /* Only the newest steps left: refused, nothing changed. */
    ctxwin_error_info huge = info;
    huge.excess = history_tokens(w) * 85 / 100; /* less than the view holds, more than all but its newest steps */
    uint32_t generation = ctxwin_window_generation(w);
    CHECK_STATUS(ctxwin_window_recover(w, &huge, NULL), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK(strstr(last_error(w), "keep_recent_steps") != NULL);
    CHECK(ctxwin_window_start(w) == start && ctxwin_window_generation(w) == generation);
    /* A rewind to before the recovery undoes it. */
    CHECK_OK(ctxwin_window_truncate(w, messages - 1));
    CHECK(ctxwin_window_start(w) == 0);
    ctxwin_window_free(w);
}

static void recover_shrinks_by_the_excess(void) {
    const char *error =
        "{\"error\":{\"message\":\"This model's maximum context length is 1000 tokens. However, your "
        "messages resulted in 1100 tokens.\",\"code\":\"context_length_exceeded\"}}";
    ctxwin_error_info info;
    CHECK_OK(ctxwin_classify_error(error, strlen(error), &info));
    CHECK(info.category == CTXWIN_ERR_CAT_CONTEXT_OVERFLOW && info.excess == 100);
    ctxwin_window *w = new_window("gpt-4o");
    for (int t = 0; t < 30; t++) {
        CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Please look at the next part of the repository for me."));
        CHECK_OK(push_str(w, CTXWIN_KIND_ASSISTANT, "Looked at it; it is fine and needs no change."));
        CHECK_OK(ctxwin_window_end_turn(w, NULL));
    }
    int64_t before = history_tokens(w);
    size_t removed = 0;
    CHECK_OK(ctxwin_window_recover(w, &info, &removed));
    CHECK(removed > 0 && history_tokens(w) <= before - info.excess);
    CHECK(item_at(w, 0).kind == CTXWIN_KIND_USER);

    ctxwin_error_info rate;
    CHECK_OK(ctxwin_classify_error("Rate limit exceeded", 19, &rate));
    CHECK_STATUS(ctxwin_window_recover(w, &rate, NULL), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "context overflow") != NULL);
    CHECK_STATUS(ctxwin_window_recover(w, NULL, NULL), CTXWIN_STATUS_NULL_ARG);
    ctxwin_error_info bogus = {42, -1, -1, -1};
    CHECK_STATUS(ctxwin_window_recover(w, &bogus, NULL), CTXWIN_STATUS_INVALID_ARG);

    /* Only the newest turn left: a clear error and nothing changes. */
    ctxwin_error_info huge = info;
    huge.excess = 1000000;
    size_t len = ctxwin_window_view_len(w);
    uint32_t gen = ctxwin_window_generation(w);
    CHECK_STATUS(ctxwin_window_recover(w, &huge, &removed), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK(strstr(last_error(w), "newest turn") != NULL);
    CHECK(ctxwin_window_view_len(w) == len && ctxwin_window_generation(w) == gen);
    ctxwin_window_free(w);
}

static void strategy_settings_are_checked(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "hi"));
    struct { const char *json; int32_t status; const char *names; } cases[] = {
        {"{\"strategy\":\"lru\"}", CTXWIN_STATUS_INVALID_ARG, "lru"},
        {"{\"strategy\":\"drop_oldest\",\"token_threshold\":-5}", CTXWIN_STATUS_INVALID_ARG, "token_threshold"},
        {"{\"turn_threshold\":0}", CTXWIN_STATUS_INVALID_ARG, "turn_threshold"},
        {"{\"keep_recent_turns\":-1}", CTXWIN_STATUS_INVALID_ARG, "keep_recent_turns"},
        {"{\"strategy\":\"tiered\",\"keep_first\":3,\"keep_recent\":9,\"message_threshold\":8}",
         CTXWIN_STATUS_INVALID_ARG, "message_threshold"},
        {"{\"threshold\":0}", CTXWIN_STATUS_INVALID_ARG, "threshold"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECK_STATUS(configure(w, cases[i].json), cases[i].status);
        CHECK(strstr(last_error(w), cases[i].names) != NULL);
    }
    CHECK(ctxwin_window_message_count(w) == 1 && ctxwin_window_view_len(w) == 1);
    ctxwin_window_free(w);
}

/* A long tool loop under one task: the boundary falls inside the turn, and a host that sends
 * its pinned messages (ctxwin_window_is_pinned) before ctxwin_window_start and then loops
 * from it sends exactly the view's messages, less the marker; pins are checked. */
static void a_host_looping_from_start_sends_the_view_in_a_long_tool_loop(void) {
    ctxwin_window *w = new_window("gpt-4o");
    const char *config = "{\"history_budget\":3000}";
    CHECK_OK(ctxwin_window_configure(w, config, strlen(config)));
    CHECK_OK(ctxwin_window_push(w, CTXWIN_KIND_SYSTEM, "You are an agent.", 17, NULL));
    CHECK_OK(ctxwin_window_push(w, CTXWIN_KIND_USER, "Fix every failing test.", 23, NULL));
    char id[32], output[2048];
    size_t len = 0;
    for (int line = 0; line < 40; line++) {
        len += (size_t)snprintf(output + len, sizeof output - len, "test %d ... ok\n", line);
    }
    for (int step = 0; step < 200; step++) {
        snprintf(id, sizeof id, "call_%d", step);
        CHECK_OK(ctxwin_window_push(w, CTXWIN_KIND_ASSISTANT, "Running the tests.", 18, NULL));
        CHECK_OK(ctxwin_window_push_tool_call(w, id, strlen(id), "run", 3, "{}", 2, NULL));
        CHECK_OK(ctxwin_window_push_tool(w, CTXWIN_KIND_TOOL_RESULT, id, strlen(id), output, len, NULL));
        ctxwin_request_info info;
        CHECK_OK(ctxwin_window_prepare(w, &info));
    }
    size_t start = ctxwin_window_start(w), count = ctxwin_window_message_count(w);
    CHECK(start > 2 && start < count);
    CHECK(ctxwin_window_is_pinned(w, 0) && ctxwin_window_is_pinned(w, 1)); /* system prompt, task */
    /* The host's loop: pinned messages before start, then every message from start. */
    size_t sent[4096], n = 0;
    for (size_t i = 0; i < start; i++) {
        if (ctxwin_window_is_pinned(w, i)) sent[n++] = i;
    }
    for (size_t i = start; i < count; i++) sent[n++] = i;
    /* The view, less its synthetic items (the marker). */
    size_t view[4096], m = 0, markers = 0;
    for (size_t i = 0; i < ctxwin_window_view_len(w); i++) {
        ctxwin_item item;
        CHECK_OK(ctxwin_window_view_get(w, i, &item));
        if (item.type == CTXWIN_ITEM_SYNTHETIC) {
            markers++;
            CHECK(item.text_len > 20 && memcmp(item.text, "[Context compacted:", 19) == 0);
        } else {
            view[m++] = item.index;
        }
    }
    CHECK(markers == 1);
    CHECK(m == n && memcmp(view, sent, n * sizeof(size_t)) == 0);
    ctxwin_count live;
    CHECK_OK(ctxwin_window_live_tokens(w, &live));
    CHECK(live.tokens <= 3000 + 200);
    /* Pins: out of range, a tool result, and over the budget are refused, changing nothing. */
    CHECK_STATUS(ctxwin_window_pin(w, count, true), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK_STATUS(ctxwin_window_pin(w, count - 1, true), CTXWIN_STATUS_INVALID_ARG);
    CHECK_OK(ctxwin_window_pin(w, 2, true)); /* an early assistant message */
    CHECK(ctxwin_window_is_pinned(w, 2));
    CHECK(ctxwin_window_start(w) >= start);
    CHECK_OK(ctxwin_window_pin(w, 2, false));
    CHECK(!ctxwin_window_is_pinned(w, 2));
    ctxwin_window_free(w);
}

void suite_view(void) {
    harness_run("sliding_view_is_pinned_plus_start_to_count", sliding_view_is_pinned_plus_start_to_count);
    harness_run("parallel_calls_pair_and_unanswered_ones_are_cancelled",
                parallel_calls_pair_and_unanswered_ones_are_cancelled);
    harness_run("bad_tool_messages_are_refused_and_nothing_is_lost", bad_tool_messages_are_refused_and_nothing_is_lost);
    harness_run("tiered_compact_cuts_long_tool_outputs", tiered_compact_cuts_long_tool_outputs);
    harness_run("monologue_compact_keeps_questions_and_answers", monologue_compact_keeps_questions_and_answers);
    harness_run("drop_oldest_honours_every_threshold", drop_oldest_honours_every_threshold);
    harness_run("recover_shrinks_by_the_excess", recover_shrinks_by_the_excess);
    harness_run("recover_frees_the_oldest_steps_of_a_one_task_loop", recover_frees_the_oldest_steps_of_a_one_task_loop);
    harness_run("strategy_settings_are_checked", strategy_settings_are_checked);
    harness_run("a_host_looping_from_start_sends_the_view_in_a_long_tool_loop",
                a_host_looping_from_start_sends_the_view_in_a_long_tool_loop);
}
