/* A program built from outside the source tree against an installed ctxwin, with only
 * `pkg-config --cflags --libs ctxwin` (or ctxwin-static), or with CMake's find_package(ctxwin)
 * (CMakeLists.txt beside it): the install and dist tests. */
#include <stdio.h>
#include <string.h>
#include <ctxwin.h>

int main(void) {
    ctxwin_window *w = NULL;
    const char *messages = "[{\"role\":\"user\",\"content\":\"hello\"},{\"role\":\"assistant\",\"content\":\"hi\"}]";
    char rendered[256];
    size_t needed = 0;
    if (ctxwin_version_number() != CTXWIN_VERSION_NUMBER) {
        fprintf(stderr, "header %s, library %s\n", CTXWIN_VERSION_STRING, ctxwin_version());
        return 1;
    }
    if (ctxwin_window_new("gpt-4o", 6, &w) != CTXWIN_OK) return 1;
    if (ctxwin_window_push_json(w, messages, strlen(messages)) != CTXWIN_OK) return 1;
    if (ctxwin_window_render_json(w, rendered, sizeof rendered, &needed) != CTXWIN_OK) return 1;
    ctxwin_window_free(w);
    return strcmp(rendered, messages) == 0 ? 0 : 1;
}
