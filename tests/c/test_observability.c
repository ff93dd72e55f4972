/*
 * Logs, metrics and health through the C ABI (issue 16), against a devnet started in this
 * process:
 *
 * - depositkit_set_log_callback at TRACE captures a whole deposit flow (25 USDC on Base,
 *   detected, swept, credited) and a refused user lookup: the records are there with their
 *   levels, loggers and JSON fields (deposit id, chain, token, state transition, owner, service,
 *   HTTP status, latency), and no secret — the server key, its Basic credential, the balance-API
 *   and onramp partner keys, any JWT — appears anywhere in the captured text;
 * - with the level at WARN nothing below arrives; a NULL callback turns logging off;
 * - depositkit_metrics_text counts the flow; depositkit_deposit_client_health reports it.
 *
 * Built and run by scripts/test-c.sh like every tests/c program. Prints "N passed, M failed".
 */
#define _POSIX_C_SOURCE 200809L
#define DEPOSITKIT_DEVNET 1

#include "check.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WAIT_SECONDS 120
#define SERVER_KEY "sk_observability_Zq8Wm3Lp0Tn5Rb7Kd2Hx"
#define BALANCE_KEY "balkey_observability_Vc4Nj6Ys1Fq9Gt3Pw8"
#define PARTNER_KEY "partner_observability_Ue5Ko7Ia2Xl4Cm6Dr1"
/* base64("demo-project:" SERVER_KEY), the Basic credential the client sends. */
#define BASIC_PREFIX "ZGVtby1wcm9qZWN0OnNrX29ic2VydmFiaWxpdHlf"

typedef struct {
    pthread_mutex_t lock;
    char *text;
    size_t len;
    size_t cap;
    int by_level[6];
} capture;

static capture captured = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, {0}};

static void append(capture *c, const char *s) {
    size_t n = strlen(s);
    if (c->len + n + 1 > c->cap) {
        size_t cap = (c->cap + n + 1) * 2;
        char *grown = realloc(c->text, cap);
        if (grown == NULL) {
            abort();
        }
        c->text = grown;
        c->cap = cap;
    }
    memcpy(c->text + c->len, s, n + 1);
    c->len += n;
}

/* The log callback: any thread; appends "LEVEL target message fields\n". */
static void on_log(void *user_data, uint32_t level, const char *target, const char *message,
                   const char *fields_json) {
    capture *c = user_data;
    char lvl[8];
    snprintf(lvl, sizeof lvl, "%u ", level);
    pthread_mutex_lock(&c->lock);
    if (level < 6) {
        c->by_level[level]++;
    }
    append(c, lvl);
    append(c, target);
    append(c, " ");
    append(c, message);
    append(c, " ");
    append(c, fields_json);
    append(c, "\n");
    pthread_mutex_unlock(&c->lock);
}

static int captured_has(const char *needle) {
    pthread_mutex_lock(&captured.lock);
    int found = captured.text != NULL && strstr(captured.text, needle) != NULL;
    pthread_mutex_unlock(&captured.lock);
    return found;
}

/* A line of the capture holding every one of the needles (NULL-terminated list). */
static int line_with(const char *const *needles) {
    pthread_mutex_lock(&captured.lock);
    int found = 0;
    const char *line = captured.text;
    while (line != NULL && *line != '\0' && !found) {
        const char *end = strchr(line, '\n');
        size_t n = end != NULL ? (size_t)(end - line) : strlen(line);
        char *copy = malloc(n + 1);
        if (copy == NULL) {
            abort();
        }
        memcpy(copy, line, n);
        copy[n] = '\0';
        found = 1;
        for (const char *const *needle = needles; *needle != NULL; needle++) {
            found = found && strstr(copy, *needle) != NULL;
        }
        free(copy);
        line = end != NULL ? end + 1 : NULL;
    }
    pthread_mutex_unlock(&captured.lock);
    return found;
}

static void reset_capture(void) {
    pthread_mutex_lock(&captured.lock);
    captured.len = 0;
    if (captured.text != NULL) {
        captured.text[0] = '\0';
    }
    memset(captured.by_level, 0, sizeof captured.by_level);
    pthread_mutex_unlock(&captured.lock);
}

static const depositkit_deposit_client *new_client(const char *services_url, const char *owner) {
    char config[2048];
    snprintf(config, sizeof config,
             "{\"ownerAddress\":\"%s\",\"destination\":{\"chainId\":42161},"
             "\"servicesUrl\":\"%s\",\"pollingIntervalMs\":50,\"minPollingIntervalMs\":20,"
             "\"sweepRetryDelayMs\":30,\"httpInitialBackoffMs\":5,\"callTimeoutMs\":%d,"
             "\"funding\":{\"enabled\":true,\"apiKey\":\"" BALANCE_KEY "\"},"
             "\"onramp\":{\"enabled\":true,\"apiKey\":\"" PARTNER_KEY "\"}}",
             owner, services_url, WAIT_SECONDS * 1000);
    const depositkit_deposit_client *client = NULL;
    depositkit_status st = depositkit_deposit_client_new(config, &client);
    CHECK(st == DEPOSITKIT_STATUS_OK);
    if (st != DEPOSITKIT_STATUS_OK) {
        char *msg = last_error();
        fprintf(stderr, "  new: %s\n", msg);
        free(msg);
    }
    return client;
}

/* Runs one deposit to credited; its id into id. */
static int credited_flow(const depositkit_devnet *devnet, const depositkit_deposit_client *client,
                         char *id, size_t id_size) {
    char *addresses = NULL;
    if (depositkit_deposit_client_initialize(client, &addresses) != DEPOSITKIT_STATUS_OK) {
        CHECK(!"initialize");
        return 0;
    }
    char evm[64];
    CHECK(json_string(addresses, "evm", evm, sizeof evm));
    depositkit_string_free(addresses);
    CHECK(depositkit_devnet_deposit(devnet, evm, DEPOSITKIT_CHAIN_BASE, DEPOSITKIT_TOKEN_TYPE_USDC,
                                    "25000000", NULL, NULL) == DEPOSITKIT_STATUS_OK);
    char *found = NULL;
    CHECK(depositkit_deposit_client_poll_now(client, &found) == DEPOSITKIT_STATUS_OK);
    int ok = found != NULL && json_string(found, "id", id, id_size);
    CHECK(ok);
    depositkit_string_free(found);
    int credited = 0;
    for (int i = 0; i < 64 && !credited; i++) {
        char *event = NULL;
        if (depositkit_deposit_client_next_event(client, WAIT_SECONDS * 1000, &event) !=
                DEPOSITKIT_STATUS_OK ||
            event == NULL) {
            break;
        }
        credited = strstr(event, "\"phase\":\"credited\"") != NULL && strstr(event, id) != NULL;
        depositkit_string_free(event);
    }
    CHECK(credited);
    return ok && credited;
}

static double sample(const char *text, const char *series) {
    const char *at = strstr(text, series);
    while (at != NULL && at != text && at[-1] != '\n') {
        at = strstr(at + 1, series);
    }
    if (at == NULL) {
        return 0.0;
    }
    return strtod(at + strlen(series), NULL);
}

int main(void) {
    const depositkit_devnet *devnet = NULL;
    CHECK(depositkit_devnet_start(NULL, false, &devnet) == DEPOSITKIT_STATUS_OK);
    char *services_url = NULL;
    CHECK(depositkit_devnet_services_url(devnet, &services_url) == DEPOSITKIT_STATUS_OK);

    CHECK(depositkit_set_log_callback(6, on_log, &captured) == DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(depositkit_set_log_callback(DEPOSITKIT_LOG_LEVEL_TRACE, on_log, &captured) ==
          DEPOSITKIT_STATUS_OK);

    char *before = NULL;
    CHECK(depositkit_metrics_text(&before) == DEPOSITKIT_STATUS_OK);
    CHECK(depositkit_metrics_text(NULL) == DEPOSITKIT_STATUS_NULL_ARGUMENT);

    /* A user lookup refused: the server key goes out as Basic auth and must not be logged. */
    char rpc_url[512];
    snprintf(rpc_url, sizeof rpc_url, "%s/user-rpc", services_url);
    const depositkit_user_rpc_client *rpc = NULL;
    CHECK(depositkit_user_rpc_client_new(rpc_url, "demo-project", SERVER_KEY, NULL, &rpc) ==
          DEPOSITKIT_STATUS_OK);
    char *user = NULL;
    CHECK(depositkit_user_rpc_client_get_user_info(rpc, "8d0c1b7e-2a51-4c6e-9f0a-3b8d6e2f1c47",
                                                   "st_token_Yp3Vd8", &user) !=
          DEPOSITKIT_STATUS_OK);
    depositkit_user_rpc_client_free(rpc);

    const char *owner = "0x00000000000000000000000000000000000c0de7";
    const depositkit_deposit_client *client = new_client(services_url, owner);
    char id[128] = "";
    if (client != NULL && credited_flow(devnet, client, id, sizeof id)) {
        /* The records, with their fields. */
        const char *detected[] = {"3 depositkit.deposit.engine.watch deposit detected",
                                  "\"deposit_id\":\"", id, "\"chain\":8453", "\"token\":\"USDC\"",
                                  "\"owner\":\"0x00000000000000000000000000000000000c0de7\"",
                                  NULL};
        CHECK(line_with(detected));
        const char *sweeping[] = {"3 depositkit.deposit.records deposit state changed", id,
                                  "\"from\":\"queued\"", "\"to\":\"sweeping\"", "\"attempt\":",
                                  "\"owner\":\"0x00000000000000000000000000000000000c0de7\"",
                                  NULL};
        CHECK(line_with(sweeping));
        const char *credited[] = {"3 depositkit.deposit.records deposit state changed", id,
                                  "\"to\":\"credited\"", NULL};
        CHECK(line_with(credited));
        const char *http[] = {"4 depositkit.http HTTP request", "\"service\":\"ua\"",
                              "\"http_status\":\"200\"", "\"latency_ms\":", NULL};
        CHECK(line_with(http));
        const char *refused[] = {"4 depositkit.http HTTP request", "\"service\":\"user-rpc\"",
                                 "\"http_status\":\"401\"", NULL};
        CHECK(line_with(refused));
        const char *poll[] = {"4 depositkit.deposit.engine.watch poll", "\"service\":\"account\"",
                              NULL};
        CHECK(line_with(poll));
        CHECK(captured.by_level[5] > 0); /* TRACE: events queued */

        /* No secret anywhere. */
        CHECK(!captured_has(SERVER_KEY));
        CHECK(!captured_has(BASIC_PREFIX));
        CHECK(!captured_has(BALANCE_KEY));
        CHECK(!captured_has(PARTNER_KEY));
        CHECK(!captured_has("st_token_Yp3Vd8"));
        CHECK(!captured_has("eyJ")); /* no JWT (header or payload) */

        /* Metrics counted the flow. */
        char *after = NULL;
        CHECK(depositkit_metrics_text(&after) == DEPOSITKIT_STATUS_OK);
        const char *series =
            "depositkit_deposits_credited_total{chain=\"8453\",token=\"USDC\"} ";
        CHECK(sample(after, series) - sample(before, series) == 1.0);
        CHECK(strstr(after, "# TYPE depositkit_deposits_credited_total counter") != NULL);
        CHECK(sample(after, "depositkit_sweep_latency_seconds_count ") >= 1.0);
        depositkit_string_free(after);

        /* Health. */
        char *health = NULL;
        CHECK(depositkit_deposit_client_health(client, 0, &health) == DEPOSITKIT_STATUS_OK);
        CHECK(health != NULL && strstr(health, "\"backlog\":0") != NULL);
        CHECK(health != NULL && strstr(health, "\"sessionValid\":true") != NULL);
        CHECK(health != NULL && strstr(health, "\"ready\":true") != NULL);
        CHECK(health != NULL && strstr(health, "\"stuckAfterMs\":900000") != NULL);
        depositkit_string_free(health);
        CHECK(depositkit_deposit_client_health(NULL, 0, &health) ==
              DEPOSITKIT_STATUS_NULL_ARGUMENT);

        /* At WARN, a second flow sends nothing below WARN. */
        CHECK(depositkit_set_log_callback(DEPOSITKIT_LOG_LEVEL_WARN, on_log, &captured) ==
              DEPOSITKIT_STATUS_OK);
        reset_capture();
        const depositkit_deposit_client *second =
            new_client(services_url, "0x00000000000000000000000000000000000c0de8");
        char id2[128];
        if (second != NULL) {
            CHECK(credited_flow(devnet, second, id2, sizeof id2));
            depositkit_deposit_client_free(second);
        }
        CHECK(captured.by_level[3] == 0 && captured.by_level[4] == 0 && captured.by_level[5] == 0);
    }
    /* Off: NULL callback. */
    CHECK(depositkit_set_log_callback(DEPOSITKIT_LOG_LEVEL_TRACE, NULL, NULL) ==
          DEPOSITKIT_STATUS_OK);
    reset_capture();
    depositkit_deposit_client_free(client);
    CHECK(captured.len == 0);

    depositkit_string_free(before);
    depositkit_string_free(services_url);
    depositkit_devnet_free(devnet);
    free(captured.text);
    return summary();
}
