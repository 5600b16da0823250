/* The agent loop on the Anthropic Messages API with extended thinking: each step's thinking
 * block goes back with its signature. Prints each body it would POST to /v1/messages. */
#include "loop.h"

#define TOOLS \
    "[{\"name\":\"read_file\",\"description\":\"Read a file of the repository\",\"input_schema\":" \
    "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"]}}," \
    "{\"name\":\"list_dir\",\"description\":\"List a directory\",\"input_schema\":" \
    "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"]}}," \
    "{\"name\":\"run_tests\",\"description\":\"Run a test target\",\"input_schema\":" \
    "{\"type\":\"object\",\"properties\":{\"target\":{\"type\":\"string\"}},\"required\":[\"target\"]}}]"

int main(void) {
    const agent_format anthropic = {
        "anthropic", "claude-sonnet-4-5",
        "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":16000,\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":8000},"
        "\"tools\":" TOOLS "}",
        TOOLS, push_results_by_id};
    return run_agent(&anthropic);
}
