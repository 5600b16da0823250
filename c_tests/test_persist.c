/* Persistence: export/import and save/load round trips, external ids, and every rejection
 * (truncated, corrupted, future-version documents; bad paths). */
#include <stdio.h>
#include <stdlib.h>
#include "harness.h"

static ctxwin_count counted(int32_t tokens) {
    ctxwin_count c = {tokens, true};
    return c;
}

/* One turn of session step `i`, the same for every window it is applied to. */
static void step(ctxwin_window *w, int i) {
    char text[96];
    snprintf(text, sizeof text, "Step %d: edit src/module_%d.c and rerun make", i, i % 7);
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, text));
    CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_TOOL_RESULT, counted(40 + (i * 37) % 200)));
    CHECK_OK(push_str(w, CTXWIN_KIND_ASSISTANT, "Done."));
    CHECK_OK(ctxwin_window_end_turn(w, NULL));
}

/* The same boundary, tokens and turns. */
static void check_same(const ctxwin_window *a, const ctxwin_window *b) {
    ctxwin_count la, lb;
    CHECK_OK(ctxwin_window_live_tokens(a, &la));
    CHECK_OK(ctxwin_window_live_tokens(b, &lb));
    CHECK(la.tokens == lb.tokens && la.exact == lb.exact);
    CHECK(ctxwin_window_start(a) == ctxwin_window_start(b));
    CHECK(ctxwin_window_generation(a) == ctxwin_window_generation(b));
    CHECK(ctxwin_window_compaction_count(a) == ctxwin_window_compaction_count(b));
    CHECK(ctxwin_window_turn_count(a) == ctxwin_window_turn_count(b));
    for (size_t t = 0; t < ctxwin_window_turn_count(a); t++) {
        ctxwin_turn_info ta, tb;
        CHECK_OK(ctxwin_window_turn_info(a, t, &ta));
        CHECK_OK(ctxwin_window_turn_info(b, t, &tb));
        CHECK(ta.first_message == tb.first_message && ta.message_count == tb.message_count);
        CHECK(ta.tokens.tokens == tb.tokens.tokens && ta.live == tb.live);
    }
}

static ctxwin_window *summarised_session(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(ctxwin_window_set_budget(w, 600));
    CHECK_OK(push_str(w, CTXWIN_KIND_SYSTEM, "You are a build agent."));
    for (int i = 0; i < 12; i++) {
        step(w, i);
    }
    CHECK_OK(ctxwin_window_summary_request(w, NULL, 0, NULL));
    char *prompt = malloc(1 << 16);
    CHECK_OK(ctxwin_window_summary_request(w, prompt, 1 << 16, NULL));
    free(prompt);
    CHECK_OK(ctxwin_window_set_summary(w, ctxwin_window_generation(w), "Edited modules 0-3.", 19));
    return w;
}

static void export_import_then_continue_like_the_original(void) {
    ctxwin_window *original = summarised_session();
    size_t len = 0;
    char *json = export_json(original, &len);
    CHECK(strncmp(json, "{\"format\":\"ctxwin-window\"", 25) == 0 || strstr(json, "\"version\":1") != NULL);
    ctxwin_window *restored = NULL;
    CHECK_OK(ctxwin_window_import(json, len, &restored));
    if (restored == NULL) {
        free(json);
        ctxwin_window_free(original);
        return;
    }
    check_same(original, restored);
    for (int i = 12; i < 30; i++) {
        step(original, i);
        step(restored, i);
        check_same(original, restored);
    }
    size_t len2 = 0, len3 = 0;
    char *again = export_json(original, &len2), *other = export_json(restored, &len3);
    CHECK(len2 == len3 && memcmp(again, other, len2) == 0);
    free(json);
    free(again);
    free(other);
    ctxwin_window_free(original);
    ctxwin_window_free(restored);
}

static void save_and_load_round_trip(void) {
    char path[512];
    scratch_path(path, sizeof path, "persist_test.json");
    ctxwin_window *w = summarised_session();
    CHECK_OK(ctxwin_window_save(w, path, strlen(path)));
    ctxwin_window *loaded = NULL;
    CHECK_OK(ctxwin_window_load(path, strlen(path), &loaded));
    CHECK(loaded != NULL);
    if (loaded != NULL) {
        check_same(w, loaded);
        ctxwin_window_free(loaded);
    }
    /* A truncated file loads as PARSE and creates nothing. */
    size_t len = 0;
    char *json = export_json(w, &len);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f != NULL) {
        CHECK(fwrite(json, 1, len / 2, f) == len / 2);
        fclose(f);
    }
    free(json);
    loaded = NULL;
    CHECK_STATUS(ctxwin_window_load(path, strlen(path), &loaded), CTXWIN_STATUS_PARSE);
    CHECK(loaded == NULL);
    remove(path);
    CHECK_STATUS(ctxwin_window_load(path, strlen(path), &loaded), CTXWIN_STATUS_IO);
    const char *nowhere = "target/c/no/such/dir/w.json";
    CHECK_STATUS(ctxwin_window_save(w, nowhere, strlen(nowhere)), CTXWIN_STATUS_IO);
    CHECK(strstr(last_error(w), "no/such/dir") != NULL);
    CHECK_STATUS(ctxwin_window_save(w, "", 0), CTXWIN_STATUS_INVALID_ARG);
    CHECK_STATUS(ctxwin_window_save(w, "a\0b", 3), CTXWIN_STATUS_INVALID_ARG);
    CHECK_STATUS(ctxwin_window_save(w, NULL, 3), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_save(NULL, path, strlen(path)), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_load(path, strlen(path), NULL), CTXWIN_STATUS_NULL_ARG);
    ctxwin_window_free(w);
}

static void damaged_documents_are_refused_with_a_reason(void) {
    ctxwin_window *w = summarised_session();
    size_t len = 0;
    char *json = export_json(w, &len);
    ctxwin_window *out = NULL;
    /* Every 97th prefix: truncated anywhere is PARSE. */
    for (size_t end = 0; end < len; end += 97) {
        CHECK_STATUS(ctxwin_window_import(json, end, &out), CTXWIN_STATUS_PARSE);
    }
    CHECK(out == NULL);
    const char *future = "{\"format\":\"ctxwin-window\",\"version\":2}";
    CHECK_STATUS(ctxwin_window_import(future, strlen(future), &out), CTXWIN_STATUS_UNSUPPORTED);
    const char *other = "{\"format\":\"something-else\",\"version\":1}";
    CHECK_STATUS(ctxwin_window_import(other, strlen(other), &out), CTXWIN_STATUS_PARSE);
    CHECK(out == NULL);
    /* restore explains, and leaves the window as it was. */
    size_t messages = ctxwin_window_message_count(w);
    CHECK_STATUS(ctxwin_window_restore(w, future, strlen(future), NULL, 0), CTXWIN_STATUS_UNSUPPORTED);
    CHECK(strstr(last_error(w), "version 2") != NULL);
    char *broken = malloc(len + 1);
    memcpy(broken, json, len + 1);
    char *kind = strstr(broken, "\"kind\":1");
    CHECK(kind != NULL);
    if (kind != NULL) {
        kind[7] = '8';
    }
    CHECK_STATUS(ctxwin_window_restore(w, broken, len, NULL, 0), CTXWIN_STATUS_PARSE);
    CHECK(strstr(last_error(w), "messages[1].kind") != NULL);
    CHECK(ctxwin_window_message_count(w) == messages && ctxwin_window_compaction_count(w) == 1);
    CHECK_STATUS(ctxwin_window_import(NULL, 5, &out), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_import(json, len, NULL), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_restore(NULL, json, len, NULL, 0), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_export(NULL, NULL, 0, NULL), CTXWIN_STATUS_NULL_ARG);
    free(broken);
    free(json);
    ctxwin_window_free(w);
}

static void external_ids_are_checked_against_the_callers_rows(void) {
    ctxwin_window *w = new_window("gpt-4o");
    int64_t rows[6];
    for (int i = 0; i < 6; i++) {
        CHECK_OK(push_str(w, i % 2 == 0 ? CTXWIN_KIND_USER : CTXWIN_KIND_ASSISTANT, "hello"));
        rows[i] = 9000000000LL + i;
        CHECK_OK(ctxwin_window_set_external_id(w, (size_t)i, rows[i]));
    }
    CHECK_STATUS(ctxwin_window_set_external_id(w, 6, 1), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK_STATUS(ctxwin_window_set_external_id(NULL, 0, 1), CTXWIN_STATUS_NULL_ARG);
    size_t len = 0;
    char *json = export_json(w, &len);
    ctxwin_window *out = NULL;
    CHECK_OK(ctxwin_window_import_checked(json, len, rows, 6, &out));
    CHECK(out != NULL && ctxwin_window_message_count(out) == 6);
    ctxwin_window_free(out);
    out = NULL;
    rows[4] = 17;
    CHECK_STATUS(ctxwin_window_import_checked(json, len, rows, 6, &out), CTXWIN_STATUS_MISMATCH);
    CHECK_STATUS(ctxwin_window_import_checked(json, len, rows, 5, &out), CTXWIN_STATUS_MISMATCH);
    CHECK_STATUS(ctxwin_window_import_checked(json, len, NULL, 6, &out), CTXWIN_STATUS_NULL_ARG);
    CHECK(out == NULL);
    CHECK_STATUS(ctxwin_window_restore(w, json, len, rows, 6), CTXWIN_STATUS_MISMATCH);
    CHECK(strstr(last_error(w), "message 4 has external id 9000000004 but the caller's row is 17") != NULL);
    free(json);
    ctxwin_window_free(w);
}

void suite_persist(void) {
    harness_run("export_import_then_continue_like_the_original", export_import_then_continue_like_the_original);
    harness_run("save_and_load_round_trip", save_and_load_round_trip);
    harness_run("damaged_documents_are_refused_with_a_reason", damaged_documents_are_refused_with_a_reason);
    harness_run("external_ids_are_checked_against_the_callers_rows", external_ids_are_checked_against_the_callers_rows);
}
