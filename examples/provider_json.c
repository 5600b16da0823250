/* An agent that already builds Anthropic request bodies hands each message to ctxwin as
 * JSON and splices what ctxwin renders into the next request's "messages".
 *
 *   make examples    (compiles and runs every program in examples/)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctxwin.h"

static const char *const conversation[] = {
    "{\"role\":\"user\",\"content\":\"Which file in src/ is the biggest?\"}",
    "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Let me look.\"},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"du\",\"input\":{\"dir\":\"src\"}}]}",
    "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_1\","
    "\"content\":\"418 window.rs\\n161 config.rs\"},{\"type\":\"text\",\"text\":\"And the smallest?\"}]}",
    "{\"role\":\"assistant\",\"content\":\"window.rs is the biggest; config.rs the smallest listed.\"}",
};

static int fail(const ctxwin_window *w, const char *what) {
    char message[256];
    ctxwin_window_last_error(w, message, sizeof message, NULL);
    fprintf(stderr, "%s: %s\n", what, message);
    return 1;
}

int main(void) {
    ctxwin_window *w = NULL;
    if (ctxwin_window_new("claude-sonnet-4-5", 17, &w) != CTXWIN_OK) return 1;
    const char *tools = "[{\"name\":\"du\",\"description\":\"Disk usage of a directory\","
                        "\"input_schema\":{\"type\":\"object\",\"properties\":{\"dir\":{\"type\":\"string\"}}}}]";
    ctxwin_count tool_tokens;
    if (ctxwin_count_tools_json("claude-sonnet-4-5", 17, tools, strlen(tools), &tool_tokens) != CTXWIN_OK) return 1;
    if (ctxwin_window_set_overhead(w, 0, tool_tokens.tokens) != CTXWIN_OK) return fail(w, "set_overhead");
    for (size_t i = 0; i < sizeof conversation / sizeof conversation[0]; i++) {
        if (ctxwin_window_push_json(w, conversation[i], strlen(conversation[i])) != CTXWIN_OK) {
            return fail(w, "push_json");
        }
    }
    ctxwin_window_set_budget(w, 30); /* small, so the first turn is pruned */
    size_t needed = 0;
    if (ctxwin_window_render_json(w, NULL, 0, &needed) != CTXWIN_OK) return fail(w, "render_json");
    char *messages = malloc(needed + 1);
    if (messages == NULL) return 1;
    if (ctxwin_window_render_json(w, messages, needed + 1, NULL) != CTXWIN_OK) return fail(w, "render_json");
    printf("%zu ledger messages, window starts at %zu; send:\n%s\n", ctxwin_window_message_count(w),
           ctxwin_window_start(w), messages);
    free(messages);
    ctxwin_window_free(w);
    return 0;
}
