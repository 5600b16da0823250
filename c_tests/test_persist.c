/* Persistence: export/import and save/load round trips, external ids, and every rejection
 * (truncated, corrupted, future-version documents; bad paths). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
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
    CHECK(strstr(last_error(w), "checksum") != NULL);
    size_t edited = strip_checksum(broken, len);
    CHECK_STATUS(ctxwin_window_restore(w, broken, edited, NULL, 0), CTXWIN_STATUS_PARSE);
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

/* The permission bits of `path`, or -1. */
static int mode_of(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

/* A save keeps the file's mode (a private session stays private) and creates new files
 * private, whatever the umask lets through. */
static void saves_keep_the_mode_and_create_private_files(void) {
    char path[512];
    scratch_path(path, sizeof path, "persist_mode.json");
    remove(path);
    ctxwin_window *w = summarised_session();
    mode_t old_mask = umask(022);
    CHECK_OK(ctxwin_window_save(w, path, strlen(path)));
    CHECK(mode_of(path) == 0600);
    CHECK(chmod(path, 0640) == 0);
    CHECK_OK(ctxwin_window_save(w, path, strlen(path)));
    CHECK(mode_of(path) == 0640);
    CHECK(chmod(path, 0604) == 0);
    CHECK_OK(ctxwin_window_save(w, path, strlen(path)));
    CHECK(mode_of(path) == 0604);
    umask(old_mask);
    remove(path);
    ctxwin_window_free(w);
}

/* Saving through a symbolic link replaces the file it names and keeps the link. */
static void saves_write_through_symbolic_links(void) {
    char real[512], link[512];
    scratch_path(real, sizeof real, "persist_real.json");
    scratch_path(link, sizeof link, "persist_link.json");
    remove(real);
    remove(link);
    ctxwin_window *empty = new_window("gpt-4o");
    CHECK_OK(ctxwin_window_save(empty, real, strlen(real)));
    CHECK(chmod(real, 0640) == 0);
    CHECK(symlink("persist_real.json", link) == 0);
    ctxwin_window *w = summarised_session();
    CHECK_OK(ctxwin_window_save(w, link, strlen(link)));
    struct stat st;
    CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    CHECK(mode_of(real) == 0640);
    ctxwin_window *loaded = NULL;
    CHECK_OK(ctxwin_window_load(real, strlen(real), &loaded));
    CHECK(loaded != NULL && ctxwin_window_message_count(loaded) == ctxwin_window_message_count(w));
    ctxwin_window_free(loaded);
    remove(link);
    remove(real);
    ctxwin_window_free(w);
    ctxwin_window_free(empty);
}

/* A FIFO (or anything but a regular file) is neither replaced by a save nor read by a load:
 * the load returns at once instead of waiting for a writer, and /dev/zero is refused instead
 * of read until memory runs out. */
static void fifos_and_devices_are_refused_not_replaced_or_read(void) {
    char fifo[512];
    scratch_path(fifo, sizeof fifo, "persist_fifo");
    remove(fifo);
    CHECK(mkfifo(fifo, 0600) == 0);
    ctxwin_window *w = summarised_session();
    size_t messages = ctxwin_window_message_count(w);
    CHECK_STATUS(ctxwin_window_save(w, fifo, strlen(fifo)), CTXWIN_STATUS_IO);
    CHECK(strstr(last_error(w), "persist_fifo") != NULL && strstr(last_error(w), "FIFO") != NULL);
    CHECK(ctxwin_window_message_count(w) == messages);
    struct stat st;
    CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
    /* Before the fix these never returned: the alarm ends the test program instead. */
    alarm(20);
    ctxwin_window *out = NULL;
    CHECK_STATUS(ctxwin_window_load(fifo, strlen(fifo), &out), CTXWIN_STATUS_IO);
    CHECK(out == NULL && strstr(thread_last_error(), "FIFO, not a regular file") != NULL);
    CHECK_STATUS(ctxwin_window_load("/dev/zero", 9, &out), CTXWIN_STATUS_IO);
    CHECK(out == NULL && strstr(thread_last_error(), "/dev/zero") != NULL);
    alarm(0);
    remove(fifo);
    ctxwin_window_free(w);
}

/* A changed digit made a document load as another window (97% of single-digit changes did):
 * the checksum refuses it, naming it, and the window restored onto is left as it was. A
 * document without the checksum (saved before 0.3) still loads. */
static void a_corrupted_document_is_refused_by_its_checksum(void) {
    ctxwin_window *w = summarised_session();
    size_t len = 0;
    char *json = export_json(w, &len);
    char *tokens = strstr(json, "\"tokens\":");
    CHECK(tokens != NULL);
    ctxwin_window *out = NULL;
    if (tokens != NULL) {
        char *digit = tokens + strlen("\"tokens\":");
        char was = *digit;
        *digit = was == '9' ? '8' : (char)(was + 1);
        CHECK_STATUS(ctxwin_window_import(json, len, &out), CTXWIN_STATUS_PARSE);
        CHECK(out == NULL && strstr(thread_last_error(), "checksum: the document states crc32:") != NULL);
        uint32_t generation = ctxwin_window_generation(w);
        CHECK_STATUS(ctxwin_window_restore(w, json, len, NULL, 0), CTXWIN_STATUS_PARSE);
        CHECK(strstr(last_error(w), "checksum") != NULL && ctxwin_window_generation(w) == generation);
        *digit = was;
    }
    size_t older = strip_checksum(json, len);
    CHECK_OK(ctxwin_window_import(json, older, &out));
    if (out != NULL) {
        check_same(w, out);
        ctxwin_window_free(out);
    }
    free(json);
    ctxwin_window_free(w);
}

/* One character a token. */
static const char LETTER_TOKENIZER[] =
    "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"h\":0,\"e\":1,\"l\":2,\"o\":3,\" \":4},\"merges\":[]}}";

static bool live_exact(const ctxwin_window *w, int32_t *tokens) {
    ctxwin_count c = {0, false};
    CHECK_OK(ctxwin_window_live_tokens(w, &c));
    *tokens = c.tokens;
    return c.exact;
}

/* A counts-only window (retain_text false) keeps no text to recount: loaded and given the
 * same tokenizer again, its counts are exact again (they were estimates for good before);
 * given another tokenizer, they are estimates. */
static void a_counts_only_window_is_exact_again_with_its_tokenizer(void) {
    ctxwin_tokenizer *letters = NULL, *other = NULL;
    CHECK_OK(ctxwin_tokenizer_from_bytes(LETTER_TOKENIZER, sizeof LETTER_TOKENIZER - 1, NULL, 0, &letters));
    const char *bigrams = "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"h\":0,\"e\":1,\"l\":2,\"o\":3,\" \":4,"
                          "\"he\":5},\"merges\":[\"h e\"]}}";
    CHECK_OK(ctxwin_tokenizer_from_bytes(bigrams, strlen(bigrams), NULL, 0, &other));
    ctxwin_window *w = new_window("my-local-model");
    const char *counts_only = "{\"retain_text\":false}";
    CHECK_OK(ctxwin_window_configure(w, counts_only, strlen(counts_only)));
    CHECK_OK(ctxwin_window_set_tokenizer(w, letters));
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "hello hello"));
    CHECK_OK(push_str(w, CTXWIN_KIND_ASSISTANT, "hole"));
    int32_t tokens = 0, again = 0;
    CHECK(live_exact(w, &tokens) && tokens == 15);
    size_t len = 0;
    char *json = export_json(w, &len);

    ctxwin_window *loaded = NULL;
    CHECK_OK(ctxwin_window_import(json, len, &loaded));
    CHECK(!live_exact(loaded, &again) && again == 15); /* no tokenizer: estimates */
    CHECK_OK(ctxwin_window_set_tokenizer(loaded, letters));
    CHECK(live_exact(loaded, &again) && again == 15);
    ctxwin_message m;
    CHECK_OK(ctxwin_window_message_get(loaded, 1, &m));
    CHECK(m.tokens.tokens == 4 && m.tokens.exact);
    /* Rewound and pushed again: the new message is counted, not given the old count. */
    CHECK_OK(ctxwin_window_truncate(loaded, 1));
    CHECK_OK(ctxwin_window_set_tokenizer(loaded, other));
    CHECK_OK(push_str(loaded, CTXWIN_KIND_ASSISTANT, "hehe"));
    CHECK_OK(ctxwin_window_set_tokenizer(loaded, letters));
    CHECK_OK(ctxwin_window_message_get(loaded, 1, &m));
    CHECK(m.tokens.tokens == 2 && !m.tokens.exact);
    ctxwin_window_free(loaded);

    /* Restored into a window that has the tokenizer: exact at once; another tokenizer:
     * estimates. */
    ctxwin_window *target = new_window("my-local-model");
    CHECK_OK(ctxwin_window_set_tokenizer(target, letters));
    CHECK_OK(ctxwin_window_restore(target, json, len, NULL, 0));
    CHECK(live_exact(target, &again) && again == 15);
    CHECK_OK(ctxwin_window_set_tokenizer(target, other));
    CHECK(!live_exact(target, &again) && again == 15);
    ctxwin_window_free(target);

    free(json);
    ctxwin_window_free(w);
    ctxwin_tokenizer_free(letters);
    ctxwin_tokenizer_free(other);
}

/* A document cut inside a multi-byte character is a truncated document: PARSE. */
static void a_document_cut_inside_a_character_is_parse(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "caf\xc3\xa9 cr\xc3\xa8me"));
    size_t len = 0;
    char *json = export_json(w, &len);
    char *accent = strstr(json, "\xc3");
    CHECK(accent != NULL);
    ctxwin_window *out = NULL;
    if (accent != NULL) {
        size_t cut = (size_t)(accent - json) + 1;
        CHECK_STATUS(ctxwin_window_import(json, cut, &out), CTXWIN_STATUS_PARSE);
        CHECK(out == NULL && strstr(thread_last_error(), "UTF-8") != NULL);
        CHECK_STATUS(ctxwin_window_restore(w, json, cut, NULL, 0), CTXWIN_STATUS_PARSE);
        CHECK(ctxwin_window_message_count(w) == 1);
        CHECK_STATUS(ctxwin_window_import_checked(json, cut, NULL, 0, &out), CTXWIN_STATUS_PARSE);
        CHECK(out == NULL);
        /* A save file cut there (a disk that filled up, a copy interrupted) loads alike. */
        char path[512];
        scratch_path(path, sizeof path, "cut_inside_a_character.json");
        FILE *file = fopen(path, "wb");
        CHECK(file != NULL);
        if (file != NULL) {
            CHECK(fwrite(json, 1, cut, file) == cut);
            fclose(file);
            CHECK_STATUS(ctxwin_window_load(path, strlen(path), &out), CTXWIN_STATUS_PARSE);
            CHECK(out == NULL && strstr(thread_last_error(), "not valid UTF-8") != NULL);
            remove(path);
        }
    }
    free(json);
    ctxwin_window_free(w);
}

/* ctxwin_window_restore replaces the model and every setting with the document's, as its
 * documentation says: a window made for Claude with a configured limit, restored from a
 * gpt-4o document, counts for gpt-4o with the document's settings. */
static void restore_takes_the_documents_model_and_settings(void) {
    ctxwin_window *saved = new_window("gpt-4o");
    CHECK_OK(push_str(saved, CTXWIN_KIND_USER, "Fix the parser in src/parser.c please."));
    CHECK_OK(ctxwin_window_end_turn(saved, NULL));
    size_t len = 0;
    char *json = export_json(saved, &len);
    ctxwin_window *w = new_window("claude-sonnet-4-5");
    const char *config = "{\"context_limit\":50000,\"strategy\":\"summary\"}";
    CHECK_OK(ctxwin_window_configure(w, config, strlen(config)));
    CHECK_OK(ctxwin_window_set_overhead(w, 300, 200));
    CHECK_OK(ctxwin_window_restore(w, json, len, NULL, 0));
    char model[64] = "";
    CHECK_OK(ctxwin_window_model(w, model, sizeof model, NULL));
    CHECK(strcmp(model, "gpt-4o") == 0);
    char settings[4096] = "";
    CHECK_OK(ctxwin_window_settings(w, settings, sizeof settings, NULL));
    CHECK(strstr(settings, "\"strategy\":\"sliding\"") != NULL && strstr(settings, "50000") == NULL);
    int32_t system = -1, tools = -1;
    CHECK_OK(ctxwin_window_overhead(w, &system, &tools));
    CHECK(system == 0 && tools == 0);
    ctxwin_count a, b;
    CHECK_OK(ctxwin_window_live_tokens(saved, &a));
    CHECK_OK(ctxwin_window_live_tokens(w, &b));
    CHECK(a.tokens == b.tokens && b.exact); /* gpt-4o's exact count, not a Claude estimate */
    free(json);
    ctxwin_window_free(w);
    ctxwin_window_free(saved);
}

void suite_persist(void) {
    harness_run("export_import_then_continue_like_the_original", export_import_then_continue_like_the_original);
    harness_run("save_and_load_round_trip", save_and_load_round_trip);
    harness_run("damaged_documents_are_refused_with_a_reason", damaged_documents_are_refused_with_a_reason);
    harness_run("external_ids_are_checked_against_the_callers_rows", external_ids_are_checked_against_the_callers_rows);
    harness_run("saves_keep_the_mode_and_create_private_files", saves_keep_the_mode_and_create_private_files);
    harness_run("saves_write_through_symbolic_links", saves_write_through_symbolic_links);
    harness_run("fifos_and_devices_are_refused_not_replaced_or_read", fifos_and_devices_are_refused_not_replaced_or_read);
    harness_run("a_document_cut_inside_a_character_is_parse", a_document_cut_inside_a_character_is_parse);
    harness_run("a_corrupted_document_is_refused_by_its_checksum", a_corrupted_document_is_refused_by_its_checksum);
    harness_run("a_counts_only_window_is_exact_again_with_its_tokenizer", a_counts_only_window_is_exact_again_with_its_tokenizer);
    harness_run("restore_takes_the_documents_model_and_settings", restore_takes_the_documents_model_and_settings);
}
