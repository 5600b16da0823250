/* The agent loop every provider example runs: push the task, then for each model step
 * prepare the request, render its body, send it (to the stand-in provider), feed the usage
 * back, push the answer, run its tool calls and push their results, until the model answers
 * without calls; then end the turn. Each body it would send is printed on a line of its own;
 * every other line starts with "# ". */
#ifndef AGENT_LOOP_LOOP_H
#define AGENT_LOOP_LOOP_H

#include <stddef.h>
#include "ctxwin.h"

/* One tool call of the model's answer, and what running it gave. */
typedef struct tool_run {
    const char *call_id; /* borrowed from the window (ctxwin_window_message_get) */
    size_t call_id_len;
    const char *name;
    size_t name_len;
    char output[2048];
    size_t output_len;
} tool_run;

typedef struct agent_format {
    const char *format; /* ctxwin's "format" key */
    const char *model;
    const char *base;   /* the request body without the conversation: model, tools, options */
    const char *tools;  /* the tool definitions alone, counted into the overhead */
    /* Pushes the results of one answer's calls, in the order of the calls; 0 on success. */
    int (*push_results)(ctxwin_window *w, const tool_run *runs, size_t n);
} agent_format;

/* Pushes each result with ctxwin_window_push_tool, under its call's id. */
int push_results_by_id(ctxwin_window *w, const tool_run *runs, size_t n);
/* Prints why a call failed (the window's last_error) and returns 1; returns 0 on CTXWIN_OK. */
int failed(ctxwin_status rc, const ctxwin_window *w, const char *what);
/* Runs the session; returns the process's exit status (0 when every step went through). */
int run_agent(const agent_format *f);

#endif
