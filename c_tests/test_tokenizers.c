/* Tokenizers loaded from files: counting, a window counting with one (also after the
 * caller freed it), saving and restoring, and every kind of bad input. */
#define _DEFAULT_SOURCE /* mkfifo, ftruncate */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "harness.h"

/* A character-level BPE tokenizer.json: spaces become "\u2581", unknown characters <unk>. */
static const char TINY[] =
    "{\"normalizer\":{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":\"\\u2581\"},"
    "\"model\":{\"type\":\"BPE\",\"unk_token\":\"<unk>\","
    "\"vocab\":{\"<unk>\":0,\"h\":1,\"e\":2,\"l\":3,\"o\":4,\"he\":5,\"ll\":6,\"hell\":7,\"hello\":8,"
    "\"\\u2581\":9},"
    "\"merges\":[\"h e\",\"l l\",\"he ll\",\"hell o\"]}}";

static ctxwin_tokenizer *tiny(void) {
    ctxwin_tokenizer *t = NULL;
    CHECK_OK(ctxwin_tokenizer_from_bytes(TINY, sizeof TINY - 1, NULL, 0, &t));
    return t;
}

static int32_t count_with(const ctxwin_tokenizer *t, const char *text) {
    ctxwin_count c = {-1, false};
    CHECK_OK(ctxwin_tokenizer_count(t, text, strlen(text), &c));
    CHECK(c.exact);
    return c.tokens;
}

static void counts_follow_the_merges(void) {
    ctxwin_tokenizer *t = tiny();
    CHECK(count_with(t, "") == 0);
    CHECK(count_with(t, "hello") == 1);
    CHECK(count_with(t, "hello hello") == 3); /* hello, \u2581, hello */
    CHECK(count_with(t, "hel") == 2);         /* he, l */
    CHECK(count_with(t, "xyz") == 3);         /* three <unk> */
    ctxwin_count c;
    CHECK_STATUS(ctxwin_tokenizer_count(t, "\xff", 1, &c), CTXWIN_STATUS_INVALID_UTF8);
    ctxwin_tokenizer_free(t);
}

static void a_file_loads_like_its_bytes(void) {
    char path[512];
    scratch_path(path, sizeof path, "tiny_tokenizer.json");
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f == NULL) return;
    fwrite(TINY, 1, sizeof TINY - 1, f);
    fclose(f);
    ctxwin_tokenizer *t = NULL;
    CHECK_OK(ctxwin_tokenizer_load(path, strlen(path), NULL, 0, &t));
    CHECK(t != NULL && count_with(t, "hello hello") == 3);
    ctxwin_tokenizer_free(t);
}

static int32_t live(const ctxwin_window *w, bool *exact) {
    ctxwin_count c = {0, false};
    CHECK_OK(ctxwin_window_live_tokens(w, &c));
    *exact = c.exact;
    return c.tokens;
}

static void a_window_counts_with_it_after_the_caller_freed_it(void) {
    ctxwin_window *w = new_window("my-local-model");
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "hello hello"));
    bool exact = true;
    live(w, &exact);
    CHECK(!exact); /* an unknown model: estimated */
    ctxwin_tokenizer *t = tiny();
    CHECK_OK(ctxwin_window_set_tokenizer(w, t));
    ctxwin_tokenizer_free(t); /* the window keeps its own reference */
    CHECK(live(w, &exact) == 3 && exact);
    ctxwin_count c = {0, false};
    CHECK_OK(ctxwin_window_push(w, CTXWIN_KIND_ASSISTANT, "hello", 5, &c));
    CHECK(c.tokens == 1 && c.exact);
    CHECK(live(w, &exact) == 4 && exact);

    /* Saved and restored: the restored window has no tokenizer and estimates; set again,
     * the counts are exact again. Restoring into a window with the tokenizer keeps it. */
    size_t needed = 0;
    CHECK_OK(ctxwin_window_export(w, NULL, 0, &needed));
    char *doc = malloc(needed + 1);
    CHECK_OK(ctxwin_window_export(w, doc, needed + 1, &needed));
    CHECK(strstr(doc, "\"tokenizer\":\"tokenizer.json:") != NULL);
    ctxwin_window *restored = NULL;
    CHECK_OK(ctxwin_window_import(doc, needed, &restored));
    live(restored, &exact);
    CHECK(!exact);
    t = tiny();
    CHECK_OK(ctxwin_window_set_tokenizer(restored, t));
    CHECK(live(restored, &exact) == 4 && exact);
    CHECK_OK(ctxwin_window_restore(restored, doc, needed, NULL, 0));
    CHECK(live(restored, &exact) == 4 && exact);
    ctxwin_tokenizer_free(t);
    ctxwin_window_free(restored);
    free(doc);
    ctxwin_window_free(w);
}

/* One character a token: "hello hello" is 11. */
static const char LETTERS[] =
    "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"h\":0,\"e\":1,\"l\":2,\"o\":3,\" \":4},\"merges\":[]}}";

/* A restore tells whether the saved counts were made with another tokenizer than the
 * window's, which it then recounted with. */
static void a_restore_says_when_the_tokenizer_changed(void) {
    ctxwin_window *w = new_window("my-local-model");
    ctxwin_tokenizer *t = tiny();
    CHECK_OK(ctxwin_window_set_tokenizer(w, t));
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "hello hello"));
    CHECK(!ctxwin_window_tokenizer_changed(w)); /* never restored */
    size_t needed = 0;
    char *doc = export_json(w, &needed);

    ctxwin_window *bare = NULL;
    CHECK_OK(ctxwin_window_import(doc, needed, &bare));
    CHECK(ctxwin_window_tokenizer_changed(bare)); /* estimated: no tokenizer */
    CHECK_OK(ctxwin_window_set_tokenizer(bare, t));
    CHECK(!ctxwin_window_tokenizer_changed(bare)); /* the saved one again */

    ctxwin_tokenizer *letters = NULL;
    CHECK_OK(ctxwin_tokenizer_from_bytes(LETTERS, sizeof LETTERS - 1, NULL, 0, &letters));
    ctxwin_window *other = new_window("my-local-model");
    CHECK_OK(ctxwin_window_set_tokenizer(other, letters));
    CHECK_OK(ctxwin_window_restore(other, doc, needed, NULL, 0));
    bool exact = false;
    CHECK(live(other, &exact) == 11 && exact); /* recounted with its own tokenizer */
    CHECK(ctxwin_window_tokenizer_changed(other));
    CHECK_OK(ctxwin_window_restore(bare, doc, needed, NULL, 0));
    CHECK(!ctxwin_window_tokenizer_changed(bare) && live(bare, &exact) == 3 && exact);
    CHECK(!ctxwin_window_tokenizer_changed(NULL));
    /* A new model name drops the tokenizer: estimates again. */
    CHECK_OK(ctxwin_window_set_model(other, "my-local-model", 14));
    live(other, &exact);
    CHECK(!exact);
    ctxwin_tokenizer_free(letters);
    ctxwin_tokenizer_free(t);
    ctxwin_window_free(other);
    ctxwin_window_free(bare);
    ctxwin_window_free(w);
    free(doc);
}

static void expect_refusal(const char *data, const char *options, ctxwin_status expected) {
    ctxwin_tokenizer *t = (ctxwin_tokenizer *)&t; /* must stay untouched */
    ctxwin_tokenizer *before = t;
    CHECK_STATUS(ctxwin_tokenizer_from_bytes(data, strlen(data), options, options ? strlen(options) : 0, &t), expected);
    CHECK(t == before);
}

static void bad_input_is_refused_with_nothing_built(void) {
    ctxwin_tokenizer *t = NULL;
    const char *missing = "target/c/no_such_tokenizer.json";
    CHECK_STATUS(ctxwin_tokenizer_load(missing, strlen(missing), NULL, 0, &t), CTXWIN_STATUS_IO);
    CHECK(t == NULL);
    expect_refusal("", NULL, CTXWIN_STATUS_UNSUPPORTED);
    expect_refusal("hello world", NULL, CTXWIN_STATUS_UNSUPPORTED);
    /* The start of a SentencePiece tokenizer.model: a protobuf whose first piece is <unk>. */
    expect_refusal("\x0a\x0b\x0a\x05<unk>\x15\x01\x01\x01\x01", NULL, CTXWIN_STATUS_UNSUPPORTED);
    CHECK(strstr(thread_last_error(), "SentencePiece model") != NULL);
    expect_refusal("{\"model\":{\"type\":\"BPE\",\"vocab\":", NULL, CTXWIN_STATUS_PARSE);
    expect_refusal("{\"model\":{\"type\":\"Unigram\",\"vocab\":[]}}", NULL, CTXWIN_STATUS_UNSUPPORTED);
    expect_refusal("{\"model\":{\"type\":\"WordPiece\",\"vocab\":{}}}", NULL, CTXWIN_STATUS_UNSUPPORTED);
    expect_refusal("{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[\"a b\"]}}", NULL, CTXWIN_STATUS_PARSE);
    expect_refusal("{\"normalizer\":{\"type\":\"Precompiled\"},\"model\":{\"type\":\"BPE\",\"vocab\":{},\"merges\":[]}}",
                   NULL, CTXWIN_STATUS_UNSUPPORTED);
    expect_refusal("{\"config\":{}}", NULL, CTXWIN_STATUS_UNSUPPORTED);
    expect_refusal(TINY, "{\"pre_tokenizer\":\"llama3\"}", CTXWIN_STATUS_INVALID_ARG);
    expect_refusal(TINY, "{", CTXWIN_STATUS_INVALID_ARG);
    /* A ranks file needs a pre-tokenizer, and all 256 bytes. */
    expect_refusal("YQ== 0\n", NULL, CTXWIN_STATUS_INVALID_ARG);
    expect_refusal("YQ== 0\n", "{\"pre_tokenizer\":\"nope\"}", CTXWIN_STATUS_INVALID_ARG);
    expect_refusal("YQ== 0\n", "{\"pre_tokenizer\":\"llama3\"}", CTXWIN_STATUS_PARSE);
    expect_refusal("YQ== 0\nYQ== 1\n", "{\"pattern\":\"\\\\s+\"}", CTXWIN_STATUS_PARSE);
    expect_refusal("YQ== 0\n", "{\"pattern\":\"(\"}", CTXWIN_STATUS_INVALID_ARG);
    /* The library leaves out the regex tables of Age and the text-segmentation properties
     * (no tokenizer's pattern uses them): a pattern naming one is refused, saying so. Scripts,
     * general categories and binary properties compile (that ranks file then fails: PARSE). */
    expect_refusal("YQ== 0\n", "{\"pattern\":\"\\\\p{Age=6.0}+\"}", CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(thread_last_error(), "Unicode property this library does not know") != NULL);
    expect_refusal("YQ== 0\n", "{\"pattern\":\"\\\\p{Word_Break=ALetter}+\"}", CTXWIN_STATUS_INVALID_ARG);
    expect_refusal("YQ== 0\n", "{\"pattern\":\"\\\\p{Han}+|\\\\p{Lu}\\\\p{Ll}*|\\\\p{Alphabetic}|.\"}",
                   CTXWIN_STATUS_PARSE);
}

/* Shrinks and regrows the file of `fd` until told to stop. */
struct truncater {
    int fd;
    off_t len;
    volatile int stop;
};

static void *truncate_repeatedly(void *arg) {
    struct truncater *t = (struct truncater *)arg;
    while (!t->stop) {
        if (ftruncate(t->fd, 4096) != 0 || ftruncate(t->fd, t->len) != 0) break;
    }
    return NULL;
}

/* A file of 16 MB and more was mapped while it loaded: another process truncating it then
 * ended the host with SIGBUS. It is read now: each load succeeds or is refused, never a crash. */
static void a_file_truncated_while_it_loads_is_no_crash(void) {
    char path[512];
    scratch_path(path, sizeof path, "truncated_tokenizer.json");
    size_t len = (size_t)20 << 20;
    char *data = (char *)malloc(len);
    CHECK(data != NULL);
    if (data == NULL) return;
    memset(data, ' ', len); /* TINY, then white space up to 20 MB */
    memcpy(data, TINY, sizeof TINY - 1);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL && fwrite(data, 1, len, f) == len);
    if (f != NULL) fclose(f);
    free(data);
    struct truncater truncater = {open(path, O_WRONLY), (off_t)len, 0};
    CHECK(truncater.fd >= 0);
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, truncate_repeatedly, &truncater) == 0);
    int loads = quick_mode() ? 3 : 40;
    for (int i = 0; i < loads; i++) {
        ctxwin_tokenizer *t = NULL;
        ctxwin_status status = ctxwin_tokenizer_load(path, strlen(path), NULL, 0, &t);
        CHECK(status == CTXWIN_OK || status == CTXWIN_STATUS_PARSE);
        ctxwin_tokenizer_free(t);
    }
    truncater.stop = 1;
    pthread_join(thread, NULL);
    close(truncater.fd);
    remove(path);
}

/* A FIFO's open waited for a writer, and a device was read until memory ran out. */
static void only_regular_files_are_read(void) {
    char path[512];
    scratch_path(path, sizeof path, "tokenizer_fifo");
    remove(path);
    CHECK(mkfifo(path, 0600) == 0);
    ctxwin_tokenizer *t = NULL;
    CHECK_STATUS(ctxwin_tokenizer_load(path, strlen(path), NULL, 0, &t), CTXWIN_STATUS_IO);
    CHECK(t == NULL && strstr(thread_last_error(), "not a regular file (a FIFO)") != NULL);
    remove(path);
    CHECK_STATUS(ctxwin_tokenizer_load("/dev/zero", 9, NULL, 0, &t), CTXWIN_STATUS_IO);
    CHECK(t == NULL && strstr(thread_last_error(), "'/dev/zero': not a regular file (a device)") != NULL);
}

void suite_tokenizers(void) {
    harness_run("counts_follow_the_merges", counts_follow_the_merges);
    harness_run("a_file_loads_like_its_bytes", a_file_loads_like_its_bytes);
    harness_run("a_window_counts_with_it_after_the_caller_freed_it", a_window_counts_with_it_after_the_caller_freed_it);
    harness_run("a_restore_says_when_the_tokenizer_changed", a_restore_says_when_the_tokenizer_changed);
    harness_run("bad_input_is_refused_with_nothing_built", bad_input_is_refused_with_nothing_built);
    harness_run("a_file_truncated_while_it_loads_is_no_crash", a_file_truncated_while_it_loads_is_no_crash);
    harness_run("only_regular_files_are_read", only_regular_files_are_read);
}
