/*
 * The deposit client through the C ABI, using only include/depositkit.h, against a devnet
 * started in this process with depositkit_devnet_start (the library's `devnet` feature, on by
 * default; DEPOSITKIT_DEVNET declares it).
 *
 * - the deposit flow end to end: 25 USDC to the EVM deposit address on Base, detected by
 *   depositkit_deposit_client_poll_now, swept automatically; the `credited` event is seen by a
 *   callback (on the library's dispatcher thread, handing over through a pthread condition
 *   variable) and through depositkit_deposit_client_next_event, and the ledger at the
 *   destination holds exactly the delivered amount of the sweep result;
 * - a deposit below the $0.50 threshold (0.3 USDC): a `below_threshold` event, nothing swept;
 * - configuration errors, and the calls that take NULL.
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
#include <time.h>
#include <unistd.h>

/* How long to wait for a sweep: generous, so that the test passes under valgrind too. */
#define WAIT_SECONDS 120

static const uint32_t USDC = DEPOSITKIT_TOKEN_TYPE_USDC;
static const uint64_t BASE = DEPOSITKIT_CHAIN_BASE;

/* --- a callback collecting credited events (user_data: a collector) ------------------------- */

#define MAX_CREDITED 8

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int events;
    int bad_length; /* event_json_len disagreed with strlen(event_json) */
    int frees;      /* calls of user_data_free */
    int credited;
    char credited_id[MAX_CREDITED][64];
    char credited_tx[MAX_CREDITED][128];
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
        strstr(event_json, "\"phase\":\"credited\"") != NULL && c->credited < MAX_CREDITED) {
        json_string(event_json, "id", c->credited_id[c->credited], sizeof c->credited_id[0]);
        json_string(event_json, "transactionId", c->credited_tx[c->credited],
                    sizeof c->credited_tx[0]);
        c->credited++;
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

/* Waits until the callback saw deposit `id` credited; copies its transaction id. */
static int wait_credited(collector *c, const char *id, char *tx, size_t tx_size) {
    struct timespec deadline = deadline_in(WAIT_SECONDS);
    int found = 0;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        for (int i = 0; i < c->credited && !found; i++) {
            if (strcmp(c->credited_id[i], id) == 0) {
                snprintf(tx, tx_size, "%s", c->credited_tx[i]);
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

static int frees_of(collector *c) {
    pthread_mutex_lock(&c->lock);
    int n = c->frees;
    pthread_mutex_unlock(&c->lock);
    return n;
}

/* --- helpers ---------------------------------------------------------------------------------- */

static const depositkit_deposit_client *new_client(const char *services_url, const char *owner) {
    char config[1024];
    snprintf(config, sizeof config,
             "{\"ownerAddress\":\"%s\",\"destination\":{\"chainId\":8453},"
             "\"servicesUrl\":\"%s\",\"pollingIntervalMs\":50,\"minPollingIntervalMs\":20,"
             "\"sweepRetryDelayMs\":30,\"httpInitialBackoffMs\":5,\"callTimeoutMs\":%d}",
             owner, services_url, WAIT_SECONDS * 1000);
    const depositkit_deposit_client *client = NULL;
    CHECK(depositkit_deposit_client_new(config, &client) == DEPOSITKIT_STATUS_OK);
    CHECK(client != NULL);
    return client;
}

/* Initializes the client; copies its EVM deposit address into evm. */
static int initialize(const depositkit_deposit_client *client, char *evm, size_t size) {
    char *addresses = NULL;
    depositkit_status st = depositkit_deposit_client_initialize(client, &addresses);
    CHECK(st == DEPOSITKIT_STATUS_OK);
    if (st != DEPOSITKIT_STATUS_OK) {
        char *msg = last_error();
        fprintf(stderr, "  initialize: %s\n", msg);
        free(msg);
        return 0;
    }
    CHECK(json_contains(addresses, "\"solana\":\""));
    int ok = json_string(addresses, "evm", evm, size);
    CHECK(ok && strlen(evm) == 42);
    depositkit_string_free(addresses);
    return ok;
}

/* --- tests ------------------------------------------------------------------------------------ */

static void test_configuration_errors(const char *services_url) {
    const depositkit_deposit_client *client = NULL;
    char config[1024];

    /* X Layer is a deposit source only. */
    snprintf(config, sizeof config,
             "{\"ownerAddress\":\"0x52908400098527886E0F7030069857D2E4169EE7\","
             "\"destination\":{\"chainId\":196},\"servicesUrl\":\"%s\"}",
             services_url);
    CHECK(depositkit_deposit_client_new(config, &client) == DEPOSITKIT_STATUS_CONFIGURATION);
    CHECK(client == NULL); /* not written on failure */
    CHECK(last_error_contains("destination.chainId 196"));
    CHECK(last_error_contains("X Layer"));

    /* An owner that is no EVM address: the message names the option and quotes the value. */
    snprintf(config, sizeof config,
             "{\"ownerAddress\":\"0x1234\",\"destination\":{\"chainId\":8453},"
             "\"servicesUrl\":\"%s\"}",
             services_url);
    CHECK(depositkit_deposit_client_new(config, &client) == DEPOSITKIT_STATUS_CONFIGURATION);
    CHECK(last_error_contains("ownerAddress must be a valid EVM address: \"0x1234\""));

    /* USDT cannot be delivered on Base. */
    snprintf(config, sizeof config,
             "{\"ownerAddress\":\"0x52908400098527886E0F7030069857D2E4169EE7\","
             "\"destination\":{\"chainId\":8453,\"token\":\"USDT\"},\"servicesUrl\":\"%s\"}",
             services_url);
    CHECK(depositkit_deposit_client_new(config, &client) == DEPOSITKIT_STATUS_CONFIGURATION);
    CHECK(last_error_contains("destination.token USDT cannot be delivered on Base"));

    /* Not JSON. */
    CHECK(depositkit_deposit_client_new("{\"ownerAddress\":", &client) ==
          DEPOSITKIT_STATUS_CONFIGURATION);
    CHECK(last_error_contains("invalid configuration JSON"));

    CHECK(depositkit_deposit_client_new(NULL, &client) == DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_contains("config_json must not be NULL"));
    CHECK(client == NULL);
}

static void test_flow(const depositkit_devnet *devnet, const char *services_url) {
    const depositkit_deposit_client *client =
        new_client(services_url, "0x00000000000000000000000000000000000c0de1");
    if (client == NULL) {
        return;
    }
    collector events;
    collector_init(&events);
    collector closing; /* a second subscription, left for close() to release */
    collector_init(&closing);
    uint64_t sub = 0;
    uint64_t sub2 = 0;
    CHECK(depositkit_deposit_client_subscribe(client, on_event, &events, on_free, &sub) ==
          DEPOSITKIT_STATUS_OK);
    CHECK(depositkit_deposit_client_subscribe(client, on_event, &closing, on_free, &sub2) ==
          DEPOSITKIT_STATUS_OK);
    CHECK(sub != 0 && sub2 != 0 && sub != sub2);

    char evm[64];
    if (!initialize(client, evm, sizeof evm)) {
        depositkit_deposit_client_free(client);
        collector_destroy(&events);
        collector_destroy(&closing);
        return;
    }
    depositkit_client_status status = DEPOSITKIT_CLIENT_STATUS_ERROR;
    CHECK(depositkit_deposit_client_status(client, &status) == DEPOSITKIT_STATUS_OK);
    CHECK(status == DEPOSITKIT_CLIENT_STATUS_READY);
    CHECK(strcmp(depositkit_client_status_str(status), "ready") == 0);

    /* 25 USDC on Base to the EVM deposit address. */
    char *tx_hash = NULL;
    CHECK(depositkit_devnet_deposit(devnet, evm, BASE, USDC, "25000000", NULL, &tx_hash) ==
          DEPOSITKIT_STATUS_OK);
    CHECK(json_contains(tx_hash, "0x"));
    depositkit_string_free(tx_hash);

    char *found = NULL;
    CHECK(depositkit_deposit_client_poll_now(client, &found) == DEPOSITKIT_STATUS_OK);
    CHECK(json_contains(found, "\"phase\":\"detected\""));
    CHECK(json_contains(found, "\"amount\":\"25\""));
    char id[64] = "";
    CHECK(json_string(found, "id", id, sizeof id));
    depositkit_string_free(found);

    /* The callback sees it credited... */
    char tx[128] = "";
    CHECK(wait_credited(&events, id, tx, sizeof tx));
    CHECK(strlen(tx) > 2);

    /* ...and so does the pull queue. */
    int pulled_credited = 0;
    for (int i = 0; i < 64 && !pulled_credited; i++) {
        char *event = NULL;
        depositkit_status st =
            depositkit_deposit_client_next_event(client, WAIT_SECONDS * 1000, &event);
        if (st != DEPOSITKIT_STATUS_OK) {
            CHECK(st == DEPOSITKIT_STATUS_OK);
            break;
        }
        pulled_credited = strstr(event, "\"phase\":\"credited\"") != NULL &&
                          strstr(event, id) != NULL && strstr(event, tx) != NULL;
        depositkit_string_free(event);
    }
    CHECK(pulled_credited);

    /* The ledger at the destination holds exactly what the sweep delivered. */
    char *result = NULL;
    CHECK(depositkit_deposit_client_sweep_result(client, id, &result) == DEPOSITKIT_STATUS_OK);
    CHECK(json_contains(result, "\"status\":\"success\""));
    char delivered[80] = "";
    char result_tx[128] = "";
    CHECK(json_string(result, "rawAmount", delivered, sizeof delivered));
    CHECK(json_string(result, "transactionId", result_tx, sizeof result_tx));
    CHECK(strcmp(result_tx, tx) == 0);
    depositkit_string_free(result);

    char *destination = NULL;
    char destination_address[64] = "";
    CHECK(depositkit_deposit_client_get_destination(client, &destination) == DEPOSITKIT_STATUS_OK);
    CHECK(json_string(destination, "address", destination_address, sizeof destination_address));
    CHECK(strcmp(destination_address, "0x00000000000000000000000000000000000c0de1") == 0);
    depositkit_string_free(destination);

    char *at_destination = NULL;
    CHECK(depositkit_devnet_ledger_balance(devnet, destination_address, BASE, USDC,
                                           &at_destination) == DEPOSITKIT_STATUS_OK);
    CHECK(at_destination != NULL && strcmp(at_destination, delivered) == 0);
    if (at_destination != NULL && strcmp(at_destination, delivered) != 0) {
        fprintf(stderr, "  ledger %s, delivered %s\n", at_destination, delivered);
    }
    depositkit_string_free(at_destination);
    char *left = NULL;
    CHECK(depositkit_devnet_ledger_balance(devnet, evm, BASE, USDC, &left) ==
          DEPOSITKIT_STATUS_OK);
    CHECK(left != NULL && strcmp(left, "0") == 0);
    depositkit_string_free(left);

    char *pending = NULL;
    CHECK(depositkit_deposit_client_pending_deposits(client, &pending) == DEPOSITKIT_STATUS_OK);
    CHECK(pending != NULL && strcmp(pending, "[]") == 0);
    depositkit_string_free(pending);

    /* Unsubscribing releases user_data once; close releases the other subscription. */
    bool removed = false;
    CHECK(depositkit_deposit_client_unsubscribe(client, sub, &removed) == DEPOSITKIT_STATUS_OK);
    CHECK(removed);
    CHECK(frees_of(&events) == 1);
    CHECK(depositkit_deposit_client_unsubscribe(client, sub, &removed) == DEPOSITKIT_STATUS_OK);
    CHECK(!removed);
    CHECK(depositkit_deposit_client_close(client) == DEPOSITKIT_STATUS_OK);
    CHECK(frees_of(&closing) == 1);
    CHECK(depositkit_deposit_client_status(client, &status) == DEPOSITKIT_STATUS_OK);
    CHECK(status == DEPOSITKIT_CLIENT_STATUS_IDLE);

    /* Closed: what describes the running client fails (its answer would be stale)... */
    char *stale = NULL;
    bool flag = false;
    CHECK(depositkit_deposit_client_get_destination(client, &stale) ==
          DEPOSITKIT_STATUS_DEPOSIT_SDK);
    CHECK(last_error_contains("the client is closed"));
    CHECK(depositkit_deposit_client_pending_deposits(client, &stale) ==
          DEPOSITKIT_STATUS_DEPOSIT_SDK);
    CHECK(depositkit_deposit_client_sweep_result(client, id, &stale) ==
          DEPOSITKIT_STATUS_DEPOSIT_SDK);
    CHECK(depositkit_deposit_client_refund_result(client, id, &stale) ==
          DEPOSITKIT_STATUS_DEPOSIT_SDK);
    CHECK(depositkit_deposit_client_notifications(client, &stale) ==
          DEPOSITKIT_STATUS_DEPOSIT_SDK);
    CHECK(depositkit_deposit_client_dismiss_notification(client, id, &flag) ==
          DEPOSITKIT_STATUS_DEPOSIT_SDK);
    CHECK(depositkit_deposit_client_stop_watching(client) == DEPOSITKIT_STATUS_DEPOSIT_SDK);
    CHECK(last_error_contains("the client is closed"));
    CHECK(stale == NULL && !flag);
    /* ...what stays true still answers: the event log, and a release close() already did. */
    uint64_t last_id = 0;
    CHECK(depositkit_deposit_client_last_event_id(client, &last_id) == DEPOSITKIT_STATUS_OK);
    CHECK(last_id > 0);
    char *log = NULL;
    CHECK(depositkit_deposit_client_events_since(client, 0, 0, &log) == DEPOSITKIT_STATUS_OK);
    CHECK(json_contains(log, id));
    depositkit_string_free(log);
    CHECK(depositkit_deposit_client_unsubscribe(client, sub2, &removed) == DEPOSITKIT_STATUS_OK);
    CHECK(!removed);
    CHECK(depositkit_deposit_client_close(client) == DEPOSITKIT_STATUS_OK);

    depositkit_deposit_client_free(client);
    CHECK(frees_of(&events) == 1 && frees_of(&closing) == 1);
    CHECK(events.bad_length == 0 && events.events >= 6);

    collector_destroy(&events);
    collector_destroy(&closing);
}

static void test_below_threshold(const depositkit_devnet *devnet, const char *services_url) {
    const depositkit_deposit_client *client =
        new_client(services_url, "0x00000000000000000000000000000000000c0de2");
    char evm[64];
    if (client == NULL || !initialize(client, evm, sizeof evm)) {
        depositkit_deposit_client_free(client);
        return;
    }
    /* 0.3 USDC: above dust, below the $0.50 minimum. */
    CHECK(depositkit_devnet_deposit(devnet, evm, BASE, USDC, "300000", NULL, NULL) ==
          DEPOSITKIT_STATUS_OK);
    char *found = NULL;
    CHECK(depositkit_deposit_client_poll_now(client, &found) == DEPOSITKIT_STATUS_OK);
    CHECK(json_contains(found, "\"phase\":\"below_threshold\""));
    CHECK(json_contains(found, "\"amount\":\"0.3\""));
    CHECK(json_contains(found, "minimum"));
    depositkit_string_free(found);

    /* The event is in the pull queue too; nothing is pending or swept. */
    int seen = 0;
    for (int i = 0; i < 16 && !seen; i++) {
        char *event = NULL;
        if (depositkit_deposit_client_next_event(client, 0, &event) != DEPOSITKIT_STATUS_OK) {
            break;
        }
        seen = strstr(event, "\"phase\":\"below_threshold\"") != NULL;
        depositkit_string_free(event);
    }
    CHECK(seen);
    char *pending = NULL;
    CHECK(depositkit_deposit_client_pending_deposits(client, &pending) == DEPOSITKIT_STATUS_OK);
    CHECK(pending != NULL && strcmp(pending, "[]") == 0);
    depositkit_string_free(pending);
    char *held = NULL;
    CHECK(depositkit_devnet_ledger_balance(devnet, evm, BASE, USDC, &held) ==
          DEPOSITKIT_STATUS_OK);
    CHECK(held != NULL && strcmp(held, "300000") == 0);
    depositkit_string_free(held);

    /* A quiet queue: TIMEOUT, and nothing written. */
    char *event = NULL;
    CHECK(depositkit_deposit_client_next_event(client, 20, &event) == DEPOSITKIT_STATUS_TIMEOUT);
    CHECK(event == NULL);
    CHECK(last_error_contains("no event arrived within 20 ms"));
    depositkit_deposit_client_free(client);
}

static void test_null_arguments(const depositkit_devnet *devnet) {
    char *text = NULL;
    uint64_t id = 0;
    CHECK(depositkit_deposit_client_initialize(NULL, &text) == DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_contains("client must not be NULL"));
    CHECK(depositkit_deposit_client_subscribe(NULL, on_event, NULL, NULL, &id) ==
          DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(depositkit_devnet_services_url(devnet, NULL) == DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_contains("out_url must not be NULL"));
    CHECK(depositkit_devnet_deposit(devnet, "0x52908400098527886E0F7030069857D2E4169EE7", BASE, 99,
                                    "1", NULL, NULL) == DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("unknown token 99"));
    CHECK(text == NULL && id == 0);
    depositkit_deposit_client_free(NULL);
    depositkit_devnet_free(NULL);
    CHECK(strcmp(depositkit_client_status_str(77), "unknown") == 0);
}

/* storePath: a client started again on the store finds the deposit where the first left it, and
 * the event log replays the same events with the same ids. */
static void test_restart(const depositkit_devnet *devnet, const char *services_url) {
    const char *owner = "0x00000000000000000000000000000000000c0de3";
    char store[256];
    snprintf(store, sizeof store, "/tmp/depositkit-test-c-store-%ld.sqlite", (long)getpid());
    char config[1024];
    snprintf(config, sizeof config,
             "{\"ownerAddress\":\"%s\",\"destination\":{\"chainId\":8453},"
             "\"servicesUrl\":\"%s\",\"minPollingIntervalMs\":20,\"autoSweep\":false,"
             "\"storePath\":\"%s\",\"callTimeoutMs\":%d}",
             owner, services_url, store, WAIT_SECONDS * 1000);

    const depositkit_deposit_client *first = NULL;
    CHECK(depositkit_deposit_client_new(config, &first) == DEPOSITKIT_STATUS_OK);
    char evm[64];
    if (first == NULL || !initialize(first, evm, sizeof evm)) {
        depositkit_deposit_client_free(first);
        return;
    }
    char *tx_hash = NULL;
    CHECK(depositkit_devnet_deposit(devnet, evm, BASE, USDC, "6000000", NULL, &tx_hash) ==
          DEPOSITKIT_STATUS_OK);
    depositkit_string_free(tx_hash);
    char *found = NULL;
    CHECK(depositkit_deposit_client_poll_now(first, &found) == DEPOSITKIT_STATUS_OK);
    char id[64] = "";
    CHECK(json_string(found, "id", id, sizeof id));
    depositkit_string_free(found);

    /* Pulled events carry their id in the log. */
    char *event = NULL;
    CHECK(depositkit_deposit_client_next_event(first, 0, &event) == DEPOSITKIT_STATUS_OK);
    CHECK(json_contains(event, "\"id\":1,") || json_contains(event, "\"id\":1}"));
    CHECK(json_contains(event, "\"at\":"));
    depositkit_string_free(event);

    uint64_t last = 0;
    CHECK(depositkit_deposit_client_last_event_id(first, &last) == DEPOSITKIT_STATUS_OK);
    CHECK(last >= 3);
    char *before = NULL;
    CHECK(depositkit_deposit_client_events_since(first, 0, 0, &before) == DEPOSITKIT_STATUS_OK);
    CHECK(before != NULL && before[0] == '[' && json_contains(before, id));
    char *too_far = NULL;
    CHECK(depositkit_deposit_client_events_since(first, last + 1, 0, &too_far) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(too_far == NULL);
    CHECK(depositkit_deposit_client_close(first) == DEPOSITKIT_STATUS_OK);
    depositkit_deposit_client_free(first);

    const depositkit_deposit_client *second = NULL;
    CHECK(depositkit_deposit_client_new(config, &second) == DEPOSITKIT_STATUS_OK);
    if (second == NULL || !initialize(second, evm, sizeof evm)) {
        depositkit_deposit_client_free(second);
        depositkit_string_free(before);
        return;
    }
    char *pending = NULL;
    CHECK(depositkit_deposit_client_pending_deposits(second, &pending) == DEPOSITKIT_STATUS_OK);
    CHECK(json_contains(pending, id));
    depositkit_string_free(pending);
    /* The same events, same ids, then the new run's. */
    char *after = NULL;
    CHECK(depositkit_deposit_client_events_since(second, 0, 0, &after) == DEPOSITKIT_STATUS_OK);
    size_t prefix = before != NULL ? strlen(before) - 1 : 0; /* without the closing ']' */
    CHECK(after != NULL && before != NULL && strncmp(after, before, prefix) == 0);
    depositkit_string_free(after);
    depositkit_string_free(before);
    uint64_t now = 0;
    CHECK(depositkit_deposit_client_last_event_id(second, &now) == DEPOSITKIT_STATUS_OK);
    CHECK(now > last);
    char *history = NULL;
    CHECK(depositkit_deposit_client_deposit_history(second, id, &history) ==
          DEPOSITKIT_STATUS_OK);
    CHECK(json_contains(history, "\"phase\":\"detected\""));
    depositkit_string_free(history);
    CHECK(depositkit_deposit_client_close(second) == DEPOSITKIT_STATUS_OK);
    depositkit_deposit_client_free(second);

    remove_store(store);
}

int main(void) {
    const depositkit_devnet *devnet = NULL;
    if (depositkit_devnet_start(NULL, false, &devnet) != DEPOSITKIT_STATUS_OK) {
        char *msg = last_error();
        fprintf(stderr, "test_deposit: cannot start the devnet: %s\n", msg);
        free(msg);
        return 2;
    }
    char *services_url = NULL;
    CHECK(depositkit_devnet_services_url(devnet, &services_url) == DEPOSITKIT_STATUS_OK);
    CHECK(json_contains(services_url, "http://127.0.0.1:"));

    test_configuration_errors(services_url);
    test_null_arguments(devnet);
    test_flow(devnet, services_url);
    test_below_threshold(devnet, services_url);
    test_restart(devnet, services_url);

    depositkit_string_free(services_url);
    depositkit_devnet_free(devnet);

    return summary();
}
