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

#if defined(_POSIX_C_SOURCE) && _POSIX_C_SOURCE >= 199309L
/* The deadline `seconds` from now, for pthread_cond_timedwait. */
static inline struct timespec deadline_in(int seconds) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += seconds;
    return ts;
}
#endif

#endif /* DEPOSITKIT_TEST_CHECK_H */
