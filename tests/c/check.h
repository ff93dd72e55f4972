/*
 * What every C test program shares: the pass/fail counters and CHECK, the last-error helpers,
 * and small readers of the compact JSON depositkit hands out. `static inline`, so a program
 * that does not use a helper compiles warning-free under -Wall -Wextra -Werror.
 */
#ifndef DEPOSITKIT_TEST_CHECK_H
#define DEPOSITKIT_TEST_CHECK_H

#include "depositkit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(_POSIX_C_SOURCE) && _POSIX_C_SOURCE >= 199309L
#include <time.h>
#endif

static int passed = 0;
static int failed = 0;

static inline void check(int ok, const char *what, int line) {
    if (ok) {
        passed++;
    } else {
        failed++;
        fprintf(stderr, "FAIL line %d: %s\n", line, what);
    }
}

#define CHECK(cond) check((cond) ? 1 : 0, #cond, __LINE__)

/* Prints the "N passed, M failed" summary line and gives the exit code. */
static inline int summary(void) {
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}

/* This thread's last-error message, sized with a first call then copied. Caller frees. */
static inline char *last_error(void) {
    size_t n = 0;
    depositkit_status st = depositkit_last_error_message(NULL, 0, &n);
    CHECK(st == DEPOSITKIT_STATUS_OK || st == DEPOSITKIT_STATUS_BUFFER_TOO_SMALL);
    char *buf = malloc(n + 1);
    if (buf == NULL) {
        abort();
    }
    size_t n2 = 0;
    CHECK(depositkit_last_error_message(buf, n + 1, &n2) == DEPOSITKIT_STATUS_OK);
    CHECK(n2 == n && strlen(buf) == n);
    return buf;
}

static inline int last_error_contains(const char *needle) {
    char *msg = last_error();
    int found = strstr(msg, needle) != NULL;
    if (!found) {
        fprintf(stderr, "  last error \"%s\" lacks \"%s\"\n", msg, needle);
    }
    free(msg);
    return found;
}

/* Checks that a string depositkit handed out contains needle; does not free it. */
static inline int json_contains(const char *json, const char *needle) {
    int found = json != NULL && strstr(json, needle) != NULL;
    if (!found) {
        fprintf(stderr, "  \"%s\" lacks \"%s\"\n", json ? json : "(null)", needle);
    }
    return found;
}

/*
 * Copies the string value of the first "key" in compact JSON (as depositkit writes it: no
 * spaces, values without escapes here) into buf. Returns 1 when found and it fitted.
 */
static inline int json_string(const char *json, const char *key, char *buf, size_t size) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
    const char *start = json != NULL ? strstr(json, pattern) : NULL;
    if (start == NULL) {
        fprintf(stderr, "  no string \"%s\" in %s\n", key, json ? json : "(null)");
        return 0;
    }
    start += strlen(pattern);
    const char *end = strchr(start, '"');
    if (end == NULL || (size_t)(end - start) >= size) {
        return 0;
    }
    memcpy(buf, start, (size_t)(end - start));
    buf[end - start] = '\0';
    return 1;
}

/*
 * The value after the first "key" at or after `from` in JSON text written with or without
 * spaces (the chains file of tests/chains/launch.py has them): a pointer to the value's first
 * character, or NULL when the key is absent.
 */
static inline const char *json_value_after(const char *from, const char *key) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\"", key);
    for (const char *p = from != NULL ? strstr(from, pattern) : NULL; p != NULL;
         p = strstr(p + 1, pattern)) {
        const char *v = p + strlen(pattern);
        while (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r') {
            v++;
        }
        if (*v != ':') {
            continue; /* the key's text as a value, not a key */
        }
        v++;
        while (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r') {
            v++;
        }
        return v;
    }
    return NULL;
}

/* Copies the JSON string (without escapes) starting at value into buf. 1 when it fitted. */
static inline int json_read_string(const char *value, char *buf, size_t size) {
    if (value == NULL || *value != '"') {
        return 0;
    }
    const char *end = strchr(value + 1, '"');
    if (end == NULL || (size_t)(end - value - 1) >= size) {
        return 0;
    }
    memcpy(buf, value + 1, (size_t)(end - value - 1));
    buf[end - value - 1] = '\0';
    return 1;
}

/*
 * Copies the JSON object starting at `start` ('{') into a new malloc'ed string (braces inside
 * strings are skipped); sets *end past it. NULL when start is not an object. Caller frees.
 */
static inline char *json_object_copy(const char *start, const char **end) {
    if (start == NULL || *start != '{') {
        return NULL;
    }
    int depth = 0;
    int in_string = 0;
    const char *p = start;
    for (; *p != '\0'; p++) {
        if (in_string) {
            if (*p == '\\' && p[1] != '\0') {
                p++;
            } else if (*p == '"') {
                in_string = 0;
            }
        } else if (*p == '"') {
            in_string = 1;
        } else if (*p == '{') {
            depth++;
        } else if (*p == '}' && --depth == 0) {
            break;
        }
    }
    if (*p != '}') {
        return NULL;
    }
    size_t n = (size_t)(p - start) + 1;
    char *copy = malloc(n + 1);
    if (copy == NULL) {
        abort();
    }
    memcpy(copy, start, n);
    copy[n] = '\0';
    if (end != NULL) {
        *end = p + 1;
    }
    return copy;
}

#if defined(_POSIX_C_SOURCE) && _POSIX_C_SOURCE >= 199309L
/* The deadline `seconds` from now, for pthread_cond_timedwait. */
static inline struct timespec deadline_in(int seconds) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += seconds;
    return ts;
}
#endif

/* Checks that a call succeeded; prints its last error otherwise. */
static inline int succeeded(depositkit_status st, const char *call, int line) {
    check(st == DEPOSITKIT_STATUS_OK, call, line);
    if (st != DEPOSITKIT_STATUS_OK) {
        char *msg = last_error();
        fprintf(stderr, "  status %u: %s\n", (unsigned)st, msg);
        free(msg);
    }
    return st == DEPOSITKIT_STATUS_OK;
}

/* Runs `call`, which writes the output `out` on success; evaluates to it, or NULL. */
#define MUST(call, out) (succeeded((call), #call, __LINE__) ? (out) : NULL)
/* Runs `call`; evaluates to whether it succeeded (its last error printed if not). */
#define OK(call) succeeded((call), #call, __LINE__)

/* The value of environment variable `name`, which scripts/test-c.sh sets; exits 2 naming it
 * (and `program`) when it is missing. */
static inline const char *require_env(const char *program, const char *name) {
    const char *value = getenv(name);
    if (value == NULL || value[0] == '\0') {
        fprintf(stderr,
                "%s: %s is not set; run this test through scripts/test-c.sh, which starts "
                "depositkit-devnet and sets it\n",
                program, name);
        exit(2);
    }
    return value;
}

/* Removes a client's SQLite store (`storePath`) with its WAL, shared-memory and lock files. */
static inline void remove_store(const char *path) {
    const char *suffixes[] = {"", "-wal", "-shm", "-lock", "-events"};
    for (size_t i = 0; i < 5; i++) {
        char file[512];
        snprintf(file, sizeof file, "%s%s", path, suffixes[i]);
        remove(file);
    }
}

#endif /* DEPOSITKIT_TEST_CHECK_H */
