/* Limits: an oversized message is refused with a status before a byte of it is read, appends
 * nothing and says why in last_error; the limit is configurable and 0 lifts it. */
#define _DEFAULT_SOURCE /* mmap's MAP_ANONYMOUS and MAP_NORESERVE */
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

void suite_limits(void) {
    harness_run("one_gigabyte_push_is_refused_without_reading_it", one_gigabyte_push_is_refused_without_reading_it);
    harness_run("the_limit_is_configurable_and_zero_lifts_it", the_limit_is_configurable_and_zero_lifts_it);
    harness_run("the_default_limit_admits_exactly_its_size", the_default_limit_admits_exactly_its_size);
    harness_run("ten_million_messages_in_a_counts_only_window", ten_million_messages_in_a_counts_only_window);
}
