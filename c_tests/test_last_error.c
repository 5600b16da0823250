/* ctxwin_last_error: the calling thread's explanation of a failure that has no window to
 * hold it (constructors, stateless functions, a NULL window). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "harness.h"

static void load_and_import_explain_their_refusals(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "hello"));
    CHECK_OK(push_str(w, CTXWIN_KIND_ASSISTANT, "hi"));
    CHECK_OK(ctxwin_window_set_external_id(w, 1, 42));
    size_t len = 0;
    char *json = export_json(w, &len);
    ctxwin_window *out = NULL;

    const char *missing = "target/c/no/such/dir/window.json";
    CHECK_STATUS(ctxwin_window_load(missing, strlen(missing), &out), CTXWIN_STATUS_IO);
    CHECK(strstr(thread_last_error(), missing) != NULL);

    char *broken = malloc(len + 1);
    memcpy(broken, json, len + 1);
    char *kind = strstr(broken, "\"kind\":1");
    CHECK(kind != NULL);
    if (kind != NULL) kind[7] = '8';
    CHECK_STATUS(ctxwin_window_import(broken, len, &out), CTXWIN_STATUS_PARSE);
    CHECK(strstr(thread_last_error(), "checksum: the document states crc32:") != NULL);
    size_t edited = strip_checksum(broken, len);
    CHECK_STATUS(ctxwin_window_import(broken, edited, &out), CTXWIN_STATUS_PARSE);
    CHECK(strstr(thread_last_error(), "messages[0].kind") != NULL);

    const char *future = "{\"format\":\"ctxwin-window\",\"version\":2}";
    CHECK_STATUS(ctxwin_window_import(future, strlen(future), &out), CTXWIN_STATUS_UNSUPPORTED);
    CHECK(strstr(thread_last_error(), "version 2") != NULL);

    const int64_t rows[2] = {0, 43};
    CHECK_STATUS(ctxwin_window_import_checked(json, len, rows, 2, &out), CTXWIN_STATUS_MISMATCH);
    CHECK(strstr(thread_last_error(), "message 0") != NULL);

    /* A file that is not a window names the field, through load too. */
    char path[512];
    scratch_path(path, sizeof path, "last_error_broken.json");
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f != NULL) {
        CHECK(fwrite(broken, 1, edited, f) == edited);
        fclose(f);
    }
    CHECK_STATUS(ctxwin_window_load(path, strlen(path), &out), CTXWIN_STATUS_PARSE);
    CHECK(strstr(thread_last_error(), "messages[0].kind") != NULL);
    remove(path);
    CHECK(out == NULL);

    /* A success does not clear it. */
    CHECK_OK(ctxwin_window_import(json, len, &out));
    CHECK(strstr(thread_last_error(), "messages[0].kind") != NULL);
    ctxwin_window_free(out);
    free(broken);
    free(json);
    ctxwin_window_free(w);
}

static void constructors_and_stateless_functions_explain(void) {
    ctxwin_window *out = NULL;
    CHECK_STATUS(ctxwin_window_new("gpt\xff", 4, &out), CTXWIN_STATUS_INVALID_UTF8);
    CHECK(strstr(thread_last_error(), "model is not valid UTF-8") != NULL);
    CHECK_STATUS(ctxwin_window_new("gpt-4o", 6, NULL), CTXWIN_STATUS_NULL_ARG);
    CHECK(strcmp(thread_last_error(), "out is NULL") == 0);
    CHECK_STATUS(ctxwin_window_clone(NULL, &out), CTXWIN_STATUS_NULL_ARG);
    CHECK(strcmp(thread_last_error(), "w is NULL") == 0);
    CHECK(out == NULL);

    ctxwin_count count;
    CHECK_STATUS(ctxwin_count_text("gpt-4o", 6, "ab\xc3", 3, &count), CTXWIN_STATUS_INVALID_UTF8);
    CHECK(strstr(thread_last_error(), "text is not valid UTF-8: invalid byte at offset 2") != NULL);
    CHECK_STATUS(ctxwin_count_tools_json("gpt-4o", 6, "5", 1, &count), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(thread_last_error(), "array") != NULL);
    CHECK_STATUS(ctxwin_count_tools_json("gpt-4o", 6, "[", 1, &count), CTXWIN_STATUS_PARSE);
    CHECK(strstr(thread_last_error(), "JSON") != NULL || strstr(thread_last_error(), "json") != NULL);
    ctxwin_tokenizer *tokenizer = NULL;
    const char *no_file = "target/c/no/such/tokenizer.json";
    CHECK_STATUS(ctxwin_tokenizer_load(no_file, strlen(no_file), NULL, 0, &tokenizer), CTXWIN_STATUS_IO);
    CHECK(strstr(thread_last_error(), "no/such/tokenizer.json") != NULL && tokenizer == NULL);
    CHECK_STATUS(ctxwin_tokenizer_from_bytes("{", 1, NULL, 0, &tokenizer), CTXWIN_STATUS_PARSE);
    CHECK(thread_last_error()[0] != '\0' && tokenizer == NULL);
    CHECK_STATUS(ctxwin_classify_error("x", 1, NULL), CTXWIN_STATUS_NULL_ARG);
    CHECK(strcmp(thread_last_error(), "out is NULL") == 0);

    /* A failure on a window is recorded there and for the thread. */
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_STATUS(ctxwin_window_configure(w, "{\"strategie\":1}", 15), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strcmp(thread_last_error(), last_error(w)) == 0);
    CHECK(strstr(thread_last_error(), "strategie") != NULL);
    ctxwin_window_free(w);
}

static void the_buffer_follows_the_string_out_convention(void) {
    ctxwin_window *out = NULL;
    CHECK_STATUS(ctxwin_window_new("gpt-4o", 6, NULL), CTXWIN_STATUS_NULL_ARG);
    size_t needed = 0;
    CHECK_OK(ctxwin_last_error(NULL, 0, &needed));
    CHECK(needed == strlen("out is NULL"));
    char small[4];
    CHECK_STATUS(ctxwin_last_error(small, sizeof small, &needed), CTXWIN_STATUS_BUFFER_TOO_SMALL);
    CHECK(strcmp(small, "out") == 0 && needed == strlen("out is NULL"));
    CHECK_STATUS(ctxwin_last_error(NULL, 5, &needed), CTXWIN_STATUS_NULL_ARG);
    /* Reading it, even wrongly, records nothing. */
    CHECK(strcmp(thread_last_error(), "out is NULL") == 0);
    CHECK_OK(ctxwin_last_error(NULL, 0, NULL));
    (void)out;
}

static void *fail_in_a_thread(void *arg) {
    (void)arg;
    ctxwin_count count;
    char *seen = malloc(512);
    seen[0] = '\0';
    if (ctxwin_count_text("gpt-4o", 6, NULL, 9, &count) == CTXWIN_STATUS_NULL_ARG) {
        snprintf(seen, 512, "%s", thread_last_error());
    }
    return seen;
}

static void each_thread_has_its_own(void) {
    ctxwin_window *out = NULL;
    CHECK_STATUS(ctxwin_window_new("gpt-4o", 6, NULL), CTXWIN_STATUS_NULL_ARG);
    pthread_t thread;
    void *seen = NULL;
    CHECK(pthread_create(&thread, NULL, fail_in_a_thread, NULL) == 0);
    CHECK(pthread_join(thread, &seen) == 0);
    CHECK(seen != NULL && strstr((const char *)seen, "text is NULL but its length is 9") != NULL);
    free(seen);
    CHECK(strcmp(thread_last_error(), "out is NULL") == 0);
    (void)out;
}

void suite_last_error(void) {
    harness_run("load_and_import_explain_their_refusals", load_and_import_explain_their_refusals);
    harness_run("constructors_and_stateless_functions_explain", constructors_and_stateless_functions_explain);
    harness_run("the_buffer_follows_the_string_out_convention", the_buffer_follows_the_string_out_convention);
    harness_run("each_thread_has_its_own", each_thread_has_its_own);
}
