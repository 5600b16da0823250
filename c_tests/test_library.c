/* Library-level functions: version and status descriptions. */
#include "harness.h"

static void version_matches_header(void) {
    CHECK(ctxwin_version_number() == CTXWIN_VERSION_NUMBER);
    CHECK(strcmp(ctxwin_version(), CTXWIN_VERSION_STRING) == 0);
    CHECK(CTXWIN_VERSION_NUMBER == CTXWIN_VERSION_MAJOR * 1000000 + CTXWIN_VERSION_MINOR * 1000 +
                                       CTXWIN_VERSION_PATCH);
}

static void every_status_has_a_distinct_description(void) {
    for (int32_t a = 0; a <= CTXWIN_STATUS_PANIC; a++) {
        const char *sa = ctxwin_status_str(a);
        CHECK(sa != NULL && sa[0] != '\0');
        for (int32_t b = 0; b < a; b++) {
            CHECK(strcmp(sa, ctxwin_status_str(b)) != 0);
        }
    }
    CHECK(CTXWIN_OK == CTXWIN_STATUS_OK && CTXWIN_OK == 0);
}

static void unknown_codes_map_to_a_fallback(void) {
    const int32_t unknown[] = {-1, 11, 7000, INT32_MIN, INT32_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        CHECK(strcmp(ctxwin_status_str(unknown[i]), "unknown status code") == 0);
    }
}

static void frozen_numbers(void) {
    CHECK(CTXWIN_STATUS_NULL_ARG == 1 && CTXWIN_STATUS_INVALID_UTF8 == 2 && CTXWIN_STATUS_INVALID_ARG == 3);
    CHECK(CTXWIN_STATUS_OUT_OF_RANGE == 4 && CTXWIN_STATUS_BUFFER_TOO_SMALL == 5 && CTXWIN_STATUS_UNSUPPORTED == 6);
    CHECK(CTXWIN_STATUS_PARSE == 7 && CTXWIN_STATUS_IO == 8 && CTXWIN_STATUS_MISMATCH == 9 && CTXWIN_STATUS_PANIC == 10);
    CHECK(CTXWIN_KIND_SYSTEM == 0 && CTXWIN_KIND_USER == 1 && CTXWIN_KIND_ASSISTANT == 2);
    CHECK(CTXWIN_KIND_TOOL_CALL == 3 && CTXWIN_KIND_TOOL_RESULT == 4 && CTXWIN_KIND_THINKING == 5);
}

void suite_library(void) {
    harness_run("version_matches_header", version_matches_header);
    harness_run("every_status_has_a_distinct_description", every_status_has_a_distinct_description);
    harness_run("unknown_codes_map_to_a_fallback", unknown_codes_map_to_a_fallback);
    harness_run("frozen_numbers", frozen_numbers);
}
