/* A minimal test harness: checks count failures per test case; main prints
 * "N passed, N failed" and exits non-zero on any failure. */
#ifndef CTXWIN_TEST_HARNESS_H
#define CTXWIN_TEST_HARNESS_H

#include <stdio.h>
#include <string.h>
#include "ctxwin.h"

extern int harness_failures; /* failed checks in the current test case */

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "  %s:%d: check failed: %s\n", __FILE__, __LINE__, \
                    #cond);                                                    \
            harness_failures++;                                                \
        }                                                                      \
    } while (0)

#define CHECK_STATUS(expr, expected)                                           \
    do {                                                                       \
        int32_t got_ = (int32_t)(expr);                                        \
        if (got_ != (int32_t)(expected)) {                                     \
            fprintf(stderr, "  %s:%d: %s returned %d (%s), expected %s\n",     \
                    __FILE__, __LINE__, #expr, (int)got_,                      \
                    ctxwin_status_str(got_), #expected);                       \
            harness_failures++;                                                \
        }                                                                      \
    } while (0)

#define CHECK_OK(expr) CHECK_STATUS(expr, CTXWIN_OK)

/* Runs one test case and records whether it passed. */
void harness_run(const char *name, void (*test)(void));

/* Test suites, one per file. */
void suite_library(void);
void suite_count(void);
void suite_window(void);
void suite_errors(void);
void suite_long_sessions(void);
void suite_summary(void);
void suite_persist(void);
void suite_json(void);
void suite_limits(void);
void suite_threads(void);
/* Generated from the header by c_tests/gen_null_args.py (target/c/null_args.c). */
void suite_null_args(void);
void suite_classify(void);
void suite_view(void);
void suite_integration(void);
void suite_last_error(void);
void suite_host_agent(void);
void suite_requests(void);
void suite_cache(void);
void suite_tokenizers(void);

/* Helpers shared by the suites. */
ctxwin_window *new_window(const char *model);
ctxwin_status push_str(ctxwin_window *w, int32_t kind, const char *text);
/* Copies the window's last error into a static buffer. */
const char *last_error(const ctxwin_window *w);
/* Copies the calling thread's ctxwin_last_error into a static buffer. */
const char *thread_last_error(void);
/* The window's export, malloc'ed (the caller frees it); *len is its length. */
char *export_json(const ctxwin_window *w, size_t *len);
/* Removes the checksum member that ends an export (in place), as a document edited by hand
 * on purpose must; returns the new length. */
size_t strip_checksum(char *doc, size_t len);
/* True when the environment asks for a quicker run (under valgrind). */
int quick_mode(void);
/* Writes into buf the path of file `name` in the directory for the files the tests write:
 * CTXWIN_TEST_DIR (make passes its build directory's c/), target/c when it is unset. */
void scratch_path(char *buf, size_t cap, const char *name);

#endif
