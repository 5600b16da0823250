/* Peak memory of saving and exporting a window, above the window itself, for two windows of
 * about 11 MB of document: 10,000 messages of 1 KB, and 200,000 short messages (the shape of a
 * long agent run, where each message's JSON object costs more than its text). Each is exported
 * (the length query, then into a buffer) and saved to a file; for each, the growth of the peak
 * resident set (VmHWM, reset through /proc/self/clear_refs, Linux) over the resident set
 * before it, next to the document's size. `make bench-save-memory`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include "ctxwin.h"

/* A field of /proc/self/status in KiB (VmRSS, VmHWM). */
static long status_kib(const char *field) {
    FILE *status = fopen("/proc/self/status", "r");
    if (status == NULL) return -1;
    char line[256];
    long kib = -1;
    size_t len = strlen(field);
    while (fgets(line, sizeof line, status) != NULL) {
        if (strncmp(line, field, len) == 0 && line[len] == ':') {
            kib = atol(line + len + 1);
        }
    }
    fclose(status);
    return kib;
}

/* Returns freed memory to the system (so the resident set before a measurement is what is
 * in use), then makes VmHWM the current resident set again. */
static void reset_peak(void) {
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    FILE *clear = fopen("/proc/self/clear_refs", "w");
    if (clear != NULL) {
        fputs("5", clear);
        fclose(clear);
    }
}

static void report(const char *what, long before, size_t document) {
    long grown = status_kib("VmHWM") - before;
    printf("%-28s peak %6.1f MiB above the window, %.2fx the %.1f MB document\n", what, (double)grown / 1024.0,
           (double)grown * 1024.0 / (double)document, (double)document / 1e6);
}

/* A window of `messages` messages of `size` bytes of text, then the three measurements. */
static int measure(const char *path, int messages, size_t size) {
    ctxwin_window *w = NULL;
    if (ctxwin_window_new("gpt-4o", 6, &w)) return 1;
    char *text = malloc(size + 1);
    if (text == NULL) return 1;
    for (int i = 0; i < messages; i++) {
        for (size_t j = 0; j < size; j++) {
            text[j] = "abcdefgh ijklmnop\n"[(size_t)(i * 7 + (int)j * 13) % 18];
        }
        text[size] = '\0';
        if (ctxwin_window_push(w, i % 2 ? CTXWIN_KIND_ASSISTANT : CTXWIN_KIND_USER, text, size, NULL)) return 1;
        if (i % 2 && ctxwin_window_end_turn(w, NULL)) return 1;
    }
    free(text);
    printf("%d messages of %zu bytes:\n", messages, size);
    size_t needed = 0;
    reset_peak();
    long before = status_kib("VmRSS");
    if (ctxwin_window_export(w, NULL, 0, &needed)) return 1;
    report("  export length query", before, needed);
    char *buf = malloc(needed + 1);
    if (buf == NULL) return 1;
    memset(buf, 0, needed + 1);
    reset_peak();
    before = status_kib("VmRSS");
    if (ctxwin_window_export(w, buf, needed + 1, NULL)) return 1;
    report("  export into a buffer", before, needed);
    free(buf);
    reset_peak();
    before = status_kib("VmRSS");
    if (ctxwin_window_save(w, path, strlen(path))) return 1;
    report("  save", before, needed);
    remove(path);
    ctxwin_window_free(w);
    return 0;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "target/c/save_memory.json";
    return measure(path, 10000, 1023) || measure(path, 200000, 16);
}
