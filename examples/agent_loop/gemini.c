/* The agent loop on the Gemini API (generateContent) with thought summaries: function calls
 * have no ids, so their results go back as functionResponse parts in the order of the calls.
 * Prints each body it would POST to models/gemini-2.5-pro:generateContent. */
#include "loop.h"
#include "text.h"

#define TOOLS \
    "[{\"functionDeclarations\":[{\"name\":\"read_file\",\"description\":\"Read a file of the repository\"," \
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"]}}," \
    "{\"name\":\"list_dir\",\"description\":\"List a directory\"," \
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"]}}," \
    "{\"name\":\"run_tests\",\"description\":\"Run a test target\"," \
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"target\":{\"type\":\"string\"}},\"required\":[\"target\"]}}]}]"

/* One user content holding a functionResponse part per call, in the order of the calls. */
static int push_function_responses(ctxwin_window *w, const tool_run *runs, size_t n) {
    text json = {NULL, 0, 0};
    text_printf(&json, "{\"role\":\"user\",\"parts\":[");
    for (size_t i = 0; i < n; i++) {
        text_printf(&json, "%s{\"functionResponse\":{\"name\":\"%.*s\",\"response\":{\"output\":", i ? "," : "",
                    (int)runs[i].name_len, runs[i].name);
        text_json_string(&json, runs[i].output, runs[i].output_len);
        text_printf(&json, "}}}");
    }
    text_printf(&json, "]}");
    int rc = failed(ctxwin_window_push_json(w, json.data, json.len), w, "push_json functionResponse");
    text_free(&json);
    return rc;
}

int main(void) {
    const agent_format gemini = {
        "gemini", "gemini-2.5-pro",
        "{\"generationConfig\":{\"thinkingConfig\":{\"includeThoughts\":true}},\"tools\":" TOOLS "}", TOOLS,
        push_function_responses};
    return run_agent(&gemini);
}
