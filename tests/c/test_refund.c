/*
 * Refunds, notification records and the transaction history through the C ABI, using only
 * include/depositkit.h, against a devnet started in this process with depositkit_devnet_start
 * (the library's `devnet` feature, on by default; DEPOSITKIT_DEVNET declares it).
 *
 * - automatic refund: a client configured with "refund": {"enabled": true, ...} and
 *   "notifications"; every sweep of a 5 USDC deposit fails (depositkit_devnet_fail_next_sweeps),
 *   so the deposit is refunded to its sender: the "refund:update" event with status "success"
 *   reaches an event callback, the sender's ledger balance grows by the deposit less the gas,
 *   depositkit_deposit_client_refund_result agrees, and a second refund is refused with
 *   DEPOSITKIT_STATUS_REFUND;
 * - the history lists the refund (tag "refund"), and depositkit_deposit_client_get_transaction
 *   finds it by its hash (and NOT_FOUND for an unknown one);
 * - a notifications callback fires with the deposit's record (its refund attached), and a
 *   dismissal reaches it as "[]"; unsubscribing releases its user_data once;
 * - stuck funds, an HTTP fault of the account service, and the calls that take NULL.
 *
 * Built with gcc -std=c11 -Wall -Wextra -Wpedantic -Werror and linked twice by
 * scripts/test-c.sh: against libdepositkit.so and statically against libdepositkit.a (with
 * -lpthread -ldl -lm). Needs no environment. Prints "N passed, M failed" and exits non-zero on
 * any failure.
 */
#define _POSIX_C_SOURCE 200809L
#define DEPOSITKIT_DEVNET 1

#include "check.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* How long to wait for sweeps and refunds: generous, so that the test passes under valgrind. */
#define WAIT_SECONDS 120

static const uint32_t USDC = DEPOSITKIT_TOKEN_TYPE_USDC;
static const uint64_t BASE = DEPOSITKIT_CHAIN_BASE;
static const char *const SENDER = "0x00000000000000000000000000000000005e4de1";

/* --- an event callback collecting finished refunds (user_data: a collector) ------------------ */

#define MAX_REFUNDS 8

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int events;
    int bad_length; /* event_json_len disagreed with strlen(event_json) */
    int frees;      /* calls of user_data_free */
    int failed;     /* "deposit:lifecycle" events in phase "failed" */
    int refunds;    /* "refund:update" events in status "success" */
    char refund_id[MAX_REFUNDS][64];
    char refund_tx[MAX_REFUNDS][128];
    char refund_to[MAX_REFUNDS][64];
} collector;

static void collector_init(collector *c) {
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->changed, NULL);
}

static void collector_destroy(collector *c) {
    pthread_cond_destroy(&c->changed);
    pthread_mutex_destroy(&c->lock);
}

/* Runs on the client's dispatcher thread; event_json is valid only during the call. */
static int on_event(void *user_data, const char *event_json, size_t event_json_len) {
    collector *c = user_data;
    pthread_mutex_lock(&c->lock);
    c->events++;
    if (strlen(event_json) != event_json_len) {
        c->bad_length++;
    }
    if (strstr(event_json, "\"type\":\"deposit:lifecycle\"") != NULL &&
        strstr(event_json, "\"phase\":\"failed\"") != NULL) {
        c->failed++;
    }
    if (strstr(event_json, "\"type\":\"refund:update\"") != NULL &&
        strstr(event_json, "\"status\":\"success\"") != NULL && c->refunds < MAX_REFUNDS) {
        json_string(event_json, "depositId", c->refund_id[c->refunds], sizeof c->refund_id[0]);
        json_string(event_json, "txHash", c->refund_tx[c->refunds], sizeof c->refund_tx[0]);
        json_string(event_json, "refundedTo", c->refund_to[c->refunds], sizeof c->refund_to[0]);
        c->refunds++;
    }
    pthread_cond_broadcast(&c->changed);
    pthread_mutex_unlock(&c->lock);
    return 0;
}

static void on_free(void *user_data) {
    collector *c = user_data;
    pthread_mutex_lock(&c->lock);
    c->frees++;
    pthread_mutex_unlock(&c->lock);
}

/* Waits until the callback saw deposit `id` refunded; copies the refund's hash and receiver. */
static int wait_refunded(collector *c, const char *id, char *tx, size_t tx_size, char *to,
                         size_t to_size) {
    struct timespec deadline = deadline_in(WAIT_SECONDS);
    int found = 0;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        for (int i = 0; i < c->refunds && !found; i++) {
            if (strcmp(c->refund_id[i], id) == 0) {
                snprintf(tx, tx_size, "%s", c->refund_tx[i]);
                snprintf(to, to_size, "%s", c->refund_to[i]);
                found = 1;
            }
        }
        if (found || pthread_cond_timedwait(&c->changed, &c->lock, &deadline) == ETIMEDOUT) {
            break;
        }
    }
    pthread_mutex_unlock(&c->lock);
    return found;
}

/* --- a notifications callback keeping the latest records (user_data: a notes) --------------- */

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int calls;
    int bad_length;
    int frees;
    char last[8192]; /* the latest records_json (cut when longer) */
} notes;

static void notes_init(notes *n) {
    memset(n, 0, sizeof *n);
    pthread_mutex_init(&n->lock, NULL);
    pthread_cond_init(&n->changed, NULL);
}

static void notes_destroy(notes *n) {
    pthread_cond_destroy(&n->changed);
    pthread_mutex_destroy(&n->lock);
}

/* Runs on the client's dispatcher thread; records_json is valid only during the call. */
static int on_notes(void *user_data, const char *records_json, size_t records_json_len) {
    notes *n = user_data;
    pthread_mutex_lock(&n->lock);
    n->calls++;
    if (strlen(records_json) != records_json_len) {
        n->bad_length++;
    }
    snprintf(n->last, sizeof n->last, "%s", records_json);
    pthread_cond_broadcast(&n->changed);
    pthread_mutex_unlock(&n->lock);
    return 0;
}

static void on_notes_free(void *user_data) {
    notes *n = user_data;
    pthread_mutex_lock(&n->lock);
    n->frees++;
    pthread_mutex_unlock(&n->lock);
}

/* Waits until the latest records contain every one of the (up to two) needles. */
static int wait_notes(notes *n, const char *needle, const char *needle2) {
    struct timespec deadline = deadline_in(WAIT_SECONDS);
    int found = 0;
    pthread_mutex_lock(&n->lock);
    for (;;) {
        found = n->calls > 0 && strstr(n->last, needle) != NULL &&
                (needle2 == NULL || strstr(n->last, needle2) != NULL);
        if (found || pthread_cond_timedwait(&n->changed, &n->lock, &deadline) == ETIMEDOUT) {
            break;
        }
    }
    if (!found) {
        fprintf(stderr, "  the notifications callback last got %s\n", n->last);
    }
    pthread_mutex_unlock(&n->lock);
    return found;
}

/* Waits until the latest records are exactly `want`. */
static int wait_notes_exactly(notes *n, const char *want) {
    struct timespec deadline = deadline_in(WAIT_SECONDS);
    int found = 0;
    pthread_mutex_lock(&n->lock);
    for (;;) {
        found = n->calls > 0 && strcmp(n->last, want) == 0;
        if (found || pthread_cond_timedwait(&n->changed, &n->lock, &deadline) == ETIMEDOUT) {
            break;
        }
    }
    pthread_mutex_unlock(&n->lock);
    return found;
}

/* --- helpers ---------------------------------------------------------------------------------- */


static char *ledger(const depositkit_devnet *devnet, const char *address) {
    char *raw = NULL;
    return MUST(depositkit_devnet_ledger_balance(devnet, address, BASE, USDC, &raw), raw);
}

/* --- tests ------------------------------------------------------------------------------------ */

static void test_auto_refund(const depositkit_devnet *devnet, const char *services_url) {
    char config[1024];
    snprintf(config, sizeof config,
             "{\"ownerAddress\":\"0x00000000000000000000000000000000005e0001\","
             "\"destination\":{\"chainId\":8453},\"servicesUrl\":\"%s\","
             "\"pollingIntervalMs\":50,\"minPollingIntervalMs\":20,\"sweepRetryDelayMs\":30,"
             "\"httpInitialBackoffMs\":5,\"callTimeoutMs\":%d,"
             "\"refund\":{\"enabled\":true,\"delayMs\":20,\"maxAttempts\":2},"
             "\"notifications\":{\"durationMs\":0}}",
             services_url, WAIT_SECONDS * 1000);
    const depositkit_deposit_client *client = NULL;
    CHECK(depositkit_deposit_client_new(config, &client) == DEPOSITKIT_STATUS_OK);
    if (client == NULL) {
        return;
    }
    char *text = NULL;
    text = MUST(depositkit_deposit_client_refund_config(client, &text), text);
    CHECK(json_contains(text, "\"enabled\":true"));
    CHECK(json_contains(text, "\"refundToSender\":true"));
    depositkit_string_free(text);

    collector events;
    collector_init(&events);
    notes records;
    notes_init(&records);
    uint64_t events_sub = 0;
    uint64_t notes_sub = 0;
    CHECK(depositkit_deposit_client_subscribe(client, on_event, &events, on_free, &events_sub) ==
          DEPOSITKIT_STATUS_OK);
    CHECK(depositkit_deposit_client_subscribe_notifications(client, on_notes, &records,
                                                            on_notes_free,
                                                            &notes_sub) == DEPOSITKIT_STATUS_OK);
    CHECK(events_sub != 0 && notes_sub != 0 && events_sub != notes_sub);

    char *addresses = NULL;
    addresses = MUST(depositkit_deposit_client_initialize(client, &addresses), addresses);
    char evm[64] = "";
    CHECK(json_string(addresses, "evm", evm, sizeof evm) && strlen(evm) == 42);
    depositkit_string_free(addresses);

    char *before = ledger(devnet, SENDER);
    CHECK(before != NULL && strcmp(before, "0") == 0);
    depositkit_string_free(before);

    /* Every sweep attempt fails; the money stays, then goes back to the sender. */
    CHECK(depositkit_devnet_fail_next_sweeps(devnet, 3, false) == DEPOSITKIT_STATUS_OK);
    CHECK(depositkit_devnet_deposit(devnet, evm, BASE, USDC, "5000000", SENDER, NULL) ==
          DEPOSITKIT_STATUS_OK);
    char *found = NULL;
    found = MUST(depositkit_deposit_client_poll_now(client, &found), found);
    char id[64] = "";
    CHECK(json_string(found, "id", id, sizeof id));
    depositkit_string_free(found);

    char tx[128] = "";
    char to[64] = "";
    CHECK(wait_refunded(&events, id, tx, sizeof tx, to, sizeof to));
    CHECK(strlen(tx) > 2);
    CHECK(strcasecmp(to, SENDER) == 0); /* the receiver may come back EIP-55 checksummed */
    if (strcasecmp(to, SENDER) != 0) {
        fprintf(stderr, "  refunded to %s\n", to);
    }
    pthread_mutex_lock(&events.lock);
    CHECK(events.failed >= 1);
    pthread_mutex_unlock(&events.lock);

    /* 5 USDC back on Base, less $0.03 of gas; nothing left in the deposit address. */
    char *after = ledger(devnet, SENDER);
    CHECK(after != NULL && strcmp(after, "4970000") == 0);
    depositkit_string_free(after);
    char *left = ledger(devnet, evm);
    CHECK(left != NULL && strcmp(left, "0") == 0);
    depositkit_string_free(left);

    char *result = NULL;
    result = MUST(depositkit_deposit_client_refund_result(client, id, &result), result);
    CHECK(json_contains(result, "\"status\":\"success\""));
    CHECK(json_contains(result, "\"reason\":\"sweep_failed\""));
    CHECK(json_contains(result, tx));
    depositkit_string_free(result);

    /* Never twice. */
    char *again = NULL;
    CHECK(depositkit_deposit_client_refund(client, id, NULL, &again) == DEPOSITKIT_STATUS_REFUND);
    CHECK(again == NULL);
    CHECK(last_error_contains("already refunded"));
    char *eligibility = NULL;
    eligibility = MUST(depositkit_deposit_client_can_refund(client, id, &eligibility), eligibility);
    CHECK(json_contains(eligibility, "\"eligible\":false"));
    depositkit_string_free(eligibility);

    /* The history lists the refund; one transaction by its hash. */
    char *history = NULL;
    history =
        MUST(depositkit_deposit_client_get_transactions(client, 1, 20, &history), history);
    CHECK(json_contains(history, "\"tag\":\"refund\""));
    CHECK(json_contains(history, tx));
    CHECK(json_contains(history, "\"page\":1"));
    depositkit_string_free(history);
    char *single = NULL;
    single = MUST(depositkit_deposit_client_get_transaction(client, tx, &single), single);
    CHECK(json_contains(single, "\"tag\":\"refund\""));
    CHECK(json_contains(single, id));
    depositkit_string_free(single);
    single = NULL;
    CHECK(depositkit_deposit_client_get_transaction(client, "0xnope", &single) ==
          DEPOSITKIT_STATUS_NOT_FOUND);
    CHECK(single == NULL);

    /* The notifications callback got the deposit's record with its refund attached. */
    char want_id[96];
    snprintf(want_id, sizeof want_id, "\"id\":\"%s\"", id);
    CHECK(wait_notes(&records, want_id, "\"refund\":{"));
    CHECK(wait_notes(&records, "\"phase\":\"failed\"", "\"status\":\"success\""));
    char *current = NULL;
    current = MUST(depositkit_deposit_client_notifications(client, &current), current);
    CHECK(json_contains(current, want_id));
    CHECK(json_contains(current, "\"createdAt\":"));
    CHECK(json_contains(current, "\"updatedAt\":"));
    depositkit_string_free(current);

    /* Dismissed by hand (durationMs 0): the callback sees it go. */
    bool dismissed = false;
    CHECK(depositkit_deposit_client_dismiss_notification(client, id, &dismissed) ==
          DEPOSITKIT_STATUS_OK);
    CHECK(dismissed);
    CHECK(depositkit_deposit_client_dismiss_notification(client, id, &dismissed) ==
          DEPOSITKIT_STATUS_OK);
    CHECK(!dismissed);
    CHECK(wait_notes_exactly(&records, "[]"));

    /* Nothing stuck: the refund took the money. */
    char *stuck = NULL;
    stuck = MUST(depositkit_deposit_client_stuck_funds(client, &stuck), stuck);
    CHECK(stuck != NULL && strcmp(stuck, "[]") == 0);
    depositkit_string_free(stuck);

    /* The account service fails every balance read (more than the client's retries). */
    CHECK(depositkit_devnet_inject_service_fault(devnet, "ua", "/v1/balances", 503, 0, 100) ==
          DEPOSITKIT_STATUS_OK);
    stuck = NULL;
    CHECK(depositkit_deposit_client_stuck_funds(client, &stuck) ==
          DEPOSITKIT_STATUS_UNIVERSAL_ACCOUNT);
    CHECK(stuck == NULL);
    CHECK(depositkit_devnet_clear_faults(devnet) == DEPOSITKIT_STATUS_OK);
    stuck = MUST(depositkit_deposit_client_stuck_funds(client, &stuck), stuck);
    depositkit_string_free(stuck);

    /* Unsubscribing releases the notifications' user_data once; free releases the other. */
    bool removed = false;
    CHECK(depositkit_deposit_client_unsubscribe(client, notes_sub, &removed) ==
          DEPOSITKIT_STATUS_OK);
    CHECK(removed);
    pthread_mutex_lock(&records.lock);
    CHECK(records.frees == 1 && records.bad_length == 0);
    pthread_mutex_unlock(&records.lock);
    depositkit_deposit_client_free(client);
    CHECK(events.frees == 1 && events.bad_length == 0);
    CHECK(records.frees == 1);

    collector_destroy(&events);
    notes_destroy(&records);
}

static void test_null_arguments(const depositkit_devnet *devnet) {
    char *text = NULL;
    bool flag = false;
    uint64_t id = 0;
    CHECK(depositkit_deposit_client_refund(NULL, "dep_0", NULL, &text) ==
          DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_contains("client must not be NULL"));
    CHECK(depositkit_deposit_client_subscribe_notifications(NULL, on_notes, NULL, NULL, &id) ==
          DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(depositkit_deposit_client_get_transactions(NULL, 0, 0, &text) ==
          DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(depositkit_deposit_client_get_token_transactions(NULL, BASE, "0x00", NULL, 0, &text) ==
          DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(depositkit_deposit_client_dismiss_notification(NULL, "dep_0", &flag) ==
          DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(depositkit_devnet_inject_service_fault(devnet, NULL, NULL, 500, 0, 1) ==
          DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_contains("service must not be NULL"));
    CHECK(depositkit_devnet_inject_service_fault(devnet, "bank", NULL, 500, 0, 1) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("service must be one of"));
    CHECK(depositkit_devnet_clear_faults(NULL) == DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(text == NULL && !flag && id == 0);
}

int main(void) {
    const depositkit_devnet *devnet = NULL;
    if (depositkit_devnet_start(NULL, false, &devnet) != DEPOSITKIT_STATUS_OK) {
        char *msg = last_error();
        fprintf(stderr, "test_refund: cannot start the devnet: %s\n", msg);
        free(msg);
        return 2;
    }
    char *services_url = NULL;
    CHECK(depositkit_devnet_services_url(devnet, &services_url) == DEPOSITKIT_STATUS_OK);
    CHECK(json_contains(services_url, "http://127.0.0.1:"));

    test_null_arguments(devnet);
    test_auto_refund(devnet, services_url);

    depositkit_string_free(services_url);
    depositkit_devnet_free(devnet);

    return summary();
}
