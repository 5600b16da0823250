/* Concurrency: 8 threads counting the same texts for several encodings at once get exactly
 * the counts one thread gets, and windows driven from separate threads do not interfere.
 * `make helgrind` runs this suite under valgrind's thread checker. */
#include <pthread.h>
#include <stdlib.h>
#include "harness.h"

#define THREADS 8
#define MODELS 6
#define TEXTS 4

/* Every exact encoding, named directly, and one estimated model. */
static const char *const models[MODELS] = {"o200k_base", "o200k_harmony", "cl100k_base", "p50k_base", "r50k_base",
                                           "claude-sonnet-4-5"};
static const char *const texts[TEXTS] = {
    "Hello, world! The quick brown fox jumps over the lazy dog.",
    "fn main() { println!(\"{}\", (1..=10).map(|i| i * i).sum::<u32>()); }",
    "\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C\xE4\xB8\x96\xE7\x95\x8C \xF0\x9F\x91\x8B caf\xC3\xA9 na\xC3\xAFve",
    "<|endoftext|> special-token text is counted as ordinary text 12345678901234567890",
};

typedef struct {
    ctxwin_count counts[MODELS][TEXTS];
    int rounds;
    int failures;
} count_job;

static void count_all(count_job *job) {
    for (int r = 0; r < job->rounds; r++) {
        for (int m = 0; m < MODELS; m++) {
            for (int t = 0; t < TEXTS; t++) {
                if (ctxwin_count_text(models[m], strlen(models[m]), texts[t], strlen(texts[t]),
                                      &job->counts[m][t]) != CTXWIN_OK) {
                    job->failures++;
                }
            }
        }
    }
}

static void *count_thread(void *arg) {
    count_all((count_job *)arg);
    return NULL;
}

static int rounds(void) { return quick_mode() ? 2 : 50; }

static void eight_threads_count_like_one(void) {
    count_job reference;
    memset(&reference, 0, sizeof reference);
    reference.rounds = 1;
    count_all(&reference);
    CHECK(reference.failures == 0);
    count_job jobs[THREADS];
    pthread_t threads[THREADS];
    memset(jobs, 0, sizeof jobs);
    for (int i = 0; i < THREADS; i++) {
        jobs[i].rounds = rounds();
        CHECK(pthread_create(&threads[i], NULL, count_thread, &jobs[i]) == 0);
    }
    for (int i = 0; i < THREADS; i++) {
        CHECK(pthread_join(threads[i], NULL) == 0);
        CHECK(jobs[i].failures == 0);
        for (int m = 0; m < MODELS; m++) {
            for (int t = 0; t < TEXTS; t++) {
                CHECK(jobs[i].counts[m][t].tokens == reference.counts[m][t].tokens);
                CHECK(jobs[i].counts[m][t].exact == reference.counts[m][t].exact);
            }
        }
    }
    /* The reference itself is not degenerate: exact models are exact, the estimate is not. */
    CHECK(reference.counts[0][0].exact && !reference.counts[MODELS - 1][0].exact);
    CHECK(reference.counts[0][2].tokens != reference.counts[2][2].tokens);
}

/* What a session leaves in a window: its boundary, size and live tokens. */
typedef struct {
    int seed;
    size_t start, messages, turns, first_live;
    uint32_t generation;
    ctxwin_count live;
    int failures;
} session;

/* Drives one window through a session that depends on `s->seed` only. */
static void run_session(session *s) {
    ctxwin_window *w = new_window(models[s->seed % MODELS]);
    s->failures += ctxwin_window_set_budget(w, 200 + 40 * s->seed) != CTXWIN_OK;
    s->failures += push_str(w, CTXWIN_KIND_SYSTEM, "You are a careful agent.") != CTXWIN_OK;
    for (int turn = 0; turn < 60; turn++) {
        const char *text = texts[(turn + s->seed) % TEXTS];
        s->failures += push_str(w, CTXWIN_KIND_USER, text) != CTXWIN_OK;
        s->failures += push_str(w, CTXWIN_KIND_TOOL_CALL, "ls -la") != CTXWIN_OK;
        s->failures += push_str(w, CTXWIN_KIND_TOOL_RESULT, texts[(turn * 3 + 1) % TEXTS]) != CTXWIN_OK;
        s->failures += ctxwin_window_end_turn(w, NULL) != CTXWIN_OK;
        if (turn == 40) s->failures += ctxwin_window_truncate(w, 1 + 4 * 30) != CTXWIN_OK;
    }
    s->start = ctxwin_window_start(w);
    s->messages = ctxwin_window_message_count(w);
    s->turns = ctxwin_window_turn_count(w);
    s->first_live = ctxwin_window_first_live_turn(w);
    s->generation = ctxwin_window_generation(w);
    s->failures += ctxwin_window_live_tokens(w, &s->live) != CTXWIN_OK;
    ctxwin_window_free(w);
}

static void *session_thread(void *arg) {
    session *s = (session *)arg;
    int repeats = quick_mode() ? 1 : 5;
    for (int i = 0; i < repeats; i++) run_session(s);
    return NULL;
}

static void windows_in_separate_threads_do_not_interfere(void) {
    session expected[THREADS], got[THREADS];
    pthread_t threads[THREADS];
    memset(expected, 0, sizeof expected);
    memset(got, 0, sizeof got);
    for (int i = 0; i < THREADS; i++) {
        expected[i].seed = got[i].seed = i;
        run_session(&expected[i]);
    }
    for (int i = 0; i < THREADS; i++) CHECK(pthread_create(&threads[i], NULL, session_thread, &got[i]) == 0);
    for (int i = 0; i < THREADS; i++) {
        CHECK(pthread_join(threads[i], NULL) == 0);
        CHECK(expected[i].failures == 0 && got[i].failures == 0);
        CHECK(got[i].start == expected[i].start && got[i].messages == expected[i].messages);
        CHECK(got[i].turns == expected[i].turns && got[i].first_live == expected[i].first_live);
        CHECK(got[i].generation == expected[i].generation);
        CHECK(got[i].live.tokens == expected[i].live.tokens && got[i].live.exact == expected[i].live.exact);
    }
    /* The sessions differ from each other, so a mix-up between windows would show. */
    CHECK(expected[0].start != expected[THREADS - 1].start || expected[0].live.tokens != expected[THREADS - 1].live.tokens);
    CHECK(expected[1].first_live > 0);
}

/* A thread's memos: given back by ctxwin_release_thread_memory, the calling thread's only,
 * and counts are the same after. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int stage; /* 1: the worker has counted; 2: the main thread has released its own */
    size_t freed_first, freed_again, freed_after_recount;
    ctxwin_count before, after;
    int failures;
} release_job;

static char release_text[120 * 1024];

static void release_wait(release_job *job, int stage) {
    pthread_mutex_lock(&job->lock);
    while (job->stage < stage) pthread_cond_wait(&job->changed, &job->lock);
    pthread_mutex_unlock(&job->lock);
}

static void release_signal(release_job *job, int stage) {
    pthread_mutex_lock(&job->lock);
    job->stage = stage;
    pthread_cond_broadcast(&job->changed);
    pthread_mutex_unlock(&job->lock);
}

static void *release_thread(void *arg) {
    release_job *job = arg;
    if (ctxwin_release_thread_memory() != 0) job->failures++; /* a new thread keeps nothing */
    if (ctxwin_count_text("gpt-4o", 6, release_text, strlen(release_text), &job->before) != CTXWIN_OK) job->failures++;
    release_signal(job, 1);
    release_wait(job, 2);
    job->freed_first = ctxwin_release_thread_memory();
    job->freed_again = ctxwin_release_thread_memory();
    if (ctxwin_count_text("gpt-4o", 6, release_text, strlen(release_text), &job->after) != CTXWIN_OK) job->failures++;
    job->freed_after_recount = ctxwin_release_thread_memory();
    return NULL;
}

static void released_thread_memory_is_the_callers_and_counts_stay(void) {
    size_t len = 0;
    for (int i = 0; len + 64 < sizeof release_text; i++) {
        len += (size_t)snprintf(release_text + len, sizeof release_text - len, "line %d: the quick brown fox %d\n", i,
                                i * 7919 % 1000);
    }
    release_job job;
    memset(&job, 0, sizeof job);
    pthread_mutex_init(&job.lock, NULL);
    pthread_cond_init(&job.changed, NULL);
    pthread_t worker;
    CHECK(pthread_create(&worker, NULL, release_thread, &job) == 0);
    release_wait(&job, 1);
    ctxwin_release_thread_memory(); /* this thread's memos, not the worker's */
    release_signal(&job, 2);
    CHECK(pthread_join(worker, NULL) == 0);
    CHECK(job.failures == 0);
    /* Past 64 KB of text: the memo of pieces (2 MiB) and the large tables of lines (4 MiB). */
    CHECK(job.freed_first >= (size_t)6 << 20);
    CHECK(job.freed_again == 0);
    CHECK(job.freed_after_recount >= (size_t)6 << 20);
    CHECK(job.before.exact && job.before.tokens > 20000);
    CHECK(job.after.tokens == job.before.tokens && job.after.exact);
    pthread_cond_destroy(&job.changed);
    pthread_mutex_destroy(&job.lock);
}

/* Calls from a pthread key's destructor: glibc runs those after the library's thread-local
 * state (its memos, the last error) is gone. Counts are still exact, a failure still returns
 * its status, and nothing aborts. */
static pthread_key_t exit_key;

typedef struct {
    ctxwin_tokenizer *tok;
    int32_t loaded, builtin, pushed;
    ctxwin_status bad_utf8, last_status, push_status;
    char last[128];
    int done;
} exit_job;

static void at_thread_exit(void *arg) {
    exit_job *job = arg;
    ctxwin_count c = {-1, false};
    if (ctxwin_tokenizer_count(job->tok, "hello hello", 11, &c) == CTXWIN_OK) job->loaded = c.tokens;
    if (ctxwin_count_text("gpt-4o", 6, "hello world", 11, &c) == CTXWIN_OK) job->builtin = c.tokens;
    job->bad_utf8 = ctxwin_count_text("gpt-4o", 6, "\xff", 1, &c);
    size_t needed = 0;
    job->last_status = ctxwin_last_error(job->last, sizeof job->last, &needed);
    ctxwin_window *w = NULL;
    if (ctxwin_window_new("gpt-4o", 6, &w) == CTXWIN_OK) {
        job->push_status = ctxwin_window_push(w, CTXWIN_KIND_USER, "hello world", 11, &c);
        job->pushed = c.tokens;
        ctxwin_window_free(w);
    }
    job->done = 1;
}

static void *exit_thread(void *arg) {
    exit_job *job = arg;
    ctxwin_count c;
    /* The library's thread-local state (a loaded tokenizer's memo, the memos, a last error)
     * exists, and is torn down before the key's destructor runs. */
    ctxwin_tokenizer_count(job->tok, "hello", 5, &c);
    ctxwin_count_text("gpt-4o", 6, "hello", 5, &c);
    ctxwin_count_text("gpt-4o", 6, "\xff", 1, &c);
    pthread_setspecific(exit_key, job);
    return NULL;
}

static void calls_at_thread_exit_count_and_fail_cleanly(void) {
    static const char tiny[] = "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"h\":0,\"e\":1,\"l\":2,\"o\":3,\" \":4,\"he\":5,"
                               "\"ll\":6,\"hell\":7,\"hello\":8},\"merges\":[\"h e\",\"l l\",\"he ll\",\"hell o\"]}}";
    ctxwin_tokenizer *tok = NULL;
    CHECK_OK(ctxwin_tokenizer_from_bytes(tiny, sizeof tiny - 1, NULL, 0, &tok));
    ctxwin_count loaded = {-1, false}, builtin = {-1, false};
    CHECK_OK(ctxwin_tokenizer_count(tok, "hello hello", 11, &loaded));
    CHECK_OK(ctxwin_count_text("gpt-4o", 6, "hello world", 11, &builtin));
    CHECK(loaded.tokens == 3 && builtin.tokens == 2);
    CHECK(pthread_key_create(&exit_key, at_thread_exit) == 0);
    exit_job job;
    memset(&job, 0, sizeof job);
    job.tok = tok;
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, exit_thread, &job) == 0);
    CHECK(pthread_join(thread, NULL) == 0);
    CHECK(job.done);
    CHECK(job.loaded == loaded.tokens);
    CHECK(job.builtin == builtin.tokens);
    CHECK(job.bad_utf8 == CTXWIN_STATUS_INVALID_UTF8);
    CHECK(job.last_status == CTXWIN_OK);
    CHECK(job.push_status == CTXWIN_OK && job.pushed == builtin.tokens);
    pthread_key_delete(exit_key);
    ctxwin_tokenizer_free(tok);
}

void suite_threads(void) {
    harness_run("eight_threads_count_like_one", eight_threads_count_like_one);
    harness_run("windows_in_separate_threads_do_not_interfere", windows_in_separate_threads_do_not_interfere);
    harness_run("released_thread_memory_is_the_callers_and_counts_stay",
                released_thread_memory_is_the_callers_and_counts_stay);
    harness_run("calls_at_thread_exit_count_and_fail_cleanly", calls_at_thread_exit_count_and_fail_cleanly);
}
