/* The agent loop on OpenAI Chat Completions (a reasoning model: its thinking is not returned,
 * only counted in usage.completion_tokens_details.reasoning_tokens). Prints each body it
 * would POST to /v1/chat/completions. */
#include "loop.h"

#define TOOLS \
    "[{\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"description\":\"Read a file of the repository\"," \
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"]}}}," \
    "{\"type\":\"function\",\"function\":{\"name\":\"list_dir\",\"description\":\"List a directory\"," \
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"]}}}," \
    "{\"type\":\"function\",\"function\":{\"name\":\"run_tests\",\"description\":\"Run a test target\"," \
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"target\":{\"type\":\"string\"}},\"required\":[\"target\"]}}}]"

int main(void) {
    const agent_format chat = {
        "openai_chat", "gpt-5",
        "{\"model\":\"gpt-5\",\"reasoning_effort\":\"medium\",\"parallel_tool_calls\":true,\"tools\":" TOOLS "}", TOOLS,
        push_results_by_id};
    return run_agent(&chat);
}
