/* The summary slot: when to ask, the request, the answer, every rejection, and the
 * compaction records. */
#include <stdlib.h>
#include "harness.h"

/* These tests archive the first turn too: the task is not pinned ("pin_task": false). */
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

static int32_t live(const ctxwin_window *w) {
    ctxwin_count c = {-1, false};
    CHECK_OK(ctxwin_window_live_tokens(w, &c));
    return c.tokens;
}

/* A window whose sliding budget pruned some of its turns. */
static ctxwin_window *pruned_session(void) {
    ctxwin_window *w = new_window("gpt-4o");
    const char *config = "{\"history_budget\": 1000, \"summary_budget\": 60}";
    CHECK_OK(ctxwin_window_configure(w, config, strlen(config)));
    CHECK_OK(push_str(w, CTXWIN_KIND_SYSTEM, "You are a coding agent."));
    for (int i = 0; i < 6; i++) {
        CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Fix the failing test in src/parser.rs"));
        CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_TOOL_RESULT, counted(300)));
        CHECK_OK(ctxwin_window_end_turn(w, NULL));
    }
    return w;
}

/* The request, in a malloc'd buffer, via the length query. */
static char *request(ctxwin_window *w) {
    size_t needed = 0;
    CHECK_OK(ctxwin_window_summary_request(w, NULL, 0, &needed));
    char *buf = malloc(needed + 1);
    CHECK_OK(ctxwin_window_summary_request(w, buf, needed + 1, &needed));
    return buf;
}

static void pruned_turns_are_summarised_and_archived(void) {
    ctxwin_window *w = pruned_session();
    CHECK(ctxwin_window_first_live_turn(w) > 0);
    CHECK(ctxwin_window_needs_summary(w));
    char *prompt = request(w);
    CHECK(strstr(prompt, "src/parser.rs") != NULL);
    CHECK(strstr(prompt, "Original task") != NULL && strstr(prompt, "[pending]") != NULL);
    CHECK(strstr(prompt, "You are a coding agent.") == NULL); /* pinned: still sent */
    free(prompt);
    int32_t before = live(w);
    uint32_t gen = ctxwin_window_generation(w);
    const char *summary = "Original task: fix src/parser.rs. Ledger: [done] read it; [pending] fix.";
    CHECK_OK(ctxwin_window_set_summary(w, gen, summary, strlen(summary)));
    CHECK(ctxwin_window_generation(w) != gen);
    CHECK(!ctxwin_window_needs_summary(w));
    CHECK(live(w) > before); /* the pruned turns were not sent; the summary now is */
    char text[256];
    size_t needed = 0;
    CHECK_OK(ctxwin_window_summary(w, text, sizeof text, &needed));
    CHECK(strcmp(text, summary) == 0 && needed == strlen(summary));
    CHECK(ctxwin_window_compaction_count(w) == 1);
    CHECK(ctxwin_window_message_count(w) == 13); /* nothing archived is deleted */
    ctxwin_window_free(w);
}

static void compaction_records_are_json(void) {
    ctxwin_window *w = pruned_session();
    free(request(w));
    CHECK_OK(ctxwin_window_set_summary(w, ctxwin_window_generation(w), "Fixed parser.", 13));
    char json[1024];
    size_t needed = 0;
    CHECK_OK(ctxwin_window_compaction_info(w, 0, json, sizeof json, &needed));
    CHECK(strstr(json, "\"number\":1") != NULL);
    CHECK(strstr(json, "\"summary\":\"Fixed parser.\"") != NULL);
    CHECK(strstr(json, "\"first_archived\":1") != NULL); /* after the pinned system prompt */
    CHECK(strstr(json, "\"messages_archived\":") != NULL && strstr(json, "\"tokens_before\":") != NULL);
    /* No clear stage: nothing was cleared before the summary. */
    CHECK(strstr(json, "\"cleared_results\":0") != NULL && strstr(json, "\"cleared_tokens\":0") != NULL);
    const char *stamp = strstr(json, "\"timestamp\":");
    CHECK(stamp != NULL && strtoll(stamp + 12, NULL, 10) > 1600000000LL); /* a plausible Unix time */
    CHECK_STATUS(ctxwin_window_compaction_info(w, 1, json, sizeof json, &needed), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK(strstr(last_error(w), "compaction record 1") != NULL);
    CHECK_STATUS(ctxwin_window_compaction_info(w, 0, json, 4, &needed), CTXWIN_STATUS_BUFFER_TOO_SMALL);
    ctxwin_window_free(w);
}

static void every_rejection_keeps_the_history(void) {
    ctxwin_window *w = pruned_session();
    uint32_t gen = ctxwin_window_generation(w);
    /* No request pending yet. */
    CHECK_STATUS(ctxwin_window_set_summary(w, gen, "x", 1), CTXWIN_STATUS_MISMATCH);
    CHECK(strstr(last_error(w), "no summary request") != NULL);
    /* A length query remembers nothing; a too-small buffer neither. */
    char small[8];
    CHECK_STATUS(ctxwin_window_summary_request(w, small, sizeof small, NULL), CTXWIN_STATUS_BUFFER_TOO_SMALL);
    CHECK_STATUS(ctxwin_window_set_summary(w, gen, "x", 1), CTXWIN_STATUS_MISMATCH);
    free(request(w));
    size_t start = ctxwin_window_start(w);
    int32_t tokens = live(w);
    CHECK_STATUS(ctxwin_window_set_summary(w, gen + 1, "x", 1), CTXWIN_STATUS_MISMATCH);
    CHECK(strstr(last_error(w), "stale") != NULL);
    CHECK_STATUS(ctxwin_window_set_summary(w, gen, NULL, 0), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "empty") != NULL);
    CHECK_STATUS(ctxwin_window_set_summary(w, gen, "  \n", 3), CTXWIN_STATUS_INVALID_ARG);
    char big[2048];
    memset(big, 0, sizeof big);
    for (size_t i = 0; i + 6 < sizeof big; i += 6) {
        memcpy(big + i, "words ", 6);
    }
    CHECK_STATUS(ctxwin_window_set_summary(w, gen, big, strlen(big)), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK(strstr(last_error(w), "summary_budget") != NULL);
    const char bad[] = {'o', (char)0xFF};
    CHECK_STATUS(ctxwin_window_set_summary(w, gen, bad, sizeof bad), CTXWIN_STATUS_INVALID_UTF8);
    CHECK_STATUS(ctxwin_window_set_summary(w, gen, NULL, 4), CTXWIN_STATUS_NULL_ARG);
    CHECK(ctxwin_window_compaction_count(w) == 0 && ctxwin_window_start(w) == start && live(w) == tokens);
    /* The pending request survives rejections: the right answer is still taken. */
    CHECK_OK(ctxwin_window_set_summary(w, gen, "ok", 2));
    /* Larger than what it replaces. */
    ctxwin_window *tiny = new_window("gpt-4o");
    const char *config = "{\"history_budget\": 3, \"summary_budget\": 500}";
    CHECK_OK(ctxwin_window_configure(tiny, config, strlen(config)));
    for (int i = 0; i < 2; i++) {
        CHECK_OK(ctxwin_window_push_counted(tiny, CTXWIN_KIND_USER, counted(2)));
        CHECK_OK(ctxwin_window_end_turn(tiny, NULL));
    }
    free(request(tiny));
    const char *wordy = "A summary far longer than the two tokens it would replace.";
    CHECK_STATUS(ctxwin_window_set_summary(tiny, ctxwin_window_generation(tiny), wordy, strlen(wordy)),
                 CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK(strstr(last_error(tiny), "replaces") != NULL);
    CHECK(ctxwin_window_compaction_count(tiny) == 0);
    /* Nothing to summarise. */
    ctxwin_window *fresh = new_window("gpt-4o");
    CHECK(!ctxwin_window_needs_summary(fresh));
    CHECK_STATUS(ctxwin_window_summary_request(fresh, NULL, 0, NULL), CTXWIN_STATUS_OUT_OF_RANGE);
    /* NULL handles. */
    CHECK(!ctxwin_window_needs_summary(NULL));
    CHECK(ctxwin_window_compaction_count(NULL) == 0);
    CHECK_STATUS(ctxwin_window_summary_request(NULL, NULL, 0, NULL), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_set_summary(NULL, 0, "x", 1), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_summary(NULL, NULL, 0, NULL), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_compaction_info(NULL, 0, NULL, 0, NULL), CTXWIN_STATUS_NULL_ARG);
    ctxwin_window_free(fresh);
    ctxwin_window_free(tiny);
    ctxwin_window_free(w);
}

/* The summary strategy archives the oldest turns, as many as bring the view within low water
 * of its limit (here 0.5 of 8000 less the auto output reserve of 2000: 3000 tokens), and keeps
 * the recent turns whole. */
static void summary_strategy_archives_the_oldest_turns_down_to_low_water(void) {
    ctxwin_window *w = new_window("gpt-4o");
    const char *config = "{\"strategy\": \"summary\", \"context_limit\": 8000, \"threshold\": 0.5, \"low_water\": 0.5, "
                         "\"summary_budget\": 500}";
    CHECK_OK(ctxwin_window_configure(w, config, strlen(config)));
    int turns = 0;
    while (!ctxwin_window_needs_summary(w)) {
        CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Run the test suite and report failures"));
        CHECK_OK(ctxwin_window_push_counted(w, CTXWIN_KIND_TOOL_RESULT, counted(500)));
        CHECK_OK(ctxwin_window_end_turn(w, NULL));
        turns++;
        if (turns > 20) break;
    }
    CHECK(live(w) >= 4000 && ctxwin_window_first_live_turn(w) == 0);
    free(request(w));
    const char *summary = "Original task: run the tests. Ledger: [done] ran them 8 times.";
    CHECK_OK(ctxwin_window_set_summary(w, ctxwin_window_generation(w), summary, strlen(summary)));
    size_t first = ctxwin_window_first_live_turn(w);
    CHECK(first > 0 && first + 1 < ctxwin_window_turn_count(w));
    /* Within one turn (~507 tokens) under the low water, the summary in place included. */
    CHECK(live(w) <= 3000 + 100 && live(w) > 3000 - 507);
    CHECK(!ctxwin_window_needs_summary(w));
    ctxwin_window_free(w);
}

/* summary_request "conversation": the request is the conversation as render_json gives it,
 * then one user instruction; set_summary answers it as it answers the standalone prompt. */
static void conversation_request_is_the_rendered_conversation_plus_an_instruction(void) {
    ctxwin_window *w = new_window("gpt-4o");
    const char *config = "{\"strategy\": \"summary\", \"context_limit\": 8000, \"threshold\": 0.5, "
                         "\"summary_budget\": 500, \"format\": \"openai_chat\", \"summary_request\": \"conversation\", "
                         "\"low_water\": 0.01}"; /* archives every turn but the running one */
    CHECK_OK(ctxwin_window_configure(w, config, strlen(config)));
    char output[2048];
    for (size_t i = 0; i + 1 < sizeof output; i++) output[i] = (char)(i % 48 == 47 ? '\n' : 'a' + (char)(i % 26));
    output[sizeof output - 1] = '\0';
    for (int turn = 0; turn < 40 && !ctxwin_window_needs_summary(w); turn++) {
        CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Run the test suite and report failures"));
        CHECK_OK(push_str(w, CTXWIN_KIND_ASSISTANT, output));
        CHECK_OK(ctxwin_window_end_turn(w, NULL));
    }
    CHECK(ctxwin_window_needs_summary(w));
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Now the newest task."));
    size_t needed = 0;
    CHECK_OK(ctxwin_window_render_json(w, NULL, 0, &needed));
    char *sent = malloc(needed + 1);
    CHECK_OK(ctxwin_window_render_json(w, sent, needed + 1, &needed));
    char *req = request(w);
    /* The conversation array, its closing bracket replaced by one more message. */
    CHECK(strncmp(req, sent, needed - 1) == 0);
    const char *instruction = ",{\"role\":\"user\",\"content\":\"Stop working";
    CHECK(strncmp(req + needed - 1, instruction, strlen(instruction)) == 0);
    CHECK(strstr(req + needed, "begins \\\"Now the newest task.\\\"") != NULL);
    CHECK(req[strlen(req) - 1] == ']');
    free(sent);
    free(req);
    int32_t before = live(w);
    const char *summary = "Original task: run the tests. Ledger: [done] ran them.";
    CHECK_OK(ctxwin_window_set_summary(w, ctxwin_window_generation(w), summary, strlen(summary)));
    CHECK(ctxwin_window_first_live_turn(w) == ctxwin_window_turn_count(w) - 1);
    CHECK(live(w) < before);
    /* A bad value is refused, naming the key, and changes nothing. */
    const char *bad = "{\"summary_request\": \"chat\"}";
    CHECK_STATUS(ctxwin_window_configure(w, bad, strlen(bad)), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "summary_request") != NULL);
    ctxwin_window_free(w);
}

/* Occurrences of `needle` in `text`. */
static size_t occurrences(const char *text, const char *needle) {
    size_t n = 0;
    for (const char *at = strstr(text, needle); at != NULL; at = strstr(at + 1, needle)) n++;
    return n;
}

/* Configures `w` with `config`, pushes a task, then read_file steps of 1,600-byte outputs
 * (`src/m0.rs`, `src/m1.rs`, ...) with a prepare after each, until a summary is due: one
 * turn. Returns the task. */
static const char *one_task_loop_until_a_summary_is_due(ctxwin_window *w, const char *config) {
    CHECK_OK(ctxwin_window_configure(w, config, strlen(config)));
    const char *task = "Fix the failing build in src/main.rs";
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, task));
    char output[1600];
    for (size_t i = 0; i + 1 < sizeof output; i++) output[i] = (char)(i % 40 == 39 ? '\n' : 'a' + (char)(i % 23));
    output[sizeof output - 1] = '\0';
    ctxwin_request_info info;
    for (int steps = 0; steps < 200 && !ctxwin_window_needs_summary(w); steps++) {
        char id[32], args[64];
        snprintf(id, sizeof id, "call_%d", steps);
        snprintf(args, sizeof args, "{\"path\": \"src/m%d.rs\"}", steps);
        CHECK_OK(ctxwin_window_push_tool_call(w, id, strlen(id), "read_file", 9, args, strlen(args), NULL));
        CHECK_OK(ctxwin_window_push_tool(w, CTXWIN_KIND_TOOL_RESULT, id, strlen(id), output, strlen(output), NULL));
        CHECK_OK(ctxwin_window_prepare(w, &info));
    }
    CHECK(ctxwin_window_needs_summary(w));
    CHECK(ctxwin_window_turn_count(w) == 1);
    return task;
}

/* Renders the request body on `base` (to free), checking that it sends `task` and then the
 * summary ("Original task: fix src/main.rs ..."); `needed` gets its length when not NULL. */
static char *body_with_task_then_summary(ctxwin_window *w, const char *base, const char *task, size_t *needed) {
    size_t len = 0;
    CHECK_OK(ctxwin_window_render_request(w, base, strlen(base), NULL, 0, &len));
    char *body = malloc(len + 1);
    CHECK_OK(ctxwin_window_render_request(w, base, strlen(base), body, len + 1, &len));
    const char *at_task = strstr(body, task), *at_summary = strstr(body, "Original task: fix src/main.rs");
    CHECK(at_task != NULL && at_summary != NULL && at_task < at_summary);
    if (needed != NULL) *needed = len;
    return body;
}

/* A one-task tool loop under `summary` (one user message, then tool steps): the summary
 * covers the loop's oldest steps and stands where they were, right after the task, which
 * stays sent; the newest steps follow without a step marker, every call with its result.
 * The record and the view survive export and import. */
static void a_one_task_loop_gets_a_summary_of_its_oldest_steps(void) {
    ctxwin_window *w = new_window("gpt-4o");
    const char *config = "{\"pin_task\": true, \"strategy\": \"summary\", \"context_limit\": 8000, "
                         "\"summary_budget\": 300, \"format\": \"anthropic\", \"keep_recent_steps\": 2}";
    const char *task = one_task_loop_until_a_summary_is_due(w, config);
    char *prompt = request(w);
    CHECK(strstr(prompt, "src/m0.rs") != NULL); /* the oldest step is summarised */
    free(prompt);
    const char *summary = "Original task: fix src/main.rs. Ledger: [done] read the first modules.";
    CHECK_OK(ctxwin_window_set_summary(w, ctxwin_window_generation(w), summary, strlen(summary)));
    CHECK(!ctxwin_window_needs_summary(w));
    char json[1024];
    CHECK_OK(ctxwin_window_compaction_info(w, 0, json, sizeof json, NULL));
    CHECK(strstr(json, "\"archived_turns\":0") != NULL);
    /* The view: the task, the summary, then the steps from start, a tool call first. */
    size_t start = ctxwin_window_start(w);
    CHECK(start > 2);
    ctxwin_item item;
    CHECK_OK(ctxwin_window_view_get(w, 0, &item));
    CHECK(item.type == CTXWIN_ITEM_MESSAGE && item.kind == CTXWIN_KIND_USER && item.index == 0);
    CHECK_OK(ctxwin_window_view_get(w, 1, &item));
    CHECK(item.type == CTXWIN_ITEM_SYNTHETIC && item.text_len == strlen(summary) &&
          memcmp(item.text, summary, item.text_len) == 0);
    CHECK_OK(ctxwin_window_view_get(w, 2, &item));
    CHECK(item.type == CTXWIN_ITEM_MESSAGE && item.kind == CTXWIN_KIND_TOOL_CALL && item.index == start);
    /* Anthropic: the summary joins the task's user message; every tool_use has its result. */
    const char *base = "{\"model\": \"claude-sonnet-4-5\", \"max_tokens\": 256}";
    size_t needed = 0;
    char *body = body_with_task_then_summary(w, base, task, &needed);
    const char *at_task = strstr(body, task), *at_summary = strstr(body, "Original task: fix src/main.rs");
    CHECK(occurrences(at_task, "\"role\"") == occurrences(at_summary, "\"role\"")); /* one message */
    /* Roles alternate: user (task and summary), then assistant calls and user results. */
    CHECK(occurrences(body, "\"role\":\"user\"") == occurrences(body, "\"role\":\"assistant\"") + 1);
    CHECK(occurrences(body, "\"type\":\"tool_use\"") == occurrences(body, "\"type\":\"tool_result\""));
    CHECK(strstr(body, "[Context compacted") == NULL); /* no step marker */
    /* Exported and imported: the same record, the same body. */
    size_t len = 0;
    char *doc = export_json(w, &len);
    ctxwin_window *restored = NULL;
    CHECK_OK(ctxwin_window_import(doc, len, &restored));
    char again[1024];
    CHECK_OK(ctxwin_window_compaction_info(restored, 0, again, sizeof again, NULL));
    CHECK(strcmp(again, json) == 0);
    char *body2 = malloc(needed + 1);
    CHECK_OK(ctxwin_window_render_request(restored, base, strlen(base), body2, needed + 1, NULL));
    CHECK(strcmp(body, body2) == 0);
    free(body2);
    free(body);
    free(doc);
    ctxwin_window_free(restored);
    ctxwin_window_free(w);
}

/* Under `sliding`, a one-task tool loop asks for a summary of the steps it pruned: the
 * request covers the oldest step, the record ends inside the one turn, and the body sends
 * the task, then the summary, then the newest steps, every call with its result. */
static void sliding_summarises_the_pruned_steps_of_a_one_task_loop(void) {
    ctxwin_window *w = new_window("gpt-4o");
    const char *config = "{\"strategy\": \"sliding\", \"history_budget\": 6000, \"summary_budget\": 300, "
                         "\"format\": \"openai_chat\", \"keep_recent_steps\": 2}";
    const char *task = one_task_loop_until_a_summary_is_due(w, config);
    char *prompt = request(w);
    CHECK(strstr(prompt, "src/m0.rs") != NULL);
    free(prompt);
    const char *summary = "Original task: fix src/main.rs. Ledger: [done] read the first modules.";
    CHECK_OK(ctxwin_window_set_summary(w, ctxwin_window_generation(w), summary, strlen(summary)));
    char json[1024];
    CHECK_OK(ctxwin_window_compaction_info(w, 0, json, sizeof json, NULL));
    CHECK(strstr(json, "\"archived_turns\":0") != NULL);
    char *body = body_with_task_then_summary(w, "{\"model\": \"gpt-4o\"}", task, NULL);
    CHECK(strstr(body, "src/m0.rs") == NULL); /* the summarised step is not sent */
    CHECK(occurrences(body, "\"role\":\"tool\"") == occurrences(body, "\"type\":\"function\""));
    free(body);
    ctxwin_window_free(w);
}

/* One step of a one-task tool loop, then the request prepared, as an agent does. */
static void tool_step(ctxwin_window *w, int call) {
    char id[16], output[2048];
    size_t n = 0;
    snprintf(id, sizeof id, "c%d", call);
    for (int line = 0; line < 30; line++) {
        n += (size_t)snprintf(output + n, sizeof output - n, "line %d of output %d\n", line, call);
    }
    CHECK_OK(ctxwin_window_push_tool_call(w, id, strlen(id), "read", 4, "{}", 2, NULL));
    CHECK_OK(ctxwin_window_push_tool(w, CTXWIN_KIND_TOOL_RESULT, id, strlen(id), output, n, NULL));
    ctxwin_request_info info;
    CHECK_OK(ctxwin_window_prepare(w, &info));
}

/* The agent asks for a summary and goes on working while its LLM writes it: the answer,
 * with the generation read when the request was written, is taken one, two or three steps
 * late (it was refused every time as soon as one step came: the generation moved with
 * every request). The view only grew meanwhile, so the generation stayed. */
static void a_summary_answered_steps_late_is_taken(void) {
    for (int during = 1; during <= 3; during++) {
        ctxwin_window *w = new_window("gpt-4o");
        const char *config = "{\"pin_task\": true, \"strategy\": \"summary\", \"context_limit\": 10000, "
                             "\"summary_budget\": 500}";
        CHECK_OK(ctxwin_window_configure(w, config, strlen(config)));
        CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Fix the parser."));
        int call = 0, taken = 0, refused = 0;
        for (int i = 0; i < 300; i++) {
            tool_step(w, call++);
            if (!ctxwin_window_needs_summary(w)) continue;
            free(request(w));
            uint32_t gen = ctxwin_window_generation(w);
            for (int k = 0; k < during; k++) tool_step(w, call++);
            CHECK(ctxwin_window_generation(w) == gen);
            const char *summary = "Original task: fix the parser. Ledger: [done] read the files.";
            if (ctxwin_window_set_summary(w, gen, summary, strlen(summary)) == CTXWIN_OK) {
                taken++;
            } else {
                refused++;
            }
        }
        CHECK(refused == 0 && taken > 10);
        ctxwin_window_free(w);
    }
}

/* The start of the instruction message a conversation request ends with: the last message
 * boundary ("," then an object) before the instruction's text, in every format. */
static const char *instruction_message(const char *req) {
    const char *text = strstr(req, "Stop working on the task now");
    if (text == NULL) return NULL;
    const char *at = NULL;
    for (const char *p = req; p < text; p++)
        if (p[0] == ',' && p[1] == '{') at = p;
    return at;
}

/* A one-task loop's window at 8,000 tokens with the summary strategy and conversation
 * summary requests in `format`, configured with `extra` keys too, its task pushed. */
static ctxwin_window *conversation_loop(const char *format, const char *extra) {
    ctxwin_window *w = new_window("gpt-4o");
    char config[256];
    snprintf(config, sizeof config,
             "{\"strategy\": \"summary\", \"context_limit\": 8000, \"format\": \"%s\", "
             "\"summary_request\": \"conversation\", %s}",
             format, extra);
    CHECK_OK(ctxwin_window_configure(w, config, strlen(config)));
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Fix the failing build in src/main.rs"));
    return w;
}

/* A one-task loop with "history_budget": "auto" at 8,000 tokens, in each request format:
 * output_reserve and summary_budget are both 2,000, so the view leaves no room for the
 * instruction. The agent asks as soon as a summary is due, after a step's results: every
 * conversation request is given, some cut after a step (a prefix of the conversation as
 * render_json sends it, ending where a message ends), and each answer is taken. */
static void a_conversation_request_at_the_limit_is_cut_after_a_step(void) {
    const char *formats[] = {"openai_chat", "openai_responses", "anthropic", "gemini"};
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
        ctxwin_window *w = conversation_loop(formats[f], "\"history_budget\": \"auto\"");
        int summaries = 0, cut = 0;
        ctxwin_request_info info;
        for (int step = 0; step < 120; step++) {
            CHECK_OK(ctxwin_window_prepare(w, &info));
            char id[32], args[64], output[8000];
            snprintf(id, sizeof id, "call_%d", step);
            snprintf(args, sizeof args, "{\"path\": \"src/m%d.rs\"}", step);
            /* One read in seven is a whole file (about 2,000 tokens). */
            size_t len = step % 7 == 0 ? sizeof output - 1 : 300 + (size_t)step * 37 % 900;
            for (size_t i = 0; i < len; i++)
                output[i] = (char)(i % 40 == 39 ? '\n' : i % 8 == 7 ? ' ' : 'a' + (char)((i * 7 + (size_t)step) % 23));
            output[len] = '\0';
            CHECK_OK(ctxwin_window_push_tool_call(w, id, strlen(id), "read_file", 9, args, strlen(args), NULL));
            CHECK_OK(ctxwin_window_push_tool(w, CTXWIN_KIND_TOOL_RESULT, id, strlen(id), output, len, NULL));
            if (!ctxwin_window_needs_summary(w)) continue;
            size_t needed = 0;
            CHECK_OK(ctxwin_window_render_json(w, NULL, 0, &needed));
            char *sent = malloc(needed + 1);
            CHECK_OK(ctxwin_window_render_json(w, sent, needed + 1, &needed));
            char *req = request(w);
            const char *at = instruction_message(req);
            CHECK(at != NULL);
            size_t shown = at != NULL ? (size_t)(at - req) : 0;
            /* What comes before the instruction is the conversation sent, up to a message's end. */
            CHECK(shown <= needed - 1 && strncmp(req, sent, shown) == 0);
            CHECK(sent[shown] == ',' || sent[shown] == ']');
            cut += sent[shown] == ',';
            free(sent);
            free(req);
            const char *summary = "Original task: fix src/main.rs. Ledger: [done] read the sources.";
            CHECK_OK(ctxwin_window_set_summary(w, ctxwin_window_generation(w), summary, strlen(summary)));
            summaries++;
        }
        if (!(summaries > 5 && cut > 0)) fprintf(stderr, "%s: %d summaries, %d cut\n", formats[f], summaries, cut);
        CHECK(summaries > 5 && cut > 0);
        ctxwin_window_free(w);
    }
}

/* A one-task loop whose first read is most of an 8,000-token window, with summary_budget
 * 3,000 above output_reserve 500: no cut of the conversation holds that step and leaves
 * room for the answer. The request, in each format, is the conversation before the steps
 * to archive (a prefix of what render_json sends; here none), then the steps as a
 * transcript, the task and the large output clipped; the answer archives the read. */
static void a_step_too_large_for_any_cut_comes_as_a_transcript(void) {
    const char *formats[] = {"openai_chat", "openai_responses", "anthropic", "gemini"};
    static char output[11001];
    for (size_t i = 0; i + 1 < sizeof output; i++)
        output[i] = (char)(i % 40 == 39 ? '\n' : i % 8 == 7 ? ' ' : 'a' + (char)(i * 7 % 23));
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
        ctxwin_window *w = conversation_loop(formats[f], "\"output_reserve\": 500, \"summary_budget\": 3000");
        ctxwin_request_info info;
        for (int step = 0; !ctxwin_window_needs_summary(w) && step < 40; step++) {
            CHECK_OK(ctxwin_window_prepare(w, &info));
            char id[32];
            snprintf(id, sizeof id, "call_%d", step);
            size_t len = step == 0 ? sizeof output - 1 : 400;
            CHECK_OK(ctxwin_window_push_tool_call(w, id, strlen(id), "read_file", 9, "{}", 2, NULL));
            CHECK_OK(ctxwin_window_push_tool(w, CTXWIN_KIND_TOOL_RESULT, id, strlen(id), output, len, NULL));
        }
        CHECK(ctxwin_window_needs_summary(w));
        int32_t before = live(w);
        size_t needed = 0;
        CHECK_OK(ctxwin_window_render_json(w, NULL, 0, &needed));
        char *sent = malloc(needed + 1);
        CHECK_OK(ctxwin_window_render_json(w, sent, needed + 1, &needed));
        char *req = request(w);
        CHECK(strstr(req, "The work to summarise:\\n") != NULL); /* JSON-escaped */
        CHECK(strstr(req, "[message 0] USER:\\nFix the failing build") != NULL);
        CHECK(strstr(req, "read_file") != NULL && strlen(req) < sizeof output);
        /* What comes before the instruction is the conversation sent, up to a message's end. */
        const char *at = instruction_message(req);
        size_t shown = at != NULL ? (size_t)(at - req) : 1;
        CHECK(strncmp(req, sent, shown) == 0);
        free(sent);
        free(req);
        const char *summary = "Original task: fix src/main.rs. Ledger: [done] read the sources.";
        CHECK_OK(ctxwin_window_set_summary(w, ctxwin_window_generation(w), summary, strlen(summary)));
        CHECK(live(w) < before / 2);
        CHECK_OK(ctxwin_window_prepare(w, &info));
        ctxwin_window_free(w);
    }
}

void suite_summary(void) {
    harness_run("pruned_turns_are_summarised_and_archived", pruned_turns_are_summarised_and_archived);
    harness_run("compaction_records_are_json", compaction_records_are_json);
    harness_run("every_rejection_keeps_the_history", every_rejection_keeps_the_history);
    harness_run("summary_strategy_archives_the_oldest_turns_down_to_low_water", summary_strategy_archives_the_oldest_turns_down_to_low_water);
    harness_run("conversation_request_is_the_rendered_conversation_plus_an_instruction",
                conversation_request_is_the_rendered_conversation_plus_an_instruction);
    harness_run("a_one_task_loop_gets_a_summary_of_its_oldest_steps", a_one_task_loop_gets_a_summary_of_its_oldest_steps);
    harness_run("sliding_summarises_the_pruned_steps_of_a_one_task_loop", sliding_summarises_the_pruned_steps_of_a_one_task_loop);
    harness_run("a_summary_answered_steps_late_is_taken", a_summary_answered_steps_late_is_taken);
    harness_run("a_conversation_request_at_the_limit_is_cut_after_a_step", a_conversation_request_at_the_limit_is_cut_after_a_step);
    harness_run("a_step_too_large_for_any_cut_comes_as_a_transcript", a_step_too_large_for_any_cut_comes_as_a_transcript);
}
