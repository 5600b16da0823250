#include <stdlib.h>
#include "harness.h"

int harness_failures;
static int passed, failed;

void harness_run(const char *name, void (*test)(void)) {
    harness_failures = 0;
    test();
    if (harness_failures == 0) {
        passed++;
    } else {
        failed++;
        fprintf(stderr, "FAILED: %s (%d checks)\n", name, harness_failures);
    }
}

ctxwin_window *new_window(const char *model) {
    ctxwin_window *w = NULL;
    if (ctxwin_window_new(model, strlen(model), &w) != CTXWIN_OK || w == NULL) {
        fprintf(stderr, "ctxwin_window_new failed\n");
        exit(2);
    }
    return w;
}

ctxwin_status push_str(ctxwin_window *w, int32_t kind, const char *text) {
    return ctxwin_window_push(w, kind, text, strlen(text), NULL);
}

const char *last_error(const ctxwin_window *w) {
    static char buf[512];
    size_t needed = 0;
    buf[0] = '\0';
    if (ctxwin_window_last_error(w, buf, sizeof buf, &needed) != CTXWIN_OK) {
        return "<last_error failed>";
    }
    return buf;
}

char *export_json(const ctxwin_window *w, size_t *len) {
    size_t needed = 0;
    CHECK_OK(ctxwin_window_export(w, NULL, 0, &needed));
    char *buf = malloc(needed + 1);
    CHECK_OK(ctxwin_window_export(w, buf, needed + 1, &needed));
    *len = needed;
    return buf;
}

size_t strip_checksum(char *doc, size_t len) {
    const char *member = ",\"checksum\":\"";
    char *at = NULL;
    for (char *found = strstr(doc, member); found != NULL; found = strstr(found + 1, member)) {
        at = found;
    }
    CHECK(at != NULL);
    if (at == NULL) {
        return len;
    }
    at[0] = '}';
    at[1] = '\0';
    return (size_t)(at - doc) + 1;
}

const char *thread_last_error(void) {
    static char buf[512];
    size_t needed = 0;
    buf[0] = '\0';
    if (ctxwin_last_error(buf, sizeof buf, &needed) != CTXWIN_OK || needed != strlen(buf)) {
        return "<ctxwin_last_error failed>";
    }
    return buf;
}

int quick_mode(void) {
    const char *quick = getenv("CTXWIN_TEST_QUICK");
    return quick != NULL && quick[0] != '\0' && quick[0] != '0';
}

void scratch_path(char *buf, size_t cap, const char *name) {
    const char *dir = getenv("CTXWIN_TEST_DIR");
    snprintf(buf, cap, "%s/%s", dir != NULL && dir[0] != '\0' ? dir : "target/c", name);
}

/* Runs `suite` unless CTXWIN_TEST_SUITE names another one (make helgrind runs one suite). */
static void run_suite(const char *name, void (*suite)(void)) {
    const char *only = getenv("CTXWIN_TEST_SUITE");
    if (only == NULL || only[0] == '\0' || strcmp(only, name) == 0) suite();
}

int main(void) {
    run_suite("library", suite_library);
    run_suite("count", suite_count);
    run_suite("window", suite_window);
    run_suite("errors", suite_errors);
    run_suite("long_sessions", suite_long_sessions);
    run_suite("summary", suite_summary);
    run_suite("persist", suite_persist);
    run_suite("json", suite_json);
    run_suite("limits", suite_limits);
    run_suite("threads", suite_threads);
    run_suite("null_args", suite_null_args);
    run_suite("classify", suite_classify);
    run_suite("view", suite_view);
    run_suite("integration", suite_integration);
    run_suite("last_error", suite_last_error);
    run_suite("host_agent", suite_host_agent);
    run_suite("requests", suite_requests);
    run_suite("cache", suite_cache);
    run_suite("tokenizers", suite_tokenizers);
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
