/* Memory a window needs per message: 10 million caller-counted messages in a counts-only
 * window (retain_text false), measured as the growth of the resident set. `make bench-memory`. */
#include <stdio.h>
#include <string.h>
#include "ctxwin.h"

/* Resident set size in KiB, from /proc/self/statm (Linux). */
static long resident_kib(void) {
    long pages_total = 0, pages_resident = 0;
    FILE *statm = fopen("/proc/self/statm", "r");
    if (statm == NULL) return -1;
    if (fscanf(statm, "%ld %ld", &pages_total, &pages_resident) != 2) pages_resident = -1;
    fclose(statm);
    return pages_resident * 4;
}

int main(void) {
    const size_t messages = 10000000;
    const char *counts_only = "{\"retain_text\":false}";
    ctxwin_window *w = NULL;
    if (ctxwin_window_new("gpt-4o", 6, &w) || ctxwin_window_configure(w, counts_only, strlen(counts_only))) return 1;
    long before = resident_kib();
    const ctxwin_count count = {3, true};
    for (size_t i = 0; i < messages; i++) {
        if (ctxwin_window_push_counted(w, i % 4 == 0 ? CTXWIN_KIND_USER : CTXWIN_KIND_ASSISTANT, count)) return 1;
        if (i % 4 == 3 && ctxwin_window_end_turn(w, NULL)) return 1;
    }
    long grown = resident_kib() - before;
    printf("%zu messages in %zu turns: %ld MiB, %.1f bytes per message\n", ctxwin_window_message_count(w),
           ctxwin_window_turn_count(w), grown / 1024, (double)grown * 1024.0 / (double)messages);
    ctxwin_window_free(w);
    return 0;
}
