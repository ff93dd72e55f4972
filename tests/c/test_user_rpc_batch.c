/*
 * depositkit_user_rpc_client_get_users_info through the C ABI, using only include/depositkit.h,
 * against the depositkit-devnet server scripts/test-c.sh starts (the same environment as
 * test_user_rpc.c): many getUserInfo requests in one JSON-RPC batch, one outcome per request in
 * request order, each failure typed with its status, and the failures of the whole batch.
 *
 * Prints "N passed, M failed" and exits non-zero on any failure.
 */
#define _POSIX_C_SOURCE 200809L

#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *url;
static const char *project_id;
static const char *server_key;
static const char *user_uuid;
static const char *user_token;

static const depositkit_user_rpc_client *new_client(const char *key) {
    depositkit_user_rpc_options options;
    depositkit_user_rpc_options_init(&options);
    options.timeout_ms = 5000;
    const depositkit_user_rpc_client *client = NULL;
    CHECK(depositkit_user_rpc_client_new(url, project_id, key, &options, &client) ==
          DEPOSITKIT_STATUS_OK);
    return client;
}

/* The i-th object of the results array (0-based), copied; NULL past the end. Caller frees. */
static char *item(const char *results, int index) {
    const char *at = results + 1; /* past '[' */
    for (int i = 0;; i++) {
        const char *end = NULL;
        char *object = json_object_copy(at, &end);
        if (object == NULL || i == index) {
            return object;
        }
        free(object);
        at = *end == ',' ? end + 1 : end;
    }
}

static void test_outcomes_in_request_order(const depositkit_user_rpc_client *client) {
    char requests[1024];
    snprintf(requests, sizeof requests,
             "[{\"uuid\":\"%s\",\"token\":\"%s\"},"
             "{\"uuid\":\"not-a-uuid\",\"token\":\"x\"},"
             "{\"uuid\":\"0b0c1a9e-8f7d-4e3a-9b2c-1d0e9f8a7b6c\",\"token\":\"t\"},"
             "{\"uuid\":\"%s\",\"token\":\"wrong-token\"},"
             "{\"uuid\":\"%s\",\"token\":\"%s\"}]",
             user_uuid, user_token, user_uuid, user_uuid, user_token);
    char *results = NULL;
    CHECK(depositkit_user_rpc_client_get_users_info(client, requests, &results) ==
          DEPOSITKIT_STATUS_OK);
    CHECK(results != NULL && results[0] == '[');
    if (results == NULL) {
        return;
    }
    char *first = item(results, 0);
    char uuid[64] = "";
    CHECK(json_contains(first, "{\"user\":{") && json_string(first, "uuid", uuid, sizeof uuid) &&
          strcmp(uuid, user_uuid) == 0);
    char *bad = item(results, 1);
    char expected[64];
    snprintf(expected, sizeof expected, "\"status\":%d", DEPOSITKIT_STATUS_CONFIGURATION);
    CHECK(json_contains(bad, expected) && json_contains(bad, "\"class\":\"ConfigurationError\""));
    CHECK(json_contains(bad, "not-a-uuid"));
    char *unknown = item(results, 2);
    snprintf(expected, sizeof expected, "\"status\":%d", DEPOSITKIT_STATUS_NOT_FOUND);
    CHECK(json_contains(unknown, expected) && json_contains(unknown, "\"code\":-32010"));
    char *wrong = item(results, 3);
    snprintf(expected, sizeof expected, "\"status\":%d", DEPOSITKIT_STATUS_AUTHENTICATION);
    CHECK(json_contains(wrong, expected) && json_contains(wrong, "\"code\":-32011"));
    CHECK(strstr(wrong, "wrong-token") == NULL);
    char *last = item(results, 4);
    CHECK(last != NULL && first != NULL && strcmp(last, first) == 0);
    CHECK(item(results, 5) == NULL);
    free(first);
    free(bad);
    free(unknown);
    free(wrong);
    free(last);
    depositkit_string_free(results);

    results = NULL;
    CHECK(depositkit_user_rpc_client_get_users_info(client, "[]", &results) ==
          DEPOSITKIT_STATUS_OK);
    CHECK(results != NULL && strcmp(results, "[]") == 0);
    depositkit_string_free(results);
}

static void test_failures_of_the_whole_batch(const depositkit_user_rpc_client *client) {
    char *results = NULL;
    CHECK(depositkit_user_rpc_client_get_users_info(client, "{\"uuid\":1}", &results) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("not an array"));
    CHECK(depositkit_user_rpc_client_get_users_info(
              client, "[{\"uuid\":\"u\",\"token\":\"secret-tok\"},{\"uuid\":\"u\"}]", &results) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("item 1"));
    char *msg = last_error();
    CHECK(strstr(msg, "secret-tok") == NULL);
    free(msg);
    CHECK(depositkit_user_rpc_client_get_users_info(client, NULL, &results) ==
          DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(depositkit_user_rpc_client_get_users_info(NULL, "[]", &results) ==
          DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(results == NULL); /* never written on failure */

    const depositkit_user_rpc_client *wrong_key = new_client("sk_wrong");
    char requests[512];
    snprintf(requests, sizeof requests, "[{\"uuid\":\"%s\",\"token\":\"%s\"}]", user_uuid,
             user_token);
    CHECK(depositkit_user_rpc_client_get_users_info(wrong_key, requests, &results) ==
          DEPOSITKIT_STATUS_AUTHENTICATION);
    CHECK(results == NULL);
    depositkit_user_rpc_client_free(wrong_key);
}

int main(void) {
    url = require_env("test_user_rpc_batch", "DEPOSITKIT_TEST_USER_RPC_URL");
    project_id = require_env("test_user_rpc_batch", "DEPOSITKIT_TEST_PROJECT_ID");
    server_key = require_env("test_user_rpc_batch", "DEPOSITKIT_TEST_SERVER_KEY");
    user_uuid = require_env("test_user_rpc_batch", "DEPOSITKIT_TEST_USER_UUID");
    user_token = require_env("test_user_rpc_batch", "DEPOSITKIT_TEST_USER_TOKEN");

    const depositkit_user_rpc_client *client = new_client(server_key);
    test_outcomes_in_request_order(client);
    test_failures_of_the_whole_batch(client);
    depositkit_user_rpc_client_free(client);
    return summary();
}
