/* Error paths: NULL for every pointer, invalid UTF-8, bad values, out-of-range indices and
 * too-small buffers. Each failure returns a status, leaves the window unchanged and leaves a
 * message in last_error. */
#include <stdlib.h>
#include "harness.h"

static void null_handles_are_refused(void) {
    ctxwin_count c = {0, false};
    ctxwin_turn_info info;
    size_t n = 0;
    char buf[8];
    ctxwin_window *out = NULL;
    CHECK_STATUS(ctxwin_window_new("gpt-4o", 6, NULL), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_new(NULL, 6, &out), CTXWIN_STATUS_NULL_ARG);
    CHECK(out == NULL);
    CHECK_STATUS(ctxwin_window_clone(NULL, &out), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_configure(NULL, "{}", 2), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_set_budget(NULL, 1), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_set_overhead(NULL, 1, 1), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_set_model(NULL, "x", 1), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_push(NULL, CTXWIN_KIND_USER, "x", 1, &c), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_push_counted(NULL, CTXWIN_KIND_USER, c), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_end_turn(NULL, &n), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_turn_info(NULL, 0, &info), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_live_tokens(NULL, &c), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_truncate(NULL, 0), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_reset(NULL), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_drop_oldest_turn(NULL), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_last_error(NULL, buf, sizeof buf, &n), CTXWIN_STATUS_NULL_ARG);
    CHECK(ctxwin_window_start(NULL) == 0);
    CHECK(ctxwin_window_generation(NULL) == 0);
    CHECK(ctxwin_window_message_count(NULL) == 0);
    CHECK(ctxwin_window_turn_count(NULL) == 0);
    CHECK(ctxwin_window_first_live_turn(NULL) == 0);
    ctxwin_window_free(NULL); /* a no-op */
}

static void null_arguments_on_a_live_window(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "hi"));
    CHECK_STATUS(ctxwin_window_clone(w, NULL), CTXWIN_STATUS_NULL_ARG);
    CHECK(strstr(last_error(w), "out") != NULL);
    CHECK_STATUS(ctxwin_window_configure(w, NULL, 3), CTXWIN_STATUS_NULL_ARG);
    CHECK(strstr(last_error(w), "json") != NULL);
    CHECK_STATUS(ctxwin_window_set_model(w, NULL, 3), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_push(w, CTXWIN_KIND_USER, NULL, 3, NULL), CTXWIN_STATUS_NULL_ARG);
    CHECK(strstr(last_error(w), "text") != NULL);
    CHECK_STATUS(ctxwin_window_turn_info(w, 0, NULL), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_live_tokens(w, NULL), CTXWIN_STATUS_NULL_ARG);
    /* Optional out-parameters may be NULL. */
    CHECK_OK(ctxwin_window_push(w, CTXWIN_KIND_ASSISTANT, NULL, 0, NULL));
    CHECK_OK(ctxwin_window_end_turn(w, NULL));
    CHECK(ctxwin_window_message_count(w) == 2);
    ctxwin_window_free(w);
}

static void invalid_utf8_is_refused_and_nothing_is_pushed(void) {
    const char bad[] = {'a', (char)0xFF, 'b'};
    ctxwin_window *w = NULL;
    CHECK_STATUS(ctxwin_window_new(bad, sizeof bad, &w), CTXWIN_STATUS_INVALID_UTF8);
    CHECK(w == NULL);
    w = new_window("gpt-4o");
    ctxwin_count c = {123, true};
    CHECK_STATUS(ctxwin_window_push(w, CTXWIN_KIND_USER, bad, sizeof bad, &c), CTXWIN_STATUS_INVALID_UTF8);
    CHECK(c.tokens == 123);
    CHECK(ctxwin_window_message_count(w) == 0);
    CHECK(strstr(last_error(w), "UTF-8") != NULL);
    CHECK_STATUS(ctxwin_window_configure(w, bad, sizeof bad), CTXWIN_STATUS_INVALID_UTF8);
    CHECK_STATUS(ctxwin_window_set_model(w, bad, sizeof bad), CTXWIN_STATUS_INVALID_UTF8);
    /* A truncated multi-byte character is invalid too. */
    const char cut[] = {(char)0xE2, (char)0x82};
    CHECK_STATUS(ctxwin_window_push(w, CTXWIN_KIND_USER, cut, sizeof cut, NULL), CTXWIN_STATUS_INVALID_UTF8);
    CHECK(ctxwin_window_message_count(w) == 0);
    ctxwin_window_free(w);
}

static void bad_values_are_refused(void) {
    ctxwin_window *w = new_window("gpt-4o");
    ctxwin_count negative = {-1, true}, fine = {5, true};
    CHECK_STATUS(ctxwin_window_push_counted(w, CTXWIN_KIND_USER, negative), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "negative") != NULL);
    CHECK_STATUS(ctxwin_window_push_counted(w, 6, fine), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "kind") != NULL);
    CHECK_STATUS(ctxwin_window_push_counted(w, -1, fine), CTXWIN_STATUS_INVALID_ARG);
    CHECK_STATUS(ctxwin_window_push(w, 99, "x", 1, NULL), CTXWIN_STATUS_INVALID_ARG);
    CHECK(ctxwin_window_message_count(w) == 0);
    CHECK_STATUS(ctxwin_window_set_budget(w, -100), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "budget") != NULL);
    CHECK_STATUS(ctxwin_window_set_overhead(w, -1, 0), CTXWIN_STATUS_INVALID_ARG);
    CHECK_STATUS(ctxwin_window_set_overhead(w, 0, INT32_MIN), CTXWIN_STATUS_INVALID_ARG);
    ctxwin_count total = {0, false};
    CHECK_OK(ctxwin_window_live_tokens(w, &total));
    CHECK(total.tokens == 0); /* the refused overhead was not applied */
    /* An empty model name is a missing setting, not a model. */
    CHECK_STATUS(ctxwin_window_set_model(w, "", 0), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "model: the name is empty") != NULL);
    CHECK_STATUS(ctxwin_window_set_model(w, " ", 1), CTXWIN_STATUS_INVALID_ARG);
    ctxwin_window_free(w);
    ctxwin_window *untouched = (ctxwin_window *)&untouched;
    CHECK_STATUS(ctxwin_window_new("", 0, &untouched), CTXWIN_STATUS_INVALID_ARG);
    CHECK_STATUS(ctxwin_window_new(NULL, 0, &untouched), CTXWIN_STATUS_INVALID_ARG);
    CHECK(untouched == (ctxwin_window *)&untouched);
    CHECK(strstr(thread_last_error(), "model: the name is empty") != NULL);
}

static void out_of_range_indices(void) {
    ctxwin_window *w = new_window("gpt-4o");
    ctxwin_turn_info info;
    memset(&info, 0x5A, sizeof info);
    CHECK_STATUS(ctxwin_window_turn_info(w, 0, &info), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK(info.first_message == (size_t)0x5A5A5A5A5A5A5A5AULL || sizeof(size_t) < 8);
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "one"));
    CHECK_OK(ctxwin_window_turn_info(w, 0, &info));
    CHECK_STATUS(ctxwin_window_turn_info(w, 1, &info), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK_STATUS(ctxwin_window_turn_info(w, (size_t)-1, &info), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK(strstr(last_error(w), "turn") != NULL);
    CHECK_STATUS(ctxwin_window_truncate(w, 2), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK_STATUS(ctxwin_window_truncate(w, (size_t)-1), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK(ctxwin_window_message_count(w) == 1);
    ctxwin_window_free(w);
}

static void last_error_buffer_contract(void) {
    ctxwin_window *w = new_window("gpt-4o");
    size_t needed = 99;
    CHECK_OK(ctxwin_window_last_error(w, NULL, 0, &needed));
    CHECK(needed == 0); /* no failure yet */
    CHECK_STATUS(ctxwin_window_set_budget(w, -1), CTXWIN_STATUS_INVALID_ARG);
    CHECK_OK(ctxwin_window_last_error(w, NULL, 0, &needed)); /* a length query */
    CHECK(needed > 10);
    char exact[256];
    CHECK(needed < sizeof exact);
    CHECK_OK(ctxwin_window_last_error(w, exact, needed + 1, NULL));
    CHECK(strlen(exact) == needed);
    char small[6];
    memset(small, 'x', sizeof small);
    size_t again = 0;
    CHECK_STATUS(ctxwin_window_last_error(w, small, sizeof small, &again), CTXWIN_STATUS_BUFFER_TOO_SMALL);
    CHECK(again == needed && small[5] == '\0' && strncmp(small, exact, 5) == 0);
    CHECK_STATUS(ctxwin_window_last_error(w, NULL, 10, &again), CTXWIN_STATUS_NULL_ARG);
    /* Querying the error does not replace it. */
    CHECK_OK(ctxwin_window_last_error(w, exact, sizeof exact, &again));
    CHECK(again == needed);
    /* A success does not clear it either. */
    CHECK_OK(ctxwin_window_set_budget(w, 10));
    CHECK(strcmp(last_error(w), exact) == 0);
    ctxwin_window_free(w);
}

static void huge_and_odd_texts(void) {
    ctxwin_window *w = new_window("claude-sonnet-4-5");
    size_t len = quick_mode() ? (size_t)1 << 20 : (size_t)64 << 20;
    char *big = (char *)malloc(len);
    CHECK(big != NULL);
    if (big == NULL) {
        ctxwin_window_free(w);
        return;
    }
    memset(big, 'a', len);
    ctxwin_count c = {0, true};
    CHECK_OK(ctxwin_window_push(w, CTXWIN_KIND_TOOL_RESULT, big, len, &c));
    CHECK(!c.exact && c.tokens >= (int32_t)(len / 8) && c.tokens <= (int32_t)len);
    free(big);
    const char emoji[] = "\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x92\xBB \xCC\x81\xCC\x81 \xE4\xBD\xA0\xE5\xA5\xBD";
    ctxwin_window_free(w);
    w = new_window("gpt-4o");
    CHECK_OK(ctxwin_window_push(w, CTXWIN_KIND_USER, emoji, strlen(emoji), &c));
    CHECK(c.exact && c.tokens > 0);
    ctxwin_window_free(w);
}

void suite_errors(void) {
    harness_run("null_handles_are_refused", null_handles_are_refused);
    harness_run("null_arguments_on_a_live_window", null_arguments_on_a_live_window);
    harness_run("invalid_utf8_is_refused_and_nothing_is_pushed", invalid_utf8_is_refused_and_nothing_is_pushed);
    harness_run("bad_values_are_refused", bad_values_are_refused);
    harness_run("out_of_range_indices", out_of_range_indices);
    harness_run("last_error_buffer_contract", last_error_buffer_contract);
    harness_run("huge_and_odd_texts", huge_and_odd_texts);
}
