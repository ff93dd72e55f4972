/*
 * Fleet mode through the C ABI (depositkit_fleet_*, docs/fleet.md section "C"), using only
 * include/depositkit.h, against a real PostgreSQL and a devnet started in this process with
 * depositkit_devnet_start (the library's `devnet` feature; DEPOSITKIT_DEVNET declares it).
 *
 * - two members join one fleet; an owner registered (in mixed case) with a destination of its
 *   own is run by the first, and the second holds nothing (shares of ceil(1 / 2) = 1);
 * - a deposit on devnet is detected by the holder (autoSweep off) and seen in the shared event
 *   log; the member that does NOT hold the owner requests the sweep, the holder runs it, and
 *   the owner's own destination (Arbitrum, not the template's Base) receives exactly the
 *   result's delivered amount, once (a second request delivers nothing more);
 * - the log is read from the start with a cursor, resumed from a saved cursor (nothing read
 *   twice or skipped), and a read from the end returns [] with the same cursor;
 * - typed errors: an unknown owner (NOT_FOUND), a duplicate (INVALID_ARGUMENT), an unknown
 *   deposit (SWEEP), a timeout (TIMEOUT), a bad cursor, command, member or template option,
 *   and database URLs with a password that cannot be read (CONFIGURATION) or reached
 *   (NETWORK), whose messages never contain the password; NULL arguments named;
 * - callbacks (depositkit_fleet_subscribe) on the member that does not hold the owner get the
 *   deposit's lifecycle (detected before credited, with its id) and the whole log in order; one
 *   unsubscribed and resumed from the cursor it handled last skips nothing and repeats nothing;
 *   user_data_free runs exactly once: on unsubscribe, leave, free, and a refused subscription;
 * - the fleet's metrics (commands run by outcome, owners held) are in depositkit_metrics_text;
 * - leaving hands the owner to the other member at once; a member that left refuses calls.
 *
 * Needs DEPOSITKIT_TEST_FLEET_URL: a fresh, empty PostgreSQL database whose server trusts the
 * connection (scripts/test-c.sh creates one for each run, on the server of
 * DEPOSITKIT_TEST_POSTGRES_URL or one it starts with scripts/postgres.sh).
 *
 * Built with gcc -std=c11 -Wall -Wextra -Wpedantic -Werror and linked twice by
 * scripts/test-c.sh: against libdepositkit.so and statically against libdepositkit.a. Prints
 * "N passed, M failed" and exits non-zero on any failure.
 */
#define _POSIX_C_SOURCE 200809L
#define DEPOSITKIT_DEVNET 1

#include "check.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How long to wait for the holder and the sweep: generous, so that valgrind runs pass too. */
#define WAIT_SECONDS 120
#define WAIT_MS ((uint64_t)WAIT_SECONDS * 1000)

static const uint32_t USDC = DEPOSITKIT_TOKEN_TYPE_USDC;
static const char *const OWNER_GIVEN = "0x5B38Da6a701c568545dCfcB03FcB875f56beddC4";
static const char *const OWNER = "0x5b38da6a701c568545dcfcb03fcb875f56beddc4";
static const char *const UNKNOWN = "0xab5801a7d398351b8be11c439e05c5b3259aec9b";
static const char *const SECRET = "Sekr3t-c-fleet";
/* 7 USDC less $0.03 gas and the 0.2% LP fee (docs/protocol.md's rounding), in smallest units. */
static const char *const DELIVERED = "6956000";

/* --- helpers ---------------------------------------------------------------------------------- */

/* The template of every owner's client: the deposit client's JSON, without ownerAddress. */
static void template_json(char *buf, size_t size, const char *services_url) {
    snprintf(buf, size,
             "{\"destination\":{\"chainId\":8453},\"servicesUrl\":\"%s\",\"autoSweep\":false,"
             "\"pollingIntervalMs\":50,\"minPollingIntervalMs\":20,\"sweepRetryDelayMs\":30,"
             "\"httpInitialBackoffMs\":5,\"callTimeoutMs\":%d}",
             services_url, WAIT_SECONDS * 1000);
}

/* Joins the fleet at `url` as `name`, with fast leases (renewed and rebalanced every 0.3 s). */
static const depositkit_fleet *join(const char *url, const char *templ, const char *name) {
    char member[256];
    snprintf(member, sizeof member,
             "{\"name\":\"%s\",\"leaseTtlMs\":2000,\"renewEveryMs\":300,\"maxConnections\":4}",
             name);
    const depositkit_fleet *fleet = NULL;
    return MUST(depositkit_fleet_join(url, templ, member, &fleet), fleet);
}

/* Whether the member's running owners are exactly `want` (a JSON array). */
static int runs(const depositkit_fleet *fleet, const char *want) {
    char *running = NULL;
    if (!OK(depositkit_fleet_running_owners(fleet, &running))) {
        return 0;
    }
    int same = strcmp(running, want) == 0;
    if (!same) {
        fprintf(stderr, "  running %s, expected %s\n", running, want);
    }
    depositkit_string_free(running);
    return same;
}

/* Whether the member runs OWNER now. */
static int runs_owner(const depositkit_fleet *fleet) {
    char *running = NULL;
    if (!OK(depositkit_fleet_running_owners(fleet, &running))) {
        return 0;
    }
    int found = strstr(running, OWNER) != NULL;
    depositkit_string_free(running);
    return found;
}

/* Whether the process's metrics text (depositkit_metrics_text) has the sample line
 * `<sample> <value>` within WAIT_SECONDS: a command's outcome is counted just after its requester
 * was answered, so the count may lag the answer by a moment. Never the database's password in
 * it. */
static int metric_becomes(const char *sample, const char *value) {
    char line[256];
    snprintf(line, sizeof line, "\n%s %s\n", sample, value);
    struct timespec deadline = deadline_in(WAIT_SECONDS);
    const struct timespec pause = {0, 20 * 1000 * 1000};
    for (;;) {
        char *text = NULL;
        if (!OK(depositkit_metrics_text(&text))) {
            return 0;
        }
        int found = strstr(text, line) != NULL;
        int secret = strstr(text, SECRET) != NULL;
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        int late = now.tv_sec > deadline.tv_sec;
        if (secret || (!found && late)) {
            const char *at = strstr(text, sample);
            fprintf(stderr, "  metrics: %s%.200s; expected %s %s\n",
                    secret ? "the password is in them; " : "", at != NULL ? at : "(none)", sample,
                    value);
        }
        depositkit_string_free(text);
        if (secret || found || late) {
            return found && !secret;
        }
        nanosleep(&pause, NULL);
    }
}

/* `url` with the password `secret` in its user info (postgres://user@host -> user:secret@host). */
static void with_password(char *buf, size_t size, const char *url, const char *secret) {
    const char *at = strchr(url, '@');
    if (at == NULL) {
        snprintf(buf, size, "%s", url);
        return;
    }
    snprintf(buf, size, "%.*s:%s%s", (int)(at - url), url, secret, at);
}

/* The owner's EVM deposit address: asked through a deposit client of its own (the service's
 * account of the owner is the same for every client), freed before anything is deposited. */
static int deposit_address(const char *services_url, char *evm, size_t size) {
    char config[1024];
    snprintf(config, sizeof config,
             "{\"ownerAddress\":\"%s\",\"destination\":{\"chainId\":8453},\"servicesUrl\":\"%s\"}",
             OWNER, services_url);
    const depositkit_deposit_client *client = NULL;
    if (!OK(depositkit_deposit_client_new(config, &client))) {
        return 0;
    }
    char *addresses = NULL;
    int found = OK(depositkit_deposit_client_initialize(client, &addresses)) &&
                json_string(addresses, "evm", evm, size);
    depositkit_string_free(addresses);
    depositkit_deposit_client_free(client);
    return found;
}

/*
 * Calls `visit(object, context)` for each event object of an events array; returns how many
 * there were (-1 when the text is not an array of objects).
 */
static int each_event(const char *events, void (*visit)(const char *, void *), void *context) {
    if (events == NULL || events[0] != '[') {
        return -1;
    }
    int count = 0;
    const char *p = events + 1;
    while (*p == '{') {
        const char *end = NULL;
        char *object = json_object_copy(p, &end);
        if (object == NULL) {
            return -1;
        }
        if (visit != NULL) {
            visit(object, context);
        }
        free(object);
        count++;
        p = end;
        if (*p == ',') {
            p++;
        }
    }
    return *p == ']' ? count : -1;
}

/* What a scan of the log looks for: lifecycle events of OWNER in one phase. */
typedef struct {
    const char *phase_needle; /* e.g. "\"phase\":\"detected\"" */
    int found;
    char deposit_id[128];
} phase_scan;

static void scan_phase(const char *event, void *context) {
    phase_scan *scan = context;
    char owner[64] = "";
    if (strstr(event, "\"kind\":\"deposit:lifecycle\"") != NULL &&
        json_string(event, "owner", owner, sizeof owner) && strcmp(owner, OWNER) == 0 &&
        strstr(event, scan->phase_needle) != NULL) {
        scan->found++;
        json_string(event, "depositId", scan->deposit_id, sizeof scan->deposit_id);
    }
}

/*
 * Reads the whole log from the start (batches of `batch`, not waiting), scanning it with
 * `scan` (may be NULL); returns the number of events and copies the final cursor.
 */
static int read_all(const depositkit_fleet *fleet, size_t batch, phase_scan *scan, char *cursor,
                    size_t cursor_size) {
    char *at = NULL; /* NULL: the start */
    int total = 0;
    for (;;) {
        char *events = NULL;
        char *next = NULL;
        if (!OK(depositkit_fleet_events(fleet, at, batch, 0, &events, &next))) {
            total = -1;
            break;
        }
        int n = each_event(events, scan != NULL ? scan_phase : NULL, scan);
        CHECK(n >= 0 && (size_t)n <= batch);
        depositkit_string_free(events);
        depositkit_string_free(at);
        at = next;
        if (n <= 0) {
            break;
        }
        total += n;
    }
    snprintf(cursor, cursor_size, "%s", at != NULL ? at : "");
    depositkit_string_free(at);
    return total;
}

/* Waits (on the log's doorbell, not a sleep) until OWNER's lifecycle event of the phase is in
 * the log; copies its deposit id. */
static int wait_phase(const depositkit_fleet *fleet, const char *phase_needle, char *deposit_id,
                      size_t size) {
    time_t deadline = time(NULL) + WAIT_SECONDS;
    char *at = NULL;
    phase_scan scan = {phase_needle, 0, ""};
    while (scan.found == 0 && time(NULL) < deadline) {
        char *events = NULL;
        char *next = NULL;
        if (!OK(depositkit_fleet_events(fleet, at, 100, 1000, &events, &next))) {
            break;
        }
        CHECK(each_event(events, scan_phase, &scan) >= 0);
        depositkit_string_free(events);
        depositkit_string_free(at);
        at = next;
    }
    depositkit_string_free(at);
    snprintf(deposit_id, size, "%s", scan.deposit_id);
    return scan.found > 0;
}

/* --- subscriptions (depositkit_fleet_subscribe) ------------------------------------------------ */

#define MAX_SEEN 1024
#define CURSOR_SIZE 128

/*
 * What a subscription's callback saw (its user_data), or the cursors of a pull from the log:
 * every event's cursor in order, where OWNER's deposit was detected and credited, and how many
 * times user_data_free ran.
 */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int count;
    char (*cursors)[CURSOR_SIZE];
    int detected_at; /* index of OWNER's detected event; -1 before */
    int credited_at;
    char detected_id[128];
    char credited_id[128];
    int frees;
} feed;

static feed *feed_new(void) {
    feed *f = calloc(1, sizeof *f);
    f->cursors = calloc(MAX_SEEN, CURSOR_SIZE);
    pthread_mutex_init(&f->lock, NULL);
    pthread_cond_init(&f->changed, NULL);
    f->detected_at = -1;
    f->credited_at = -1;
    return f;
}

static void feed_delete(feed *f) {
    pthread_cond_destroy(&f->changed);
    pthread_mutex_destroy(&f->lock);
    free(f->cursors);
    free(f);
}

/* Records one event element (as _events and the callbacks give it); 0 when it lacks a cursor. */
static int feed_record(feed *f, const char *event) {
    char cursor[CURSOR_SIZE] = "";
    char owner[64] = "";
    int ok = json_string(event, "cursor", cursor, sizeof cursor);
    int ours = strstr(event, "\"kind\":\"deposit:lifecycle\"") != NULL &&
               json_string(event, "owner", owner, sizeof owner) && strcmp(owner, OWNER) == 0;
    pthread_mutex_lock(&f->lock);
    if (f->count < MAX_SEEN) {
        snprintf(f->cursors[f->count], CURSOR_SIZE, "%s", cursor);
    }
    if (ours && f->detected_at < 0 && strstr(event, "\"phase\":\"detected\"") != NULL) {
        f->detected_at = f->count;
        json_string(event, "depositId", f->detected_id, sizeof f->detected_id);
    }
    if (ours && f->credited_at < 0 && strstr(event, "\"phase\":\"credited\"") != NULL) {
        f->credited_at = f->count;
        json_string(event, "depositId", f->credited_id, sizeof f->credited_id);
    }
    f->count++;
    pthread_cond_broadcast(&f->changed);
    pthread_mutex_unlock(&f->lock);
    return ok;
}

/* The callback: runs on the subscription's thread; event_json is borrowed for the call. A
 * non-zero return (a bad length or no cursor) is counted by depositkit_fleet_callback_errors. */
static int on_fleet_event(void *user_data, const char *event_json, size_t event_json_len) {
    int ok = feed_record(user_data, event_json);
    return ok && strlen(event_json) == event_json_len ? 0 : 1;
}

static void on_feed_free(void *user_data) {
    feed *f = user_data;
    pthread_mutex_lock(&f->lock);
    f->frees++;
    pthread_mutex_unlock(&f->lock);
}

static int frees_of(feed *f) {
    pthread_mutex_lock(&f->lock);
    int n = f->frees;
    pthread_mutex_unlock(&f->lock);
    return n;
}

/* Waits (on the callback's signal) until the feed saw OWNER's deposit credited, or only
 * detected when `credited` is 0. */
static int feed_wait_phase(feed *f, int credited) {
    struct timespec deadline = deadline_in(WAIT_SECONDS);
    pthread_mutex_lock(&f->lock);
    while ((credited ? f->credited_at : f->detected_at) < 0 &&
           pthread_cond_timedwait(&f->changed, &f->lock, &deadline) != ETIMEDOUT) {
    }
    int seen = (credited ? f->credited_at : f->detected_at) >= 0;
    pthread_mutex_unlock(&f->lock);
    return seen;
}

/* Waits until the feed saw at least `count` events. */
static int feed_wait_count(feed *f, int count) {
    struct timespec deadline = deadline_in(WAIT_SECONDS);
    pthread_mutex_lock(&f->lock);
    while (f->count < count &&
           pthread_cond_timedwait(&f->changed, &f->lock, &deadline) != ETIMEDOUT) {
    }
    int seen = f->count >= count;
    pthread_mutex_unlock(&f->lock);
    return seen;
}

static void record_visit(const char *event, void *context) {
    CHECK(feed_record(context, event));
}

/* The whole log as the pull API gives it now, into `into`. */
static void pull_all(const depositkit_fleet *fleet, feed *into) {
    char *at = NULL;
    for (;;) {
        char *events = NULL;
        char *next = NULL;
        if (!OK(depositkit_fleet_events(fleet, at, 100, 0, &events, &next))) {
            break;
        }
        int n = each_event(events, record_visit, into);
        depositkit_string_free(events);
        depositkit_string_free(at);
        at = next;
        if (n <= 0) {
            break;
        }
    }
    depositkit_string_free(at);
}

/* Whether `got` (then `then`, when not NULL) begins with exactly the events of `want`, in order:
 * none skipped, none twice. */
static int same_events(feed *want, feed *got, feed *then) {
    int n = want->count;
    if (n > MAX_SEEN) {
        return 0;
    }
    for (int i = 0; i < n; i++) {
        int from_got = i < got->count;
        int j = i - got->count;
        if (!from_got && (then == NULL || j >= then->count)) {
            fprintf(stderr, "  event %d of %d not delivered\n", i, n);
            return 0;
        }
        const char *cursor = from_got ? got->cursors[i] : then->cursors[j];
        if (strcmp(cursor, want->cursors[i]) != 0) {
            fprintf(stderr, "  event %d: cursor %s, expected %s\n", i, cursor, want->cursors[i]);
            return 0;
        }
    }
    return 1;
}

static uint64_t subscribe(const depositkit_fleet *fleet, const char *cursor, feed *f) {
    uint64_t id = 0;
    CHECK(OK(depositkit_fleet_subscribe(fleet, cursor, on_fleet_event, f, on_feed_free, &id)));
    CHECK(id != 0);
    return id;
}

/* Refused subscriptions: typed errors, and user_data released once before the call returns. */
static void test_subscribe_errors(const depositkit_fleet *fleet) {
    feed *f = feed_new();
    uint64_t id = 0;
    CHECK(depositkit_fleet_subscribe(fleet, "v1.nope", on_fleet_event, f, on_feed_free, &id) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("cursor"));
    CHECK(frees_of(f) == 1);
    CHECK(depositkit_fleet_subscribe(fleet, NULL, on_fleet_event, f, on_feed_free, NULL) ==
          DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_contains("out_subscription must not be NULL"));
    CHECK(frees_of(f) == 2);
    CHECK(depositkit_fleet_subscribe(fleet, NULL, NULL, f, on_feed_free, &id) ==
          DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_contains("callback must not be NULL"));
    CHECK(frees_of(f) == 3);
    CHECK(id == 0 && f->count == 0);
    bool removed = true;
    CHECK(OK(depositkit_fleet_unsubscribe(fleet, 424242, &removed)));
    CHECK(!removed);
    feed_delete(f);
}

/* --- the tests -------------------------------------------------------------------------------- */

/* Errors that come before any query, and the URLs whose password must never be shown. */
static void test_join_errors(const char *url, const char *templ) {
    const depositkit_fleet *fleet = NULL;
    CHECK(depositkit_fleet_join(NULL, templ, NULL, &fleet) == DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_contains("database_url must not be NULL"));
    CHECK(depositkit_fleet_join(url, NULL, NULL, &fleet) == DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_contains("template_json must not be NULL"));
    CHECK(depositkit_fleet_join(url, templ, NULL, NULL) == DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_contains("out_fleet must not be NULL"));

    CHECK(depositkit_fleet_join(url, "{\"servicesUrl\":\"http://127.0.0.1:9\"}", NULL, &fleet) ==
          DEPOSITKIT_STATUS_CONFIGURATION);
    CHECK(last_error_contains("destination is required"));
    CHECK(depositkit_fleet_join(url, templ, "{\"leaseTtlMs\":2000,\"renewEveryMs\":5000}",
                                &fleet) == DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("renewEveryMs must be above 0 and below leaseTtlMs (2000 ms)"));
    CHECK(depositkit_fleet_join(url, templ, "{\"ttl\":1}", &fleet) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("unknown key \"ttl\""));

    char bad[512];
    snprintf(bad, sizeof bad, "postgres://app:%s@127.0.0.1:notaport/deposits", SECRET);
    CHECK(depositkit_fleet_join(bad, templ, NULL, &fleet) == DEPOSITKIT_STATUS_CONFIGURATION);
    char *msg = last_error();
    CHECK(strstr(msg, SECRET) == NULL);
    free(msg);
    snprintf(bad, sizeof bad, "postgres://app:%s@127.0.0.1:1/deposits?connect_timeout=5", SECRET);
    CHECK(depositkit_fleet_join(bad, templ, NULL, &fleet) == DEPOSITKIT_STATUS_NETWORK);
    CHECK(last_error_contains("127.0.0.1:1/deposits"));
    msg = last_error();
    CHECK(strstr(msg, SECRET) == NULL);
    free(msg);
    CHECK(fleet == NULL);
    depositkit_fleet_free(NULL);
}

/* Bad input on a joined member gets its status; the password of its URL is in no message. */
static void test_typed_errors(const depositkit_fleet *fleet) {
    char *out = NULL;
    CHECK(depositkit_fleet_add_owner(fleet, "0x5B38DA6A701C568545DCFCB03FCB875F56BEDDC4", NULL,
                                     NULL) == DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("already registered"));
    char *msg = last_error();
    CHECK(strstr(msg, SECRET) == NULL);
    free(msg);
    CHECK(depositkit_fleet_add_owner(fleet, "0x123", NULL, NULL) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("'0x123'"));
    CHECK(depositkit_fleet_add_owner(fleet, UNKNOWN, "{\"chainId\":196}", NULL) ==
          DEPOSITKIT_STATUS_CONFIGURATION);
    CHECK(last_error_contains("196"));

    CHECK(depositkit_fleet_remove_owner(fleet, UNKNOWN) == DEPOSITKIT_STATUS_NOT_FOUND);
    CHECK(last_error_contains(UNKNOWN));
    CHECK(depositkit_fleet_deposit_addresses(fleet, UNKNOWN, &out) == DEPOSITKIT_STATUS_NOT_FOUND);
    CHECK(last_error_contains(UNKNOWN));
    CHECK(depositkit_fleet_deposit_addresses(fleet, "0x123", &out) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("'0x123'"));
    CHECK(depositkit_fleet_deposit_addresses(fleet, OWNER, NULL) ==
          DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_contains("out_json must not be NULL"));
    CHECK(depositkit_fleet_request(fleet, UNKNOWN, "recover", NULL, 1000, &out) ==
          DEPOSITKIT_STATUS_NOT_FOUND);
    CHECK(last_error_contains("is not registered"));
    CHECK(depositkit_fleet_request(fleet, OWNER, "explode", NULL, 1000, &out) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("\"explode\""));
    CHECK(depositkit_fleet_request(fleet, OWNER, "sweep", NULL, 1000, &out) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("needs depositId"));
    CHECK(depositkit_fleet_request(fleet, OWNER, "recover", "{\"depositId\":\"d1\"}", 1000, &out) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("takes no depositId"));
    CHECK(out == NULL);

    char *next = NULL;
    CHECK(depositkit_fleet_events(fleet, "v1.nope", 10, 0, &out, &next) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("cursor"));
    CHECK(depositkit_fleet_events(fleet, NULL, 0, 0, &out, &next) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("max_events must be at least 1"));
    CHECK(depositkit_fleet_events(fleet, NULL, 10, 0, NULL, &next) ==
          DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_contains("out_events_json must not be NULL"));
    CHECK(depositkit_fleet_owners(NULL, &out) == DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_contains("fleet must not be NULL"));
    CHECK(depositkit_fleet_add_owner(fleet, NULL, NULL, NULL) == DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_contains("owner must not be NULL"));
    CHECK(out == NULL && next == NULL);
}

/* Owners registered and removed from any member. */
static void test_owners(const depositkit_fleet *a, const depositkit_fleet *b) {
    char *added = NULL;
    CHECK(depositkit_fleet_add_owner(b, UNKNOWN, NULL, &added) == DEPOSITKIT_STATUS_OK);
    CHECK(added != NULL && strcmp(added, UNKNOWN) == 0);
    depositkit_string_free(added);
    char *owners = NULL;
    CHECK(depositkit_fleet_owners(a, &owners) == DEPOSITKIT_STATUS_OK);
    char want[256];
    snprintf(want, sizeof want, "[\"%s\",\"%s\"]", OWNER, UNKNOWN);
    CHECK(owners != NULL && strcmp(owners, want) == 0);
    depositkit_string_free(owners);
    CHECK(depositkit_fleet_remove_owner(a, UNKNOWN) == DEPOSITKIT_STATUS_OK);
    CHECK(depositkit_fleet_owners(b, &owners) == DEPOSITKIT_STATUS_OK);
    snprintf(want, sizeof want, "[\"%s\"]", OWNER);
    CHECK(owners != NULL && strcmp(owners, want) == 0);
    depositkit_string_free(owners);
}

/* The log from the start, resumed from a saved cursor. */
static void test_log(const depositkit_fleet *fleet) {
    char end[256] = "";
    int total = read_all(fleet, 1000, NULL, end, sizeof end);
    CHECK(total >= 3); /* at least detected, processing, credited */
    CHECK(strncmp(end, "v1.", 3) == 0);

    /* The first event alone, then the next total - 1 from its cursor: exactly the events up to
     * `end`, nothing twice, nothing skipped (events committed meanwhile come after `end`). */
    char *first = NULL;
    char *after_first = NULL;
    CHECK(depositkit_fleet_events(fleet, NULL, 1, 0, &first, &after_first) ==
          DEPOSITKIT_STATUS_OK);
    CHECK(each_event(first, NULL, NULL) == 1);
    char first_cursor[256] = "";
    CHECK(json_string(first, "cursor", first_cursor, sizeof first_cursor));
    CHECK(after_first != NULL && strcmp(first_cursor, after_first) == 0);
    char *rest = NULL;
    char *after_rest = NULL;
    CHECK(depositkit_fleet_events(fleet, after_first, (size_t)(total - 1), 0, &rest,
                                  &after_rest) == DEPOSITKIT_STATUS_OK);
    CHECK(each_event(rest, NULL, NULL) == total - 1);
    CHECK(after_rest != NULL && strcmp(after_rest, end) == 0);
    CHECK(rest != NULL && strstr(rest, first_cursor) == NULL);
    depositkit_string_free(first);
    depositkit_string_free(after_first);
    depositkit_string_free(rest);
    depositkit_string_free(after_rest);

    /* From the end: only what was committed since (nothing, and the same cursor back, when the
     * fleet stayed idle), never an event already read. */
    char *later = NULL;
    char *next = NULL;
    CHECK(depositkit_fleet_events(fleet, end, 100, 0, &later, &next) == DEPOSITKIT_STATUS_OK);
    int n = each_event(later, NULL, NULL);
    CHECK(n >= 0);
    CHECK(later != NULL && strstr(later, end) == NULL);
    CHECK(next != NULL && (n == 0) == (strcmp(next, end) == 0));
    depositkit_string_free(later);
    depositkit_string_free(next);
}

static void test_fleet(const depositkit_devnet *devnet, const char *services_url,
                       const char *database_url) {
    char templ[1024];
    template_json(templ, sizeof templ, services_url);
    test_join_errors(database_url, templ);

    /* The holder joins with the password in its URL: the test server ignores it. */
    char secret_url[1024];
    with_password(secret_url, sizeof secret_url, database_url, SECRET);
    const depositkit_fleet *holder = join(secret_url, templ, "holder");
    if (holder == NULL) {
        return;
    }
    char *node = NULL;
    CHECK(depositkit_fleet_node_id(holder, &node) == DEPOSITKIT_STATUS_OK);
    CHECK(node != NULL && strlen(node) > 0 && strstr(node, SECRET) == NULL);
    depositkit_string_free(node);

    /* The owner, in mixed case, with a destination of its own: Arbitrum, not Base. */
    char *added = NULL;
    CHECK(depositkit_fleet_add_owner(holder, OWNER_GIVEN, "{\"chainId\":42161,\"token\":\"usdc\"}",
                                     &added) == DEPOSITKIT_STATUS_OK);
    CHECK(added != NULL && strcmp(added, OWNER) == 0);
    depositkit_string_free(added);

    /* A command no holder finishes in time: TIMEOUT. Asked at once, before the holder's next
     * tick claimed the owner and started its client (only then are its commands run; once the
     * client runs, a recovery with nothing to recover may end before the requester looks). It
     * stays queued: the holder runs it later, and a recovery is harmless. */
    char *out = NULL;
    CHECK(depositkit_fleet_request(holder, OWNER, "recover", NULL, 0, &out) ==
          DEPOSITKIT_STATUS_TIMEOUT);
    CHECK(last_error_contains("did not end within 0 ms"));
    CHECK(out == NULL);

    /* A recovery asked of the fleet returns once a holder ran it: the holder now runs the owner
     * (and nothing was stuck). */
    char *recovered = NULL;
    CHECK(OK(depositkit_fleet_request(holder, OWNER, "recover", NULL, WAIT_MS, &recovered)));
    CHECK(recovered != NULL && strcmp(recovered, "[]") == 0);
    depositkit_string_free(recovered);
    char one[128];
    snprintf(one, sizeof one, "[\"%s\"]", OWNER);
    CHECK(runs(holder, one));

    const depositkit_fleet *other = join(database_url, templ, "other");
    if (other == NULL) {
        depositkit_fleet_free(holder);
        return;
    }
    CHECK(runs(other, "[]"));
    test_typed_errors(holder);
    test_owners(holder, other);
    test_subscribe_errors(other);

    /* Callbacks on the member that does not hold the owner: `whole` from the start to the end
     * (stopped by free), `first` until the deposit is detected, then `resumed` from the cursor
     * `first` handled last; `spare` on the holder (stopped by leave). */
    feed *whole = feed_new();
    feed *first = feed_new();
    feed *resumed = feed_new();
    feed *spare = feed_new();
    uint64_t whole_id = subscribe(other, NULL, whole);
    uint64_t first_id = subscribe(other, NULL, first);
    uint64_t spare_id = subscribe(holder, NULL, spare);
    CHECK(whole_id != first_id);

    /* A deposit of 7 USDC on Base, detected by the holder (autoSweep is off). */
    char evm[64] = "";
    CHECK(deposit_address(services_url, evm, sizeof evm));
    /* Any member reads the owner's deposit addresses from the database: the other one too. */
    char *kept = NULL;
    CHECK(OK(depositkit_fleet_deposit_addresses(other, OWNER, &kept)));
    CHECK(kept != NULL && strstr(kept, evm) != NULL && strstr(kept, "\"solana\":\"") != NULL);
    depositkit_string_free(kept);
    CHECK(OK(depositkit_devnet_deposit(devnet, evm, DEPOSITKIT_CHAIN_BASE, USDC, "7000000", NULL,
                                       NULL)));
    char deposit_id[128] = "";
    CHECK(wait_phase(other, "\"phase\":\"detected\"", deposit_id, sizeof deposit_id));
    CHECK(strlen(deposit_id) > 0);

    /* Unsubscribed: user_data released before the call returns, and no callback after it. */
    CHECK(feed_wait_phase(first, 0));
    bool removed = false;
    CHECK(OK(depositkit_fleet_unsubscribe(other, first_id, &removed)));
    CHECK(removed);
    CHECK(frees_of(first) == 1);
    CHECK(OK(depositkit_fleet_unsubscribe(other, first_id, &removed)));
    CHECK(!removed);
    CHECK(frees_of(first) == 1);
    int handled = first->count;
    CHECK(handled > 0 && handled <= MAX_SEEN);
    char saved[CURSOR_SIZE] = "";
    snprintf(saved, sizeof saved, "%s", handled > 0 ? first->cursors[handled - 1] : "");
    uint64_t resumed_id = subscribe(other, saved, resumed);
    CHECK(resumed_id != first_id);

    /* The member that does not hold the owner asks for the sweep; the holder runs it. */
    char args[256];
    snprintf(args, sizeof args, "{\"depositId\":\"%s\"}", deposit_id);
    char *result = NULL;
    CHECK(OK(depositkit_fleet_request(other, OWNER, "sweep", args, WAIT_MS, &result)));
    CHECK(!runs_owner(other));
    char result_id[128] = "";
    char raw[64] = "";
    CHECK(json_string(result, "depositId", result_id, sizeof result_id) &&
          strcmp(result_id, deposit_id) == 0);
    CHECK(json_contains(result, "\"status\":\"success\""));
    CHECK(json_string(result, "rawAmount", raw, sizeof raw) && strcmp(raw, DELIVERED) == 0);
    depositkit_string_free(result);

    /* The fleet's metrics are in the process's metrics text: this process's members ran three
     * commands (the two recoveries, one of them timed out for its requester, then the sweep),
     * none failed, and hold the one owner. */
    CHECK(metric_becomes("depositkit_fleet_commands_total{outcome=\"done\"}", "3"));
    CHECK(metric_becomes("depositkit_fleet_commands_total{outcome=\"failed\"}", "0"));
    CHECK(metric_becomes("depositkit_fleet_owners_held", "1"));

    /* Credited at the owner's own destination, exactly the delivered amount, once. */
    char credited_id[128] = "";
    CHECK(wait_phase(other, "\"phase\":\"credited\"", credited_id, sizeof credited_id));
    CHECK(strcmp(credited_id, deposit_id) == 0);
    char *balance = NULL;
    CHECK(OK(depositkit_devnet_ledger_balance(devnet, OWNER, DEPOSITKIT_CHAIN_ARBITRUM, USDC,
                                              &balance)));
    CHECK(balance != NULL && strcmp(balance, DELIVERED) == 0);
    depositkit_string_free(balance);
    CHECK(OK(depositkit_devnet_ledger_balance(devnet, OWNER, DEPOSITKIT_CHAIN_BASE, USDC,
                                              &balance)));
    CHECK(balance != NULL && strcmp(balance, "0") == 0);
    depositkit_string_free(balance);

    /* Asked again: the holder's client answers with the sweep it did or refuses; nothing more
     * is delivered. */
    depositkit_status again =
        depositkit_fleet_request(other, OWNER, "sweep", args, WAIT_MS, &result);
    CHECK(again == DEPOSITKIT_STATUS_OK || again == DEPOSITKIT_STATUS_SWEEP);
    if (again == DEPOSITKIT_STATUS_OK) {
        CHECK(json_contains(result, deposit_id));
        depositkit_string_free(result);
    } else {
        CHECK(last_error_contains(deposit_id));
    }
    CHECK(OK(depositkit_devnet_ledger_balance(devnet, OWNER, DEPOSITKIT_CHAIN_ARBITRUM, USDC,
                                              &balance)));
    CHECK(balance != NULL && strcmp(balance, DELIVERED) == 0);
    depositkit_string_free(balance);
    char end[256];
    phase_scan credited = {"\"phase\":\"credited\"", 0, ""};
    CHECK(read_all(holder, 7, &credited, end, sizeof end) > 0);
    CHECK(credited.found == 1);

    /* The callbacks got the deposit's lifecycle, detected before credited, with its id. */
    CHECK(feed_wait_phase(whole, 1) && feed_wait_phase(resumed, 1));
    pthread_mutex_lock(&whole->lock);
    CHECK(whole->detected_at >= 0 && whole->detected_at < whole->credited_at);
    CHECK(strcmp(whole->detected_id, deposit_id) == 0);
    CHECK(strcmp(whole->credited_id, deposit_id) == 0);
    pthread_mutex_unlock(&whole->lock);
    pthread_mutex_lock(&resumed->lock);
    CHECK(strcmp(resumed->credited_id, deposit_id) == 0);
    pthread_mutex_unlock(&resumed->lock);

    /* In the log's order, nothing skipped or twice: `whole` alone, and `first` then `resumed`,
     * are the log as the pull API reads it. */
    feed *pulled = feed_new();
    pull_all(other, pulled);
    CHECK(pulled->count >= 3);
    CHECK(feed_wait_count(whole, pulled->count));
    CHECK(feed_wait_count(resumed, pulled->count - handled));
    pthread_mutex_lock(&whole->lock);
    CHECK(same_events(pulled, whole, NULL));
    pthread_mutex_unlock(&whole->lock);
    pthread_mutex_lock(&resumed->lock);
    CHECK(same_events(pulled, first, resumed));
    pthread_mutex_unlock(&resumed->lock);
    feed_delete(pulled);
    uint64_t errors = 1;
    CHECK(OK(depositkit_fleet_callback_errors(other, &errors)));
    CHECK(errors == 0);

    /* A failure of the holder's client: SWEEP with its message. */
    CHECK(depositkit_fleet_request(other, OWNER, "sweep", "{\"depositId\":\"no-such-deposit\"}",
                                   WAIT_MS, &result) == DEPOSITKIT_STATUS_SWEEP);
    CHECK(last_error_contains("no-such-deposit"));

    /* A destination change, through the holder, stored with the owner. */
    CHECK(OK(depositkit_fleet_request(other, OWNER, "set_destination",
                                      "{\"destination\":{\"chainId\":8453}}", WAIT_MS, &result)));
    CHECK(json_contains(result, "\"chainId\":8453"));
    depositkit_string_free(result);

    test_log(other);

    /* Leaving hands the owner over at once: the next command is run by the other member. It
     * stops the holder's subscription (releasing its user_data, once) and refuses new ones. */
    CHECK(frees_of(spare) == 0);
    CHECK(OK(depositkit_fleet_leave(holder)));
    CHECK(frees_of(spare) == 1);
    CHECK(OK(depositkit_fleet_leave(holder)));
    CHECK(frees_of(spare) == 1);
    CHECK(OK(depositkit_fleet_unsubscribe(holder, spare_id, &removed)));
    CHECK(!removed);
    feed *late = feed_new();
    uint64_t late_id = 0;
    CHECK(depositkit_fleet_subscribe(holder, NULL, on_fleet_event, late, on_feed_free, &late_id) ==
          DEPOSITKIT_STATUS_DEPOSIT_SDK);
    CHECK(last_error_contains("left the fleet"));
    CHECK(frees_of(late) == 1 && late_id == 0);
    feed_delete(late);
    CHECK(runs(holder, "[]"));
    CHECK(OK(depositkit_fleet_request(other, OWNER, "recover", NULL, WAIT_MS, &recovered)));
    depositkit_string_free(recovered);
    CHECK(runs(other, one));
    char *owners = NULL;
    CHECK(depositkit_fleet_owners(holder, &owners) == DEPOSITKIT_STATUS_DEPOSIT_SDK);
    CHECK(last_error_contains("left the fleet"));
    CHECK(depositkit_fleet_node_id(holder, &node) == DEPOSITKIT_STATUS_OK);
    depositkit_string_free(node);

    /* Freed without leaving: the subscriptions still on it stop, each user_data released once. */
    CHECK(frees_of(whole) == 0 && frees_of(resumed) == 0);
    depositkit_fleet_free(holder);
    depositkit_fleet_free(other);
    CHECK(frees_of(whole) == 1 && frees_of(resumed) == 1);
    CHECK(frees_of(first) == 1 && frees_of(spare) == 1);
    feed_delete(whole);
    feed_delete(first);
    feed_delete(resumed);
    feed_delete(spare);
}

int main(void) {
    const char *database_url = require_env("test_fleet", "DEPOSITKIT_TEST_FLEET_URL");
    const depositkit_devnet *devnet = NULL;
    if (depositkit_devnet_start(NULL, false, &devnet) != DEPOSITKIT_STATUS_OK) {
        char *msg = last_error();
        fprintf(stderr, "test_fleet: cannot start the devnet: %s\n", msg);
        free(msg);
        return 2;
    }
    char *services_url = NULL;
    CHECK(depositkit_devnet_services_url(devnet, &services_url) == DEPOSITKIT_STATUS_OK);

    test_fleet(devnet, services_url, database_url);

    depositkit_string_free(services_url);
    depositkit_devnet_free(devnet);
    return summary();
}
