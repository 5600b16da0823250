/* The ledger: turns, pinned messages, the sliding boundary and every window function. */
#include "harness.h"

/* These tests count every turn, the first included, as history: the task is not pinned
 * ("pin_task": false); c_tests/test_view.c checks the pinned task. */
static ctxwin_window *unpinned_window(const char *model) {
    ctxwin_window *w = new_window(model);
    CHECK_OK(ctxwin_window_configure(w, "{\"pin_task\":false}", 18));
    return w;
}
#define new_window unpinned_window

static ctxwin_count counted(int32_t tokens) {
    ctxwin_count c = {tokens, true};
    return c;
}

static ctxwin_turn_info turn(const ctxwin_window *w, size_t i) {
    ctxwin_turn_info info;
    memset(&info, 0, sizeof info);
    CHECK_OK(ctxwin_window_turn_info(w, i, &info));
    return info;
}

static int32_t live(const ctxwin_window *w) {
    ctxwin_count c = {-1, false};
    CHECK_OK(ctxwin_window_live_tokens(w, &c));
    return c.tokens;
}

static void turns_group_messages_and_pin_system(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_SYSTEM, counted(100)));
    CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_ASSISTANT, counted(7))); /* before any user: pinned */
    CHECK(ctxwin_window_turn_count(w) == 0);
    CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_USER, counted(10)));
    CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_THINKING, counted(20)));
    CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_TOOL_CALL, counted(5)));
    CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_TOOL_RESULT, counted(300))); /* never starts a turn */
    CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_SYSTEM, counted(1000)));     /* pinned mid-turn */
    CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_ASSISTANT, counted(15)));
    CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_USER, counted(11)));
    CHECK(ctxwin_window_turn_count(w) == 2);
    CHECK(ctxwin_window_message_count(w) == 9);
    ctxwin_turn_info t0 = turn(w, 0), t1 = turn(w, 1);
    CHECK(t0.first_message == 2 && t0.message_count == 6 && t0.tokens.tokens == 350 && t0.tokens.exact && t0.live);
    CHECK(t1.first_message == 8 && t1.message_count == 1 && t1.tokens.tokens == 11);
    CHECK(live(w) == 100 + 7 + 1000 + 350 + 11);
    ctxwin_window_free(w);
}

static const char *classic = "{\"low_water\":1}"; /* prune only as far as the budget requires */

static void sliding_drops_oldest_whole_turns(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(ctxwin_window_configure(w, classic, strlen(classic)));
    CHECK_OK(ctxwin_window_set_budget(w, 100));
    CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_SYSTEM, counted(500)));
    uint32_t gen = ctxwin_window_generation(w);
    size_t pruned = 99;
    for (int i = 0; i < 3; i++) { /* three turns of 40 tokens */
        CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_USER, counted(10)));
        CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_ASSISTANT, counted(30)));
        CHECK_OK(ctxwin_window_end_turn(w, &pruned));
        CHECK(pruned == (i == 2 ? 1u : 0u));
    }
    CHECK(ctxwin_window_first_live_turn(w) == 1);
    CHECK(ctxwin_window_start(w) == 3); /* the second turn's USER message */
    CHECK(ctxwin_window_generation(w) != gen);
    CHECK(!turn(w, 0).live && turn(w, 1).live && turn(w, 2).live);
    CHECK(live(w) == 500 + 80);
    /* Pushing does not move the boundary; end_turn does. */
    CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_USER, counted(95)));
    CHECK(ctxwin_window_start(w) == 3);
    CHECK_OK(ctxwin_window_end_turn(w, &pruned));
    CHECK(pruned == 2 && ctxwin_window_first_live_turn(w) == 3 && ctxwin_window_start(w) == 7);
    ctxwin_window_free(w);
}

static void newest_turn_is_never_dropped(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(ctxwin_window_set_budget(w, 50));
    CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_USER, counted(10)));
    CHECK_OK(ctxwin_window_end_turn(w, NULL));
    CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_USER, counted(60)));
    CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_TOOL_RESULT, counted(900)));
    CHECK_OK(ctxwin_window_end_turn(w, NULL)); /* over budget alone: still OK */
    CHECK(ctxwin_window_first_live_turn(w) == 1 && ctxwin_window_start(w) == 1);
    CHECK(live(w) == 960); /* the overrun shows */
    CHECK_STATUS(ctxwin_window_drop_oldest_turn(w), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK(strstr(last_error(w), "newest") != NULL);
    ctxwin_window_free(w);
}

static void settings_rerun_enforcement_over_the_whole_ledger(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(ctxwin_window_configure(w, classic, strlen(classic)));
    CHECK_OK(ctxwin_window_set_budget(w, 30));
    for (int i = 0; i < 5; i++) {
        CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_USER, counted(10)));
        CHECK_OK(ctxwin_window_end_turn(w, NULL));
    }
    CHECK(ctxwin_window_first_live_turn(w) == 2);
    CHECK_OK(ctxwin_window_set_budget(w, 1000)); /* larger budget: every turn fits again */
    CHECK(ctxwin_window_first_live_turn(w) == 0 && ctxwin_window_start(w) == 0);
    CHECK_OK(ctxwin_window_set_budget(w, 10));
    CHECK(ctxwin_window_first_live_turn(w) == 4);
    /* Overhead counts against the budget only when configured so. */
    CHECK_OK(ctxwin_window_set_budget(w, 50));
    CHECK(ctxwin_window_first_live_turn(w) == 0);
    CHECK_OK(ctxwin_window_set_overhead(w, 15, 10));
    CHECK(ctxwin_window_first_live_turn(w) == 0);
    CHECK(live(w) == 75);
    const char *cfg = "{\"budget_includes_overhead\": true}";
    CHECK_OK(ctxwin_window_configure(w, cfg, strlen(cfg)));
    CHECK(ctxwin_window_first_live_turn(w) == 3);
    CHECK(live(w) == 45);
    ctxwin_window_free(w);
}

static void truncate_rewinds_and_reset_clears(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(ctxwin_window_set_budget(w, 25));
    CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_SYSTEM, counted(3)));
    for (int i = 0; i < 4; i++) {
        CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_USER, counted(10)));
        CHECK_OK(ctxwin_window_end_turn(w, NULL));
    }
    CHECK(ctxwin_window_first_live_turn(w) == 2 && ctxwin_window_start(w) == 3);
    CHECK_OK(ctxwin_window_truncate(w, 3)); /* back to system + two turns */
    CHECK(ctxwin_window_message_count(w) == 3 && ctxwin_window_turn_count(w) == 2);
    CHECK(ctxwin_window_first_live_turn(w) == 0 && ctxwin_window_start(w) == 0);
    CHECK(live(w) == 23);
    CHECK_STATUS(ctxwin_window_truncate(w, 4), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK(ctxwin_window_message_count(w) == 3);
    CHECK_OK(ctxwin_window_truncate(w, 3)); /* a no-op rewind */
    CHECK_OK(ctxwin_window_reset(w));
    CHECK(ctxwin_window_message_count(w) == 0 && ctxwin_window_turn_count(w) == 0);
    CHECK(ctxwin_window_start(w) == 0 && live(w) == 0);
    ctxwin_window_free(w);
}

static void drop_oldest_turn_forces_one_more_prune(void) {
    ctxwin_window *w = new_window("gpt-4o");
    for (int i = 0; i < 3; i++) {
        CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_USER, counted(10)));
    }
    CHECK_OK(ctxwin_window_end_turn(w, NULL));
    CHECK(ctxwin_window_first_live_turn(w) == 0);
    CHECK_OK(ctxwin_window_drop_oldest_turn(w));
    CHECK(ctxwin_window_first_live_turn(w) == 1 && ctxwin_window_start(w) == 1);
    CHECK_OK(ctxwin_window_drop_oldest_turn(w));
    CHECK(ctxwin_window_first_live_turn(w) == 2);
    CHECK_STATUS(ctxwin_window_drop_oldest_turn(w), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK_OK(ctxwin_window_set_budget(w, 100000)); /* a forced drop survives a larger budget */
    CHECK(ctxwin_window_first_live_turn(w) == 2);
    ctxwin_window_free(w);
}

static void clone_is_an_independent_fork(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "hello there"));
    ctxwin_window *fork = NULL;
    CHECK_OK(ctxwin_window_clone(w, &fork));
    CHECK(fork != NULL && fork != w);
    CHECK_OK(push_str(fork, CTXWIN_KIND_ASSISTANT, "general kenobi"));
    CHECK(ctxwin_window_message_count(w) == 1 && ctxwin_window_message_count(fork) == 2);
    ctxwin_window_free(w);
    CHECK(ctxwin_window_message_count(fork) == 2);
    ctxwin_window_free(fork);
}

static void push_counts_text_once_and_reports_it(void) {
    ctxwin_window *w = new_window("gpt-4o");
    const char *text = "Read the file src/window.rs and summarise it.";
    ctxwin_count direct = {0, false}, pushed = {0, false};
    CHECK_OK(ctxwin_count_text("gpt-4o", 6, text, strlen(text), &direct));
    CHECK_OK(ctxwin_window_push(w, CTXWIN_KIND_USER, text, strlen(text), &pushed));
    CHECK(pushed.tokens == direct.tokens && pushed.exact);
    CHECK(turn(w, 0).tokens.tokens == direct.tokens);
    ctxwin_count total = {0, false};
    CHECK_OK(ctxwin_window_live_tokens(w, &total));
    CHECK(total.tokens == direct.tokens && total.exact);
    /* An estimated message makes the total an estimate. */
    ctxwin_count est = {40, false};
    CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_ASSISTANT, est));
    CHECK_OK(ctxwin_window_live_tokens(w, &total));
    CHECK(total.tokens == direct.tokens + 40 && !total.exact);
    ctxwin_window_free(w);
}

static void set_model_recounts_retained_text(void) {
    ctxwin_window *w = new_window("gpt-4o");
    const char *text = "Ein ziemlich langer deutscher Satz mit Umlauten: Grüße aus Köln!";
    ctxwin_count exact = {0, false}, est = {0, false}, total = {0, false};
    CHECK_OK(ctxwin_window_push(w, CTXWIN_KIND_USER, text, strlen(text), &exact));
    CHECK_OK(ctxwin_window_set_model(w, "claude-sonnet-4-5", 17));
    CHECK_OK(ctxwin_count_text("claude-sonnet-4-5", 17, text, strlen(text), &est));
    CHECK_OK(ctxwin_window_live_tokens(w, &total));
    CHECK(total.tokens == est.tokens && !total.exact);
    CHECK_OK(ctxwin_window_set_model(w, "gpt-4o", 6));
    CHECK_OK(ctxwin_window_live_tokens(w, &total));
    CHECK(total.tokens == exact.tokens && total.exact);
    /* A caller-supplied count is kept as given. */
    CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_ASSISTANT, counted(77)));
    CHECK_OK(ctxwin_window_set_model(w, "gemini-2.5-pro", 14));
    CHECK_OK(ctxwin_count_text("gemini-2.5-pro", 14, text, strlen(text), &est));
    CHECK(turn(w, 0).tokens.tokens == est.tokens + 77);
    ctxwin_window_free(w);
}

static void counts_only_window_keeps_no_text(void) {
    ctxwin_window *w = new_window("gpt-4o");
    const char *cfg = "{\"retain_text\": false, \"history_budget\": 64}";
    CHECK_OK(ctxwin_window_configure(w, cfg, strlen(cfg)));
    ctxwin_count c = {0, false}, total = {0, false};
    CHECK_OK(ctxwin_window_push(w, CTXWIN_KIND_USER, "hello world", 11, &c));
    CHECK(c.exact && c.tokens == 2);
    /* Without the text, a model change cannot recount: the count becomes an estimate. */
    CHECK_OK(ctxwin_window_set_model(w, "gpt-4", 5));
    CHECK_OK(ctxwin_window_live_tokens(w, &total));
    CHECK(total.tokens == 2 && !total.exact);
    ctxwin_window_free(w);
}

static void configure_is_all_or_nothing(void) {
    ctxwin_window *w = new_window("gpt-4o");
    for (int i = 0; i < 4; i++) {
        CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_USER, counted(10)));
    }
    const char *bad = "{\"history_budget\": 5, \"colour\": \"blue\"}";
    CHECK_STATUS(ctxwin_window_configure(w, bad, strlen(bad)), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "colour") != NULL);
    CHECK(ctxwin_window_first_live_turn(w) == 0); /* budget 5 was not applied */
    const char *fraction = "{\"strategy\": \"summary\", \"threshold\": 1.5}";
    CHECK_STATUS(ctxwin_window_configure(w, fraction, strlen(fraction)), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "threshold") != NULL);
    const char *unknown = "{\"strategy\": \"fifo\"}";
    CHECK_STATUS(ctxwin_window_configure(w, unknown, strlen(unknown)), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "strategy") != NULL);
    const char *neg = "{\"history_budget\": -3}";
    CHECK_STATUS(ctxwin_window_configure(w, neg, strlen(neg)), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "history_budget") != NULL);
    const char *broken = "{\"history_budget\": ";
    CHECK_STATUS(ctxwin_window_configure(w, broken, strlen(broken)), CTXWIN_STATUS_PARSE);
    const char *good = "{\"strategy\": \"sliding\", \"history_budget\": 25}";
    CHECK_OK(ctxwin_window_configure(w, good, strlen(good)));
    CHECK(ctxwin_window_first_live_turn(w) == 2);
    ctxwin_window_free(w);
}

static void observe_usage_calibrates_estimates(void) {
    ctxwin_window *w = new_window("claude-sonnet-4-5");
    for (int i = 0; i < 6; i++) {
        ctxwin_count est = {100, false};
        CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_USER, est));
    }
    CHECK_OK(ctxwin_window_set_overhead(w, 40, 10));
    CHECK(live(w) == 650);
    CHECK_OK(ctxwin_window_observe_usage(w, 0, 6, 50 + 720)); /* 20% more than estimated */
    ctxwin_count total = {0, true};
    CHECK_OK(ctxwin_window_live_tokens(w, &total));
    CHECK(total.tokens == 770 && !total.exact);
    /* One report is taken as an overhead the host did not declare, not as a ratio: the
     * ratio's prior holds it at 1 until reports of requests of other sizes tell them apart. */
    CHECK(turn(w, 0).tokens.tokens == 100);
    double ratio = 0;
    int32_t learned = 0;
    CHECK_OK(ctxwin_window_calibration(w, &ratio, &learned));
    CHECK(ratio > 0.999 && ratio < 1.001 && learned == 120);
    CHECK_STATUS(ctxwin_window_observe_usage(w, 0, 7, 500), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK_STATUS(ctxwin_window_observe_usage(w, 4, 2, 500), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK_STATUS(ctxwin_window_observe_usage(w, 0, 6, -1), CTXWIN_STATUS_INVALID_ARG);
    CHECK_STATUS(ctxwin_window_observe_usage(w, 0, 6, 30), CTXWIN_STATUS_MISMATCH);
    CHECK(strstr(last_error(w), "exact part") != NULL);
    CHECK_STATUS(ctxwin_window_observe_usage(NULL, 0, 0, 0), CTXWIN_STATUS_NULL_ARG);
    CHECK(live(w) == 770);
    ctxwin_window_free(w);
}

void suite_window(void) {
    harness_run("observe_usage_calibrates_estimates", observe_usage_calibrates_estimates);
    harness_run("turns_group_messages_and_pin_system", turns_group_messages_and_pin_system);
    harness_run("sliding_drops_oldest_whole_turns", sliding_drops_oldest_whole_turns);
    harness_run("newest_turn_is_never_dropped", newest_turn_is_never_dropped);
    harness_run("settings_rerun_enforcement_over_the_whole_ledger", settings_rerun_enforcement_over_the_whole_ledger);
    harness_run("truncate_rewinds_and_reset_clears", truncate_rewinds_and_reset_clears);
    harness_run("drop_oldest_turn_forces_one_more_prune", drop_oldest_turn_forces_one_more_prune);
    harness_run("clone_is_an_independent_fork", clone_is_an_independent_fork);
    harness_run("push_counts_text_once_and_reports_it", push_counts_text_once_and_reports_it);
    harness_run("set_model_recounts_retained_text", set_model_recounts_retained_text);
    harness_run("counts_only_window_keeps_no_text", counts_only_window_keeps_no_text);
    harness_run("configure_is_all_or_nothing", configure_is_all_or_nothing);
}
