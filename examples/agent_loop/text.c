#include "text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static void reserve(text *t, size_t more) {
    if (t->len + more + 1 <= t->cap) return;
    size_t cap = t->cap ? t->cap : 256;
    while (cap < t->len + more + 1) cap *= 2;
    char *data = realloc(t->data, cap);
    if (data == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    t->data = data;
    t->cap = cap;
}

void text_printf(text *t, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(NULL, 0, fmt, args);
    va_end(args);
    if (n < 0) exit(1);
    reserve(t, (size_t)n);
    va_start(args, fmt);
    vsnprintf(t->data + t->len, (size_t)n + 1, fmt, args);
    va_end(args);
    t->len += (size_t)n;
}

void text_json_string(text *t, const char *s, size_t len) {
    text_printf(t, "\"");
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') text_printf(t, "\\%c", c);
        else if (c == '\n') text_printf(t, "\\n");
        else if (c == '\t') text_printf(t, "\\t");
        else if (c < 0x20) text_printf(t, "\\u%04x", c);
        else text_printf(t, "%c", c);
    }
    text_printf(t, "\"");
}

void text_clear(text *t) {
    t->len = 0;
    if (t->data != NULL) t->data[0] = '\0';
}

void text_free(text *t) {
    free(t->data);
    *t = (text){NULL, 0, 0};
}
