/* Provider JSON: push_json, render_json and count_tools_json, with every error path. */
#include <stdlib.h>
#include "harness.h"

static const char CHAT[] =
    "[{\"role\":\"system\",\"content\":\"Be brief.\"},\n"
    " {\"role\":\"user\",\"content\":\"List src/\"},\n"
    " {\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
    "\"function\":{\"name\":\"ls\",\"arguments\":\"{}\"}}],\"x_unknown\":1},\n"
    " {\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"a.rs b.rs\"},\n"
    " {\"role\":\"assistant\",\"content\":\"Two files.\"}]";

static ctxwin_status push_json(ctxwin_window *w, const char *json) {
    return ctxwin_window_push_json(w, json, strlen(json));
}

static void chat_messages_become_ledger_messages_and_render_verbatim(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(push_json(w, CHAT));
    CHECK(ctxwin_window_message_count(w) == 5);
    CHECK(ctxwin_window_turn_count(w) == 1);
    size_t needed = 0;
    CHECK_OK(ctxwin_window_render_json(w, NULL, 0, &needed));
    char *buf = malloc(needed + 1);
    CHECK(buf != NULL);
    CHECK_OK(ctxwin_window_render_json(w, buf, needed + 1, &needed));
    /* The elements come back byte for byte (unknown fields kept), joined by commas. */
    CHECK(strstr(buf, "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\"") != NULL);
    CHECK(strstr(buf, "\"x_unknown\":1}") != NULL);
    CHECK(buf[0] == '[' && buf[needed - 1] == ']' && strlen(buf) == needed);
    free(buf);
    ctxwin_window_free(w);
}

static void counts_equal_the_text_counts(void) {
    ctxwin_window *w = new_window("gpt-4o");
    const char *msg = "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hello there\"}]}";
    CHECK_OK(push_json(w, msg));
    ctxwin_count live, text;
    CHECK_OK(ctxwin_window_live_tokens(w, &live));
    CHECK_OK(ctxwin_count_text("gpt-4o", 6, "hello there", 11, &text));
    CHECK(live.tokens == text.tokens && live.exact);
    ctxwin_window_free(w);
}

static void a_split_anthropic_message_renders_only_its_live_blocks(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(ctxwin_window_configure(w, "{\"pin_task\":false}", 18)); /* the first question may go */
    const char *json =
        "[{\"role\":\"user\",\"content\":\"first question, rather long so that it weighs\"},"
        "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"ls\",\"input\":{}}]},"
        "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":\"x\"},"
        "{\"type\":\"text\",\"text\":\"second\"}]}]";
    CHECK_OK(push_json(w, json));
    CHECK(ctxwin_window_message_count(w) == 4);
    CHECK(ctxwin_window_turn_count(w) == 2);
    CHECK_OK(ctxwin_window_set_budget(w, 0));
    CHECK(ctxwin_window_start(w) == 3);
    char buf[256];
    CHECK_OK(ctxwin_window_render_json(w, buf, sizeof buf, NULL));
    CHECK(strcmp(buf, "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"second\"}]}]") == 0);
    ctxwin_window_free(w);
}

static void errors_name_the_element_and_field_and_push_nothing(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "plain"));
    const char bad_json[] = "[{\"role\":\"user\",\n\"content\":}]";
    CHECK_STATUS(push_json(w, bad_json), CTXWIN_STATUS_PARSE);
    CHECK(strstr(last_error(w), "line 2 column") != NULL);
    const char bad_role[] = "[{\"role\":\"user\",\"content\":\"ok\"},{\"role\":\"wizard\",\"content\":\"x\"}]";
    CHECK_STATUS(push_json(w, bad_role), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "element 1") != NULL);
    CHECK(strstr(last_error(w), "'role'") != NULL);
    CHECK_STATUS(push_json(w, "[{\"role\":\"user\",\"content\":[{\"type\":\"text\"}]}]"), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "content[0].text") != NULL);
    CHECK_STATUS(push_json(w, "[1]"), CTXWIN_STATUS_INVALID_ARG);
    CHECK_STATUS(push_json(w, "\"text\""), CTXWIN_STATUS_INVALID_ARG);
    const char bad_utf8[] = {'{', '"', (char)0xFF, '"', '}'};
    CHECK_STATUS(ctxwin_window_push_json(w, bad_utf8, sizeof bad_utf8), CTXWIN_STATUS_INVALID_UTF8);
    CHECK_STATUS(ctxwin_window_push_json(w, NULL, 4), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_push_json(NULL, "{}", 2), CTXWIN_STATUS_NULL_ARG);
    CHECK(ctxwin_window_message_count(w) == 1);
    /* One format per window. */
    CHECK_OK(push_json(w, "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"a\",\"name\":\"ls\",\"input\":{}}]}"));
    CHECK_OK(push_json(w, "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"a\",\"content\":\"x\"}]}"));
    CHECK_STATUS(push_json(w, "{\"role\":\"model\",\"parts\":[{\"text\":\"hi\"}]}"), CTXWIN_STATUS_MISMATCH);
    CHECK(strstr(last_error(w), "Gemini") != NULL);
    CHECK(ctxwin_window_message_count(w) == 3);
    ctxwin_window_free(w);
}

static void render_reports_small_buffers_and_null_arguments(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(push_json(w, CHAT));
    char small[8];
    size_t needed = 0;
    CHECK_STATUS(ctxwin_window_render_json(w, small, sizeof small, &needed), CTXWIN_STATUS_BUFFER_TOO_SMALL);
    CHECK(needed > sizeof small && strlen(small) == sizeof small - 1);
    CHECK_STATUS(ctxwin_window_render_json(w, NULL, 5, &needed), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_window_render_json(NULL, small, sizeof small, &needed), CTXWIN_STATUS_NULL_ARG);
    ctxwin_window_free(w);
    /* A counts-only window cannot rebuild text it did not keep. */
    w = new_window("gpt-4o");
    CHECK_OK(ctxwin_window_configure(w, "{\"retain_text\":false}", 21));
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "hi"));
    CHECK_STATUS(ctxwin_window_render_json(w, small, sizeof small, &needed), CTXWIN_STATUS_UNSUPPORTED);
    CHECK(strstr(last_error(w), "retain_text") != NULL);
    ctxwin_window_free(w);
}

static void plain_messages_render_in_the_pushed_format(void) {
    ctxwin_window *w = new_window("gpt-4o");
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "hi"));
    char buf[128];
    CHECK_OK(ctxwin_window_render_json(w, buf, sizeof buf, NULL));
    CHECK(strcmp(buf, "[{\"role\":\"user\",\"content\":\"hi\"}]") == 0);
    CHECK_OK(push_json(w, "{\"role\":\"model\",\"parts\":[{\"text\":\"hello\"}]}"));
    CHECK_OK(ctxwin_window_render_json(w, buf, sizeof buf, NULL));
    CHECK(strcmp(buf, "[{\"role\":\"user\",\"parts\":[{\"text\":\"hi\"}]},{\"role\":\"model\",\"parts\":[{\"text\":\"hello\"}]}]") == 0);
    ctxwin_window_free(w);
}

/* Anthropic refuses text blocks without non-whitespace text: a whitespace-only message is
 * left out like an empty one, and the user messages around it merge. */
static void anthropic_leaves_out_whitespace_only_text(void) {
    ctxwin_window *w = new_window("claude-sonnet-4-5");
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "hi"));
    CHECK_OK(push_str(w, CTXWIN_KIND_ASSISTANT, "  "));
    CHECK_OK(push_str(w, CTXWIN_KIND_USER, "next"));
    char buf[256];
    CHECK_OK(ctxwin_window_render_json(w, buf, sizeof buf, NULL));
    CHECK(strcmp(buf, "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"},"
                      "{\"type\":\"text\",\"text\":\"next\"}]}]") == 0);
    ctxwin_window_free(w);
}

static void tool_definitions_are_counted(void) {
    const char tools[] = "[{\"type\":\"function\",\"function\":{\"name\":\"ls\",\"description\":\"List\","
                         "\"parameters\":{\"type\":\"object\"}}}]";
    ctxwin_count tools_count = {-1, true}, text = {0, false};
    CHECK_OK(ctxwin_count_tools_json("gpt-4o", 6, tools, strlen(tools), &tools_count));
    CHECK_OK(ctxwin_count_text("gpt-4o", 6, "ls\nList\n{\"type\":\"object\"}", 25, &text));
    CHECK(tools_count.tokens == text.tokens && !tools_count.exact);
    ctxwin_count untouched = {-1, true};
    CHECK_STATUS(ctxwin_count_tools_json("gpt-4o", 6, "[", 1, &untouched), CTXWIN_STATUS_PARSE);
    CHECK_STATUS(ctxwin_count_tools_json("gpt-4o", 6, "[{\"function\":{}}]", 17, &untouched), CTXWIN_STATUS_INVALID_ARG);
    CHECK_STATUS(ctxwin_count_tools_json("gpt-4o", 6, "5", 1, &untouched), CTXWIN_STATUS_INVALID_ARG);
    /* Any object was counted as a built-in tool: {"hello":"world"}, or a whole request body. */
    const char *hello = "{\"hello\":\"world\"}";
    CHECK_STATUS(ctxwin_count_tools_json("gpt-4o", 6, hello, strlen(hello), &untouched), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(thread_last_error(), "field 'tools[0]': is not a tool definition: expected") != NULL);
    const char *body = "{\"model\":\"gpt-4o\",\"messages\":[],\"tools\":[]}";
    CHECK_STATUS(ctxwin_count_tools_json("gpt-4o", 6, body, strlen(body), &untouched), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(thread_last_error(), "pass the value of its \"tools\"") != NULL);
    const char *twice = "[{\"name\":\"ls\",\"name\":\"rm\"}]";
    CHECK_STATUS(ctxwin_count_tools_json("gpt-4o", 6, twice, strlen(twice), &untouched), CTXWIN_STATUS_PARSE);
    CHECK(strstr(thread_last_error(), "the key \"name\" is given twice") != NULL);
    CHECK_STATUS(ctxwin_count_tools_json("gpt-4o", 6, tools, strlen(tools), NULL), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_count_tools_json(NULL, 6, tools, strlen(tools), &untouched), CTXWIN_STATUS_NULL_ARG);
    const char bad_utf8[] = {'[', (char)0xC3, ']'};
    CHECK_STATUS(ctxwin_count_tools_json("gpt-4o", 6, bad_utf8, sizeof bad_utf8, &untouched), CTXWIN_STATUS_INVALID_UTF8);
    CHECK(untouched.tokens == -1);
}

/* Issue 26 item 3: a tool result whose id no call carries (a mistyped id) is refused by
 * push_json in every format, naming the id, as push_tool refuses it; nothing is appended.
 * The right id is taken, and so is the wrong one under "invalid_tool_parts":"keep", flagged
 * and left out of the request. */
static void a_mistyped_result_id_is_refused_in_every_format(void) {
    static const struct {
        const char *settings, *user, *call, *bad_result, *good_result;
    } formats[] = {
        {"{\"format\":\"openai_chat\"}", "{\"role\":\"user\",\"content\":\"List src/\"}",
         "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_a1\",\"type\":\"function\","
         "\"function\":{\"name\":\"ls\",\"arguments\":\"{}\"}}]}",
         "{\"role\":\"tool\",\"tool_call_id\":\"call_al\",\"content\":\"a.rs\"}",
         "{\"role\":\"tool\",\"tool_call_id\":\"call_a1\",\"content\":\"a.rs\"}"},
        {"{\"format\":\"openai_responses\"}", "{\"role\":\"user\",\"content\":\"List src/\"}",
         "{\"type\":\"function_call\",\"call_id\":\"call_a1\",\"name\":\"ls\",\"arguments\":\"{}\"}",
         "{\"type\":\"function_call_output\",\"call_id\":\"call_al\",\"output\":\"a.rs\"}",
         "{\"type\":\"function_call_output\",\"call_id\":\"call_a1\",\"output\":\"a.rs\"}"},
        {"{\"format\":\"anthropic\"}", "{\"role\":\"user\",\"content\":\"List src/\"}",
         "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"call_a1\",\"name\":\"ls\",\"input\":{}}]}",
         "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"call_al\",\"content\":\"a.rs\"}]}",
         "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"call_a1\",\"content\":\"a.rs\"}]}"},
        {"{\"format\":\"gemini\"}", "{\"role\":\"user\",\"parts\":[{\"text\":\"List src/\"}]}",
         "{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"id\":\"call_a1\",\"name\":\"ls\",\"args\":{}}}]}",
         "{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"id\":\"call_al\",\"name\":\"ls\",\"response\":{\"output\":\"a.rs\"}}}]}",
         "{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"id\":\"call_a1\",\"name\":\"ls\",\"response\":{\"output\":\"a.rs\"}}}]}"},
    };
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
        ctxwin_window *w = new_window("gpt-4o");
        CHECK_OK(ctxwin_window_configure(w, formats[f].settings, strlen(formats[f].settings)));
        CHECK_OK(push_json(w, formats[f].user));
        CHECK_OK(push_json(w, formats[f].call));
        size_t count = ctxwin_window_message_count(w);
        CHECK_STATUS(push_json(w, formats[f].bad_result), CTXWIN_STATUS_INVALID_ARG);
        CHECK(strstr(last_error(w), "'call_al'") != NULL);
        CHECK(ctxwin_window_message_count(w) == count);
        /* push_tool refuses the same mistake the same way. */
        CHECK_STATUS(ctxwin_window_push_tool(w, CTXWIN_KIND_TOOL_RESULT, "call_al", 7, "a.rs", 4, NULL),
                     CTXWIN_STATUS_INVALID_ARG);
        CHECK(strstr(last_error(w), "'call_al'") != NULL);
        CHECK(ctxwin_window_message_count(w) == count);
        CHECK_OK(push_json(w, formats[f].good_result));
        CHECK(ctxwin_window_message_count(w) == count + 1);
        ctxwin_window_free(w);

        /* Kept under "invalid_tool_parts":"keep": flagged, not sent. */
        w = new_window("gpt-4o");
        CHECK_OK(ctxwin_window_configure(w, formats[f].settings, strlen(formats[f].settings)));
        const char keep[] = "{\"invalid_tool_parts\":\"keep\"}";
        CHECK_OK(ctxwin_window_configure(w, keep, strlen(keep)));
        CHECK_OK(push_json(w, formats[f].user));
        CHECK_OK(push_json(w, formats[f].call));
        count = ctxwin_window_message_count(w);
        CHECK_OK(push_json(w, formats[f].bad_result));
        CHECK(ctxwin_window_message_count(w) == count + 1);
        bool kept = false;
        CHECK_OK(ctxwin_window_kept_as_text(w, count, &kept));
        CHECK(kept);
        CHECK_OK(ctxwin_window_kept_as_text(w, count - 1, &kept));
        CHECK(!kept);
        char body[4096];
        CHECK_OK(ctxwin_window_render_json(w, body, sizeof body, NULL));
        CHECK(strstr(body, "call_al") == NULL);
        ctxwin_window_free(w);
    }
}

/* Issue 26 item 2: each provider's whole (not streamed) response object pushes the message(s)
 * it holds and nothing else of it: a Chat completion its choices[0].message, a Responses
 * response the items of its output, an Anthropic Message its role and content (its id, type,
 * model, stop_reason and usage were sent back inside `messages`, which Anthropic refuses), a
 * Gemini GenerateContentResponse its candidates[0].content. Before, the first two were refused
 * ("field 'role' is missing") and the last was called a message of the other formats. */
static void whole_responses_push_the_message_they_hold(void) {
    static const struct {
        const char *name, *model, *settings, *user, *response;
        const char *sent; /* how the request starts */
        size_t added;
    } cases[] = {
        {"OpenAI Chat Completions", "gpt-4o", "{\"format\":\"openai_chat\"}", "{\"role\":\"user\",\"content\":\"hi\"}",
         "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"created\":1,\"model\":\"gpt-4o\","
         "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\","
         "\"type\":\"function\",\"function\":{\"name\":\"ls\",\"arguments\":\"{}\"}}],\"refusal\":null},"
         "\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":5,\"total_tokens\":14}}",
         "[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\","
         "\"type\":\"function\",\"function\":{\"name\":\"ls\",\"arguments\":\"{}\"}}],\"refusal\":null}",
         1},
        {"OpenAI Responses", "gpt-5", "{\"format\":\"openai_responses\"}", "{\"role\":\"user\",\"content\":\"hi\"}",
         "{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"completed\",\"model\":\"gpt-5\",\"output\":["
         "{\"type\":\"reasoning\",\"id\":\"rs_1\",\"summary\":[],\"encrypted_content\":\"gAAAA\"},"
         "{\"type\":\"message\",\"id\":\"msg_1\",\"status\":\"completed\",\"role\":\"assistant\","
         "\"content\":[{\"type\":\"output_text\",\"text\":\"Listing.\",\"annotations\":[]}]},"
         "{\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":\"c1\",\"name\":\"ls\",\"arguments\":\"{}\"}],"
         "\"usage\":{\"input_tokens\":9,\"output_tokens\":5}}",
         "[{\"role\":\"user\",\"content\":\"hi\"},{\"type\":\"reasoning\",\"id\":\"rs_1\",\"summary\":[],"
         "\"encrypted_content\":\"gAAAA\"},{\"type\":\"message\",\"id\":\"msg_1\",\"status\":\"completed\","
         "\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"Listing.\",\"annotations\":[]}]},"
         "{\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":\"c1\",\"name\":\"ls\",\"arguments\":\"{}\"}",
         3},
        {"Anthropic Messages", "claude-sonnet-4-5", "{\"format\":\"anthropic\"}", "{\"role\":\"user\",\"content\":\"hi\"}",
         "{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":["
         "{\"type\":\"thinking\",\"thinking\":\"ls it\",\"signature\":\"sig\"},"
         "{\"type\":\"tool_use\",\"id\":\"c1\",\"name\":\"ls\",\"input\":{}}],"
         "\"stop_reason\":\"tool_use\",\"stop_sequence\":null,\"usage\":{\"input_tokens\":9,\"output_tokens\":5}}",
         "[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":["
         "{\"type\":\"thinking\",\"thinking\":\"ls it\",\"signature\":\"sig\"},"
         "{\"type\":\"tool_use\",\"id\":\"c1\",\"name\":\"ls\",\"input\":{}}]}",
         2},
        {"Gemini", "gemini-2.5-pro", "{\"format\":\"gemini\"}", "{\"role\":\"user\",\"parts\":[{\"text\":\"hi\"}]}",
         "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"name\":\"ls\",\"args\":{}},"
         "\"thoughtSignature\":\"U0lH\"}]},\"finishReason\":\"STOP\",\"index\":0}],"
         "\"usageMetadata\":{\"promptTokenCount\":9,\"candidatesTokenCount\":5},\"modelVersion\":\"gemini-2.5-pro\"}",
         "[{\"role\":\"user\",\"parts\":[{\"text\":\"hi\"}]},{\"role\":\"model\",\"parts\":[{\"functionCall\":"
         "{\"name\":\"ls\",\"args\":{}},\"thoughtSignature\":\"U0lH\"}]}",
         1},
    };
    for (size_t f = 0; f < sizeof cases / sizeof cases[0]; f++) {
        /* Once in a window whose format is set, once in one that learns it from the response. */
        for (int fixed = 0; fixed < 2; fixed++) {
            ctxwin_window *w = new_window(cases[f].model);
            if (fixed) {
                CHECK_OK(ctxwin_window_configure(w, cases[f].settings, strlen(cases[f].settings)));
            }
            CHECK_OK(push_json(w, cases[f].user));
            CHECK_OK(push_json(w, cases[f].response));
            CHECK(ctxwin_window_message_count(w) == 1 + cases[f].added);
            /* The messages pushed, then the cancelled result of the call still open. */
            char body[1024];
            CHECK_OK(ctxwin_window_render_json(w, body, sizeof body, NULL));
            size_t prefix = strlen(cases[f].sent);
            if (strncmp(body, cases[f].sent, prefix) != 0 || body[prefix] != ',') {
                fprintf(stderr, "  case %zu sends %s\n", f, body);
                CHECK(0);
            }
            CHECK(strstr(body, "usage") == NULL && strstr(body, "\"model\":") == NULL && strstr(body, "stop_reason") == NULL);
            ctxwin_window_free(w);
        }
    }

    /* Several answers to choose from, or none: refused saying what to push; nothing pushed. */
    static const struct {
        const char *model, *response, *says;
    } refused[] = {
        {"gpt-4o",
         "{\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"a\"}},"
         "{\"index\":1,\"message\":{\"role\":\"assistant\",\"content\":\"b\"}}]}",
         "2 choices: push the one the conversation goes on with, choices[i].message"},
        {"gpt-4o", "{\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}",
         "build one message from the deltas"},
        {"gpt-5", "{\"object\":\"response\",\"status\":\"failed\",\"output\":[]}", "'output' is empty (status failed)"},
        {"gemini-2.5-pro",
         "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"a\"}]}},"
         "{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"b\"}]}}]}",
         "2 candidates: push the one the conversation goes on with, candidates[i].content"},
        {"gemini-2.5-pro", "{\"candidates\":[{\"finishReason\":\"SAFETY\"}]}", "no content (finishReason SAFETY)"},
        {"claude-sonnet-4-5",
         "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\","
         "\"content\":[],\"model\":\"claude-sonnet-4-5\"}}",
         "is an Anthropic stream event, a piece of an answer"},
    };
    for (size_t r = 0; r < sizeof refused / sizeof refused[0]; r++) {
        ctxwin_window *w = new_window(refused[r].model);
        CHECK_OK(push_str(w, CTXWIN_KIND_USER, "hi"));
        CHECK_STATUS(push_json(w, refused[r].response), CTXWIN_STATUS_INVALID_ARG);
        if (strstr(last_error(w), refused[r].says) == NULL) {
            fprintf(stderr, "  refusal %zu says: %s\n", r, last_error(w));
            CHECK(0);
        }
        CHECK(ctxwin_window_message_count(w) == 1);
        ctxwin_window_free(w);
    }

    /* A response of another format than the window's is a mismatch, as its message would be. */
    for (size_t f = 0; f < sizeof cases / sizeof cases[0]; f++) {
        size_t other = (f + 1) % (sizeof cases / sizeof cases[0]);
        ctxwin_window *w = new_window(cases[other].model);
        CHECK_OK(ctxwin_window_configure(w, cases[other].settings, strlen(cases[other].settings)));
        CHECK_OK(push_str(w, CTXWIN_KIND_USER, "hi"));
        CHECK_STATUS(push_json(w, cases[f].response), CTXWIN_STATUS_MISMATCH);
        char says[160];
        snprintf(says, sizeof says, " of the response has the shape of %s but this window holds %s messages", cases[f].name,
                 cases[other].name);
        if (strstr(last_error(w), says) == NULL) {
            fprintf(stderr, "  mismatch %zu says: %s\n", f, last_error(w));
            CHECK(0);
        }
        CHECK(ctxwin_window_message_count(w) == 1);
        ctxwin_window_free(w);
    }
}

/* keep_thinking: an Anthropic tool loop of three steps, each with a signed thinking block,
 * sent with keep_thinking 1: the first two steps' thinking blocks are left out whole (text
 * and signature), their tool_use blocks stay, the newest keeps its thinking as pushed; the
 * view is smaller than with all thinking kept. A negative keep_thinking is refused, naming
 * the key, and changes nothing. */
static void old_thinking_is_left_out_whole(void) {
    ctxwin_window *w = new_window("claude-sonnet-4-5");
    CHECK_OK(ctxwin_window_configure(w, "{\"format\":\"anthropic\"}", strlen("{\"format\":\"anthropic\"}")));
    CHECK_OK(push_json(w, "{\"role\":\"user\",\"content\":\"Fix the build.\"}"));
    for (int step = 0; step < 3; step++) {
        char json[512];
        snprintf(json, sizeof json,
                 "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"Plan %d: read the "
                 "file, then the tests, then decide what to change.\",\"signature\":\"SIG%dxyz\"},"
                 "{\"type\":\"tool_use\",\"id\":\"toolu_%d\",\"name\":\"read_file\",\"input\":{\"path\":\"f%d\"}}]}",
                 step, step, step, step);
        CHECK_OK(push_json(w, json));
        snprintf(json, sizeof json,
                 "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_%d\","
                 "\"content\":\"contents of f%d\"}]}",
                 step, step);
        CHECK_OK(push_json(w, json));
    }
    ctxwin_count all, kept;
    CHECK_OK(ctxwin_window_live_tokens(w, &all));
    CHECK_OK(ctxwin_window_configure(w, "{\"keep_thinking\":1}", strlen("{\"keep_thinking\":1}")));
    CHECK_OK(ctxwin_window_live_tokens(w, &kept));
    CHECK(kept.tokens < all.tokens);
    char buf[4096];
    CHECK_OK(ctxwin_window_render_json(w, buf, sizeof buf, NULL));
    CHECK(strstr(buf, "SIG0xyz") == NULL && strstr(buf, "Plan 0") == NULL);
    CHECK(strstr(buf, "SIG1xyz") == NULL && strstr(buf, "Plan 1") == NULL);
    CHECK(strstr(buf, "{\"type\":\"thinking\",\"thinking\":\"Plan 2: read the file, then the tests, then decide what "
                      "to change.\",\"signature\":\"SIG2xyz\"}") != NULL);
    CHECK(strstr(buf, "toolu_0") != NULL && strstr(buf, "toolu_1") != NULL && strstr(buf, "toolu_2") != NULL);
    uint32_t generation = ctxwin_window_generation(w);
    CHECK_STATUS(ctxwin_window_configure(w, "{\"keep_thinking\":-1}", strlen("{\"keep_thinking\":-1}")), CTXWIN_STATUS_INVALID_ARG);
    CHECK(strstr(last_error(w), "'keep_thinking'") != NULL);
    CHECK(ctxwin_window_generation(w) == generation);
    ctxwin_count again;
    CHECK_OK(ctxwin_window_live_tokens(w, &again));
    CHECK(again.tokens == kept.tokens);
    ctxwin_window_free(w);
}

/* Issue 26 item 9: tiered's cut of a long Gemini tool result keeps its functionResponse's
 * response object and its fields, cut inside them; before, the response became a JSON
 * string cut in its middle under a new key, {"result": "{\"output\":\"line 1\\n... "}. */
static void a_cut_gemini_result_keeps_its_response_fields(void) {
    ctxwin_window *w = new_window("gemini-2.5-pro");
    const char settings[] = "{\"strategy\":\"tiered\",\"tool_output_max_lines\":2,\"pin_task\":false}";
    CHECK_OK(ctxwin_window_configure(w, settings, strlen(settings)));
    CHECK_OK(push_json(w, "{\"role\":\"user\",\"parts\":[{\"text\":\"Run the tests\"}]}"));
    CHECK_OK(push_json(w, "{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"name\":\"run\",\"args\":{\"cmd\":\"make\"}}}]}"));
    char result[4096];
    int at = snprintf(result, sizeof result, "{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"name\":\"run\","
                                             "\"response\":{\"output\":\"");
    for (int line = 1; line <= 40; line++) {
        at += snprintf(result + at, sizeof result - (size_t)at, "%sline %d of the test log", line > 1 ? "\\n" : "", line);
    }
    snprintf(result + at, sizeof result - (size_t)at, "\",\"exit_code\":2}}}]}");
    CHECK_OK(push_json(w, result));
    CHECK_OK(push_json(w, "{\"role\":\"model\",\"parts\":[{\"text\":\"Two tests fail.\"}]}"));
    CHECK_OK(ctxwin_window_end_turn(w, NULL));
    size_t removed = 0;
    CHECK_OK(ctxwin_window_compact(w, &removed));
    char body[4096];
    CHECK_OK(ctxwin_window_render_json(w, body, sizeof body, NULL));
    const char *cut = "{\"functionResponse\":{\"name\":\"run\",\"response\":{\"output\":\"line 1 of the test log\\n"
                      "[... 38 lines truncated ...]\\nline 40 of the test log\",\"exit_code\":2}}}";
    if (strstr(body, cut) == NULL || strstr(body, "\"result\"") != NULL) {
        fprintf(stderr, "  sends %s\n", body);
        CHECK(0);
    }
    ctxwin_window_free(w);
}

/* A tool that finishes after the model went on (its result comes a step later) still pairs:
 * the request sends the result in its call's step, where every provider wants it, and no
 * cancelled result. */
static void a_late_result_is_sent_in_its_calls_step(void) {
    ctxwin_window *w = new_window("claude-sonnet-4-5");
    CHECK_OK(push_json(w, "{\"role\":\"user\",\"content\":\"Build and test\"}"));
    CHECK_OK(push_json(w, "{\"role\":\"assistant\",\"content\":["
                          "{\"type\":\"tool_use\",\"id\":\"toolu_build\",\"name\":\"run\",\"input\":{\"cmd\":\"make\"}},"
                          "{\"type\":\"tool_use\",\"id\":\"toolu_lint\",\"name\":\"run\",\"input\":{\"cmd\":\"lint\"}}]}"));
    CHECK_OK(push_json(w, "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_lint\","
                          "\"content\":\"lint clean\"}]}"));
    CHECK_OK(push_json(w, "{\"role\":\"assistant\",\"content\":["
                          "{\"type\":\"tool_use\",\"id\":\"toolu_read\",\"name\":\"read\",\"input\":{\"path\":\"a.c\"}}]}"));
    CHECK_OK(push_json(w, "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_read\","
                          "\"content\":\"int main;\"},{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_build\","
                          "\"content\":\"build ok\"}]}"));
    CHECK_OK(push_json(w, "{\"role\":\"assistant\",\"content\":\"Built, linted, read.\"}"));
    char report[1024];
    CHECK_OK(ctxwin_window_validate(w, report, sizeof report, NULL));
    CHECK(strstr(report, "\"problems\":[]") != NULL);
    ctxwin_request_info info;
    CHECK_OK(ctxwin_window_prepare(w, &info));
    char body[4096];
    CHECK_OK(ctxwin_window_render_json(w, body, sizeof body, NULL));
    const char *paired = "\"tool_use_id\":\"toolu_lint\",\"content\":\"lint clean\"},{\"type\":\"tool_result\","
                         "\"tool_use_id\":\"toolu_build\",\"content\":\"build ok\"}]}";
    if (strstr(body, paired) == NULL || strstr(body, "cancelled") != NULL) {
        fprintf(stderr, "  sends %s\n", body);
        CHECK(0);
    }
    ctxwin_window_free(w);
}

void suite_json(void) {
    harness_run("a_late_result_is_sent_in_its_calls_step", a_late_result_is_sent_in_its_calls_step);
    harness_run("a_cut_gemini_result_keeps_its_response_fields", a_cut_gemini_result_keeps_its_response_fields);
    harness_run("whole_responses_push_the_message_they_hold", whole_responses_push_the_message_they_hold);
    harness_run("old_thinking_is_left_out_whole", old_thinking_is_left_out_whole);
    harness_run("a_mistyped_result_id_is_refused_in_every_format", a_mistyped_result_id_is_refused_in_every_format);
    harness_run("chat_messages_become_ledger_messages_and_render_verbatim",
                chat_messages_become_ledger_messages_and_render_verbatim);
    harness_run("counts_equal_the_text_counts", counts_equal_the_text_counts);
    harness_run("a_split_anthropic_message_renders_only_its_live_blocks",
                a_split_anthropic_message_renders_only_its_live_blocks);
    harness_run("errors_name_the_element_and_field_and_push_nothing",
                errors_name_the_element_and_field_and_push_nothing);
    harness_run("render_reports_small_buffers_and_null_arguments", render_reports_small_buffers_and_null_arguments);
    harness_run("plain_messages_render_in_the_pushed_format", plain_messages_render_in_the_pushed_format);
    harness_run("anthropic_leaves_out_whitespace_only_text", anthropic_leaves_out_whitespace_only_text);
    harness_run("tool_definitions_are_counted", tool_definitions_are_counted);
}
