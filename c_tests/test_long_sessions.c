/* Long sessions (thousands of turns) against a straightforward reference: after every
 * completed turn, when live history exceeds the budget, drop the oldest turn while it exceeds
 * low_water x budget, never the newest. Settings changes are checked against a replay of the
 * whole ledger. */
#include <stdio.h>
#include <stdlib.h>
#include "harness.h"

typedef struct {
    int32_t kind;
    int32_t tokens;
} ref_message;

typedef struct {
    ref_message *messages;
    size_t count;
    size_t *turn_first; /* index of each turn's USER message */
    size_t turns;
    size_t first_live;
    int64_t pinned;
} reference;

static uint64_t rng_state;
static uint32_t next_random(void) {
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng_state >> 33);
}

static int64_t turn_tokens(const reference *r, size_t t) {
    size_t end = t + 1 < r->turns ? r->turn_first[t + 1] : r->count;
    int64_t sum = 0;
    for (size_t i = r->turn_first[t]; i < end; i++) {
        if (r->messages[i].kind != CTXWIN_KIND_SYSTEM) {
            sum += r->messages[i].tokens;
        }
    }
    return sum;
}

static int64_t live_history(const reference *r, size_t from) {
    int64_t sum = 0;
    for (size_t t = from; t < r->turns; t++) {
        sum += turn_tokens(r, t);
    }
    return sum;
}

static double low_water;

/* The source design's loop with a low-water mark: when over budget, drop from the front while
 * over low_water x budget, never the newest turn. */
static void reference_end_turn(reference *r, int64_t budget) {
    if (live_history(r, r->first_live) <= budget) {
        return;
    }
    int64_t low = low_water >= 1.0 ? budget : (int64_t)(low_water * (double)budget) /* floor: both are positive */;
    while (r->first_live + 1 < r->turns && live_history(r, r->first_live) > low) {
        r->first_live++;
    }
}

/* What a host restoring the session gets: the same messages pushed with end_turn after each
 * turn, under the current budget. */
static size_t reference_replay(const reference *r, int64_t budget) {
    reference replay = *r;
    replay.first_live = 0;
    for (size_t t = 0; t < r->turns; t++) {
        replay.turns = t + 1;
        replay.count = t + 1 < r->turns ? r->turn_first[t + 1] : r->count;
        reference_end_turn(&replay, budget);
    }
    return replay.first_live;
}

static void check_against(const ctxwin_window *w, const reference *r) {
    CHECK(ctxwin_window_first_live_turn(w) == r->first_live);
    size_t start = r->first_live == 0 ? 0 : r->turn_first[r->first_live];
    CHECK(ctxwin_window_start(w) == start);
    ctxwin_count live = {0, false};
    CHECK_OK(ctxwin_window_live_tokens(w, &live));
    CHECK(live.tokens == (int32_t)(r->pinned + live_history(r, r->first_live)));
}

static void run_session(uint64_t seed, size_t target_turns) {
    rng_state = seed;
    ctxwin_window *w = new_window("my-local-model");
    int64_t budget = 200 + next_random() % 3000;
    CHECK_OK(ctxwin_window_set_budget(w, (int32_t)budget));
    static const double low_waters[] = {0.5, 0.75, 0.8, 1.0};
    low_water = low_waters[next_random() % 4];
    char json[64];
    snprintf(json, sizeof json, "{\"low_water\":%.2f,\"pin_task\":false}", low_water);
    CHECK_OK(ctxwin_window_configure(w, json, strlen(json)));
    size_t cap = target_turns * 12 + 16;
    reference r = {calloc(cap, sizeof(ref_message)), 0, calloc(cap, sizeof(size_t)), 0, 0, 0};
    int failures_before = harness_failures;
    while (r.turns < target_turns && harness_failures == failures_before) {
        /* One turn: a USER message, then a random mix of the other kinds. */
        size_t extra = next_random() % 8;
        int saw_result = 0;
        for (size_t m = 0; m <= extra; m++) {
            int32_t kind = m == 0 ? CTXWIN_KIND_USER : (int32_t)(next_random() % 6);
            if (kind == CTXWIN_KIND_USER && m != 0) {
                kind = CTXWIN_KIND_TOOL_RESULT;
            }
            /* One step a turn (a chat turn): no thinking, text or call after a result, so
             * this turn-level reference holds; tests/window_reference.rs checks steps. */
            if (saw_result && kind != CTXWIN_KIND_TOOL_RESULT && kind != CTXWIN_KIND_SYSTEM) {
                kind = CTXWIN_KIND_TOOL_RESULT;
            }
            saw_result = saw_result || kind == CTXWIN_KIND_TOOL_RESULT;
            int32_t tokens = (int32_t)(next_random() % (next_random() % 10 == 0 ? 2000 : 120));
            ctxwin_count c = {tokens, true};
            CHECK_OK(ctxwin_window_push_counted(w, kind, c));
            if (kind == CTXWIN_KIND_USER) {
                r.turn_first[r.turns++] = r.count;
            }
            if (kind == CTXWIN_KIND_SYSTEM || r.turns == 0) {
                r.pinned += tokens;
            }
            r.messages[r.count].kind = kind;
            r.messages[r.count].tokens = tokens;
            r.count++;
        }
        size_t pruned = 0, before = r.first_live;
        CHECK_OK(ctxwin_window_end_turn(w, &pruned));
        reference_end_turn(&r, budget);
        CHECK(pruned == r.first_live - before);
        check_against(w, &r);
        if (next_random() % 50 == 0) { /* a new budget: enforcement re-runs over everything */
            budget = next_random() % 4000;
            CHECK_OK(ctxwin_window_set_budget(w, (int32_t)budget));
            r.first_live = reference_replay(&r, budget);
            check_against(w, &r);
        }
    }
    CHECK(ctxwin_window_turn_count(w) == r.turns);
    CHECK(ctxwin_window_message_count(w) == r.count);
    free(r.messages);
    free(r.turn_first);
    ctxwin_window_free(w);
}

static void thousands_of_turns_match_the_reference(void) {
    size_t turns = quick_mode() ? 300 : 3000;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        run_session(seed, turns);
    }
}

void suite_long_sessions(void) {
    harness_run("thousands_of_turns_match_the_reference", thousands_of_turns_match_the_reference);
}
