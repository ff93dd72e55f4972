/*
 * The user-lookup client through the C ABI, using only include/depositkit.h, against a real
 * depositkit-devnet server.
 *
 * scripts/test-c.sh starts `depositkit-devnet serve --demo` and passes the server and the demo
 * credentials in the environment:
 *   DEPOSITKIT_TEST_USER_RPC_URL     http://127.0.0.1:PORT/user-rpc
 *   DEPOSITKIT_TEST_PROJECT_ID       DEPOSITKIT_TEST_SERVER_KEY
 *   DEPOSITKIT_TEST_USER_UUID        DEPOSITKIT_TEST_USER_TOKEN
 *   DEPOSITKIT_TEST_JWT_UID          DEPOSITKIT_TEST_EVM_ADDRESS
 *   DEPOSITKIT_TEST_SOLANA_ADDRESS
 * The server runs with --enable-fault-injection: test_faults() posts to /devnet/faults over a
 * plain socket to make it answer 429/503 or late, and checks retries, NETWORK and TIMEOUT.
 *
 * Built with gcc -std=c11 -Wall -Wextra -Wpedantic -Werror and linked twice by
 * scripts/test-c.sh: against libdepositkit.so and statically against libdepositkit.a.
 * Prints "N passed, M failed" and exits non-zero on any failure.
 */
#define _POSIX_C_SOURCE 200809L

#include "check.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The settings from the environment. */
static const char *url;
static const char *project_id;
static const char *server_key;
static const char *user_uuid;
static const char *user_token;
static const char *jwt_uid;
static const char *evm_address;
static const char *solana_address;


/* For secrets: says only that the message holds one, never prints it. */
static int last_error_lacks(const char *secret) {
    char *msg = last_error();
    int absent = strstr(msg, secret) == NULL;
    if (!absent) {
        fprintf(stderr, "  the last error contains a secret it must not show\n");
    }
    free(msg);
    return absent;
}

static int last_error_is_empty(void) {
    char *msg = last_error();
    int empty = msg[0] == '\0';
    if (!empty) {
        fprintf(stderr, "  last error \"%s\", expected none\n", msg);
    }
    free(msg);
    return empty;
}

/* The JSON-RPC error code of the last error, or 0 when it carried none (NOT_FOUND). */
static int64_t last_error_rpc_code(void) {
    int64_t code = 42;
    char *data = NULL;
    depositkit_status st = depositkit_last_error_rpc(&code, &data);
    if (st == DEPOSITKIT_STATUS_NOT_FOUND) {
        CHECK(code == 42 && data == NULL); /* nothing written */
        return 0;
    }
    CHECK(st == DEPOSITKIT_STATUS_OK);
    depositkit_string_free(data);
    return code;
}

static const depositkit_user_rpc_client *new_client(const char *key) {
    depositkit_user_rpc_options options;
    depositkit_user_rpc_options_init(&options);
    options.timeout_ms = 5000;
    options.initial_backoff_ms = 10;
    options.user_agent = "depositkit-c-test/1.0";
    const depositkit_user_rpc_client *client = NULL;
    depositkit_status st = depositkit_user_rpc_client_new(url, project_id, key, &options, &client);
    CHECK(st == DEPOSITKIT_STATUS_OK);
    CHECK(client != NULL);
    return client;
}

static void test_options(void) {
    depositkit_user_rpc_options options;
    memset(&options, 0xab, sizeof options);
    depositkit_user_rpc_options_init(&options);
    CHECK(options.timeout_ms == 10000);
    CHECK(options.max_retries == 3);
    CHECK(options.initial_backoff_ms == 100);
    CHECK(options.user_agent == NULL);
    depositkit_user_rpc_options_init(NULL); /* accepted, ignored */

    /* NULL options: the defaults. */
    const depositkit_user_rpc_client *client = NULL;
    CHECK(depositkit_user_rpc_client_new(url, project_id, server_key, NULL, &client) ==
          DEPOSITKIT_STATUS_OK);
    CHECK(client != NULL);
    depositkit_user_rpc_client_free(client);
    depositkit_user_rpc_client_free(NULL); /* accepted, ignored */

    /* A zero timeout is refused, and out_client is not written. */
    options.timeout_ms = 0;
    client = NULL;
    CHECK(depositkit_user_rpc_client_new(url, project_id, server_key, &options, &client) ==
          DEPOSITKIT_STATUS_CONFIGURATION);
    CHECK(client == NULL);
    CHECK(last_error_contains("timeout"));
    CHECK(last_error_lacks(server_key));

    CHECK(depositkit_user_rpc_client_new("ftp://example.com/", project_id, server_key, NULL,
                                         &client) == DEPOSITKIT_STATUS_CONFIGURATION);
    CHECK(last_error_contains("\"ftp://example.com/\""));
    CHECK(client == NULL);
}

static void test_lookups(const depositkit_user_rpc_client *client) {
    char *json = NULL;
    CHECK(depositkit_user_rpc_client_get_user_info(client, user_uuid, user_token, &json) ==
          DEPOSITKIT_STATUS_OK);
    CHECK(last_error_is_empty());
    char field[128];
    snprintf(field, sizeof field, "\"uuid\":\"%s\"", user_uuid);
    CHECK(json_contains(json, field));
    snprintf(field, sizeof field, "\"publicAddress\":\"%s\"", evm_address);
    CHECK(json_contains(json, field));
    CHECK(json_contains(json, solana_address));
    CHECK(json_contains(json, "\"createdAt\":\""));
    CHECK(json_contains(json, "\"phone\":null"));
    depositkit_string_free(json);

    json = NULL;
    CHECK(depositkit_user_rpc_client_get_user_info_by_identity(client, "jwt", jwt_uid, &json) ==
          DEPOSITKIT_STATUS_OK);
    snprintf(field, sizeof field, "\"uuid\":\"%s\"", user_uuid);
    CHECK(json_contains(json, field));
    CHECK(json_contains(json, evm_address));
    depositkit_string_free(json);

    bool member = false;
    CHECK(depositkit_user_rpc_client_is_project_user(client, "evm_chain", evm_address, &member) ==
          DEPOSITKIT_STATUS_OK);
    CHECK(member);
    member = false;
    CHECK(depositkit_user_rpc_client_is_project_user(client, "solana", solana_address, &member) ==
          DEPOSITKIT_STATUS_OK);
    CHECK(member);
    member = true;
    CHECK(depositkit_user_rpc_client_is_project_user(
              client, "evm_chain", "0x0000000000000000000000000000000000000001", &member) ==
          DEPOSITKIT_STATUS_OK);
    CHECK(!member);
    CHECK(last_error_rpc_code() == 0); /* a success leaves no JSON-RPC error */
}

static void test_wrong_key(void) {
    const char *wrong_key = "sk_wrong_key_from_the_c_test";
    const depositkit_user_rpc_client *client = new_client(wrong_key);
    bool member = true;
    CHECK(depositkit_user_rpc_client_is_project_user(client, "evm_chain", evm_address, &member) ==
          DEPOSITKIT_STATUS_AUTHENTICATION);
    CHECK(member); /* not written on failure */
    CHECK(last_error_contains("401"));
    CHECK(last_error_lacks(wrong_key));

    char *json = NULL;
    CHECK(depositkit_user_rpc_client_get_user_info(client, user_uuid, user_token, &json) ==
          DEPOSITKIT_STATUS_AUTHENTICATION);
    CHECK(json == NULL);
    CHECK(last_error_lacks(wrong_key));
    CHECK(last_error_lacks(user_token));
    depositkit_user_rpc_client_free(client);
}

static void test_wrong_token_and_unknown_user(const depositkit_user_rpc_client *client) {
    const char *wrong_token = "st_not_the_token_of_the_c_test";
    char *json = NULL;
    CHECK(depositkit_user_rpc_client_get_user_info(client, user_uuid, wrong_token, &json) ==
          DEPOSITKIT_STATUS_AUTHENTICATION);
    CHECK(json == NULL);
    CHECK(last_error_lacks(wrong_token));
    CHECK(last_error_lacks(server_key));

    int64_t code = 0;
    char *data = NULL;
    CHECK(depositkit_last_error_rpc(&code, &data) == DEPOSITKIT_STATUS_OK);
    CHECK(code == DEPOSITKIT_USER_RPC_INVALID_TOKEN);
    CHECK(code == -32011);
    CHECK(data != NULL && data[0] == '{');
    CHECK(data == NULL || strstr(data, wrong_token) == NULL);
    depositkit_string_free(data);
    /* Reading it changed nothing: the same code again, and the message is still there. */
    CHECK(last_error_rpc_code() == -32011);
    CHECK(last_error_contains("-32011"));
    CHECK(depositkit_last_error_rpc(NULL, NULL) == DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_rpc_code() == -32011);

    const char *stranger = "00000000-0000-4000-8000-000000000000";
    CHECK(depositkit_user_rpc_client_get_user_info(client, stranger, user_token, &json) ==
          DEPOSITKIT_STATUS_NOT_FOUND);
    CHECK(json == NULL);
    CHECK(last_error_contains(stranger));
    CHECK(last_error_rpc_code() == DEPOSITKIT_USER_RPC_USER_NOT_FOUND);

    CHECK(depositkit_user_rpc_client_get_user_info_by_identity(client, "jwt", "nobody", &json) ==
          DEPOSITKIT_STATUS_NOT_FOUND);
    CHECK(last_error_rpc_code() == DEPOSITKIT_USER_RPC_IDENTITY_NOT_FOUND);
}

static void test_bad_arguments(const depositkit_user_rpc_client *client) {
    char *json = NULL;
    CHECK(depositkit_user_rpc_client_get_user_info(client, "not-a-uuid", user_token, &json) ==
          DEPOSITKIT_STATUS_CONFIGURATION);
    CHECK(json == NULL);
    CHECK(last_error_contains("\"not-a-uuid\""));
    CHECK(last_error_lacks(user_token));
    CHECK(last_error_rpc_code() == 0); /* found before any request: no JSON-RPC error */

    CHECK(depositkit_user_rpc_client_get_user_info_by_identity(client, "google", "x", &json) ==
          DEPOSITKIT_STATUS_CONFIGURATION);
    CHECK(last_error_contains("\"google\""));

    bool member = false;
    CHECK(depositkit_user_rpc_client_is_project_user(client, "bitcoin", evm_address, &member) ==
          DEPOSITKIT_STATUS_CONFIGURATION);
    CHECK(last_error_contains("\"bitcoin\""));
    CHECK(depositkit_user_rpc_client_is_project_user(client, "evm_chain", "0x12", &member) ==
          DEPOSITKIT_STATUS_CONFIGURATION);
    CHECK(last_error_contains("\"0x12\""));

    CHECK(depositkit_user_rpc_client_get_user_info(NULL, user_uuid, user_token, &json) ==
          DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_contains("client must not be NULL"));
    CHECK(depositkit_user_rpc_client_get_user_info(client, user_uuid, NULL, &json) ==
          DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_contains("token must not be NULL"));
    CHECK(depositkit_user_rpc_client_is_project_user(client, "evm_chain", evm_address, NULL) ==
          DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_contains("out_is_member must not be NULL"));
    CHECK(json == NULL && !member);
}

/* The port of the devnet server, from the user-rpc URL http://127.0.0.1:PORT/user-rpc. */
static int server_port(void) {
    const char *colon = strrchr(url, ':');
    return colon ? atoi(colon + 1) : -1;
}

/* POSTs `json` to /devnet/faults of the devnet server; returns 1 on an HTTP 2xx answer. */
static int inject_fault(const char *json) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        return 0;
    }
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)server_port());
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    int ok = 0;
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0) {
        char request[512];
        int n = snprintf(request, sizeof request,
                         "POST /devnet/faults HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         "Content-Type: application/json\r\nContent-Length: %zu\r\n"
                         "Connection: close\r\n\r\n%s",
                         strlen(json), json);
        char answer[64] = {0};
        if (n > 0 && write(fd, request, (size_t)n) == n &&
            read(fd, answer, sizeof answer - 1) > 0) {
            ok = strncmp(answer, "HTTP/1.1 2", 10) == 0;
        }
    }
    close(fd);
    return ok;
}

/* A port nothing listens on: bound, then closed again. */
static int closed_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = 0;
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    socklen_t len = sizeof addr;
    int port = -1;
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) == 0 &&
        getsockname(fd, (struct sockaddr *)&addr, &len) == 0) {
        port = ntohs(addr.sin_port);
    }
    close(fd);
    return port;
}

static const depositkit_user_rpc_client *client_for(const char *base_url, uint32_t max_retries,
                                                    uint64_t timeout_ms) {
    depositkit_user_rpc_options options;
    depositkit_user_rpc_options_init(&options);
    options.timeout_ms = timeout_ms;
    options.max_retries = max_retries;
    options.initial_backoff_ms = 5;
    const depositkit_user_rpc_client *client = NULL;
    CHECK(depositkit_user_rpc_client_new(base_url, project_id, server_key, &options, &client) ==
          DEPOSITKIT_STATUS_OK);
    return client;
}

static void test_faults(void) {
    bool member = false;

    /* 429 twice (Retry-After: 0), then the third attempt succeeds. */
    const depositkit_user_rpc_client *patient = client_for(url, 3, 5000);
    CHECK(inject_fault("{\"status\":429,\"count\":2,\"retryAfter\":0}"));
    CHECK(depositkit_user_rpc_client_is_project_user(patient, "evm_chain", evm_address,
                                                     &member) == DEPOSITKIT_STATUS_OK);
    CHECK(member);
    depositkit_user_rpc_client_free(patient);

    /* 503 on every attempt: NETWORK, naming the status and the attempts. */
    const depositkit_user_rpc_client *twice = client_for(url, 2, 5000);
    CHECK(inject_fault("{\"status\":503,\"count\":3}"));
    CHECK(depositkit_user_rpc_client_is_project_user(twice, "evm_chain", evm_address, &member) ==
          DEPOSITKIT_STATUS_NETWORK);
    CHECK(last_error_contains("HTTP 503"));
    CHECK(last_error_contains("after 3 attempts"));
    depositkit_user_rpc_client_free(twice);

    /* A server slower than the timeout: TIMEOUT, without retries. */
    const depositkit_user_rpc_client *hasty = client_for(url, 0, 200);
    CHECK(inject_fault("{\"delayMs\":1500,\"count\":1}"));
    char *json = NULL;
    CHECK(depositkit_user_rpc_client_get_user_info(hasty, user_uuid, user_token, &json) ==
          DEPOSITKIT_STATUS_TIMEOUT);
    CHECK(json == NULL);
    CHECK(last_error_contains("timed out"));
    depositkit_user_rpc_client_free(hasty);

    /* Nothing listening: NETWORK after every attempt. */
    char down_url[64];
    snprintf(down_url, sizeof down_url, "http://127.0.0.1:%d/user-rpc", closed_port());
    const depositkit_user_rpc_client *down = client_for(down_url, 1, 2000);
    CHECK(depositkit_user_rpc_client_is_project_user(down, "evm_chain", evm_address, &member) ==
          DEPOSITKIT_STATUS_NETWORK);
    CHECK(last_error_contains("connection refused"));
    CHECK(last_error_contains(down_url));
    depositkit_user_rpc_client_free(down);
}

int main(void) {
    url = require_env("test_user_rpc", "DEPOSITKIT_TEST_USER_RPC_URL");
    project_id = require_env("test_user_rpc", "DEPOSITKIT_TEST_PROJECT_ID");
    server_key = require_env("test_user_rpc", "DEPOSITKIT_TEST_SERVER_KEY");
    user_uuid = require_env("test_user_rpc", "DEPOSITKIT_TEST_USER_UUID");
    user_token = require_env("test_user_rpc", "DEPOSITKIT_TEST_USER_TOKEN");
    jwt_uid = require_env("test_user_rpc", "DEPOSITKIT_TEST_JWT_UID");
    evm_address = require_env("test_user_rpc", "DEPOSITKIT_TEST_EVM_ADDRESS");
    solana_address = require_env("test_user_rpc", "DEPOSITKIT_TEST_SOLANA_ADDRESS");

    test_options();
    const depositkit_user_rpc_client *client = new_client(server_key);
    test_lookups(client);
    test_wrong_key();
    test_wrong_token_and_unknown_user(client);
    test_bad_arguments(client);
    depositkit_user_rpc_client_free(client);
    test_faults();

    return summary();
}
