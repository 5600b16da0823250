/* A stand-in LLM provider for the agent loop examples: no network. Given a request body it
 * answers as the provider would, in the provider's own response shape with its usage object,
 * following a fixed script: for each task, a step of thinking and two parallel calls
 * (read_file, list_dir), a step of thinking and one run_tests call, then thinking and a
 * final answer. */
#ifndef AGENT_LOOP_STANDIN_H
#define AGENT_LOOP_STANDIN_H

#include <stddef.h>
#include "text.h"

typedef struct standin {
    const char *format; /* ctxwin's name of the format: "openai_chat", "openai_responses", "anthropic", "gemini" */
    const char *model;
    int task;           /* the task being worked on, from 0 */
    int step;           /* its next step, from 0 */
    int calls;          /* calls made so far, over the session */
    text previous;      /* the previous request, for the cached prefix of the next */
    text response;      /* the last response body */
    text message;       /* the message it holds, which a non-streaming agent pushes */
} standin;

/* Answers one request body. Returns 0 with the response written to p->response and
 * p->message; or -1 with the provider's refusal in p->response, when the request does not
 * answer every call made so far or is not the provider's shape. */
int standin_reply(standin *p, const char *body, size_t len);
/* How many calls the stand-in made so far (each one a request must answer). */
int standin_calls(const standin *p);
void standin_free(standin *p);

#endif
