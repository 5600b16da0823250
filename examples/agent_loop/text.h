/* A growable text buffer, and JSON string escaping: what the stand-in provider and the
 * agent loop use to write JSON (a real agent uses its JSON library). */
#ifndef AGENT_LOOP_TEXT_H
#define AGENT_LOOP_TEXT_H

#include <stddef.h>

typedef struct text {
    char *data; /* NUL-terminated; NULL before the first append */
    size_t len;
    size_t cap;
} text;

/* Appends printf-style; exits the program when memory runs out. */
void text_printf(text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Appends `s` (len bytes) as a JSON string, quotes included. */
void text_json_string(text *t, const char *s, size_t len);
void text_clear(text *t);
void text_free(text *t);

#endif
