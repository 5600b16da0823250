/* Limits: an oversized message is refused with a status before a byte of it is read, appends
 * nothing and says why in last_error; the limit is configurable and 0 lifts it. */
#define _DEFAULT_SOURCE /* mmap's MAP_ANONYMOUS and MAP_NORESERVE */
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "harness.h"

/* 1 GiB + 1 of address space that is never backed by memory: PROT_NONE makes any read of it
 * a crash, so the refusals below prove the length was checked before the text was read. */
#define HUGE_LEN (((size_t)1 << 30) + 1)

static void one_gigabyte_push_is_refused_without_reading_it(void) {
    void *huge = mmap(NULL, HUGE_LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CHECK(huge != MAP_FAILED);
    if (huge == MAP_FAILED) return;
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "before"));
    ctxwin_count c = {-5, true};
    CHECK_STATUS(ctxwin_window_push(w, CTXWIN_KIND_TOOL_RESULT, (const char *)huge, HUGE_LEN, &c),
                 CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK(c.tokens == -5); /* out written only on success */
    CHECK(ctxwin_window_message_count(w) == 1);
    CHECK(strstr(last_error(w), "1073741825 bytes") != NULL);
    CHECK(strstr(last_error(w), "max_message_bytes") != NULL);
    /* The stateless counter applies the default limit too. */
    CHECK_STATUS(ctxwin_count_text("gpt-4o", 6, (const char *)huge, HUGE_LEN, &c), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK(c.tokens == -5);
    /* And so does the tool definitions' counter. */
    CHECK_STATUS(ctxwin_count_tools_json("gpt-4o", 6, (const char *)huge, HUGE_LEN, &c), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK(c.tokens == -5);
    CHECK(strstr(thread_last_error(), "tool definitions' JSON is 1073741825 bytes") != NULL);
    ctxwin_window_free(w);
    munmap(huge, HUGE_LEN);
}

static void the_limit_is_configurable_and_zero_lifts_it(void) {
    ctxwin_window *w = new_window("gpt-4o");
    const char *json = "{\"max_message_bytes\":8}";
    CHECK_OK(ctxwin_window_configure(w, json, strlen(json)));
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "12345678"));
    CHECK_STATUS(push_str(w, CTXWIN_KIND_ASSISTANT, "123456789"), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK(strstr(last_error(w), "9 bytes") != NULL && strstr(last_error(w), "8 bytes") != NULL);
    CHECK(ctxwin_window_message_count(w) == 1);
    /* The limit is checked before UTF-8: an oversized invalid text is still OUT_OF_RANGE. */
    const char bad[] = {'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', (char)0xFF};
    CHECK_STATUS(ctxwin_window_push(w, CTXWIN_KIND_USER, bad, sizeof bad, NULL), CTXWIN_STATUS_OUT_OF_RANGE);
    const char *unlimited = "{\"max_message_bytes\":0}";
    CHECK_OK(ctxwin_window_configure(w, unlimited, strlen(unlimited)));
    CHECK_OK(push_str(w, CTXWIN_KIND_ASSISTANT, "123456789"));
    CHECK(ctxwin_window_message_count(w) == 2);
    const char *negative = "{\"max_message_bytes\":-1}";
    CHECK_STATUS(ctxwin_window_configure(w, negative, strlen(negative)), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "max_message_bytes") != NULL);
    ctxwin_window_free(w);
}

static void the_default_limit_admits_exactly_its_size(void) {
    if (quick_mode()) return; /* 64 MiB copies are slow under valgrind */
    size_t len = (size_t)CTXWIN_DEFAULT_MAX_MESSAGE_BYTES;
    char *text = (char *)malloc(len + 1);
    CHECK(text != NULL);
    if (text == NULL) return;
    memset(text, 'a', len + 1);
    ctxwin_window *w = new_window("claude-sonnet-4-5"); /* estimated: counting is O(1) memory */
    ctxwin_count c = {0, false};
    ctxwin_count counted = {0, true};
    CHECK_OK(ctxwin_count_text("claude-sonnet-4-5", 17, text, len, &counted));
    CHECK_OK(ctxwin_window_push(w, CTXWIN_KIND_TOOL_RESULT, text, len, &c));
    CHECK(c.tokens == counted.tokens && !c.exact && c.tokens > 0);
    CHECK_STATUS(ctxwin_window_push(w, CTXWIN_KIND_TOOL_RESULT, text, len + 1, &c), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK(ctxwin_window_message_count(w) == 1);
    CHECK_OK(ctxwin_count_text("claude-sonnet-4-5", 17, text, len, &c));
    CHECK_STATUS(ctxwin_count_text("claude-sonnet-4-5", 17, text, len + 1, &c), CTXWIN_STATUS_OUT_OF_RANGE);
    /* A count has nothing to configure: the message points to a window that has. */
    CHECK(strstr(thread_last_error(), "a window configured with a larger max_message_bytes") != NULL);
    ctxwin_window_free(w);
    free(text);
}

static void ten_million_messages_in_a_counts_only_window(void) {
    size_t n = quick_mode() ? 100000 : 10000000;
    ctxwin_window *w = new_window("gpt-4o");
    const char *json = "{\"retain_text\":false,\"history_budget\":1000000,\"context_limit\":2000000,\"low_water\":1}";
    CHECK_OK(ctxwin_window_configure(w, json, strlen(json)));
    ctxwin_count c = {3, true};
    int32_t failures = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t kind = i % 4 == 0 ? CTXWIN_KIND_USER : CTXWIN_KIND_ASSISTANT;
        failures += ctxwin_window_push_counted(w, kind, c) != CTXWIN_OK;
        if (i % 4 == 3) failures += ctxwin_window_end_turn(w, NULL) != CTXWIN_OK;
    }
    CHECK(failures == 0);
    CHECK(ctxwin_window_message_count(w) == n);
    CHECK(ctxwin_window_turn_count(w) == n / 4);
    /* 12 tokens a turn under a budget of 1000000: the newest 83333 turns are live. */
    CHECK(ctxwin_window_turn_count(w) - ctxwin_window_first_live_turn(w) == (n / 4 < 83333 ? n / 4 : 83333));
    ctxwin_window_free(w);
}

/* `prefix` (a malloc'ed string), then `depth` times `open`, then `middle`, then `depth` times
 * `close`, then `suffix`. */
static char *nested(const char *prefix, const char *open, const char *middle, const char *close,
                    size_t depth, const char *suffix) {
    size_t len = strlen(prefix) + depth * (strlen(open) + strlen(close)) + strlen(middle) + strlen(suffix);
    char *text = (char *)malloc(len + 1);
    if (text == NULL) return NULL;
    char *at = text;
    at += sprintf(at, "%s", prefix);
    for (size_t i = 0; i < depth; i++) at += sprintf(at, "%s", open);
    at += sprintf(at, "%s", middle);
    for (size_t i = 0; i < depth; i++) at += sprintf(at, "%s", close);
    sprintf(at, "%s", suffix);
    return text;
}

/* An Anthropic tool call whose input nests `depth` objects: the message is depth + 3 levels. */
static char *deep_call(size_t depth) {
    return nested("{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"f\",\"input\":",
                  "{\"a\":", "1", "}", depth, "}]}");
}

/* The JSON readers on a thread of CTXWIN_MIN_THREAD_STACK bytes: the deepest input each one
 * accepts is read, rendered, saved, restored and freed; one level more is refused; and a
 * million levels are refused without recursion. */
static void *deep_json_job(void *arg) {
    (void)arg;
    const size_t deepest = 64, levels = 1000000;
    ctxwin_window *w = NULL;
    CHECK_OK(ctxwin_window_new("claude-sonnet-4-5", 17, &w));
    const char *anthropic = "{\"format\":\"anthropic\"}";
    CHECK_OK(ctxwin_window_configure(w, anthropic, strlen(anthropic)));
    const char *user = "{\"role\":\"user\",\"content\":\"go\"}";
    CHECK_OK(ctxwin_window_push_json(w, user, strlen(user)));
    char *call = deep_call(deepest - 3), *deeper = deep_call(deepest - 2), *huge = deep_call(levels);
    CHECK(call != NULL && deeper != NULL && huge != NULL);
    if (call == NULL || deeper == NULL || huge == NULL) return NULL;
    CHECK_OK(ctxwin_window_push_json(w, call, strlen(call)));
    CHECK_STATUS(ctxwin_window_push_json(w, deeper, strlen(deeper)), CTXWIN_STATUS_PARSE);
    CHECK(strstr(last_error(w), "nest deeper than 64 levels") != NULL);
    CHECK_STATUS(ctxwin_window_push_json(w, huge, strlen(huge)), CTXWIN_STATUS_PARSE);
    CHECK(ctxwin_window_message_count(w) == 2);
    size_t needed = 0;
    CHECK_OK(ctxwin_window_render_json(w, NULL, 0, &needed));
    CHECK(needed > strlen(call));
    CHECK_OK(ctxwin_window_render_request(w, "{\"model\":\"m\"}", 13, NULL, 0, &needed));
    size_t len = 0;
    char *doc = export_json(w, &len);
    ctxwin_window *copy = NULL;
    CHECK(doc != NULL);
    if (doc != NULL) CHECK_OK(ctxwin_window_import(doc, len, &copy));
    CHECK(copy != NULL && ctxwin_window_message_count(copy) == 2);
    ctxwin_window_free(copy);
    free(doc);
    /* Tool definitions, usage, configuration and options: one level more is refused. */
    char *schema = nested("[{\"name\":\"f\",\"input_schema\":", "{\"a\":", "1", "}", deepest - 2, "}]");
    char *schema_deeper = nested("[{\"name\":\"f\",\"input_schema\":", "{\"a\":", "1", "}", deepest - 1, "}]");
    ctxwin_count c = {0, false};
    CHECK_OK(ctxwin_count_tools_json("gpt-4o", 6, schema, strlen(schema), &c));
    CHECK_STATUS(ctxwin_count_tools_json("gpt-4o", 6, schema_deeper, strlen(schema_deeper), &c), CTXWIN_STATUS_PARSE);
    char *usage = nested("{\"input_tokens\":10,\"output_tokens\":2,\"x\":", "[", "", "]", deepest - 1, "}");
    char *usage_deeper = nested("{\"input_tokens\":10,\"output_tokens\":2,\"x\":", "[", "", "]", deepest, "}");
    CHECK_STATUS(ctxwin_window_observe_usage_json(w, 0, 2, usage_deeper, strlen(usage_deeper)), CTXWIN_STATUS_PARSE);
    CHECK(strstr(last_error(w), "deeper than 64") != NULL);
    (void)ctxwin_window_observe_usage_json(w, 0, 2, usage, strlen(usage)); /* read whole; its fields decide */
    char *config = nested("{\"x\":", "[", "", "]", deepest - 1, "}");
    CHECK_STATUS(ctxwin_window_configure(w, config, strlen(config)), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "unknown configuration key 'x'") != NULL);
    /* A tokenizer file: its sections are read by a reader of its own. */
    char *tokenizer = nested("{\"x\":", "[", "", "]", deepest - 1,
                             ",\"model\":{\"type\":\"BPE\",\"vocab\":{\"h\":0},\"merges\":[]}}");
    char *tokenizer_huge = nested("{\"x\":", "[", "", "]", levels, "}");
    ctxwin_tokenizer *t = NULL;
    CHECK_OK(ctxwin_tokenizer_from_bytes(tokenizer, strlen(tokenizer), NULL, 0, &t));
    ctxwin_tokenizer_free(t);
    t = NULL;
    CHECK_STATUS(ctxwin_tokenizer_from_bytes(tokenizer_huge, strlen(tokenizer_huge), NULL, 0, &t), CTXWIN_STATUS_PARSE);
    CHECK(t == NULL);
    free(schema);
    free(schema_deeper);
    free(usage);
    free(usage_deeper);
    free(config);
    free(tokenizer);
    free(tokenizer_huge);
    free(call);
    free(deeper);
    free(huge);
    ctxwin_window_free(w);
    return NULL;
}

/* The readers recursed once per level up to 128 levels and crashed a 64 KiB thread: nesting is
 * now at most 64 levels, checked before anything recurses, and the header documents the stack
 * a thread calling the library needs. */
static void small_stacks_are_enough(void) {
    pthread_attr_t attr;
    CHECK(pthread_attr_init(&attr) == 0);
    CHECK(pthread_attr_setstacksize(&attr, CTXWIN_MIN_THREAD_STACK) == 0);
    pthread_t thread;
    CHECK(pthread_create(&thread, &attr, deep_json_job, NULL) == 0);
    CHECK(pthread_join(thread, NULL) == 0);
    pthread_attr_destroy(&attr);
}

void suite_limits(void) {
    harness_run("one_gigabyte_push_is_refused_without_reading_it", one_gigabyte_push_is_refused_without_reading_it);
    harness_run("the_limit_is_configurable_and_zero_lifts_it", the_limit_is_configurable_and_zero_lifts_it);
    harness_run("the_default_limit_admits_exactly_its_size", the_default_limit_admits_exactly_its_size);
    harness_run("ten_million_messages_in_a_counts_only_window", ten_million_messages_in_a_counts_only_window);
    harness_run("small_stacks_are_enough", small_stacks_are_enough);
}
