/* The provider error classifier: a few samples from the Rust sample table, and bad input. */
#include "harness.h"

static ctxwin_error_info classified(const char *text) {
    ctxwin_error_info info = {-7, -7, -7, -7};
    CHECK_OK(ctxwin_classify_error(text, strlen(text), &info));
    return info;
}

static void reads_overflow_numbers(void) {
    ctxwin_error_info info = classified(
        "This model's maximum context length is 128000 tokens. However, your messages resulted in "
        "130512 tokens. Please reduce the length of the messages.");
    CHECK(info.category == CTXWIN_ERR_CAT_CONTEXT_OVERFLOW);
    CHECK(info.limit == 128000 && info.actual == 130512 && info.excess == 2512);

    info = classified("{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\","
                      "\"message\":\"prompt is too long: 208310 tokens > 200000 maximum\"}}");
    CHECK(info.category == CTXWIN_ERR_CAT_CONTEXT_OVERFLOW);
    CHECK(info.limit == 200000 && info.actual == 208310 && info.excess == 8310);

    /* Ollama states only the excess: the other numbers are -1. */
    info = classified("prompt too long; exceeded max context length by 1024 tokens");
    CHECK(info.category == CTXWIN_ERR_CAT_CONTEXT_OVERFLOW);
    CHECK(info.limit == -1 && info.actual == -1 && info.excess == 1024);
}

static void rate_limits_and_quotas_are_not_overflows(void) {
    ctxwin_error_info info = classified("Rate limit exceeded");
    CHECK(info.category == CTXWIN_ERR_CAT_RATE_LIMIT);
    CHECK(info.limit == -1 && info.actual == -1 && info.excess == -1);
    CHECK(classified("quota exceeded").category == CTXWIN_ERR_CAT_QUOTA);
    CHECK(classified("messages.3: tool_use ids were found without tool_result blocks immediately after")
              .category == CTXWIN_ERR_CAT_INVALID_HISTORY);
    CHECK(classified("max_tokens: 64000 > 32000, which is the maximum allowed number of output tokens")
              .category == CTXWIN_ERR_CAT_OUTPUT_LIMIT);
    CHECK(classified("internal server error").category == CTXWIN_ERR_CAT_OTHER);
    ctxwin_error_info empty = {-7, -7, -7, -7};
    CHECK_OK(ctxwin_classify_error(NULL, 0, &empty));
    CHECK(empty.category == CTXWIN_ERR_CAT_OTHER && empty.limit == -1);
}

static void bad_arguments_leave_out_untouched(void) {
    ctxwin_error_info info = {-7, -7, -7, -7};
    CHECK_STATUS(ctxwin_classify_error("x", 1, NULL), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_classify_error(NULL, 3, &info), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_classify_error("\xff\xfe", 2, &info), CTXWIN_STATUS_INVALID_UTF8);
    CHECK(info.category == -7 && info.limit == -7 && info.actual == -7 && info.excess == -7);
}

void suite_classify(void) {
    harness_run("reads_overflow_numbers", reads_overflow_numbers);
    harness_run("rate_limits_and_quotas_are_not_overflows", rate_limits_and_quotas_are_not_overflows);
    harness_run("bad_arguments_leave_out_untouched", bad_arguments_leave_out_untouched);
}
