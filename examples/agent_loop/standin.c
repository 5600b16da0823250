#include "standin.h"

#include <stdio.h>
#include <string.h>
#include "ctxwin.h"

/* What the model does in one step: its thinking, a text, and its tool calls. */
typedef struct call {
    const char *name;
    const char *arguments; /* a JSON object */
} call;
typedef struct step {
    const char *thinking;
    const char *text; /* the final answer when there are no calls */
    call calls[2];
    int n_calls;
} step;

#define STEPS 3
static const step SCRIPT[][STEPS] = {
    {{"The user wants the tokenizer explained. Read the lexer and its header together.",
      "I will read both files.",
      {{"read_file", "{\"path\":\"src/lexer.c\"}"}, {"list_dir", "{\"path\":\"src/\"}"}}, 2},
     {"The lexer keeps one token of look-ahead. Check that the tests still pass.", "", {{"run_tests", "{\"target\":\"lexer\"}"}}, 1},
     {"Tests pass; explain.", "The lexer reads one token ahead; next_token() refills it. All 12 lexer tests pass.", {{0, 0}}, 0}},
    {{"Now the parser: read the grammar and the parser side by side.",
      "Reading the parser and its grammar.",
      {{"read_file", "{\"path\":\"src/parser.c\"}"}, {"list_dir", "{\"path\":\"docs/\"}"}}, 2},
     {"The parser is recursive descent, one function per rule. Run its tests.", "", {{"run_tests", "{\"target\":\"parser\"}"}}, 1},
     {"Tests pass; answer.", "The parser is recursive descent, one function per grammar rule; its 30 tests pass.", {{0, 0}}, 0}},
};
#define TASKS ((int)(sizeof SCRIPT / sizeof SCRIPT[0]))

/* Occurrences of `needle` in the body. */
static int occurrences(const char *body, const char *needle) {
    int n = 0;
    for (const char *at = strstr(body, needle); at != NULL; at = strstr(at + 1, needle)) n++;
    return n;
}

/* The provider's tokens for a text (this stand-in borrows ctxwin's counter). */
static long long tokens(const char *model, const char *s, size_t len) {
    ctxwin_count c = {0, false};
    ctxwin_count_text(model, strlen(model), s, len, &c);
    return c.tokens;
}

/* Whether the request answers every call made so far: every call id (and, in Gemini, which
 * has no ids, every functionCall) is followed by its result. */
static int answered(const standin *p, const char *body) {
    if (strcmp(p->format, "gemini") == 0)
        return occurrences(body, "\"functionCall\"") >= p->calls && occurrences(body, "\"functionResponse\"") >= p->calls;
    for (int i = 1; i <= p->calls; i++) {
        char id[32];
        snprintf(id, sizeof id, strcmp(p->format, "anthropic") == 0 ? "\"toolu_%02d\"" : "\"call_%02d\"", i);
        if (occurrences(body, id) < 2) return 0;
    }
    return 1;
}

/* The message of one step, in the format's shape (p->message). */
static void write_message(standin *p, const step *s) {
    text *m = &p->message;
    text_clear(m);
    int first = p->calls + 1;
    if (strcmp(p->format, "openai_chat") == 0) {
        /* Chat Completions returns no thinking: a reasoning model's thinking shows only as
         * usage.completion_tokens_details.reasoning_tokens. */
        text_printf(m, "{\"role\":\"assistant\",\"content\":");
        if (s->n_calls == 0 || s->text[0] != '\0') text_json_string(m, s->text, strlen(s->text));
        else text_printf(m, "null");
        if (s->n_calls > 0) {
            text_printf(m, ",\"tool_calls\":[");
            for (int i = 0; i < s->n_calls; i++) {
                text_printf(m, "%s{\"id\":\"call_%02d\",\"type\":\"function\",\"function\":{\"name\":\"%s\",\"arguments\":",
                            i ? "," : "", first + i, s->calls[i].name);
                text_json_string(m, s->calls[i].arguments, strlen(s->calls[i].arguments));
                text_printf(m, "}}");
            }
            text_printf(m, "]");
        }
        text_printf(m, ",\"refusal\":null}");
    } else if (strcmp(p->format, "openai_responses") == 0) {
        /* The output items: reasoning (its summary and encrypted content, which a stateless
         * agent sends back), then a message or function calls. */
        text_printf(m, "[{\"type\":\"reasoning\",\"id\":\"rs_%02d_%d\",\"summary\":[{\"type\":\"summary_text\",\"text\":", p->task, p->step);
        text_json_string(m, s->thinking, strlen(s->thinking));
        text_printf(m, "}],\"encrypted_content\":\"gAAAAABo-enc-%02d-%d\"}", p->task, p->step);
        if (s->text[0] != '\0') {
            text_printf(m, ",{\"type\":\"message\",\"id\":\"msg_%02d_%d\",\"role\":\"assistant\",\"status\":\"completed\","
                           "\"content\":[{\"type\":\"output_text\",\"text\":", p->task, p->step);
            text_json_string(m, s->text, strlen(s->text));
            text_printf(m, ",\"annotations\":[]}]}");
        }
        for (int i = 0; i < s->n_calls; i++) {
            text_printf(m, ",{\"type\":\"function_call\",\"id\":\"fc_%02d\",\"call_id\":\"call_%02d\",\"name\":\"%s\",\"arguments\":",
                        first + i, first + i, s->calls[i].name);
            text_json_string(m, s->calls[i].arguments, strlen(s->calls[i].arguments));
            text_printf(m, ",\"status\":\"completed\"}");
        }
        text_printf(m, "]");
    } else if (strcmp(p->format, "anthropic") == 0) {
        text_printf(m, "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":");
        text_json_string(m, s->thinking, strlen(s->thinking));
        text_printf(m, ",\"signature\":\"EqQBCkYIBxgCKkB-sig-%02d-%d\"}", p->task, p->step);
        if (s->text[0] != '\0') {
            text_printf(m, ",{\"type\":\"text\",\"text\":");
            text_json_string(m, s->text, strlen(s->text));
            text_printf(m, "}");
        }
        for (int i = 0; i < s->n_calls; i++)
            text_printf(m, ",{\"type\":\"tool_use\",\"id\":\"toolu_%02d\",\"name\":\"%s\",\"input\":%s}", first + i,
                        s->calls[i].name, s->calls[i].arguments);
        text_printf(m, "]}");
    } else {
        /* Gemini: a thought summary (includeThoughts), then the text or the calls; the first
         * call of a step carries the step's thought signature. Calls have no ids. */
        text_printf(m, "{\"role\":\"model\",\"parts\":[{\"text\":");
        text_json_string(m, s->thinking, strlen(s->thinking));
        text_printf(m, ",\"thought\":true}");
        if (s->text[0] != '\0') {
            text_printf(m, ",{\"text\":");
            text_json_string(m, s->text, strlen(s->text));
            text_printf(m, "%s}", s->n_calls == 0 ? ",\"thoughtSignature\":\"CiQB-sig\"" : "");
        }
        for (int i = 0; i < s->n_calls; i++)
            text_printf(m, ",{\"functionCall\":{\"name\":\"%s\",\"args\":%s}%s}", s->calls[i].name, s->calls[i].arguments,
                        i == 0 ? ",\"thoughtSignature\":\"CiQB-sig\"" : "");
        text_printf(m, "]}");
    }
}

/* The response around the message, with the provider's usage object. */
static void write_response(standin *p, const step *s, long long prompt, long long cached) {
    text *r = &p->response;
    text_clear(r);
    const char *message = p->message.data;
    long long output = tokens(p->model, message, p->message.len), thinking = tokens(p->model, s->thinking, strlen(s->thinking));
    if (strcmp(p->format, "openai_chat") == 0) {
        text_printf(r,
                    "{\"id\":\"chatcmpl-%02d%d\",\"object\":\"chat.completion\",\"created\":1764115200,\"model\":\"%s\","
                    "\"choices\":[{\"index\":0,\"message\":%s,\"logprobs\":null,\"finish_reason\":\"%s\"}],"
                    "\"usage\":{\"prompt_tokens\":%lld,\"completion_tokens\":%lld,\"total_tokens\":%lld,"
                    "\"prompt_tokens_details\":{\"cached_tokens\":%lld,\"audio_tokens\":0},"
                    "\"completion_tokens_details\":{\"reasoning_tokens\":%lld,\"audio_tokens\":0,"
                    "\"accepted_prediction_tokens\":0,\"rejected_prediction_tokens\":0}},\"service_tier\":\"default\"}",
                    p->task, p->step, p->model, message, s->n_calls ? "tool_calls" : "stop", prompt, output + thinking,
                    prompt + output + thinking, cached, thinking);
    } else if (strcmp(p->format, "openai_responses") == 0) {
        text_printf(r,
                    "{\"id\":\"resp_%02d%d\",\"object\":\"response\",\"created_at\":1764115200,\"status\":\"completed\","
                    "\"model\":\"%s\",\"output\":%s,\"parallel_tool_calls\":true,\"store\":false,"
                    "\"usage\":{\"input_tokens\":%lld,\"input_tokens_details\":{\"cached_tokens\":%lld},"
                    "\"output_tokens\":%lld,\"output_tokens_details\":{\"reasoning_tokens\":%lld},\"total_tokens\":%lld}}",
                    p->task, p->step, p->model, message, prompt, cached, output, thinking, prompt + output);
    } else if (strcmp(p->format, "anthropic") == 0) {
        /* The Message object holds the message's role and content at its top level. Anthropic
         * splits the prompt: input_tokens are what follows the cached prefix. */
        text_printf(r,
                    "{\"id\":\"msg_01%02d%d\",\"type\":\"message\",%.*s,\"model\":\"%s\",\"stop_reason\":\"%s\","
                    "\"stop_sequence\":null,\"usage\":{\"input_tokens\":%lld,\"cache_creation_input_tokens\":0,"
                    "\"cache_read_input_tokens\":%lld,\"output_tokens\":%lld,\"service_tier\":\"standard\"}}",
                    p->task, p->step, (int)(p->message.len - 2), message + 1, p->model, s->n_calls ? "tool_use" : "end_turn", prompt - cached, cached,
                    output);
    } else {
        text_printf(r,
                    "{\"candidates\":[{\"content\":%s,\"finishReason\":\"STOP\",\"index\":0}],"
                    "\"usageMetadata\":{\"promptTokenCount\":%lld,\"cachedContentTokenCount\":%lld,"
                    "\"candidatesTokenCount\":%lld,\"thoughtsTokenCount\":%lld,\"totalTokenCount\":%lld},"
                    "\"modelVersion\":\"%s\",\"responseId\":\"r-%02d%d\"}",
                    message, prompt, cached, output, thinking, prompt + output + thinking, p->model, p->task, p->step);
    }
}

int standin_reply(standin *p, const char *body, size_t len) {
    if (body[0] != '{' || !answered(p, body)) {
        text_clear(&p->response);
        text_printf(&p->response, "{\"error\":{\"type\":\"invalid_request_error\",\"message\":\"%s\"}}",
                    body[0] != '{' ? "the body is not a JSON object" : "a tool call has no result in this request");
        return -1;
    }
    if (p->task >= TASKS) p->task = 0;
    const step *s = &SCRIPT[p->task][p->step];
    /* The provider caches the longest prefix shared with the previous request. */
    size_t shared = 0;
    while (shared < len && shared < p->previous.len && body[shared] == p->previous.data[shared]) shared++;
    long long prompt = tokens(p->model, body, len), cached = shared > 0 ? tokens(p->model, body, shared) : 0;
    if (cached > prompt) cached = prompt;
    write_message(p, s);
    write_response(p, s, prompt, cached);
    p->calls += s->n_calls;
    if (++p->step == STEPS) {
        p->step = 0;
        p->task++;
    }
    text_clear(&p->previous);
    text_printf(&p->previous, "%.*s", (int)len, body);
    return 0;
}

int standin_calls(const standin *p) {
    return p->calls;
}

void standin_free(standin *p) {
    text_free(&p->previous);
    text_free(&p->response);
    text_free(&p->message);
}
