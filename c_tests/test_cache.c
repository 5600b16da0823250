/* Cache-aware windows through the C API: prepare before every request (the request fits
 * the context limit, the stable prefix grows with appends), provider usage objects, cache
 * statistics, and bad input that changes nothing. */
#include <stdio.h>
#include <stdlib.h>
#include "harness.h"

static ctxwin_status configure(ctxwin_window *w, const char *json) {
    return ctxwin_window_configure(w, json, strlen(json));
}

static ctxwin_status observe(ctxwin_window *w, size_t first, size_t end, const char *json) {
    return ctxwin_window_observe_usage_json(w, first, end, json, strlen(json));
}

/* A tool-using session: every request is prepared first, fits the limit, and (with the
 * boundary at rest) sends the previous request as its stable prefix. */
static void prepare_before_every_request(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(configure(w, "{\"context_limit\":12000,\"output_reserve\":2000,\"low_water\":0.6}"));
    CHECK_OK(ctxwin_window_set_overhead(w, 800, 200));
    char output[4096];
    for (size_t i = 0; i + 1 < sizeof output; i++) output[i] = (char)(i % 64 == 63 ? '\n' : 'a' + (char)(i % 26));
    output[sizeof output - 1] = '\0';
    ctxwin_request_info info;
    size_t previous_len = 0, over = 0, requests = 0, stable_total = 0;
    uint32_t generation = 0;
    for (int turn = 0; turn < 60; turn++) {
        CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Fix the next failing test."));
        for (int call = 0; call < 3; call++) {
            char id[32];
            snprintf(id, sizeof id, "c%d_%d", turn, call);
            CHECK_OK(ctxwin_window_push_tool(w, CTXWIN_KIND_TOOL_CALL, id, strlen(id), "read", 4, NULL));
            memset(&info, 0, sizeof info);
            CHECK_OK(ctxwin_window_prepare(w, &info)); /* mid-turn: before the model's next step */
            requests++;
            if (info.tokens + 2000 > 12000) over++;
            if (requests > 1 && generation == ctxwin_window_generation(w)) {
                CHECK(info.stable_items == previous_len);
            }
            CHECK(info.stable_items <= previous_len);
            CHECK(info.view_len == ctxwin_window_view_len(w));
            stable_total += info.stable_items;
            previous_len = info.view_len;
            generation = ctxwin_window_generation(w);
            CHECK_OK(ctxwin_window_push_tool(w, CTXWIN_KIND_TOOL_RESULT, id, strlen(id), output, strlen(output), NULL));
        }
        CHECK_OK(push_str(w, CTXWIN_KIND_ASSISTANT, "Fixed."));
        CHECK_OK(ctxwin_window_end_turn(w, NULL));
    }
    CHECK(over == 0);
    CHECK(stable_total > requests); /* most requests reuse most of the previous one */
    CHECK(ctxwin_window_first_live_turn(w) > 0);
    /* NULL out: nothing happens. */
    CHECK_STATUS(ctxwin_window_prepare(w, NULL), CTXWIN_STATUS_NULL_ARG);
    CHECK(strstr(last_error(w), "out") != NULL);
    ctxwin_window_free(w);
}

static void a_request_that_cannot_fit_is_refused(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(configure(w, "{\"context_limit\":2000,\"output_reserve\":500}"));
    char *big = malloc(20001);
    for (size_t i = 0; i < 20000; i++) big[i] = i % 5 == 4 ? ' ' : 'w';
    big[20000] = '\0';
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, big));
    uint32_t generation = ctxwin_window_generation(w);
    ctxwin_request_info info = {7, 7, 7, 7, 7, 7, 7};
    CHECK_STATUS(ctxwin_window_prepare(w, &info), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK(info.removed == 7 && info.tokens == 7); /* not written on failure */
    CHECK(strstr(last_error(w), "2000") != NULL);
    CHECK(ctxwin_window_generation(w) == generation);
    free(big);
    ctxwin_window_free(w);
}

static void usage_objects_of_every_provider(void) {
    ctxwin_window *w = new_window("claude-sonnet-4-5");
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Summarise the design in three bullets."));
    CHECK_OK(push_str(w, CTXWIN_KIND_ASSISTANT, "It counts, it groups, it slides."));
    ctxwin_cache_stats stats;
    CHECK_OK(ctxwin_window_cache_stats(w, &stats));
    CHECK(stats.requests == 0 && stats.prompt_tokens == 0 && stats.cached_tokens == 0);
    CHECK_OK(observe(w, 0, 2, "{\"input_tokens\":4,\"cache_creation_input_tokens\":10,\"cache_read_input_tokens\":6}"));
    CHECK_OK(observe(w, 0, 2, "{\"usage\":{\"prompt_tokens\":20,\"prompt_tokens_details\":{\"cached_tokens\":16}}}"));
    CHECK_OK(observe(w, 0, 2, "{\"input_tokens\":20,\"input_tokens_details\":{\"cached_tokens\":8}}"));
    CHECK_OK(observe(w, 0, 2, "{\"usageMetadata\":{\"promptTokenCount\":20,\"cachedContentTokenCount\":12}}"));
    CHECK_OK(ctxwin_window_cache_stats(w, &stats));
    CHECK(stats.requests == 4 && stats.prompt_tokens == 80 && stats.cached_tokens == 42);
    /* Gemini bills the tool-use prompt (its own tools' results) apart from promptTokenCount. */
    CHECK_OK(observe(w, 0, 2, "{\"usageMetadata\":{\"promptTokenCount\":20,\"toolUsePromptTokenCount\":300}}"));
    CHECK_OK(ctxwin_window_cache_stats(w, &stats));
    CHECK(stats.requests == 5 && stats.prompt_tokens == 400 && stats.cached_tokens == 42);
    /* Streaming: Anthropic's message_start event and the Responses response.completed event
     * carry the usage one level down; a message_delta with output tokens only, or a chunk
     * whose usage is still null, is refused naming what to observe. */
    CHECK_OK(observe(w, 0, 2,
                     "{\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\","
                     "\"content\":[],\"model\":\"claude-x\",\"usage\":{\"input_tokens\":10,\"cache_creation_input_tokens\":0,"
                     "\"cache_read_input_tokens\":5,\"output_tokens\":1}}}"));
    CHECK_OK(observe(w, 0, 2,
                     "{\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"object\":\"response\","
                     "\"usage\":{\"input_tokens\":20,\"input_tokens_details\":{\"cached_tokens\":4},\"output_tokens\":3}}}"));
    CHECK_OK(ctxwin_window_cache_stats(w, &stats));
    CHECK(stats.requests == 7 && stats.prompt_tokens == 435 && stats.cached_tokens == 51);
    CHECK_STATUS(observe(w, 0, 2, "{\"type\":\"message_delta\",\"delta\":{},\"usage\":{\"output_tokens\":15}}"),
                 CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "message_start") != NULL);
    CHECK_STATUS(observe(w, 0, 2, "{\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":null}"),
                 CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "null") != NULL);
    /* Bad input: a status, the field named, nothing changed. */
    ctxwin_count before, after;
    CHECK_OK(ctxwin_window_live_tokens(w, &before));
    CHECK_STATUS(observe(w, 0, 2, "{\"prompt_tokens\":-1}"), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "prompt_tokens") != NULL);
    CHECK_STATUS(observe(w, 0, 2, "{\"input_tokens\":1,\"cache_read_input_tokens\":-2}"), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "cache_read_input_tokens") != NULL);
    CHECK_STATUS(observe(w, 0, 2, "{\"tokens\":3}"), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "unknown shape") != NULL);
    CHECK_STATUS(observe(w, 0, 3, "{\"prompt_tokens\":20}"), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK_STATUS(observe(w, 0, 2, "{\"prompt_tokens\":"), CTXWIN_STATUS_PARSE);
    CHECK_STATUS(ctxwin_window_observe_usage_json(w, 0, 2, NULL, 4), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_observe_usage_json(w, 0, 2, "\xff\xfe", 2), CTXWIN_STATUS_INVALID_UTF8);
    CHECK_STATUS(observe(w, 0, 2, "{\"usageMetadata\":{\"promptTokenCount\":20,\"toolUsePromptTokenCount\":-3}}"),
                 CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "toolUsePromptTokenCount") != NULL);
    CHECK_OK(ctxwin_window_cache_stats(w, &stats));
    CHECK(stats.requests == 7);
    CHECK_OK(ctxwin_window_live_tokens(w, &after));
    CHECK(before.tokens == after.tokens);
    CHECK_STATUS(ctxwin_window_cache_stats(w, NULL), CTXWIN_STATUS_NULL_ARG);
    ctxwin_window_free(w);
}

static void cache_keys_are_validated_and_saved(void) {
    ctxwin_window *w = new_window("gpt-4");
    const char *bad[] = {
        "{\"low_water\":0}", "{\"low_water\":1.5}", "{\"output_reserve\":-1}",
        "{\"output_reserve\":9000}", "{\"history_budget\":100000}", "{\"history_budget\":\"lots\"}",
    };
    const char *named[] = {"low_water", "low_water", "output_reserve", "output_reserve", "history_budget", "history_budget"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_STATUS(configure(w, bad[i]), CTXWIN_STATUS_INVALID_ARG);
        CHECK(strstr(last_error(w), named[i]) != NULL);
    }
    CHECK_STATUS(ctxwin_window_set_budget(w, 100000), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK(strstr(last_error(w), "6144") != NULL); /* 8192 - 2048 */
    /* What every request sends besides the history is named part by part: an open tool
     * call's cancelled result, which the render adds, is not called overhead. */
    ctxwin_window *open = new_window("claude-sonnet-4-5");
    CHECK_OK(push_str(open, CTXWIN_KIND_USER, "Read it."));
    CHECK_OK(ctxwin_window_push_tool_call(open, "a", 1, "read", 4, "{}", 2, NULL));
    CHECK_STATUS(ctxwin_window_set_budget(open, 200000), CTXWIN_STATUS_OUT_OF_RANGE);
    /* The task ("Read it.") is pinned: counted as a pinned message, named as one. */
    CHECK(strstr(last_error(open), "(pinned messages ") != NULL);
    CHECK(strstr(last_error(open), " + cancelled results of 1 open tool call ") != NULL);
    CHECK(strstr(last_error(open), "overhead") == NULL);
    ctxwin_window_free(open);
    /* A budget set earlier is not clamped silently by a smaller context limit: refused. */
    CHECK_OK(ctxwin_window_set_budget(w, 6000));
    CHECK_STATUS(configure(w, "{\"context_limit\":4000}"), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "context_limit") != NULL && strstr(last_error(w), "3000") != NULL); /* 4000 - 1000 */
    int32_t budget = 0;
    CHECK_OK(ctxwin_window_budget(w, &budget));
    CHECK(budget == 6000);
    CHECK_OK(configure(w, "{\"history_budget\":\"auto\",\"low_water\":0.75,\"output_reserve\":1000}"));
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "hello"));
    ctxwin_request_info info;
    CHECK_OK(ctxwin_window_prepare(w, &info));
    CHECK_OK(observe(w, 0, 1, "{\"prompt_tokens\":5,\"prompt_tokens_details\":{\"cached_tokens\":0}}"));
    char saved[4096];
    size_t needed = 0;
    CHECK_OK(ctxwin_window_export(w, saved, sizeof saved, &needed));
    CHECK(strstr(saved, "\"low_water\":0.75") != NULL && strstr(saved, "\"history_budget\":\"auto\"") != NULL);
    ctxwin_window *restored = NULL;
    CHECK_OK(ctxwin_window_import(saved, needed, &restored));
    ctxwin_cache_stats a, b;
    CHECK_OK(ctxwin_window_cache_stats(w, &a));
    CHECK_OK(ctxwin_window_cache_stats(restored, &b));
    CHECK(a.requests == 1 && b.requests == 1 && b.prompt_tokens == 5);
    ctxwin_request_info again;
    CHECK_OK(ctxwin_window_prepare(restored, &again));
    CHECK(again.stable_items == info.view_len);
    ctxwin_window_free(restored);
    ctxwin_window_free(w);
}

/* A usage report for the request last prepared is judged against what it sent: under tiered
 * the view sends cut outputs and a summary block while start stays 0, and the report of the
 * request as sent is accepted after the answer was pushed and the turn ended. */
static void usage_for_the_last_request_sent(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(configure(w, "{\"strategy\":\"tiered\",\"history_budget\":20000}"));
    static char output[24000];
    for (size_t i = 0; i + 1 < sizeof output; i++) output[i] = (char)(i % 48 == 47 ? '\n' : 'a' + (char)(i % 26));
    output[sizeof output - 1] = '\0';
    for (int turn = 0; turn < 30; turn++) {
        char id[16];
        snprintf(id, sizeof id, "c%d", turn);
        CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Read the next file."));
        CHECK_OK(ctxwin_window_push_tool_call(w, id, strlen(id), "read", 4, "{}", 2, NULL));
        CHECK_OK(ctxwin_window_push_tool(w, CTXWIN_KIND_TOOL_RESULT, id, strlen(id), output, strlen(output), NULL));
        CHECK_OK(push_str(w, CTXWIN_KIND_ASSISTANT, "Done."));
        CHECK_OK(ctxwin_window_end_turn(w, NULL));
    }
    const char *early = "{\"prompt_tokens\":5}";
    CHECK_STATUS(ctxwin_window_observe_last_usage_json(w, early, strlen(early)), CTXWIN_STATUS_MISMATCH);
    CHECK(strstr(last_error(w), "no request") != NULL);
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Summarise."));
    ctxwin_request_info info;
    CHECK_OK(ctxwin_window_prepare(w, &info));
    CHECK(ctxwin_window_start(w) == 0);
    CHECK_OK(push_str(w, CTXWIN_KIND_ASSISTANT, "All files read."));
    CHECK_OK(ctxwin_window_end_turn(w, NULL));
    char usage[96];
    snprintf(usage, sizeof usage, "{\"usage\":{\"prompt_tokens\":%lld}}", (long long)info.tokens);
    CHECK_OK(ctxwin_window_observe_last_usage_json(w, usage, strlen(usage)));
    ctxwin_cache_stats stats;
    CHECK_OK(ctxwin_window_cache_stats(w, &stats));
    CHECK(stats.requests == 1 && stats.prompt_tokens == (uint64_t)info.tokens);
    const char *unknown = "{\"tokens\":3}";
    CHECK_STATUS(ctxwin_window_observe_last_usage_json(w, unknown, strlen(unknown)), CTXWIN_STATUS_INVALID_ARG);
    CHECK_STATUS(ctxwin_window_observe_last_usage_json(w, NULL, 3), CTXWIN_STATUS_NULL_ARG);
    ctxwin_window_free(w);
}

/* Issue 26: usage reports were taken on trust. Another provider's usage object, a total no
 * request could hold and the same report twice are refused or counted once; an overhead
 * the agent never declared is learned as overhead, not as a ratio. */
static void usage_is_not_taken_on_trust(void) {
    ctxwin_window *w = new_window("claude-sonnet-4-5");
    CHECK_OK(configure(w, "{\"format\":\"anthropic\"}"));
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "List the files."));
    ctxwin_request_info info;
    CHECK_OK(ctxwin_window_prepare(w, &info));
    ctxwin_count before, after;
    CHECK_OK(ctxwin_window_live_tokens(w, &before));
    const char *gemini = "{\"usageMetadata\":{\"promptTokenCount\":9}}";
    CHECK_STATUS(ctxwin_window_observe_last_usage_json(w, gemini, strlen(gemini)), CTXWIN_STATUS_MISMATCH);
    CHECK(strstr(last_error(w), "Gemini") != NULL && strstr(last_error(w), "Anthropic Messages") != NULL);
    const char *absurd = "{\"input_tokens\":90000,\"cache_read_input_tokens\":0}";
    CHECK_STATUS(ctxwin_window_observe_last_usage_json(w, absurd, strlen(absurd)), CTXWIN_STATUS_MISMATCH);
    CHECK(strstr(last_error(w), "90000") != NULL && strstr(last_error(w), "set_overhead") != NULL);
    CHECK_STATUS(ctxwin_window_observe_last_usage(w, 90000), CTXWIN_STATUS_MISMATCH);
    ctxwin_cache_stats stats;
    CHECK_OK(ctxwin_window_cache_stats(w, &stats));
    CHECK(stats.requests == 0);
    double ratio = 0;
    int32_t learned = -1;
    CHECK_OK(ctxwin_window_calibration(w, &ratio, &learned));
    CHECK(ratio == 1.0 && learned == 0);
    CHECK_OK(ctxwin_window_live_tokens(w, &after));
    CHECK(before.tokens == after.tokens && before.exact == after.exact);
    /* The agent sends 12000 tokens of system prompt and tools it never declared: the same
     * report twice (a stream's message_start, then its message_delta) counts once. */
    char usage[160];
    int64_t truth = 12000 + before.tokens;
    snprintf(usage, sizeof usage, "{\"input_tokens\":%lld,\"cache_read_input_tokens\":0}", (long long)truth);
    CHECK_OK(ctxwin_window_observe_last_usage_json(w, usage, strlen(usage)));
    CHECK_OK(ctxwin_window_observe_last_usage_json(w, usage, strlen(usage)));
    CHECK_OK(ctxwin_window_cache_stats(w, &stats));
    CHECK(stats.requests == 1 && stats.prompt_tokens == (uint64_t)truth);
    CHECK_OK(ctxwin_window_calibration(w, &ratio, &learned));
    CHECK(ratio > 0.98 && ratio < 1.02);
    CHECK(learned > 11900 && learned < 12100);
    CHECK_OK(ctxwin_window_live_tokens(w, &after));
    CHECK(!after.exact && after.tokens > 11900 + before.tokens && after.tokens < 12100 + before.tokens);
    CHECK_STATUS(ctxwin_window_calibration(w, NULL, &learned), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_calibration(w, &ratio, NULL), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_calibration(NULL, &ratio, &learned), CTXWIN_STATUS_NULL_ARG);
    ctxwin_window_free(w);
}

/* True when the item's text (not NUL-terminated) holds `needle`. */
static int item_holds(const struct ctxwin_item *item, const char *needle) {
    size_t n = strlen(needle);
    for (size_t at = 0; item->text != NULL && at + n <= item->text_len; at++) {
        if (memcmp(item->text + at, needle, n) == 0) return 1;
    }
    return 0;
}

/* Writes `lines` numbered lines of C source into `out` (at most 4,096 bytes for 100 lines),
 * a tool result's text; returns its length. */
static size_t source_lines(char *out, size_t cap, int lines) {
    size_t len = 0;
    for (int line = 0; line < lines && len < cap; line++) {
        len += (size_t)snprintf(out + len, cap - len, "%3d | int v%d = parse(x + %d);\n", line, line, line);
    }
    return len < cap ? len : cap - 1;
}

/* The clearing stage, before `strategy`: in a long tool loop under a small budget, old
 * results are sent as a placeholder naming the tool and the call while their calls stay;
 * prepare says how many and what it saved; the newest results stay whole; bad stage lists
 * change nothing. */
static void old_tool_results_are_cleared_before(const char *strategy) {
    ctxwin_window *w = new_window("gpt-4o");
    char settings[256];
    snprintf(settings, sizeof settings,
             "{\"stages\":[\"clear\",\"%s\"],\"history_budget\":3000,\"keep_tool_results\":2,\"clear_at_least\":500}",
             strategy);
    CHECK_OK(configure(w, settings));
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Fix the failing test in src/parse.c."));
    char output[4096];
    size_t len = source_lines(output, sizeof output, 100);
    ctxwin_request_info info;
    for (int step = 0; step < 12; step++) {
        char id[32];
        snprintf(id, sizeof id, "call_%d", step);
        const char *args = "{\"path\":\"src/parse.c\"}";
        CHECK_OK(ctxwin_window_push_tool_call(w, id, strlen(id), "read_file", 9, args, strlen(args), NULL));
        CHECK_OK(ctxwin_window_push_tool(w, CTXWIN_KIND_TOOL_RESULT, id, strlen(id), output, len, NULL));
        CHECK_OK(ctxwin_window_prepare(w, &info));
    }
    CHECK(info.cleared_results > 0 && info.cleared_tokens >= 500);
    size_t cleared = 0, whole = 0, calls = 0;
    for (size_t i = 0; i < ctxwin_window_view_len(w); i++) {
        struct ctxwin_item item;
        CHECK_OK(ctxwin_window_view_get(w, i, &item));
        if (item.kind == CTXWIN_KIND_TOOL_CALL) calls++;
        if (item.kind != CTXWIN_KIND_TOOL_RESULT) continue;
        if (item.type == CTXWIN_ITEM_TRUNCATED) {
            cleared++;
            CHECK(item_holds(&item, "read_file") && item_holds(&item, "call_"));
        } else {
            whole++;
        }
    }
    CHECK(cleared == info.cleared_results && whole >= 2 && calls == cleared + whole);
    uint32_t generation = ctxwin_window_generation(w);
    CHECK_STATUS(configure(w, "{\"stages\":[]}"), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "'stages'") != NULL);
    CHECK_STATUS(configure(w, "{\"stages\":[\"clear\",\"shred\"]}"), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "shred") != NULL);
    CHECK_STATUS(configure(w, "{\"exclude_tools\":\"read_file\"}"), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "exclude_tools") != NULL);
    CHECK_STATUS(configure(w, "{\"keep_tool_results\":-1}"), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "keep_tool_results") != NULL);
    CHECK_STATUS(configure(w, "{\"clear_low_water\":0}"), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "clear_low_water") != NULL);
    CHECK(ctxwin_window_generation(w) == generation);
    ctxwin_request_info again;
    CHECK_OK(ctxwin_window_prepare(w, &again));
    CHECK(again.cleared_results == info.cleared_results && again.tokens == info.tokens);
    ctxwin_window_free(w);
}

/* The clearing stage before tiered (refused before 0.3's tiered composition): in a long tool
 * loop under a small budget, old results are sent as their placeholders (never cut further),
 * tiered cuts the long outputs still sent, the newest keep_tool_results are not cleared, and
 * every request is within the budget (validate's over_budget_by is 0). */
static void old_tool_results_are_cleared_before_tiered_cuts(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(configure(w, "{\"stages\":[\"clear\",\"tiered\"],\"history_budget\":3000,\"keep_tool_results\":2,"
                          "\"clear_at_least\":500,\"tool_output_max_lines\":20}"));
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Fix the failing test in src/parse.c."));
    char output[4096];
    size_t len = source_lines(output, sizeof output, 100);
    ctxwin_request_info info;
    size_t placeholders = 0, cuts = 0;
    for (int step = 0; step < 12; step++) {
        char id[32];
        snprintf(id, sizeof id, "call_%d", step);
        const char *args = "{\"path\":\"src/parse.c\"}";
        CHECK_OK(ctxwin_window_push_tool_call(w, id, strlen(id), "read_file", 9, args, strlen(args), NULL));
        CHECK_OK(ctxwin_window_push_tool(w, CTXWIN_KIND_TOOL_RESULT, id, strlen(id), output, len, NULL));
        CHECK_OK(ctxwin_window_prepare(w, &info));
        char report[1024];
        CHECK_OK(ctxwin_window_validate(w, report, sizeof report, NULL));
        CHECK(strstr(report, "\"over_budget_by\":0") != NULL);
        size_t newest[2] = {ctxwin_window_message_count(w) - 1, ctxwin_window_message_count(w) - 3};
        placeholders = 0;
        cuts = 0;
        for (size_t i = 0; i < ctxwin_window_view_len(w); i++) {
            struct ctxwin_item item;
            CHECK_OK(ctxwin_window_view_get(w, i, &item));
            if (item.kind != CTXWIN_KIND_TOOL_RESULT || item.type != CTXWIN_ITEM_TRUNCATED) continue;
            if (item_holds(&item, "[Old tool result cleared")) {
                placeholders++;
                CHECK(!item_holds(&item, "truncated") && item.index != newest[0] && item.index != newest[1]);
            } else {
                cuts++;
                CHECK(item_holds(&item, "lines truncated"));
            }
        }
        CHECK(placeholders == info.cleared_results);
    }
    CHECK(placeholders > 0 && cuts > 0 && info.cleared_tokens >= 500);
    ctxwin_window_free(w);
}

static void old_tool_results_are_cleared_first(void) {
    old_tool_results_are_cleared_before("sliding");
    old_tool_results_are_cleared_before("drop_oldest");
    old_tool_results_are_cleared_before("monologue");
}

/* Images in old user messages: once the clear stage has cleared the results after a user
 * message holding an image, the message is sent as its text and a placeholder naming the
 * tokens cleared (a TRUNCATED item), counted with the cleared results; the newest turn's
 * user message keeps its image. */
static void images_in_old_user_messages_are_cleared(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(configure(w, "{\"format\":\"openai_chat\",\"stages\":[\"clear\",\"sliding\"],\"history_budget\":8000,"
                          "\"keep_tool_results\":1,\"clear_at_least\":0}"));
    const char *image = "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"See the screenshot.\"},"
                        "{\"type\":\"image_url\",\"image_url\":{\"url\":\"https://example.com/shot.png\"}}]}";
    char output[4096];
    size_t len = source_lines(output, sizeof output, 60);
    size_t images[3];
    int call = 0;
    for (int turn = 0; turn < 3; turn++) {
        if (turn > 0) {
            CHECK_OK(push_str(w, CTXWIN_KIND_ASSISTANT, "Looked at it."));
            CHECK_OK(ctxwin_window_end_turn(w, NULL));
        }
        CHECK_OK(ctxwin_window_push_json(w, image, strlen(image)));
        images[turn] = ctxwin_window_message_count(w) - 1;
        for (int step = 0; step < 8; step++) {
            char id[32];
            snprintf(id, sizeof id, "call_%d", call++);
            const char *args = "{\"path\":\"src/page.c\"}";
            CHECK_OK(ctxwin_window_push_tool_call(w, id, strlen(id), "read_file", 9, args, strlen(args), NULL));
            CHECK_OK(ctxwin_window_push_tool(w, CTXWIN_KIND_TOOL_RESULT, id, strlen(id), output, len, NULL));
        }
    }
    ctxwin_request_info info;
    CHECK_OK(ctxwin_window_prepare(w, &info));
    size_t cleared_results = 0;
    int old_cleared = 0, newest_whole = 0;
    for (size_t i = 0; i < ctxwin_window_view_len(w); i++) {
        struct ctxwin_item item;
        CHECK_OK(ctxwin_window_view_get(w, i, &item));
        if (item.kind == CTXWIN_KIND_TOOL_RESULT && item.type == CTXWIN_ITEM_TRUNCATED) cleared_results++;
        if (item.index == images[1]) {
            old_cleared = item.type == CTXWIN_ITEM_TRUNCATED && item_holds(&item, "See the screenshot.") &&
                          item_holds(&item, "[Image cleared to save context");
        }
        if (item.index == images[2]) newest_whole = item.type == CTXWIN_ITEM_MESSAGE;
    }
    CHECK(old_cleared && newest_whole);
    CHECK(cleared_results > 0 && info.cleared_results == cleared_results + 1);
    ctxwin_window_free(w);
}

/* Old images are cleared on their own: a conversation without tool results (a screenshot and
 * a question, an answer, turn after turn), over its budget, sends its old user messages as
 * their text and a placeholder (TRUNCATED items, counted in cleared_results) and keeps the
 * newest turn's image; every request within the budget. Before, only tool results moved the
 * clear point, and every old image stayed. */
static void old_images_are_cleared_without_tool_results(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(configure(w, "{\"format\":\"openai_chat\",\"stages\":[\"clear\",\"sliding\"],\"clear_at_least\":0}"));
    const char *image = "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"See the screenshot.\"},"
                        "{\"type\":\"image_url\",\"image_url\":{\"url\":\"https://example.com/shot.png\"}}]}";
    ctxwin_request_info info;
    size_t newest = 0, cleared = 0;
    for (int turn = 0; turn < 24; turn++) {
        if (turn > 0) {
            CHECK_OK(push_str(w, CTXWIN_KIND_ASSISTANT, "The button is misaligned by two pixels."));
            CHECK_OK(ctxwin_window_end_turn(w, NULL));
        }
        CHECK_OK(ctxwin_window_push_json(w, image, strlen(image)));
        newest = ctxwin_window_message_count(w) - 1;
        if (turn == 0) {
            struct ctxwin_item first;
            CHECK_OK(ctxwin_window_view_get(w, 0, &first));
            CHECK_OK(ctxwin_window_set_budget(w, (int32_t)(8 * (first.tokens.tokens + 20))));
        }
        CHECK_OK(ctxwin_window_prepare(w, &info));
        char report[1024];
        CHECK_OK(ctxwin_window_validate(w, report, sizeof report, NULL));
        CHECK(strstr(report, "\"over_budget_by\":0") != NULL);
        cleared = 0;
        for (size_t i = 0; i < ctxwin_window_view_len(w); i++) {
            struct ctxwin_item item;
            CHECK_OK(ctxwin_window_view_get(w, i, &item));
            if (item.kind != CTXWIN_KIND_USER) continue;
            if (item.index == newest) CHECK(item.type == CTXWIN_ITEM_MESSAGE);
            if (item.type == CTXWIN_ITEM_TRUNCATED) {
                cleared++;
                CHECK(item_holds(&item, "See the screenshot.") && item_holds(&item, "[Image cleared to save context"));
            }
        }
        CHECK(info.cleared_results == cleared);
    }
    CHECK(cleared >= 3);
    ctxwin_window_free(w);
}

/* Superseded reads: with "supersede": {"read_file": "path"}, a file read again makes the
 * earlier result a note pointing to the later call (whatever the budget); the calls stay,
 * a file read once and the newest read stay whole; prepare counts the notes; a rule naming
 * no argument is refused, naming the key, and changes nothing. */
static void a_file_read_again_supersedes_the_earlier_read(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(configure(w, "{\"stages\":[\"clear\",\"sliding\"],\"history_budget\":100000,"
                          "\"supersede\":{\"read_file\":\"path\"}}"));
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Fix the failing test in src/parse.c."));
    char output[4096];
    size_t len = source_lines(output, sizeof output, 60);
    /* call_0 and call_2 read src/parse.c before call_3 reads it again; call_1 reads util.c. */
    const char *paths[4] = {"src/parse.c", "src/util.c", "src/parse.c", "src/parse.c"};
    for (int step = 0; step < 4; step++) {
        char id[32], args[64];
        snprintf(id, sizeof id, "call_%d", step);
        snprintf(args, sizeof args, "{\"path\":\"%s\",\"limit\":60}", paths[step]);
        CHECK_OK(ctxwin_window_push_tool_call(w, id, strlen(id), "read_file", 9, args, strlen(args), NULL));
        CHECK_OK(ctxwin_window_push_tool(w, CTXWIN_KIND_TOOL_RESULT, id, strlen(id), output, len, NULL));
        CHECK_OK(push_str(w, CTXWIN_KIND_ASSISTANT, "Read it."));
    }
    ctxwin_request_info info;
    CHECK_OK(ctxwin_window_prepare(w, &info));
    CHECK(info.cleared_results == 2 && info.cleared_tokens > 0);
    size_t result = 0, calls = 0;
    for (size_t i = 0; i < ctxwin_window_view_len(w); i++) {
        struct ctxwin_item item;
        CHECK_OK(ctxwin_window_view_get(w, i, &item));
        if (item.kind == CTXWIN_KIND_TOOL_CALL) calls++;
        if (item.kind != CTXWIN_KIND_TOOL_RESULT) continue;
        switch (result++) {
        case 0: CHECK(item.type == CTXWIN_ITEM_TRUNCATED && item_holds(&item, "(call call_2)")); break;
        case 2: CHECK(item.type == CTXWIN_ITEM_TRUNCATED && item_holds(&item, "(call call_3)")); break;
        default: CHECK(item.type == CTXWIN_ITEM_MESSAGE); break;
        }
    }
    CHECK(result == 4 && calls == 4);
    uint32_t generation = ctxwin_window_generation(w);
    const char *refused[] = {
        "{\"supersede\":{\"read_file\":\"\"}}",
        "{\"supersede\":{\"read_file\":7}}",
        "{\"supersede\":[\"read_file\",\"path\"]}",
        "{\"history_budget\":10,\"supersede\":{\"read_file\":null}}",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        CHECK_STATUS(configure(w, refused[i]), CTXWIN_STATUS_INVALID_ARG);
        CHECK(strstr(last_error(w), "'supersede'") != NULL);
    }
    CHECK(ctxwin_window_generation(w) == generation);
    ctxwin_request_info again;
    CHECK_OK(ctxwin_window_prepare(w, &again));
    CHECK(again.cleared_results == 2 && again.tokens == info.tokens);
    ctxwin_window_free(w);
}

void suite_cache(void) {
    harness_run("old_tool_results_are_cleared_first", old_tool_results_are_cleared_first);
    harness_run("old_tool_results_are_cleared_before_tiered_cuts", old_tool_results_are_cleared_before_tiered_cuts);
    harness_run("images_in_old_user_messages_are_cleared", images_in_old_user_messages_are_cleared);
    harness_run("old_images_are_cleared_without_tool_results", old_images_are_cleared_without_tool_results);
    harness_run("a_file_read_again_supersedes_the_earlier_read", a_file_read_again_supersedes_the_earlier_read);
    harness_run("prepare_before_every_request", prepare_before_every_request);
    harness_run("a_request_that_cannot_fit_is_refused", a_request_that_cannot_fit_is_refused);
    harness_run("usage_objects_of_every_provider", usage_objects_of_every_provider);
    harness_run("cache_keys_are_validated_and_saved", cache_keys_are_validated_and_saved);
    harness_run("usage_for_the_last_request_sent", usage_for_the_last_request_sent);
    harness_run("usage_is_not_taken_on_trust", usage_is_not_taken_on_trust);
}
