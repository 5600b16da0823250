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

int quick_mode(void) {
    const char *quick = getenv("CTXWIN_TEST_QUICK");
    return quick != NULL && quick[0] != '\0' && quick[0] != '0';
}

int main(void) {
    suite_library();
    suite_count();
    suite_window();
    suite_errors();
    suite_long_sessions();
    suite_classify();
    suite_view();
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
