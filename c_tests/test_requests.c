/* Requests a provider accepts: tool calls with their names, stored messages read back, the
 * `format` key and render_request, one assistant step as one message in every format. */
#include <stdlib.h>
#include "harness.h"

static ctxwin_status call(ctxwin_window *w, const char *id, const char *name, const char *args) {
    return ctxwin_window_push_tool_call(w, id, strlen(id), name, strlen(name), args, strlen(args), NULL);
}

static ctxwin_status result(ctxwin_window *w, const char *id, const char *text) {
    return ctxwin_window_push_tool(w, CTXWIN_KIND_TOOL_RESULT, id, strlen(id), text, strlen(text), NULL);
}

static ctxwin_status configure(ctxwin_window *w, const char *json) {
    return ctxwin_window_configure(w, json, strlen(json));
}

/* render_json into a static buffer ("" on failure). */
static const char *rendered(const ctxwin_window *w) {
    static char buf[4096];
    buf[0] = '\0';
    CHECK_OK(ctxwin_window_render_json(w, buf, sizeof buf, NULL));
    return buf;
}

/* render_request with `base` into a static buffer ("" on failure). */
static const char *request(const ctxwin_window *w, const char *base) {
    static char buf[4096];
    buf[0] = '\0';
    CHECK_OK(ctxwin_window_render_request(w, base, base == NULL ? 0 : strlen(base), buf, sizeof buf, NULL));
    return buf;
}

/* Two calls of one step pushed one by one, answered in the other order. */
static void parallel_step(ctxwin_window *w) {
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Read both."));
    CHECK_OK(call(w, "t1", "read", "{\"path\":\"a.c\"}"));
    CHECK_OK(call(w, "t2", "read", "{\"path\":\"b.c\"}"));
    CHECK_OK(result(w, "t2", "B"));
    CHECK_OK(result(w, "t1", "A"));
}

static void parallel_calls_render_as_one_assistant_message(void) {
    ctxwin_window *w = new_window("gpt-4o");
    parallel_step(w);
    CHECK(strcmp(rendered(w),
                 "[{\"role\":\"user\",\"content\":\"Read both.\"},"
                 "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":["
                 "{\"id\":\"t1\",\"type\":\"function\",\"function\":{\"name\":\"read\",\"arguments\":\"{\\\"path\\\":\\\"a.c\\\"}\"}},"
                 "{\"id\":\"t2\",\"type\":\"function\",\"function\":{\"name\":\"read\",\"arguments\":\"{\\\"path\\\":\\\"b.c\\\"}\"}}]},"
                 "{\"role\":\"tool\",\"tool_call_id\":\"t2\",\"content\":\"B\"},"
                 "{\"role\":\"tool\",\"tool_call_id\":\"t1\",\"content\":\"A\"}]") == 0);
    ctxwin_window_free(w);

    /* Anthropic: one assistant message of tool_use blocks, one user message of results. */
    w = new_window("claude-sonnet-4-5");
    parallel_step(w);
    CHECK(strcmp(rendered(w),
                 "[{\"role\":\"user\",\"content\":\"Read both.\"},"
                 "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"read\",\"input\":{\"path\":\"a.c\"}},"
                 "{\"type\":\"tool_use\",\"id\":\"t2\",\"name\":\"read\",\"input\":{\"path\":\"b.c\"}}]},"
                 "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t2\",\"content\":\"B\"},"
                 "{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":\"A\"}]}]") == 0);
    /* The next user message joins the results' message, after them. */
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Thanks."));
    CHECK(strstr(rendered(w), "\"content\":\"A\"},{\"type\":\"text\",\"text\":\"Thanks.\"}]}]") != NULL);
    ctxwin_window_free(w);

    /* Gemini: one model content of functionCall parts, one user content of responses. */
    w = new_window("gemini-2.5-pro");
    parallel_step(w);
    CHECK(strcmp(rendered(w),
                 "[{\"role\":\"user\",\"parts\":[{\"text\":\"Read both.\"}]},"
                 "{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"name\":\"read\",\"args\":{\"path\":\"a.c\"},\"id\":\"t1\"}},"
                 "{\"functionCall\":{\"name\":\"read\",\"args\":{\"path\":\"b.c\"},\"id\":\"t2\"}}]},"
                 "{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"name\":\"read\",\"response\":{\"result\":\"B\"},\"id\":\"t2\"}},"
                 "{\"functionResponse\":{\"name\":\"read\",\"response\":{\"result\":\"A\"},\"id\":\"t1\"}}]}]") == 0);
    ctxwin_window_free(w);
}

static void text_thinking_and_calls_of_a_step_are_one_message(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Fix it."));
    CHECK_OK(push_str(w, CTXWIN_KIND_THINKING, "Look first."));
    CHECK_OK(push_str(w, CTXWIN_KIND_ASSISTANT, "Reading."));
    CHECK_OK(call(w, "t1", "read", "{}"));
    CHECK(strstr(rendered(w), "{\"role\":\"assistant\",\"content\":\"Reading.\",\"tool_calls\":[{\"id\":\"t1\"") != NULL);
    /* The call is still running: a request rendered now answers it as cancelled. */
    CHECK(strstr(rendered(w), "{\"role\":\"tool\",\"tool_call_id\":\"t1\",\"content\":\"[Tool call cancelled") != NULL);
    ctxwin_window_free(w);
}

static void tool_calls_keep_their_name_and_arguments(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Open a.c"));
    ctxwin_count counted = {0, false}, reference = {0, false};
    CHECK_OK(ctxwin_window_push_tool_call(w, "t1", 2, "read_file", 9, "{\"path\":\"a.c\"}", 14, &counted));
    /* Counted as the providers count a call: its name and its arguments. */
    CHECK_OK(ctxwin_count_text("gpt-4o", 6, "read_file\n{\"path\":\"a.c\"}", 24, &reference));
    CHECK(counted.tokens == reference.tokens && counted.exact);
    CHECK(strstr(rendered(w), "\"function\":{\"name\":\"read_file\",\"arguments\":\"{\\\"path\\\":\\\"a.c\\\"}\"}") != NULL);
    /* The text route: name, newline, arguments, as push_tool's doc says. */
    CHECK_OK(result(w, "t1", "int main;"));
    CHECK_OK(ctxwin_window_push_tool(w, CTXWIN_KIND_TOOL_CALL, "t2", 2, "read_file\n{\"path\":\"b.c\"}", 24, NULL));
    ctxwin_message m;
    CHECK_OK(ctxwin_window_message_get(w, 3, &m));
    CHECK(m.name_len == 9 && memcmp(m.name, "read_file", 9) == 0);
    CHECK(m.text_len == 14 && memcmp(m.text, "{\"path\":\"b.c\"}", 14) == 0);
    /* Arguments without a name are refused, pointing to push_tool_call. */
    size_t before = ctxwin_window_message_count(w);
    CHECK_STATUS(ctxwin_window_push_tool(w, CTXWIN_KIND_TOOL_CALL, "t3", 2, "{\"path\":\"a.c\"}", 14, NULL),
                 CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "ctxwin_window_push_tool_call") != NULL);
    /* Bad input: empty name, name not UTF-8, arguments not an object where one is needed. */
    CHECK_STATUS(call(w, "t4", "", "{}"), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "name") != NULL);
    CHECK_STATUS(ctxwin_window_push_tool_call(w, "t4", 2, "\xff", 1, "{}", 2, NULL), CTXWIN_STATUS_INVALID_UTF8);
    CHECK(strstr(last_error(w), "name") != NULL);
    CHECK_STATUS(ctxwin_window_push_tool_call(w, "t4", 2, "x", 1, NULL, 2, NULL), CTXWIN_STATUS_NULL_ARG);
    CHECK(ctxwin_window_message_count(w) == before);
    ctxwin_window_free(w);

    w = new_window("claude-sonnet-4-5");
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Open a.c"));
    CHECK_STATUS(call(w, "t1", "read_file", "a.c"), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "arguments") != NULL && strstr(last_error(w), "object") != NULL);
    CHECK_OK(call(w, "t1", "read_file", "")); /* empty is {} */
    CHECK(strstr(rendered(w), "\"name\":\"read_file\",\"input\":{}") != NULL);
    CHECK(ctxwin_window_message_count(w) == 2);
    ctxwin_window_free(w);
}

static void messages_read_back_as_stored(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "hi"));
    CHECK_OK(call(w, "t1", "ls", "{}"));
    const char *json = "{\"role\":\"tool\",\"tool_call_id\":\"t1\",\"content\":\"a b\",\"x\":1}";
    CHECK_OK(ctxwin_window_push_json(w, json, strlen(json)));
    ctxwin_message m;
    CHECK_OK(ctxwin_window_message_get(w, 0, &m));
    CHECK(m.kind == CTXWIN_KIND_USER && m.text_len == 2 && memcmp(m.text, "hi", 2) == 0);
    CHECK(m.call_id == NULL && m.call_id_len == 0 && m.name == NULL && m.name_len == 0);
    CHECK_OK(ctxwin_window_message_get(w, 1, &m));
    CHECK(m.kind == CTXWIN_KIND_TOOL_CALL && m.call_id_len == 2 && memcmp(m.call_id, "t1", 2) == 0);
    CHECK(m.name_len == 2 && memcmp(m.name, "ls", 2) == 0 && m.text_len == 2 && m.tokens.tokens > 0);
    CHECK_OK(ctxwin_window_message_get(w, 2, &m));
    CHECK(m.kind == CTXWIN_KIND_TOOL_RESULT && m.call_id_len == 2 && m.text_len == 3);
    /* A JSON-pushed message's own JSON, byte for byte; "" for the others. */
    char buf[256];
    size_t needed = 0;
    CHECK_OK(ctxwin_window_message_json(w, 2, buf, sizeof buf, &needed));
    CHECK(strcmp(buf, json) == 0 && needed == strlen(json));
    CHECK_OK(ctxwin_window_message_json(w, 0, buf, sizeof buf, &needed));
    CHECK(buf[0] == '\0' && needed == 0);
    CHECK_STATUS(ctxwin_window_message_json(w, 3, buf, sizeof buf, &needed), CTXWIN_STATUS_OUT_OF_RANGE);
    m.kind = -1;
    CHECK_STATUS(ctxwin_window_message_get(w, 3, &m), CTXWIN_STATUS_OUT_OF_RANGE);
    CHECK(m.kind == -1 && strstr(last_error(w), "message 3") != NULL);
    CHECK_STATUS(ctxwin_window_message_get(w, 0, NULL), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_message_get(NULL, 0, &m), CTXWIN_STATUS_NULL_ARG);
    /* A counts-only window has no text to lend. */
    CHECK_OK(configure(w, "{\"retain_text\":false}"));
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "secret"));
    CHECK_OK(ctxwin_window_message_get(w, 3, &m));
    CHECK(m.text == NULL && m.text_len == 0 && m.tokens.tokens > 0);
    ctxwin_window_free(w);
}

static void tool_messages_without_ids_render_valid_json(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "List."));
    CHECK_OK(push_str(w, CTXWIN_KIND_TOOL_CALL, "ls\n{}"));
    CHECK_OK(push_str(w, CTXWIN_KIND_TOOL_RESULT, "a.c"));
    CHECK_OK(push_str(w, CTXWIN_KIND_TOOL_RESULT, "stray")); /* answers nothing: left out */
    CHECK(strcmp(rendered(w),
                 "[{\"role\":\"user\",\"content\":\"List.\"},"
                 "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"ctxwin_call_1\",\"type\":\"function\","
                 "\"function\":{\"name\":\"ls\",\"arguments\":\"{}\"}}]},"
                 "{\"role\":\"tool\",\"tool_call_id\":\"ctxwin_call_1\",\"content\":\"a.c\"}]") == 0);
    ctxwin_window_free(w);
}

static void the_format_key_fixes_the_wire_format(void) {
    /* A claude window fed text speaks Anthropic from the start, SYSTEM in `system`. */
    ctxwin_window *w = new_window("claude-sonnet-4-5");
    CHECK_OK(push_str(w, CTXWIN_KIND_SYSTEM, "Be brief."));
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "hi"));
    CHECK(strcmp(request(w, "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":512}"),
                 "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":512,\"system\":[{\"type\":\"text\",\"text\":\"Be brief.\"}],"
                 "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}") == 0);
    /* A message with cache_control is Anthropic's and keeps the window Anthropic; it joins
     * the user message before it (Anthropic alternates), cache_control kept. */
    const char *cached = "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"doc\",\"cache_control\":{\"type\":\"ephemeral\"}}]}";
    CHECK_OK(ctxwin_window_push_json(w, cached, strlen(cached)));
    CHECK(strstr(request(w, NULL),
                 "\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"},"
                 "{\"type\":\"text\",\"text\":\"doc\",\"cache_control\":{\"type\":\"ephemeral\"}}]}]") != NULL);
    CHECK_STATUS(configure(w, "{\"format\":\"gemini\"}"), CTXWIN_STATUS_MISMATCH);
    CHECK(strstr(last_error(w), "format") != NULL);
    CHECK_OK(configure(w, "{\"format\":\"anthropic\"}"));
    ctxwin_window_free(w);

    /* Set by the key: a JSON message of another recognisable format is MISMATCH. */
    w = new_window("gpt-4o");
    CHECK_STATUS(configure(w, "{\"format\":\"openai\"}"), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "'format'") != NULL);
    CHECK_OK(configure(w, "{\"format\":\"gemini\"}"));
    const char *chat = "{\"role\":\"tool\",\"tool_call_id\":\"a\",\"content\":\"x\"}";
    CHECK_STATUS(ctxwin_window_push_json(w, chat, strlen(chat)), CTXWIN_STATUS_MISMATCH);
    CHECK_OK(push_str(w, CTXWIN_KIND_SYSTEM, "Be brief."));
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "hi"));
    CHECK(strcmp(request(w, "{\"generationConfig\":{\"temperature\":0}}"),
                 "{\"generationConfig\":{\"temperature\":0},\"systemInstruction\":{\"parts\":[{\"text\":\"Be brief.\"}]},"
                 "\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"hi\"}]}]}") == 0);
    /* Saved and restored with the window. */
    size_t needed = 0;
    CHECK_OK(ctxwin_window_export(w, NULL, 0, &needed));
    char *saved = malloc(needed + 1);
    CHECK(saved != NULL);
    CHECK_OK(ctxwin_window_export(w, saved, needed + 1, NULL));
    ctxwin_window *restored = NULL;
    CHECK_OK(ctxwin_window_import(saved, needed, &restored));
    CHECK(restored != NULL && strstr(request(restored, NULL), "\"contents\":[") != NULL);
    CHECK_STATUS(ctxwin_window_push_json(restored, chat, strlen(chat)), CTXWIN_STATUS_MISMATCH);
    ctxwin_window_free(restored);
    free(saved);
    ctxwin_window_free(w);
}

static void render_request_keeps_the_base_and_refuses_bad_ones(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(push_str(w, CTXWIN_KIND_SYSTEM, "Be brief."));
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "hi"));
    CHECK(strcmp(request(w, "{\"model\":\"gpt-4o\",\"messages\":[],\"tools\":[]}"),
                 "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},"
                 "{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":[]}") == 0);
    CHECK(strcmp(request(w, NULL), "{\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"hi\"}]}") == 0);
    char buf[64] = "untouched";
    size_t needed = 0;
    const char *holding = "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}";
    CHECK_STATUS(ctxwin_window_render_request(w, holding, strlen(holding), buf, sizeof buf, &needed), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "'messages'") != NULL);
    CHECK_STATUS(ctxwin_window_render_request(w, "[1]", 3, buf, sizeof buf, &needed), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "base") != NULL);
    CHECK_STATUS(ctxwin_window_render_request(w, "{\"a\":", 5, buf, sizeof buf, &needed), CTXWIN_STATUS_PARSE);
    CHECK_STATUS(ctxwin_window_render_request(w, "\xff", 1, buf, sizeof buf, &needed), CTXWIN_STATUS_INVALID_UTF8);
    CHECK(strstr(last_error(w), "base") != NULL);
    CHECK_STATUS(ctxwin_window_render_request(w, NULL, 0, buf, 8, &needed), CTXWIN_STATUS_BUFFER_TOO_SMALL);
    CHECK(needed > 8 && strlen(buf) == 7);
    CHECK(ctxwin_window_message_count(w) == 2);
    ctxwin_window_free(w);
}

static void push_json_takes_a_whole_body_and_json_lines(void) {
    ctxwin_window *w = new_window("claude-sonnet-4-5");
    const char *body =
        "{\"model\":\"claude-sonnet-4-5\",\"system\":\"Be brief.\","
        "\"tools\":[{\"name\":\"ls\",\"description\":\"List\",\"input_schema\":{\"type\":\"object\"}}],"
        "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    CHECK_OK(ctxwin_window_push_json(w, body, strlen(body)));
    ctxwin_message m;
    CHECK(ctxwin_window_message_count(w) == 2);
    CHECK_OK(ctxwin_window_message_get(w, 0, &m));
    CHECK(m.kind == CTXWIN_KIND_SYSTEM && m.text_len == 9 && memcmp(m.text, "Be brief.", 9) == 0);
    ctxwin_count live = {0, false}, tools = {0, false};
    CHECK_OK(ctxwin_count_tools_json("claude-sonnet-4-5", 17,
                                     "[{\"name\":\"ls\",\"description\":\"List\",\"input_schema\":{\"type\":\"object\"}}]", 69, &tools));
    CHECK_OK(ctxwin_window_live_tokens(w, &live));
    CHECK(tools.tokens > 0 && live.tokens > tools.tokens);
    CHECK(strcmp(request(w, "{\"model\":\"claude-sonnet-4-5\"}"),
                 "{\"model\":\"claude-sonnet-4-5\",\"system\":[{\"type\":\"text\",\"text\":\"Be brief.\"}],"
                 "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}") == 0);
    /* A Gemini body is another format: nothing changes. (A Chat body would be accepted: the
     * window's plain user message fits Chat too, so nothing has fixed its format yet.) */
    const char *gemini = "{\"contents\":[{\"role\":\"model\",\"parts\":[{\"text\":\"x\"}]}],\"systemInstruction\":{\"parts\":[{\"text\":\"x\"}]}}";
    CHECK_STATUS(ctxwin_window_push_json(w, gemini, strlen(gemini)), CTXWIN_STATUS_MISMATCH);
    CHECK(ctxwin_window_message_count(w) == 2);
    /* JSON Lines: a bad line is named and nothing is pushed. */
    const char *lines = "{\"role\":\"assistant\",\"content\":\"Hello.\"}\n{\"role\":\"user\",\"content\":7}\n";
    CHECK_STATUS(ctxwin_window_push_json(w, lines, strlen(lines)), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "line 2") != NULL);
    CHECK(ctxwin_window_message_count(w) == 2);
    const char *good = "{\"role\":\"assistant\",\"content\":\"Hello.\"}\n{\"role\":\"user\",\"content\":\"Bye.\"}\n";
    CHECK_OK(ctxwin_window_push_json(w, good, strlen(good)));
    CHECK(ctxwin_window_message_count(w) == 4);
    ctxwin_window_free(w);
}

static int32_t live(const ctxwin_window *w) {
    ctxwin_count c = {0, false};
    CHECK_OK(ctxwin_window_live_tokens(w, &c));
    return c.tokens;
}

static ctxwin_status push_json(ctxwin_window *w, const char *json) {
    return ctxwin_window_push_json(w, json, strlen(json));
}

/* An Anthropic compaction block archives every turn before it; the block's message is the
 * summary in place, sent as pushed (cache_control kept); a rewind undoes it. */
static void an_anthropic_compaction_block_archives_the_turns_before_it(void) {
    ctxwin_window *w = new_window("claude-sonnet-4-5");
    for (int turn = 0; turn < 3; turn++) {
        CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Read the file and explain it."));
        CHECK_OK(call(w, turn == 0 ? "t0" : turn == 1 ? "t1" : "t2", "read", "{\"path\":\"a.c\"}"));
        CHECK_OK(result(w, turn == 0 ? "t0" : turn == 1 ? "t1" : "t2", "int main(void) { return 0; } /* a long file */"));
        CHECK_OK(ctxwin_window_end_turn(w, NULL));
    }
    int32_t before = live(w);
    size_t messages = ctxwin_window_message_count(w);
    const char *block = "{\"role\":\"assistant\",\"content\":[{\"type\":\"compaction\",\"content\":\"Summary: a.c returns 0.\","
                        "\"cache_control\":{\"type\":\"ephemeral\"}},{\"type\":\"text\",\"text\":\"Done.\"}]}";
    CHECK_OK(push_json(w, block));
    CHECK(ctxwin_window_compaction_count(w) == 1);
    char info[512];
    CHECK_OK(ctxwin_window_compaction_info(w, 0, info, sizeof info, NULL));
    CHECK(strstr(info, "\"provider\":true") != NULL);
    CHECK(strstr(info, "\"archived_turns\":3") != NULL);
    ctxwin_message m;
    CHECK_OK(ctxwin_window_message_get(w, messages, &m));
    CHECK(m.kind == CTXWIN_KIND_USER && m.text_len == strlen("Summary: a.c returns 0."));
    CHECK(live(w) < before);
    char expected[512];
    snprintf(expected, sizeof expected, "{\"messages\":[{\"role\":\"user\",\"content\":\"[Conversation start]\"},%s]}", block);
    CHECK(strcmp(request(w, NULL), expected) == 0);
    /* A compaction block whose content is empty is refused, naming the field. */
    const char *empty = "{\"role\":\"assistant\",\"content\":[{\"type\":\"compaction\",\"content\":\"\"}]}";
    CHECK_STATUS(push_json(w, empty), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "content[0].content") != NULL);
    CHECK(ctxwin_window_message_count(w) == messages + 2);
    CHECK_OK(ctxwin_window_truncate(w, messages));
    CHECK(ctxwin_window_compaction_count(w) == 0);
    ctxwin_window_free(w);
}

/* A Responses compaction item archives the items before it and is sent as pushed. */
static void a_responses_compaction_item_archives_the_items_before_it(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(configure(w, "{\"format\":\"openai_responses\"}"));
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Step one."));
    CHECK_OK(push_str(w, CTXWIN_KIND_ASSISTANT, "Done one."));
    CHECK_OK(ctxwin_window_end_turn(w, NULL));
    const char *item = "{\"type\":\"compaction\",\"id\":\"cmp_1\",\"encrypted_content\":\"gAAAAB\"}";
    CHECK_OK(push_json(w, item));
    CHECK(ctxwin_window_compaction_count(w) == 1);
    char expected[256];
    snprintf(expected, sizeof expected, "{\"input\":[%s]}", item);
    CHECK(strcmp(request(w, NULL), expected) == 0);
    CHECK_STATUS(push_json(w, "{\"type\":\"compaction\"}"), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "encrypted_content") != NULL);
    ctxwin_window_free(w);
}

/* The cancelled result a request adds for a call still open is in the live tokens. */
static void cancelled_results_sent_are_counted(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Run it."));
    int32_t before = live(w);
    ctxwin_count c;
    CHECK_OK(ctxwin_window_push_tool_call(w, "c1", 2, "run", 3, "{}", 2, &c));
    ctxwin_count cancelled;
    const char *text = "[Tool call cancelled: no result was recorded]";
    CHECK_OK(ctxwin_count_text("gpt-4o", 6, text, strlen(text), &cancelled));
    CHECK(live(w) == before + c.tokens + cancelled.tokens);
    CHECK(strstr(request(w, NULL), text) != NULL);
    CHECK_OK(result(w, "c1", "ok"));
    CHECK(strstr(request(w, NULL), text) == NULL);
    ctxwin_window_free(w);
}

/* Responses: a web search OpenAI ran takes no output; an interrupted function call gets one. */
static void responses_built_in_calls_take_no_output(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(configure(w, "{\"format\":\"openai_responses\"}"));
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Search."));
    CHECK_OK(push_json(w, "[{\"type\":\"web_search_call\",\"id\":\"ws_1\",\"status\":\"completed\"},"
                          "{\"type\":\"function_call\",\"call_id\":\"f1\",\"name\":\"read\",\"arguments\":\"{}\"}]"));
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Stop."));
    const char *body = request(w, NULL);
    CHECK(strstr(body, "{\"type\":\"function_call_output\",\"call_id\":\"f1\"") != NULL);
    CHECK(strstr(body, "\"call_id\":\"ws_1\"") == NULL);
    ctxwin_window_free(w);
}

/* Gemini: a user text after function responses joins their content (roles alternate). */
static void gemini_user_contents_merge(void) {
    ctxwin_window *w = new_window("gemini-2.5-pro");
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "List."));
    CHECK_OK(call(w, "ls", "ls", "{}"));
    CHECK_OK(result(w, "ls", "a b"));
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Thanks."));
    CHECK(strcmp(rendered(w),
                 "[{\"role\":\"user\",\"parts\":[{\"text\":\"List.\"}]},"
                 "{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"name\":\"ls\",\"args\":{}}}]},"
                 "{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"name\":\"ls\",\"response\":{\"result\":\"a b\"}}},"
                 "{\"text\":\"Thanks.\"}]}]") == 0);
    ctxwin_window_free(w);
}

/* How many times `needle` occurs in `haystack`. */
static int occurrences(const char *haystack, const char *needle) {
    int n = 0;
    for (const char *at = strstr(haystack, needle); at != NULL; at = strstr(at + 1, needle)) {
        n++;
    }
    return n;
}

/* Gemini sends functionCall parts without ids: three parallel calls of one function, and one
 * more in the next step, are four calls answered by four responses (each response answers
 * the oldest open call of its name in its step), the step's thought signature kept. They
 * were keyed by the function's name: one call and one response were sent, the others and the
 * signature lost, push OK. */
static void gemini_calls_of_one_function_are_all_sent(void) {
    ctxwin_window *w = new_window("gemini-2.5-pro");
    CHECK_OK(push_json(w, "{\"role\":\"user\",\"parts\":[{\"text\":\"Read a, b and c.\"}]}"));
    CHECK_OK(push_json(w, "{\"role\":\"model\",\"parts\":["
                          "{\"functionCall\":{\"name\":\"read_file\",\"args\":{\"path\":\"a\"}},\"thoughtSignature\":\"SIG\"},"
                          "{\"functionCall\":{\"name\":\"read_file\",\"args\":{\"path\":\"b\"}}},"
                          "{\"functionCall\":{\"name\":\"read_file\",\"args\":{\"path\":\"c\"}}}]}"));
    CHECK_OK(push_json(w, "{\"role\":\"user\",\"parts\":["
                          "{\"functionResponse\":{\"name\":\"read_file\",\"response\":{\"r\":\"A\"}}},"
                          "{\"functionResponse\":{\"name\":\"read_file\",\"response\":{\"r\":\"B\"}}},"
                          "{\"functionResponse\":{\"name\":\"read_file\",\"response\":{\"r\":\"C\"}}}]}"));
    CHECK_OK(push_json(w, "{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"name\":\"read_file\",\"args\":{\"path\":\"d\"}}}]}"));
    CHECK_OK(push_json(w, "{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"name\":\"read_file\",\"response\":{\"r\":\"D\"}}}]}"));
    CHECK_OK(push_json(w, "{\"role\":\"model\",\"parts\":[{\"text\":\"Done.\"}]}"));
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "Thanks."));
    const char *body = request(w, "{}");
    CHECK(occurrences(body, "\"functionCall\"") == 4);
    CHECK(occurrences(body, "\"functionResponse\"") == 4);
    CHECK(occurrences(body, "\"thoughtSignature\":\"SIG\"") == 1);
    CHECK(strstr(body, "\"path\":\"b\"") != NULL && strstr(body, "\"r\":\"C\"") != NULL && strstr(body, "\"path\":\"d\"") != NULL);
    CHECK(strstr(body, "cancelled") == NULL);
    ctxwin_window_free(w);
}

/* format "auto": a message every format reads (a plain user message) fixes none, so a Claude
 * model behind an OpenAI-compatible gateway takes Chat at its first tool_calls. The first
 * message fixed Anthropic's format, and the tool_calls were MISMATCH. */
static void an_ambiguous_first_message_does_not_fix_the_format(void) {
    ctxwin_window *w = new_window("claude-sonnet-4-5");
    CHECK_OK(push_json(w, "{\"role\":\"user\",\"content\":\"List the files.\"}"));
    CHECK(strcmp(rendered(w), "[{\"role\":\"user\",\"content\":\"List the files.\"}]") == 0);
    CHECK_OK(push_json(w, "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
                          "\"function\":{\"name\":\"ls\",\"arguments\":\"{}\"}}]}"));
    CHECK_OK(push_json(w, "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"a.c\"}"));
    CHECK(strstr(request(w, "{}"), "\"messages\":[{\"role\":\"user\",\"content\":\"List the files.\"},"
                                   "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":") != NULL);
    /* Now it is fixed: Anthropic's blocks are another format's. */
    CHECK_STATUS(push_json(w, "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"c1\"}]}"),
                 CTXWIN_STATUS_MISMATCH);
    CHECK_STATUS(configure(w, "{\"format\":\"anthropic\"}"), CTXWIN_STATUS_MISMATCH);
    ctxwin_window_free(w);
}

void suite_requests(void) {
    harness_run("push_json_takes_a_whole_body_and_json_lines", push_json_takes_a_whole_body_and_json_lines);
    harness_run("parallel_calls_render_as_one_assistant_message", parallel_calls_render_as_one_assistant_message);
    harness_run("text_thinking_and_calls_of_a_step_are_one_message", text_thinking_and_calls_of_a_step_are_one_message);
    harness_run("tool_calls_keep_their_name_and_arguments", tool_calls_keep_their_name_and_arguments);
    harness_run("messages_read_back_as_stored", messages_read_back_as_stored);
    harness_run("tool_messages_without_ids_render_valid_json", tool_messages_without_ids_render_valid_json);
    harness_run("the_format_key_fixes_the_wire_format", the_format_key_fixes_the_wire_format);
    harness_run("render_request_keeps_the_base_and_refuses_bad_ones", render_request_keeps_the_base_and_refuses_bad_ones);
    harness_run("an_anthropic_compaction_block_archives_the_turns_before_it", an_anthropic_compaction_block_archives_the_turns_before_it);
    harness_run("a_responses_compaction_item_archives_the_items_before_it", a_responses_compaction_item_archives_the_items_before_it);
    harness_run("cancelled_results_sent_are_counted", cancelled_results_sent_are_counted);
    harness_run("responses_built_in_calls_take_no_output", responses_built_in_calls_take_no_output);
    harness_run("gemini_user_contents_merge", gemini_user_contents_merge);
    harness_run("gemini_calls_of_one_function_are_all_sent", gemini_calls_of_one_function_are_all_sent);
    harness_run("an_ambiguous_first_message_does_not_fix_the_format", an_ambiguous_first_message_does_not_fix_the_format);
}
