/* The agent loop on the OpenAI Responses API, stateless (store: false): each request sends
 * the reasoning items back with their encrypted content. Prints each body it would POST to
 * /v1/responses. */
#include "loop.h"

#define TOOLS \
    "[{\"type\":\"function\",\"name\":\"read_file\",\"description\":\"Read a file of the repository\"," \
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"]}}," \
    "{\"type\":\"function\",\"name\":\"list_dir\",\"description\":\"List a directory\"," \
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"]}}," \
    "{\"type\":\"function\",\"name\":\"run_tests\",\"description\":\"Run a test target\"," \
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"target\":{\"type\":\"string\"}},\"required\":[\"target\"]}}]"

int main(void) {
    const agent_format responses = {
        "openai_responses", "gpt-5",
        "{\"model\":\"gpt-5\",\"store\":false,\"include\":[\"reasoning.encrypted_content\"],"
        "\"reasoning\":{\"effort\":\"medium\",\"summary\":\"auto\"},\"tools\":" TOOLS "}",
        TOOLS, push_results_by_id};
    return run_agent(&responses);
}
