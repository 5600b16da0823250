/* A small host agent adopting ctxwin without mirroring it.
 *
 * The agent keeps its own array of messages (each of several blocks: thinking, text, tool
 * calls, tool results), under its own ids, and its own session file (the provider's usage
 * figure of each turn, as agents store it). It learns exact counts after the fact, rewinds,
 * replaces a message in place, forks by clone, switches models and restores a 2,000-turn
 * session, driving the window only through push_message, set_count / set_turn_count,
 * end_turn, truncate, clone and set_model. It keeps no counts and no window state of its
 * own: every request is built from its own array, starting at start_host_id. */
#include <stdlib.h>
#include "harness.h"

#define MAX_BLOCKS 4

typedef struct {
    int32_t kind;
    char text[96];
    char call_id[16];
    char name[16]; /* a tool call's tool name */
} block;

typedef struct {
    int64_t id;
    size_t n;
    block blocks[MAX_BLOCKS];
} host_message;

typedef struct {
    host_message *msgs;
    size_t len, cap;
    int64_t next_id;
    ctxwin_window *w;
} agent;

static agent agent_new(const char *model, int32_t budget) {
    agent a = {NULL, 0, 0, 100, new_window(model)};
    CHECK_OK(ctxwin_window_set_budget(a.w, budget));
    return a;
}

static void agent_free(agent *a) {
    free(a->msgs);
    ctxwin_window_free(a->w);
}

/* Appends a message of `n` blocks to the agent's array and to the window, under a new id. */
static ctxwin_status agent_add(agent *a, const block *blocks, size_t n) {
    if (a->len == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 64;
        a->msgs = realloc(a->msgs, a->cap * sizeof *a->msgs);
        if (a->msgs == NULL) exit(2);
    }
    host_message *m = &a->msgs[a->len];
    m->id = a->next_id++;
    m->n = n;
    ctxwin_part parts[MAX_BLOCKS];
    for (size_t i = 0; i < n; i++) {
        m->blocks[i] = blocks[i];
        parts[i] = (ctxwin_part){blocks[i].kind, blocks[i].text, strlen(blocks[i].text),
                                 blocks[i].call_id, strlen(blocks[i].call_id),
                                 blocks[i].name, strlen(blocks[i].name)};
    }
    ctxwin_status rc = ctxwin_window_push_message(a->w, parts, n, m->id, NULL);
    if (rc == CTXWIN_OK) a->len++;
    return rc;
}

/* Builds the request from the agent's own array as the README's request builder does: the
 * pinned blocks before the boundary (the task, the question of the turn the boundary falls
 * inside, the agent's own pins), then every block from the first live message on (the parts
 * of it the boundary pruned left out). Checks each block against the window's view: same
 * kind, same host message; the view's synthetic items (the marker standing for the steps
 * the boundary left out of a turn) are the library's, not the agent's. Returns the number
 * of view items matched. */
static size_t agent_request(const agent *a) {
    int64_t first_id = 0;
    if (ctxwin_window_start_host_id(a->w, &first_id) != CTXWIN_OK) return 0;
    size_t start = ctxwin_window_start(a->w);
    size_t sent = 0, items = ctxwin_window_view_len(a->w);
    for (size_t p = 0; p < a->len; p++) {
        size_t index = 0;
        CHECK_OK(ctxwin_window_host_index(a->w, a->msgs[p].id, &index));
        for (size_t b = 0; b < a->msgs[p].n; b++, index++) {
            if (index < start && !ctxwin_window_is_pinned(a->w, index)) continue;
            ctxwin_item item;
            for (;;) {
                CHECK(sent < items);
                if (sent >= items || ctxwin_window_view_get(a->w, sent, &item) != CTXWIN_OK) return sent;
                if (item.type != CTXWIN_ITEM_SYNTHETIC) break;
                sent++; /* the marker */
            }
            int64_t item_host = -1;
            CHECK_OK(ctxwin_window_host_id(a->w, item.index, &item_host));
            CHECK(item_host == a->msgs[p].id);
            CHECK(item.kind == a->msgs[p].blocks[b].kind);
            CHECK(item.text_len == strlen(a->msgs[p].blocks[b].text));
            sent++;
        }
    }
    CHECK(sent == items);
    return sent;
}

/* Rewinds the agent to its first `keep` messages: its array and the window together. */
static void agent_rewind(agent *a, size_t keep) {
    if (keep < a->len) {
        size_t index = 0;
        CHECK_OK(ctxwin_window_host_index(a->w, a->msgs[keep].id, &index));
        CHECK_OK(ctxwin_window_truncate(a->w, index));
        a->len = keep;
    }
}

static agent agent_fork(const agent *a) {
    agent fork = *a;
    fork.msgs = malloc(a->cap * sizeof *a->msgs);
    if (fork.msgs == NULL) exit(2);
    memcpy(fork.msgs, a->msgs, a->len * sizeof *a->msgs);
    CHECK_OK(ctxwin_window_clone(a->w, &fork.w));
    return fork;
}

static block text_block(int32_t kind, const char *text) {
    block b = {kind, "", "", ""};
    snprintf(b.text, sizeof b.text, "%s", text);
    return b;
}

static block tool_block(int32_t kind, const char *call_id, const char *text) {
    block b = text_block(kind, text);
    snprintf(b.call_id, sizeof b.call_id, "%s", call_id);
    if (kind == CTXWIN_KIND_TOOL_CALL) snprintf(b.name, sizeof b.name, "shell");
    return b;
}

/* One turn: the user's question; an assistant message of thinking, text and two tool calls;
 * one message with both results; the answer. */
static void agent_turn(agent *a, int turn) {
    char question[64], id1[16], id2[16];
    snprintf(question, sizeof question, "turn %d: what is in src/ and why?", turn);
    snprintf(id1, sizeof id1, "c%d_a", turn);
    snprintf(id2, sizeof id2, "c%d_b", turn);
    block user = text_block(CTXWIN_KIND_USER, question);
    block assistant[4] = {text_block(CTXWIN_KIND_THINKING, "I should list the directory and count lines."),
                          text_block(CTXWIN_KIND_ASSISTANT, "Let me look."),
                          tool_block(CTXWIN_KIND_TOOL_CALL, id1, "{\"cmd\":\"ls src\"}"),
                          tool_block(CTXWIN_KIND_TOOL_CALL, id2, "{\"cmd\":\"wc -l src/*\"}")};
    block results[2] = {tool_block(CTXWIN_KIND_TOOL_RESULT, id2, "120 lib.rs\n340 window.rs"),
                        tool_block(CTXWIN_KIND_TOOL_RESULT, id1, "lib.rs window.rs")};
    block answer = text_block(CTXWIN_KIND_ASSISTANT, "Two files: the library root and the ledger.");
    CHECK_OK(agent_add(a, &user, 1));
    CHECK_OK(agent_add(a, assistant, 4));
    CHECK_OK(agent_add(a, results, 2));
    CHECK_OK(agent_add(a, &answer, 1));
}

/* The provider's figure for turn `turn` (what the agent's session file stores). */
static int32_t usage_of(int turn) {
    return 40 + (turn * 37) % 50;
}

/* A live session: each turn ends (end_turn) before its provider figure arrives; the figure
 * is recorded one turn later, as usage reports come back with the next response. */
static void live_session(agent *a, int turns) {
    for (int t = 0; t < turns; t++) {
        agent_turn(a, t);
        CHECK_OK(ctxwin_window_end_turn(a->w, NULL));
        if (t > 0) CHECK_OK(ctxwin_window_set_turn_count(a->w, (size_t)t - 1, (ctxwin_count){usage_of(t - 1), true}));
        CHECK(agent_request(a) > 0);
    }
    CHECK_OK(ctxwin_window_set_turn_count(a->w, (size_t)turns - 1, (ctxwin_count){usage_of(turns - 1), true}));
    CHECK_OK(ctxwin_window_end_turn(a->w, NULL));
}

static void test_live_session(void) {
    agent a = agent_new("gpt-4o", 400);
    /* The classic rule (no low-water margin), which the expectations below recompute. */
    const char *classic = "{\"low_water\":1,\"pin_task\":false}";
    CHECK_OK(ctxwin_window_configure(a.w, classic, strlen(classic)));
    live_session(&a, 30);
    CHECK(ctxwin_window_turn_count(a.w) == 30);
    CHECK(ctxwin_window_message_count(a.w) == 30 * 8);
    for (size_t t = 0; t < 30; t++) {
        ctxwin_turn_info info;
        CHECK_OK(ctxwin_window_turn_info(a.w, t, &info));
        CHECK(info.tokens.tokens == usage_of((int)t) && info.tokens.exact);
    }
    /* The boundary keeps the newest turns whose provider figures fit the budget. */
    size_t live = 0;
    int32_t history = 0;
    for (size_t t = 30; t-- > 0 && history + usage_of((int)t) <= 400;) {
        history += usage_of((int)t);
        live++;
    }
    CHECK(ctxwin_window_first_live_turn(a.w) == 30 - live);
    ctxwin_count total;
    CHECK_OK(ctxwin_window_live_tokens(a.w, &total));
    CHECK(total.tokens == history && total.exact);
    CHECK(agent_request(&a) == live * 8);
    int64_t first = 0;
    CHECK_OK(ctxwin_window_start_host_id(a.w, &first));
    CHECK(first == a.msgs[(30 - live) * 4].id);
    /* A single message's exact count, learned later (a count endpoint): set by host id. */
    size_t index = 0;
    CHECK_OK(ctxwin_window_host_index(a.w, a.msgs[a.len - 1].id, &index));
    CHECK_OK(ctxwin_window_set_count(a.w, index, (ctxwin_count){9, true}));
    CHECK_OK(ctxwin_window_end_turn(a.w, NULL));
    ctxwin_turn_info newest;
    CHECK_OK(ctxwin_window_turn_info(a.w, 29, &newest));
    CHECK(newest.tokens.exact);
    agent_free(&a);
}

static void test_rewind_replace_and_fork(void) {
    agent a = agent_new("gpt-4o", 300);
    live_session(&a, 12);
    size_t before = ctxwin_window_first_live_turn(a.w);
    CHECK(before > 0);
    /* Rewind into the middle of turn 9 (its tool results and answer go). */
    agent_rewind(&a, 9 * 4 + 2);
    CHECK(ctxwin_window_message_count(a.w) == 9 * 8 + 5);
    CHECK(ctxwin_window_first_live_turn(a.w) <= before);
    CHECK(agent_request(&a) > 0);
    /* Replace the last message in place: rewind to it, push the new one under its id. */
    int64_t replaced = a.msgs[a.len - 1].id;
    agent_rewind(&a, a.len - 1);
    block edited[2] = {text_block(CTXWIN_KIND_THINKING, "The listing is enough."),
                       text_block(CTXWIN_KIND_ASSISTANT, "Two files, as before.")};
    a.next_id = replaced;
    CHECK_OK(agent_add(&a, edited, 2));
    a.next_id = a.msgs[a.len - 1].id + 1000;
    size_t index = 0;
    CHECK_OK(ctxwin_window_host_index(a.w, replaced, &index));
    CHECK(index == 9 * 8 + 1);
    CHECK(agent_request(&a) > 0);
    /* A fork goes its own way; the original is untouched. */
    agent fork = agent_fork(&a);
    size_t count = ctxwin_window_message_count(a.w);
    for (int t = 20; t < 26; t++) {
        agent_turn(&fork, t);
        CHECK_OK(ctxwin_window_set_turn_count(fork.w, ctxwin_window_turn_count(fork.w) - 1, (ctxwin_count){200, true}));
        CHECK_OK(ctxwin_window_end_turn(fork.w, NULL));
        CHECK(agent_request(&fork) > 0);
    }
    CHECK(ctxwin_window_message_count(a.w) == count);
    CHECK(ctxwin_window_message_count(fork.w) == count + 6 * 8);
    CHECK(agent_request(&a) > 0);
    agent_free(&fork);
    agent_free(&a);
}

static void test_model_switch_keeps_learned_counts(void) {
    agent a = agent_new("gpt-4o", 100000);
    live_session(&a, 5);
    agent_turn(&a, 5); /* counted by gpt-4o's tokenizer, exact */
    ctxwin_turn_info before, after;
    CHECK_OK(ctxwin_window_turn_info(a.w, 2, &before));
    CHECK_OK(ctxwin_window_set_model(a.w, "claude-sonnet-4-5", strlen("claude-sonnet-4-5")));
    CHECK_OK(ctxwin_window_turn_info(a.w, 2, &after));
    CHECK(after.tokens.tokens == before.tokens.tokens && after.tokens.exact);
    CHECK_OK(ctxwin_window_turn_info(a.w, 5, &after));
    CHECK(!after.tokens.exact); /* recounted by the new model: an estimate */
    char model[64];
    CHECK_OK(ctxwin_window_model(a.w, model, sizeof model, NULL));
    CHECK(strcmp(model, "claude-sonnet-4-5") == 0);
    CHECK(agent_request(&a) > 0);
    agent_free(&a);
}

/* Restores a session of `turns` turns from the agent's own session file: each message pushed
 * again, each turn's provider figure set after its messages, the turn ended. */
static void restore(agent *a, int turns) {
    for (int t = 0; t < turns; t++) {
        agent_turn(a, t);
        CHECK_OK(ctxwin_window_set_turn_count(a->w, (size_t)t, (ctxwin_count){usage_of(t), true}));
        CHECK_OK(ctxwin_window_end_turn(a->w, NULL));
    }
}

static void test_restore_long_session(void) {
    int turns = quick_mode() ? 200 : 2000;
    agent live = agent_new("gpt-4o", 20000);
    live_session(&live, turns);
    agent restored = agent_new("gpt-4o", 20000);
    restore(&restored, turns);
    CHECK(ctxwin_window_start(restored.w) == ctxwin_window_start(live.w));
    CHECK(ctxwin_window_first_live_turn(restored.w) == ctxwin_window_first_live_turn(live.w));
    ctxwin_count a, b;
    CHECK_OK(ctxwin_window_live_tokens(live.w, &a));
    CHECK_OK(ctxwin_window_live_tokens(restored.w, &b));
    CHECK(a.tokens == b.tokens && a.exact && b.exact);
    CHECK(agent_request(&restored) == agent_request(&live));
    agent_free(&restored);
    agent_free(&live);
}

/* The reproducer: a rewind before a forced drop brings the dropped turn back. */
static void test_truncate_undoes_a_drop(void) {
    ctxwin_window *w = new_window("gpt-4o");
    for (int t = 0; t < 3; t++) {
        CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_USER, (ctxwin_count){10, true}));
        CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_ASSISTANT, (ctxwin_count){10, true}));
        CHECK_OK(ctxwin_window_end_turn(w, NULL));
    }
    CHECK_OK(ctxwin_window_drop_oldest_turn(w));
    CHECK(ctxwin_window_first_live_turn(w) == 1);
    CHECK_OK(ctxwin_window_truncate(w, 4));
    CHECK(ctxwin_window_first_live_turn(w) == 0);
    CHECK(ctxwin_window_start(w) == 0);
    CHECK_OK(ctxwin_window_set_budget(w, 100000));
    CHECK(ctxwin_window_first_live_turn(w) == 0);
    ctxwin_window_free(w);
}

static void test_bad_input_changes_nothing(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_STATUS(ctxwin_window_start_host_id(w, &(int64_t){0}), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "pushed without a host id"));
    int64_t id = 0;
    CHECK_STATUS(ctxwin_window_start_host_id(w, &id), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "host id") != NULL);
    ctxwin_part parts[3] = {{CTXWIN_KIND_ASSISTANT, "ok", 2, NULL, 0, NULL, 0},
                            {CTXWIN_KIND_TOOL_CALL, "{}", 2, "call_1", 6, "ls", 2},
                            {CTXWIN_KIND_TOOL_RESULT, "out", 3, "call_1", 6, NULL, 0}};
    CHECK_OK(ctxwin_window_push_message(w, parts, 3, 5, NULL));
    size_t count = ctxwin_window_message_count(w);
    CHECK_STATUS(ctxwin_window_push_message(w, parts, 0, 6, NULL), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "parts") != NULL);
    ctxwin_part unknown[2] = {{CTXWIN_KIND_ASSISTANT, "ok", 2, NULL, 0, NULL, 0}, {42, "x", 1, NULL, 0, NULL, 0}};
    CHECK_STATUS(ctxwin_window_push_message(w, unknown, 2, 6, NULL), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "parts[1].kind") != NULL);
    ctxwin_part orphan[2] = {{CTXWIN_KIND_ASSISTANT, "ok", 2, NULL, 0, NULL, 0},
                             {CTXWIN_KIND_TOOL_RESULT, "out", 3, "call_9", 6, NULL, 0}};
    CHECK_STATUS(ctxwin_window_push_message(w, orphan, 2, 6, NULL), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "parts[1].call_id") != NULL);
    ctxwin_part misplaced[1] = {{CTXWIN_KIND_USER, "hi", 2, "call_2", 6, NULL, 0}};
    CHECK_STATUS(ctxwin_window_push_message(w, misplaced, 1, 6, NULL), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "parts[0].call_id") != NULL);
    CHECK_STATUS(ctxwin_window_push_message(w, parts, 1, 5, NULL), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "host_id 5") != NULL);
    ctxwin_part binary[1] = {{CTXWIN_KIND_TOOL_RESULT, "\xff\xfe", 2, NULL, 0, NULL, 0}};
    CHECK_STATUS(ctxwin_window_push_message(w, binary, 1, 6, NULL), CTXWIN_STATUS_INVALID_UTF8);
    CHECK(strstr(last_error(w), "parts[0].text") != NULL);
    CHECK(ctxwin_window_message_count(w) == count);
    CHECK_STATUS(ctxwin_window_set_count(w, count, (ctxwin_count){1, true}), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK(strstr(last_error(w), "index") != NULL);
    CHECK_STATUS(ctxwin_window_set_count(w, 0, (ctxwin_count){-1, true}), CTXWIN_STATUS_INVALID_ARG);
    CHECK_STATUS(ctxwin_window_set_turn_count(w, 1, (ctxwin_count){1, true}), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK_STATUS(ctxwin_window_host_index(w, 99, &count), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK_STATUS(ctxwin_window_host_id(w, 0, &id), CTXWIN_STATUS_INVALID_ARG);
    CHECK_STATUS(ctxwin_window_reset_with(w, 8), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "flags") != NULL);
    CHECK(ctxwin_window_message_count(w) == 4);
    ctxwin_window_free(w);
}

static void test_binary_output_replaced(void) {
    ctxwin_window *w = new_window("gpt-4o");
    const char *config = "{\"invalid_utf8\":\"replace\"}";
    CHECK_OK(ctxwin_window_configure(w, config, strlen(config)));
    ctxwin_part parts[2] = {{CTXWIN_KIND_USER, "run it", 6, NULL, 0, NULL, 0},
                            {CTXWIN_KIND_TOOL_RESULT, "ELF\x7f\xff\xfe\x01", 7, NULL, 0, NULL, 0}};
    ctxwin_count count;
    CHECK_OK(ctxwin_window_push_message(w, parts, 2, 1, &count));
    bool replaced = false;
    CHECK_OK(ctxwin_window_replaced_utf8(w, 1, &replaced));
    CHECK(replaced);
    CHECK_OK(ctxwin_window_replaced_utf8(w, 0, &replaced));
    CHECK(!replaced);
    ctxwin_item item;
    CHECK_OK(ctxwin_window_view_get(w, 1, &item));
    CHECK(item.text_len == 3 + 1 + 2 * 3 + 1 && memcmp(item.text, "ELF\x7f\xef\xbf\xbd\xef\xbf\xbd\x01", item.text_len) == 0);
    CHECK_OK(ctxwin_window_push(w, CTXWIN_KIND_ASSISTANT, "\xc3", 1, NULL));
    CHECK_OK(ctxwin_window_replaced_utf8(w, 2, &replaced));
    CHECK(replaced);
    ctxwin_window_free(w);
}

static void test_getters_reset_and_last_usage(void) {
    ctxwin_window *w = new_window("claude-sonnet-4-5");
    CHECK_OK(ctxwin_window_set_budget(w, 1234));
    CHECK_OK(ctxwin_window_set_overhead(w, 300, 200));
    int32_t budget = 0, system = 0, tools = 0;
    CHECK_OK(ctxwin_window_budget(w, &budget));
    CHECK(budget == 1234);
    CHECK_OK(ctxwin_window_overhead(w, &system, &tools));
    CHECK(system == 300 && tools == 200);
    size_t needed = 0;
    CHECK_OK(ctxwin_window_settings(w, NULL, 0, &needed));
    char *settings = malloc(needed + 1);
    CHECK_OK(ctxwin_window_settings(w, settings, needed + 1, NULL));
    CHECK(strstr(settings, "\"history_budget\":1234") != NULL);
    ctxwin_window *copy = new_window("gpt-4o");
    CHECK_OK(ctxwin_window_configure(copy, settings, needed));
    CHECK_OK(ctxwin_window_budget(copy, &budget));
    CHECK(budget == 1234);
    ctxwin_window_free(copy);
    free(settings);

    CHECK_STATUS(ctxwin_window_observe_last_usage(w, 1000), CTXWIN_STATUS_MISMATCH);
    for (int t = 0; t < 20; t++) {
        CHECK_OK(push_str(w, CTXWIN_KIND_USER, "a question about the parser and its error messages"));
        CHECK_OK(push_str(w, CTXWIN_KIND_ASSISTANT, "an answer with a few more words than the question had"));
        CHECK_OK(ctxwin_window_end_turn(w, NULL));
    }
    size_t first = ctxwin_window_start(w), end = ctxwin_window_message_count(w);
    CHECK_OK(ctxwin_window_render_json(w, NULL, 0, &needed));
    ctxwin_window *by_range = NULL;
    CHECK_OK(ctxwin_window_clone(w, &by_range));
    CHECK_OK(ctxwin_window_observe_usage(by_range, first, end, 1500));
    CHECK_OK(ctxwin_window_observe_last_usage(w, 1500));
    ctxwin_count a, b;
    CHECK_OK(ctxwin_window_live_tokens(w, &a));
    CHECK_OK(ctxwin_window_live_tokens(by_range, &b));
    CHECK(a.tokens == b.tokens);
    ctxwin_window_free(by_range);

    /* reset keeps the overhead and the calibration: the 1500 reported for about 1000
     * estimated tokens (500 of them declared overhead) taught about 500 tokens of overhead
     * that was not declared, which the empty window still counts;
     * reset_with(CTXWIN_RESET_OVERHEAD | CTXWIN_RESET_CALIBRATION) gives a zero total. */
    double ratio = 0;
    int32_t learned = 0;
    CHECK_OK(ctxwin_window_calibration(w, &ratio, &learned));
    CHECK(learned > 0);
    CHECK_OK(ctxwin_window_reset(w));
    CHECK_OK(ctxwin_window_live_tokens(w, &a));
    CHECK(a.tokens == 500 + learned);
    CHECK_STATUS(ctxwin_window_observe_last_usage(w, 1500), CTXWIN_STATUS_MISMATCH);
    CHECK_OK(ctxwin_window_reset_with(w, CTXWIN_RESET_OVERHEAD | CTXWIN_RESET_CALIBRATION));
    CHECK_OK(ctxwin_window_live_tokens(w, &a));
    CHECK(a.tokens == 0);
    CHECK_OK(ctxwin_window_budget(w, &budget));
    CHECK(budget == 1234);
    ctxwin_window_free(w);
}

/* Issue 27: counts the host records show at once in turn_info and message_get (tokens and
 * exact flag), while the boundary, the view, live_tokens and the generation wait for the
 * next end_turn. */
static void test_recorded_counts_show_at_once(void) {
    agent a = agent_new("claude-sonnet-4-5", 400); /* estimates: the recorded counts are exact */
    /* The task is history here, so that what is live once the counts apply is exact. */
    CHECK_OK(ctxwin_window_configure(a.w, "{\"pin_task\":false}", 18));
    live_session(&a, 6);
    agent_turn(&a, 6);
    size_t start = ctxwin_window_start(a.w), items = ctxwin_window_view_len(a.w);
    uint32_t generation = ctxwin_window_generation(a.w);
    ctxwin_count live_before, live_after;
    CHECK_OK(ctxwin_window_live_tokens(a.w, &live_before));
    size_t last = ctxwin_window_message_count(a.w) - 1;
    ctxwin_message m;
    CHECK_OK(ctxwin_window_message_get(a.w, last, &m));
    CHECK(!m.tokens.exact);
    ctxwin_turn_info info;
    CHECK_OK(ctxwin_window_turn_info(a.w, 6, &info));
    int32_t turn_before = info.tokens.tokens, last_before = m.tokens.tokens;

    CHECK_OK(ctxwin_window_set_count(a.w, last, (ctxwin_count){9, true}));
    CHECK_OK(ctxwin_window_message_get(a.w, last, &m));
    CHECK(m.tokens.tokens == 9 && m.tokens.exact);
    CHECK_OK(ctxwin_window_turn_info(a.w, 6, &info));
    CHECK(info.tokens.tokens == turn_before - last_before + 9 && !info.tokens.exact);

    CHECK_OK(ctxwin_window_set_turn_count(a.w, 6, (ctxwin_count){77, true}));
    CHECK_OK(ctxwin_window_turn_info(a.w, 6, &info));
    CHECK(info.tokens.tokens == 77 && info.tokens.exact);
    /* Nothing else moved. */
    CHECK(ctxwin_window_start(a.w) == start && ctxwin_window_view_len(a.w) == items);
    CHECK(ctxwin_window_generation(a.w) == generation);
    CHECK_OK(ctxwin_window_live_tokens(a.w, &live_after));
    CHECK(live_after.tokens == live_before.tokens && live_after.exact == live_before.exact);
    /* end_turn applies them: the same figures, now in the totals too. */
    CHECK_OK(ctxwin_window_end_turn(a.w, NULL));
    CHECK_OK(ctxwin_window_turn_info(a.w, 6, &info));
    CHECK(info.tokens.tokens == 77 && info.tokens.exact);
    CHECK_OK(ctxwin_window_live_tokens(a.w, &live_after));
    CHECK(live_after.exact);
    agent_free(&a);
}

/* Issue 27: "invalid_tool_parts":"keep" keeps the tool parts a model produced that the window
 * cannot pair or send (arguments that are not a JSON object, a call cut short, an id no call
 * carries), counted as text and flagged; the default refuses them, naming the id. */
static void test_invalid_tool_parts_kept_or_refused(void) {
    const char *anthropic = "{\"format\":\"anthropic\"}";
    const char *keep = "{\"invalid_tool_parts\":\"keep\"}";
    const char *cut = "{\"path\":\"src/ma";
    for (int lenient = 0; lenient <= 1; lenient++) {
        agent a = agent_new("claude-sonnet-4-5", 100000);
        CHECK_OK(ctxwin_window_configure(a.w, anthropic, strlen(anthropic)));
        if (lenient) CHECK_OK(ctxwin_window_configure(a.w, keep, strlen(keep)));
        agent_turn(&a, 0);
        block user = text_block(CTXWIN_KIND_USER, "read src/main.rs");
        CHECK_OK(agent_add(&a, &user, 1));
        size_t count = ctxwin_window_message_count(a.w);
        /* A call whose arguments were cut short (max tokens) and its error result. */
        block call[2] = {text_block(CTXWIN_KIND_ASSISTANT, "Reading."), tool_block(CTXWIN_KIND_TOOL_CALL, "t1", cut)};
        block result = tool_block(CTXWIN_KIND_TOOL_RESULT, "t1", "error: arguments are not JSON");
        block stray = tool_block(CTXWIN_KIND_TOOL_RESULT, "t9", "late output");
        ctxwin_count c;
        if (!lenient) {
            CHECK_STATUS(agent_add(&a, call, 2), CTXWIN_STATUS_INVALID_ARG);
            CHECK(strstr(last_error(a.w), "parts[1]") != NULL && strstr(last_error(a.w), "'t1'") != NULL);
            CHECK_STATUS(agent_add(&a, &stray, 1), CTXWIN_STATUS_INVALID_ARG);
            CHECK(strstr(last_error(a.w), "'t9'") != NULL);
            CHECK_STATUS(ctxwin_window_push_tool_call(a.w, "t2", 2, "read", 4, cut, strlen(cut), &c),
                         CTXWIN_STATUS_INVALID_ARG);
            CHECK(strstr(last_error(a.w), "'t2'") != NULL);
            CHECK(ctxwin_window_message_count(a.w) == count);
            agent_free(&a);
            continue;
        }
        CHECK_OK(agent_add(&a, call, 2));
        CHECK_OK(agent_add(&a, &result, 1));
        CHECK_OK(agent_add(&a, &stray, 1));
        CHECK_OK(ctxwin_window_push_tool_call(a.w, "t2", 2, "read", 4, cut, strlen(cut), &c));
        CHECK(ctxwin_window_message_count(a.w) == count + 5);
        bool kept = true;
        CHECK_OK(ctxwin_window_kept_as_text(a.w, count, &kept));
        CHECK(!kept); /* the text part */
        ctxwin_message m;
        for (size_t i = count + 1; i < count + 5; i++) {
            CHECK_OK(ctxwin_window_kept_as_text(a.w, i, &kept));
            CHECK(kept);
            CHECK_OK(ctxwin_window_message_get(a.w, i, &m));
            CHECK(m.tokens.tokens > 0);
        }
        /* The call is kept as the assistant's text, as written; the results as results. */
        CHECK_OK(ctxwin_window_message_get(a.w, count + 1, &m));
        CHECK(m.kind == CTXWIN_KIND_ASSISTANT && m.call_id == NULL);
        CHECK(m.text_len == strlen("shell\n") + strlen(cut) && memcmp(m.text, "shell\n", 6) == 0);
        CHECK_OK(ctxwin_window_message_get(a.w, count + 3, &m));
        CHECK(m.kind == CTXWIN_KIND_TOOL_RESULT && m.call_id_len == 2 && memcmp(m.call_id, "t9", 2) == 0);
        char body[8192];
        size_t needed = 0;
        CHECK_OK(ctxwin_window_render_json(a.w, body, sizeof body, &needed));
        CHECK(strstr(body, "late output") == NULL); /* a result that answers no call is not sent */
        CHECK(strstr(body, "src/ma") != NULL);      /* the cut call is, as text */
        agent_free(&a);
    }
    ctxwin_window *w = new_window("gpt-4o");
    const char *bad = "{\"invalid_tool_parts\":\"lenient\"}";
    CHECK_STATUS(ctxwin_window_configure(w, bad, strlen(bad)), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "invalid_tool_parts") != NULL);
    ctxwin_window_free(w);
}

/* Issue 27: set_model_with(CTXWIN_SET_MODEL_RECOUNT) drops the counts the host recorded for
 * the old model: every message is recounted, as a window that never had them counts it. */
static void test_set_model_recount_drops_host_counts(void) {
    agent a = agent_new("claude-sonnet-4-5", 100000);
    agent fresh = agent_new("gpt-4o", 100000);
    live_session(&a, 4);
    for (int t = 0; t < 4; t++) {
        agent_turn(&fresh, t);
        CHECK_OK(ctxwin_window_end_turn(fresh.w, NULL));
    }
    ctxwin_turn_info info, want;
    CHECK_OK(ctxwin_window_turn_info(a.w, 2, &info));
    CHECK(info.tokens.tokens == usage_of(2) && info.tokens.exact);
    const char *model = "gpt-4o";
    CHECK_STATUS(ctxwin_window_set_model_with(a.w, model, strlen(model), 2), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(a.w), "flags") != NULL);
    CHECK_OK(ctxwin_window_turn_info(a.w, 2, &info));
    CHECK(info.tokens.tokens == usage_of(2)); /* refused: nothing changed */
    /* Without the flag the host's counts stay (ctxwin_window_set_model's rule). */
    CHECK_OK(ctxwin_window_set_model_with(a.w, model, strlen(model), 0));
    CHECK_OK(ctxwin_window_turn_info(a.w, 2, &info));
    CHECK(info.tokens.tokens == usage_of(2) && info.tokens.exact);
    /* A count recorded and not applied yet is dropped too. */
    CHECK_OK(ctxwin_window_set_turn_count(a.w, 3, (ctxwin_count){5, true}));
    CHECK_OK(ctxwin_window_set_model_with(a.w, model, strlen(model), CTXWIN_SET_MODEL_RECOUNT));
    for (size_t t = 0; t < 4; t++) {
        CHECK_OK(ctxwin_window_turn_info(a.w, t, &info));
        CHECK_OK(ctxwin_window_turn_info(fresh.w, t, &want));
        CHECK(info.tokens.tokens == want.tokens.tokens && info.tokens.exact && want.tokens.exact);
    }
    ctxwin_count total, fresh_total;
    CHECK_OK(ctxwin_window_end_turn(a.w, NULL));
    CHECK_OK(ctxwin_window_live_tokens(a.w, &total));
    CHECK_OK(ctxwin_window_live_tokens(fresh.w, &fresh_total));
    CHECK(total.tokens == fresh_total.tokens);
    CHECK_STATUS(ctxwin_window_set_model_with(NULL, model, strlen(model), 0), CTXWIN_STATUS_NULL_ARG);
    agent_free(&fresh);
    agent_free(&a);
}

/* Issue 27: ctxwin_turn_info gives the host ids of a turn's first and last messages. */
static void test_turn_host_ids(void) {
    agent a = agent_new("gpt-4o", 100000);
    live_session(&a, 3);
    block user = text_block(CTXWIN_KIND_USER, "and now?");
    CHECK_OK(agent_add(&a, &user, 1));
    ctxwin_turn_info info;
    for (size_t t = 0; t < 3; t++) {
        CHECK_OK(ctxwin_window_turn_info(a.w, t, &info));
        CHECK(info.has_host_ids);
        CHECK(info.first_host_id == a.msgs[t * 4].id && info.last_host_id == a.msgs[t * 4 + 3].id);
    }
    CHECK_OK(ctxwin_window_turn_info(a.w, 3, &info)); /* the running turn: its one message */
    CHECK(info.has_host_ids && info.first_host_id == a.msgs[12].id && info.last_host_id == a.msgs[12].id);
    /* A message pushed without a host id has none: the running turn's last message now. */
    CHECK_OK(push_str(a.w, CTXWIN_KIND_ASSISTANT, "plain"));
    CHECK_OK(ctxwin_window_turn_info(a.w, 3, &info));
    CHECK(!info.has_host_ids && info.first_host_id == 0 && info.last_host_id == 0);
    CHECK(info.message_count == 2);
    /* A host message after it: the turn's ends have host ids again. */
    block more = text_block(CTXWIN_KIND_ASSISTANT, "more");
    CHECK_OK(agent_add(&a, &more, 1));
    CHECK_OK(ctxwin_window_turn_info(a.w, 3, &info));
    CHECK(info.has_host_ids && info.first_host_id == a.msgs[12].id && info.last_host_id == a.msgs[13].id);
    agent_free(&a);
}

/* ctxwin_window_budget reads the budget in force, not the configured number: all the room
 * the context limit leaves under "auto" (it read 100000, the configured default, for a
 * Claude window of 200k), the default capped for a model of a smaller context (100000 read
 * for gpt-3.5-turbo, which enforces about 12k), less a pinned message or a summary. */
static void test_budget_is_the_one_in_force(void) {
    const char *automatic = "{\"history_budget\":\"auto\"}";
    int32_t budget = 0, before = 0;
    ctxwin_window *w = new_window("claude-sonnet-4-5");
    CHECK_OK(ctxwin_window_budget(w, &budget));
    CHECK(budget == 100000);
    CHECK_OK(ctxwin_window_configure(w, automatic, strlen(automatic)));
    CHECK_OK(ctxwin_window_budget(w, &budget));
    CHECK(budget > 190000 && budget < 200000);
    /* What every request sends besides the history comes out of it. */
    before = budget;
    CHECK_OK(ctxwin_window_set_overhead(w, 300, 200));
    CHECK_OK(ctxwin_window_budget(w, &budget));
    CHECK(budget == before - 500);
    ctxwin_window_free(w);
    ctxwin_window *small = new_window("gpt-3.5-turbo");
    CHECK_OK(ctxwin_window_budget(small, &before));
    CHECK(before > 10000 && before < 16385);
    CHECK_OK(ctxwin_window_configure(small, automatic, strlen(automatic)));
    CHECK_OK(ctxwin_window_budget(small, &budget));
    CHECK(budget == before);
    /* History fills exactly that much before the boundary moves. */
    for (int t = 0; t < 40 && ctxwin_window_start(small) == 0; t++) {
        CHECK_OK(ctxwin_window_push_counted(small, CTXWIN_KIND_USER, (ctxwin_count){500, true}));
        CHECK_OK(ctxwin_window_end_turn(small, NULL));
    }
    CHECK(ctxwin_window_start(small) > 0);
    ctxwin_count live;
    CHECK_OK(ctxwin_window_live_tokens(small, &live));
    CHECK(live.tokens <= budget);
    /* A number given is the budget while the model can take it. */
    CHECK_OK(ctxwin_window_set_budget(small, 5000));
    CHECK_OK(ctxwin_window_budget(small, &budget));
    CHECK(budget == 5000);
    ctxwin_window_free(small);
}

void suite_host_agent(void) {
    harness_run("host agent: recorded counts show at once", test_recorded_counts_show_at_once);
    harness_run("host agent: invalid tool parts kept or refused", test_invalid_tool_parts_kept_or_refused);
    harness_run("host agent: set_model_with recount drops host counts", test_set_model_recount_drops_host_counts);
    harness_run("host agent: turn host ids", test_turn_host_ids);
    harness_run("host agent: live session, counts after the fact", test_live_session);
    harness_run("host agent: rewind, replace in place, fork", test_rewind_replace_and_fork);
    harness_run("host agent: model switch keeps learned counts", test_model_switch_keeps_learned_counts);
    harness_run("host agent: restore a long session", test_restore_long_session);
    harness_run("host agent: truncate undoes a drop", test_truncate_undoes_a_drop);
    harness_run("host agent: bad input changes nothing", test_bad_input_changes_nothing);
    harness_run("host agent: binary output replaced", test_binary_output_replaced);
    harness_run("host agent: getters, reset, last usage", test_getters_reset_and_last_usage);
    harness_run("host agent: the budget in force", test_budget_is_the_one_in_force);
}
