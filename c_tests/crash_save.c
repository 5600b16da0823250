/*
 * crash_save: kills a process at random moments while it saves a window in a loop, and
 * checks that the file left behind always loads.
 *
 * Each round forks a child that loads the file (if any), keeps pushing turns and saving the
 * window to the same path, and never stops by itself; the parent SIGKILLs it after a random
 * 1-25 ms, then loads the file: it must load (a save is atomic: the old file or the new one),
 * and hold at least as many messages as the last one did. A killed save may leave its
 * temporary file, but the next save removes those of processes that have ended: however many
 * kills, at most one (the last one's) is left at the end.
 *
 * Usage: crash_save [kills]   (default 50). Run by `make test`. The file is crash/window.json
 * in CTXWIN_TEST_DIR (make passes its build directory's c/), or in target/c when it is unset.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "ctxwin.h"

static char dir_path[512];
static char file_path[600];

static void saver(void) {
    ctxwin_window *w = NULL;
    if (ctxwin_window_load(file_path, strlen(file_path), &w) != CTXWIN_OK &&
        ctxwin_window_new("gpt-4o", 6, &w) != CTXWIN_OK) {
        _exit(3);
    }
    const char *text = "Please read src/window.rs, run the tests, and report which of them fail and why.";
    for (;;) {
        size_t n = ctxwin_window_message_count(w);
        if (ctxwin_window_push(w, CTXWIN_KIND_USER, text, strlen(text), NULL) != CTXWIN_OK ||
            ctxwin_window_set_external_id(w, n, (int64_t)n) != CTXWIN_OK ||
            ctxwin_window_end_turn(w, NULL) != CTXWIN_OK ||
            ctxwin_window_save(w, file_path, strlen(file_path)) != CTXWIN_OK) {
            _exit(4);
        }
    }
}

/* Counts the temporary files killed saves left, and removes them when `remove_them`. */
static int sweep_temporaries(int remove_them) {
    DIR *dir = opendir(dir_path);
    if (dir == NULL) {
        return 0;
    }
    int swept = 0;
    struct dirent *entry;
    char path[sizeof dir_path + 256];
    while ((entry = readdir(dir)) != NULL) {
        size_t len = strlen(entry->d_name);
        if (len > 4 && strcmp(entry->d_name + len - 4, ".tmp") == 0) {
            snprintf(path, sizeof path, "%s/%s", dir_path, entry->d_name);
            if (remove_them) {
                remove(path);
            }
            swept++;
        }
    }
    closedir(dir);
    return swept;
}

int main(int argc, char **argv) {
    int kills = argc > 1 ? atoi(argv[1]) : 50;
    const char *dir = getenv("CTXWIN_TEST_DIR");
    if (dir == NULL || dir[0] == '\0') {
        mkdir("target", 0755);
        mkdir("target/c", 0755);
        dir = "target/c";
    }
    snprintf(dir_path, sizeof dir_path, "%s/crash", dir);
    snprintf(file_path, sizeof file_path, "%s/window.json", dir_path);
    mkdir(dir_path, 0755);
    remove(file_path);
    sweep_temporaries(1);
    srand((unsigned)time(NULL));
    /* Build the tokenizer's tables once, before forking, so every child saves at once. */
    ctxwin_count warm;
    if (ctxwin_count_text("gpt-4o", 6, "warm up", 7, &warm) != CTXWIN_OK) {
        return 1;
    }
    size_t last_messages = 0;
    int loads = 0;
    for (int round = 0; round < kills; round++) {
        pid_t child = fork();
        if (child < 0) {
            perror("fork");
            return 1;
        }
        if (child == 0) {
            saver();
        }
        struct timespec pause = {0, (long)(1 + rand() % 25) * 1000000L};
        nanosleep(&pause, NULL);
        kill(child, SIGKILL);
        int status = 0;
        waitpid(child, &status, 0);
        if (!WIFSIGNALED(status)) {
            fprintf(stderr, "round %d: the saver stopped by itself (status %d)\n", round, status);
            return 1;
        }
        ctxwin_window *w = NULL;
        ctxwin_status rc = ctxwin_window_load(file_path, strlen(file_path), &w);
        if (rc == CTXWIN_STATUS_IO) {
            continue; /* killed before its first save finished: no file yet */
        }
        if (rc != CTXWIN_OK) {
            fprintf(stderr, "round %d: the file left behind does not load: %s\n", round, ctxwin_status_str(rc));
            return 1;
        }
        size_t messages = ctxwin_window_message_count(w);
        ctxwin_window_free(w);
        if (messages < last_messages) {
            fprintf(stderr, "round %d: %zu messages, fewer than the %zu saved before\n", round, messages, last_messages);
            return 1;
        }
        last_messages = messages;
        loads++;
    }
    int strays = sweep_temporaries(1);
    printf("crash_save: %d kills, %d loads, %zu messages at the end, %d stray temporary file(s) left\n", kills,
           loads, last_messages, strays);
    if (strays > 1) {
        fprintf(stderr, "killed saves left %d temporary files: later saves did not remove them\n", strays);
        return 1;
    }
    return loads > 0 && last_messages > 0 ? 0 : 1;
}
