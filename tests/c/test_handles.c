/*
 * Create/use/free cycles of every handle of include/depositkit.h, for valgrind: every owned
 * string the API hands out is freed with depositkit_string_free, every handle with its _free
 * function, and every subscription's and host provider's user_data is a malloc'ed block that
 * only its user_data_free releases (so a user_data_free that never runs is a definite leak, and
 * the counters below check that each runs exactly once).
 *
 * One cycle, each handle created, used for real (every result checked) and freed:
 * - depositkit_user_rpc_client: a failed constructor, then a client that looks up the demo user
 *   of the depositkit-devnet server scripts/test-c.sh runs (by uuid and by identity, membership),
 *   and a rejected session token, whose JSON-RPC error data is read (depositkit_last_error_rpc);
 * - depositkit_devnet: a failed depositkit_devnet_start_with_chains, then an in-process devnet
 *   (depositkit_devnet_start) with its services URL, deposits, ledger balances, an onramp order
 *   and a chain-balance call that fails (the devnet is not chain-backed);
 * - depositkit_deposit_client: a failed constructor, then a client (autoSweep off, notifications,
 *   funding and the onramp on) with three subscriptions (events, notification records, and one
 *   left for close to release); initialized; a deposit on Base detected by
 *   depositkit_deposit_client_poll_now, swept, credited (seen by the callback and the pull
 *   queue); a deposit on Arbitrum refunded to its sender; a deposit below the threshold listed
 *   as stuck and recovered, then a failing account service (stuck funds fail) and expired
 *   sessions (renewed); the notification records, the history, the onramp; the watcher started
 *   and stopped; then closed (its calls then fail with "closed") and freed;
 * - depositkit_provider_reply: an EVM wallet, a Solana wallet and a balance provider as C
 *   callbacks. Replies answered with a result and with an error (4001), one dropped unanswered
 *   (the request fails), one answered twice and one used after its callback returned (both
 *   refused with INVALID_ARGUMENT). The providers are released by replacement (a wallet URL),
 *   by depositkit_deposit_client_clear_funding_wallet and by close;
 * - depositkit_funding_balances: a list produced by the balance provider, read (also after its
 *   client was freed), misused (index out of range) and freed;
 * - the validation functions that hand out strings, and the last-error message after failures.
 *
 * The number of cycles is argv[1], else $DEPOSITKIT_HANDLE_CYCLES, else 3. scripts/test-c.sh
 * runs this program under valgrind with 1 cycle and with N cycles and compares the bytes still
 * reachable and possibly lost at exit: what the library creates once per process (its tokio
 * runtime, thread locals) must not grow with the number of cycles. The devnet's database is
 * $DEPOSITKIT_HANDLE_DEVNET_DB when set (see db_path below).
 *
 * Needs the environment of scripts/test-c.sh (DEPOSITKIT_TEST_USER_RPC_URL and the demo
 * credentials, see tests/c/test_user_rpc.c); exits 2 without it. Built with gcc -std=c11 -Wall
 * -Wextra -Wpedantic -Werror. Prints "N passed, M failed" and exits non-zero on any failure.
 */
#define _POSIX_C_SOURCE 200809L
#define DEPOSITKIT_DEVNET 1

#include "check.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* How long to wait for the dispatcher's callbacks: generous, for valgrind. */
#define WAIT_SECONDS 120

static const uint32_t USDC = DEPOSITKIT_TOKEN_TYPE_USDC;
static const uint64_t BASE = DEPOSITKIT_CHAIN_BASE;
static const uint64_t ARBITRUM = DEPOSITKIT_CHAIN_ARBITRUM;
static const char *const SENDER = "0x0000000000000000000000000000000000005e4d";
/* The funding wallets the C providers pretend to be. */
static const char *const WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
static const char *const SOLANA_WALLET = "So11111111111111111111111111111111111111112";

/* The devnet's database: $DEPOSITKIT_HANDLE_DEVNET_DB (created when missing, and kept), else
 * one in a temporary directory of this run (removed at the end). Every cycle's devnet opens it
 * again, so that only its first start ever generates the JWT signing key (RSA-2048: about 10 s
 * under valgrind; scripts/test-c.sh passes one database to every run of this program so that
 * the runs under valgrind never do). Each cycle of each run uses an owner of its own
 * (from the process id and the cycle), hence a deposit account of its own. */
static char db_dir[256];
static char db_path[300];
static char owner[64];

/* The user-lookup settings from the environment (see tests/c/test_user_rpc.c). */
static const char *rpc_url;
static const char *project_id;
static const char *server_key;
static const char *user_uuid;
static const char *user_token;
static const char *jwt_uid;
static const char *evm_address;


/* --- user_data: what the callbacks share with the test, and who released what --------------- */

enum { KIND_EVENTS, KIND_NOTES, KIND_CLOSING, KIND_EVM, KIND_SOLANA, KIND_BALANCE, KINDS };
static const char *const KIND_NAMES[KINDS] = {"events", "notes", "closing",
                                              "evm wallet", "solana wallet", "balance provider"};

/* Registrations that succeeded, and user_data_free calls, per kind, over the whole run. */
static pthread_mutex_t counts_lock = PTHREAD_MUTEX_INITIALIZER;
static int registered[KINDS];
static int released[KINDS];

/* What the callbacks of one cycle saw. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int events;
    int bad_length;      /* a length argument that disagreed with strlen */
    int credited;        /* "credited" lifecycle events */
    char credited_id[64];
    int note_calls;
    char last_notes[8192];
    int provider_calls;
    int reject_next;     /* the EVM wallet answers its next request with 4001 */
    int drop_next;       /* the balance provider returns its next request unanswered */
    int dropped;
    int twice_refused;   /* a second answer to one reply was refused */
    int bad_replies;     /* a first answer that failed */
    depositkit_provider_reply *stale; /* a reply handle kept past its callback */
} sink;

/* The user_data of every subscription and provider: malloc'ed, released by tag_free only. */
typedef struct {
    sink *sink;
    int kind;
} tag;

static tag *tag_new(sink *s, int kind) {
    tag *t = malloc(sizeof *t);
    if (t == NULL) {
        abort();
    }
    t->sink = s;
    t->kind = kind;
    return t;
}

static void count_registered(int kind) {
    pthread_mutex_lock(&counts_lock);
    registered[kind]++;
    pthread_mutex_unlock(&counts_lock);
}

static int released_of(int kind) {
    pthread_mutex_lock(&counts_lock);
    int n = released[kind];
    pthread_mutex_unlock(&counts_lock);
    return n;
}

/* The user_data_free of every registration. */
static void tag_free(void *user_data) {
    tag *t = user_data;
    pthread_mutex_lock(&counts_lock);
    released[t->kind]++;
    pthread_mutex_unlock(&counts_lock);
    free(t);
}

static void sink_init(sink *s) {
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->changed, NULL);
}

static void sink_destroy(sink *s) {
    pthread_cond_destroy(&s->changed);
    pthread_mutex_destroy(&s->lock);
}

/* --- event and notification callbacks (on the client's dispatcher thread) -------------------- */

static int on_event(void *user_data, const char *event_json, size_t event_json_len) {
    sink *s = ((tag *)user_data)->sink;
    pthread_mutex_lock(&s->lock);
    s->events++;
    if (strlen(event_json) != event_json_len) {
        s->bad_length++;
    }
    if (strstr(event_json, "\"type\":\"deposit:lifecycle\"") != NULL &&
        strstr(event_json, "\"phase\":\"credited\"") != NULL) {
        if (s->credited == 0) {
            json_string(event_json, "id", s->credited_id, sizeof s->credited_id);
        }
        s->credited++;
    }
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
    return 0;
}

static int on_notes(void *user_data, const char *records_json, size_t records_json_len) {
    sink *s = ((tag *)user_data)->sink;
    pthread_mutex_lock(&s->lock);
    s->note_calls++;
    if (strlen(records_json) != records_json_len) {
        s->bad_length++;
    }
    snprintf(s->last_notes, sizeof s->last_notes, "%s", records_json);
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
    return 0;
}

/* Waits until the event callback saw deposit `id` credited. */
static int wait_credited(sink *s, const char *id) {
    struct timespec deadline = deadline_in(WAIT_SECONDS);
    int found = 0;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        found = s->credited > 0 && strcmp(s->credited_id, id) == 0;
        if (found || pthread_cond_timedwait(&s->changed, &s->lock, &deadline) == ETIMEDOUT) {
            break;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return found;
}

/* Waits until the latest notification records contain `needle`. */
static int wait_notes(sink *s, const char *needle) {
    struct timespec deadline = deadline_in(WAIT_SECONDS);
    int found = 0;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        found = s->note_calls > 0 && strstr(s->last_notes, needle) != NULL;
        if (found || pthread_cond_timedwait(&s->changed, &s->lock, &deadline) == ETIMEDOUT) {
            break;
        }
    }
    if (!found) {
        fprintf(stderr, "  the notifications callback last got %s\n", s->last_notes);
    }
    pthread_mutex_unlock(&s->lock);
    return found;
}

/* --- host providers (on a library thread, while the calling operation waits) ----------------- */

/* Records a first answer's status and tries a second one, which must be refused. */
static void answered(sink *s, depositkit_status first, depositkit_provider_reply *reply) {
    depositkit_status second = depositkit_provider_reply_result(reply, "null");
    pthread_mutex_lock(&s->lock);
    s->provider_calls++;
    if (first != DEPOSITKIT_STATUS_OK) {
        s->bad_replies++;
    }
    if (second == DEPOSITKIT_STATUS_INVALID_ARGUMENT) {
        s->twice_refused++;
    }
    s->stale = reply;
    pthread_mutex_unlock(&s->lock);
}

/* An EIP-1193 wallet holding WALLET on Base; answers 4001 once when reject_next is set. */
static void evm_wallet(void *user_data, const char *method, const char *params_json,
                       depositkit_provider_reply *reply) {
    sink *s = ((tag *)user_data)->sink;
    (void)params_json;
    pthread_mutex_lock(&s->lock);
    int reject = s->reject_next;
    s->reject_next = 0;
    pthread_mutex_unlock(&s->lock);
    char accounts[96];
    snprintf(accounts, sizeof accounts, "[\"%s\"]", WALLET);
    depositkit_status st;
    if (reject) {
        st = depositkit_provider_reply_error(reply, 4001, "User rejected the request.");
    } else if (strcmp(method, "eth_requestAccounts") == 0 || strcmp(method, "eth_accounts") == 0) {
        st = depositkit_provider_reply_result(reply, accounts);
    } else if (strcmp(method, "wallet_requestPermissions") == 0) {
        st = depositkit_provider_reply_result(reply, "[{\"parentCapability\":\"eth_accounts\"}]");
    } else if (strcmp(method, "eth_chainId") == 0) {
        st = depositkit_provider_reply_result(reply, "\"0x2105\"");
    } else {
        st = depositkit_provider_reply_error(reply, 4200, "unsupported method");
    }
    answered(s, st, reply);
}

/* A Phantom-shaped wallet: `connect` only. */
static void solana_wallet(void *user_data, const char *method, const char *params_json,
                          depositkit_provider_reply *reply) {
    sink *s = ((tag *)user_data)->sink;
    (void)params_json;
    char key[96];
    snprintf(key, sizeof key, "{\"publicKey\":\"%s\"}", SOLANA_WALLET);
    depositkit_status st = strcmp(method, "connect") == 0
                               ? depositkit_provider_reply_result(reply, key)
                               : depositkit_provider_reply_error(reply, 4200, "unsupported");
    answered(s, st, reply);
}

/* A balance provider: 25 USDC on Base and 1 ETH on Ethereum; once, when drop_next is set,
 * returns without answering. */
static void balance_provider(void *user_data, const char *method, const char *params_json,
                             depositkit_provider_reply *reply) {
    sink *s = ((tag *)user_data)->sink;
    pthread_mutex_lock(&s->lock);
    int drop = s->drop_next;
    s->drop_next = 0;
    if (drop) {
        s->dropped++;
    }
    pthread_mutex_unlock(&s->lock);
    if (drop) {
        return; /* the reply is dropped unanswered: the request fails */
    }
    int asked = strcmp(method, "getWalletBalances") == 0 &&
                strstr(params_json, "\"evmAddress\":\"0x") != NULL;
    depositkit_status st =
        asked
            ? depositkit_provider_reply_result(
                  reply, "{\"balances\":["
                         "{\"chainId\":8453,\"token\":\"USDC\",\"decimals\":6,"
                         "\"rawAmount\":\"25000000\",\"priceUSD\":1.0,\"valueUSD\":25.0},"
                         "{\"chainId\":1,\"token\":\"ETH\",\"decimals\":18,"
                         "\"rawAmount\":\"1000000000000000000\",\"priceUSD\":3000.0}]}")
            : depositkit_provider_reply_error(reply, -32601, "unexpected request");
    answered(s, st, reply);
}

/* --- the pieces of one cycle ------------------------------------------------------------------ */

/* Strings of the validation layer, and failures that set the last error. */
static void use_validation(void) {
    char *text = NULL;
    text = MUST(depositkit_get_chain_name(BASE, &text), text);
    CHECK(text != NULL && strcmp(text, "Base") == 0);
    depositkit_string_free(text);
    text = MUST(depositkit_get_chain_name(7, &text), text);
    CHECK(text != NULL && strcmp(text, "Unknown Chain (7)") == 0);
    depositkit_string_free(text);
    text = MUST(depositkit_token_info_json(USDC, BASE, &text), text);
    CHECK(json_contains(text, "\"decimals\":6"));
    depositkit_string_free(text);
    text = MUST(depositkit_format_units("1500000", 6, &text), text);
    CHECK(text != NULL && strcmp(text, "1.5") == 0);
    depositkit_string_free(text);
    text = MUST(depositkit_parse_units("0.25", 6, &text), text);
    CHECK(text != NULL && strcmp(text, "250000") == 0);
    depositkit_string_free(text);

    text = NULL;
    CHECK(depositkit_parse_units("1e6", 6, &text) == DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(text == NULL);
    CHECK(last_error_contains("\"1e6\""));
    CHECK(depositkit_token_info_json(DEPOSITKIT_TOKEN_TYPE_SOL, BASE, &text) ==
          DEPOSITKIT_STATUS_NOT_FOUND);
    CHECK(depositkit_validate_address_for_chain("0x12", 1) == DEPOSITKIT_STATUS_CONFIGURATION);
    CHECK(last_error_contains("found 2"));
    /* A buffer too small: truncated like snprintf. */
    char small[8];
    size_t n = 0;
    CHECK(depositkit_last_error_message(small, sizeof small, &n) ==
          DEPOSITKIT_STATUS_BUFFER_TOO_SMALL);
    CHECK(n > sizeof small && strlen(small) == sizeof small - 1);
    CHECK(text == NULL);
}

/* depositkit_user_rpc_client against the depositkit-devnet server of scripts/test-c.sh. */
static void use_user_rpc(void) {
    depositkit_user_rpc_options options;
    depositkit_user_rpc_options_init(&options);
    options.timeout_ms = 30000;
    options.initial_backoff_ms = 10;
    options.user_agent = "depositkit-c-test-handles/1.0";

    const depositkit_user_rpc_client *client = NULL;
    CHECK(depositkit_user_rpc_client_new("ftp://example.com/", project_id, server_key, &options,
                                         &client) == DEPOSITKIT_STATUS_CONFIGURATION);
    CHECK(client == NULL);
    CHECK(last_error_contains("\"ftp://example.com/\""));

    if (!OK(depositkit_user_rpc_client_new(rpc_url, project_id, server_key, &options, &client))) {
        return;
    }
    char field[128];
    char *json = NULL;
    json = MUST(depositkit_user_rpc_client_get_user_info(client, user_uuid, user_token, &json),
                json);
    snprintf(field, sizeof field, "\"uuid\":\"%s\"", user_uuid);
    CHECK(json_contains(json, field));
    snprintf(field, sizeof field, "\"publicAddress\":\"%s\"", evm_address);
    CHECK(json_contains(json, field));
    depositkit_string_free(json);
    json = NULL;
    json = MUST(depositkit_user_rpc_client_get_user_info_by_identity(client, "jwt", jwt_uid, &json),
                json);
    snprintf(field, sizeof field, "\"uuid\":\"%s\"", user_uuid);
    CHECK(json_contains(json, field));
    depositkit_string_free(json);
    bool member = false;
    CHECK(OK(depositkit_user_rpc_client_is_project_user(client, "evm_chain", evm_address,
                                                        &member)) &&
          member);

    /* A rejected token: the JSON-RPC error object, with its data as an owned string. */
    json = NULL;
    CHECK(depositkit_user_rpc_client_get_user_info(client, user_uuid, "st_wrong_token_of_handles",
                                                   &json) == DEPOSITKIT_STATUS_AUTHENTICATION);
    CHECK(json == NULL);
    int64_t code = 0;
    char *data = NULL;
    CHECK(depositkit_last_error_rpc(&code, &data) == DEPOSITKIT_STATUS_OK);
    CHECK(code == DEPOSITKIT_USER_RPC_INVALID_TOKEN);
    CHECK(data != NULL && data[0] == '{');
    depositkit_string_free(data);
    CHECK(last_error_contains("-32011"));
    CHECK(depositkit_user_rpc_client_get_user_info(client, "not-a-uuid", user_token, &json) ==
          DEPOSITKIT_STATUS_CONFIGURATION);
    CHECK(last_error_contains("\"not-a-uuid\""));
    depositkit_user_rpc_client_free(client);
}

/* Pulls every queued event (without waiting); counts the credited ones of `id`. The queue ends
 * with TIMEOUT, or with DEPOSIT_SDK once the client is closed. */
static int drain_events(const depositkit_deposit_client *client, const char *id, int *total,
                        depositkit_status end) {
    int credited = 0;
    for (;;) {
        char *event = NULL;
        depositkit_status st = depositkit_deposit_client_next_event(client, 0, &event);
        if (st != DEPOSITKIT_STATUS_OK) {
            CHECK(st == end);
            CHECK(event == NULL);
            break;
        }
        (*total)++;
        if (id != NULL && strstr(event, "\"phase\":\"credited\"") != NULL &&
            strstr(event, id) != NULL) {
            credited++;
        }
        depositkit_string_free(event);
    }
    return credited;
}

/* Polls once; copies the id of the one lifecycle event of `phase` the poll produced. */
static int poll_one(const depositkit_deposit_client *client, const char *phase, char *id,
                    size_t size) {
    char *found = NULL;
    found = MUST(depositkit_deposit_client_poll_now(client, &found), found);
    char needle[64];
    snprintf(needle, sizeof needle, "\"phase\":\"%s\"", phase);
    int ok = json_contains(found, needle) && json_string(found, "id", id, size);
    CHECK(ok);
    depositkit_string_free(found);
    return ok;
}

/* The deposit flow: detect, sweep, refund, stuck funds and recovery, records, history. */
static void use_deposits(const depositkit_devnet *devnet, const depositkit_deposit_client *client,
                         sink *s, const char *evm) {
    /* 25 USDC on Base: detected, swept by hand (autoSweep is off), credited. */
    char *tx = NULL;
    tx = MUST(depositkit_devnet_deposit(devnet, evm, BASE, USDC, "25000000", NULL, &tx), tx);
    CHECK(json_contains(tx, "0x"));
    depositkit_string_free(tx);
    char swept[64] = "";
    if (!poll_one(client, "detected", swept, sizeof swept)) {
        return;
    }
    /* 5 USDC on Arbitrum from SENDER: detected, then refunded to SENDER. */
    CHECK(OK(depositkit_devnet_deposit(devnet, evm, ARBITRUM, USDC, "5000000", SENDER, NULL)));
    char refunded[64] = "";
    if (!poll_one(client, "detected", refunded, sizeof refunded)) {
        return;
    }
    char *text = NULL;
    text = MUST(depositkit_deposit_client_pending_deposits(client, &text), text);
    CHECK(json_contains(text, swept) && json_contains(text, refunded));
    depositkit_string_free(text);

    char *result = NULL;
    result = MUST(depositkit_deposit_client_sweep(client, swept, &result), result);
    CHECK(json_contains(result, "\"status\":\"success\""));
    char sweep_tx[128] = "";
    CHECK(json_string(result, "transactionId", sweep_tx, sizeof sweep_tx));
    depositkit_string_free(result);
    result = NULL;
    result = MUST(depositkit_deposit_client_sweep_result(client, swept, &result), result);
    CHECK(json_contains(result, sweep_tx));
    depositkit_string_free(result);
    result = NULL;
    CHECK(depositkit_deposit_client_sweep(client, swept, &result) == DEPOSITKIT_STATUS_NOT_FOUND);
    CHECK(result == NULL);
    CHECK(wait_credited(s, swept));

    /* The event log (an in-memory one: no storePath) and a deposit's phase history. */
    uint64_t last_id = 0;
    CHECK(OK(depositkit_deposit_client_last_event_id(client, &last_id)) && last_id > 0);
    text = NULL;
    text = MUST(depositkit_deposit_client_events_since(client, last_id - 1, 0, &text), text);
    CHECK(json_contains(text, "\"id\":"));
    depositkit_string_free(text);
    text = NULL;
    text = MUST(depositkit_deposit_client_deposit_history(client, swept, &text), text);
    CHECK(json_contains(text, "\"phase\":\"detected\""));
    depositkit_string_free(text);
    text = NULL;
    CHECK(depositkit_deposit_client_events_since(client, last_id + 1, 0, &text) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(text == NULL && last_error_contains("past the last event id"));

    text = NULL;
    text = MUST(depositkit_deposit_client_can_refund(client, refunded, &text), text);
    CHECK(json_contains(text, "\"eligible\":true"));
    depositkit_string_free(text);
    result = NULL;
    result = MUST(depositkit_deposit_client_refund(client, refunded, NULL, &result), result);
    CHECK(json_contains(result, "\"status\":\"success\""));
    CHECK(json_contains(result, "\"reason\":\"user_requested\""));
    depositkit_string_free(result);
    result = NULL;
    result = MUST(depositkit_deposit_client_refund_result(client, refunded, &result), result);
    CHECK(json_contains(result, "\"status\":\"success\""));
    depositkit_string_free(result);
    result = NULL;
    CHECK(depositkit_deposit_client_refund(client, refunded, NULL, &result) ==
          DEPOSITKIT_STATUS_REFUND);
    CHECK(last_error_contains("already refunded"));
    text = NULL;
    text = MUST(depositkit_devnet_ledger_balance(devnet, SENDER, ARBITRUM, USDC, &text), text);
    CHECK(text != NULL && strcmp(text, "0") != 0);
    depositkit_string_free(text);

    /* Both detected and credited went to the pull queue too. */
    int pulled = 0;
    CHECK(drain_events(client, swept, &pulled, DEPOSITKIT_STATUS_TIMEOUT) == 1);
    CHECK(pulled >= 4);

    /* 0.3 USDC: below the threshold, so stuck; then recovered (or skipped: worth too little). */
    CHECK(OK(depositkit_devnet_deposit(devnet, evm, BASE, USDC, "300000", NULL, NULL)));
    char small[64] = "";
    poll_one(client, "below_threshold", small, sizeof small);
    text = NULL;
    text = MUST(depositkit_deposit_client_stuck_funds(client, &text), text);
    CHECK(json_contains(text, "\"id\":\"recovery:usdc:8453\""));
    depositkit_string_free(text);
    text = NULL;
    text = MUST(depositkit_deposit_client_recover_funds(client, &text), text);
    CHECK(json_contains(text, "\"token\":\"USDC\""));
    depositkit_string_free(text);
    bool recovering = true;
    CHECK(OK(depositkit_deposit_client_is_recovering(client, &recovering)) && !recovering);

    /* The account service fails every balance read (more than the client's retries). */
    CHECK(OK(depositkit_devnet_inject_service_fault(devnet, "ua", "/v1/balances", 503, 0, 100)));
    text = NULL;
    CHECK(depositkit_deposit_client_stuck_funds(client, &text) ==
          DEPOSITKIT_STATUS_UNIVERSAL_ACCOUNT);
    CHECK(text == NULL);
    CHECK(last_error_contains("503"));
    CHECK(OK(depositkit_devnet_clear_faults(devnet)));
    /* Expired sessions: the client renews its own once and goes on. */
    CHECK(OK(depositkit_devnet_expire_sessions(devnet, NULL)));

    /* The notification records: the callback's and the getter's; one dismissed. */
    char want[96];
    snprintf(want, sizeof want, "\"id\":\"%s\"", swept);
    CHECK(wait_notes(s, want));
    text = NULL;
    text = MUST(depositkit_deposit_client_notifications(client, &text), text);
    CHECK(json_contains(text, want));
    depositkit_string_free(text);
    bool dismissed = false;
    CHECK(OK(depositkit_deposit_client_dismiss_notification(client, swept, &dismissed)) &&
          dismissed);

    /* The history: the sweep in the list, by its id, and by token. */
    text = NULL;
    text = MUST(depositkit_deposit_client_get_transactions(client, 1, 20, &text), text);
    CHECK(json_contains(text, "\"tag\":\"sweep\""));
    CHECK(json_contains(text, "\"tag\":\"refund\""));
    depositkit_string_free(text);
    text = NULL;
    text = MUST(depositkit_deposit_client_get_transaction(client, sweep_tx, &text), text);
    CHECK(json_contains(text, sweep_tx));
    depositkit_string_free(text);
    char *info = NULL;
    char contract[64] = "";
    info = MUST(depositkit_token_info_json(USDC, BASE, &info), info);
    CHECK(json_string(info, "contract", contract, sizeof contract));
    depositkit_string_free(info);
    text = NULL;
    text = MUST(
        depositkit_deposit_client_get_token_transactions(client, BASE, contract, NULL, 10, &text),
        text);
    CHECK(json_contains(text, "\"transactions\":["));
    depositkit_string_free(text);
    text = NULL;
    CHECK(depositkit_deposit_client_get_transaction(client, "0xnope", &text) ==
          DEPOSITKIT_STATUS_NOT_FOUND);
    CHECK(text == NULL);
}

/* The onramp, overlay mode, against devnet's simulated widget (on its ledger). */
static void use_onramp(const depositkit_devnet *devnet, const depositkit_deposit_client *client) {
    char *order = NULL;
    CHECK(OK(depositkit_deposit_client_last_onramp_order(client, &order)) && order == NULL);
    bool supported = false;
    CHECK(OK(depositkit_deposit_client_is_onramp_supported(client, &supported)) && supported);
    char *url = NULL;
    url = MUST(depositkit_deposit_client_open_onramp(client, "50", &url), url);
    CHECK(json_contains(url, "&fiatAmount=50&"));
    char *answer = NULL;
    answer = url != NULL ? MUST(depositkit_devnet_complete_onramp_order(devnet, url, &answer),
                                answer)
                         : NULL;
    depositkit_string_free(url);
    const char *p = json_value_after(answer, "messages");
    int forwarded = 0;
    if (p != NULL && *p == '[') {
        p++;
        while (*p == '{') {
            const char *end = NULL;
            char *message = json_object_copy(p, &end);
            if (message == NULL) {
                break;
            }
            bool delivered = false;
            CHECK(OK(depositkit_deposit_client_handle_onramp_message(client, message,
                                                                     &delivered)) &&
                  delivered);
            free(message);
            forwarded++;
            p = end;
            while (*p == ',' || *p == ' ') {
                p++;
            }
        }
    }
    CHECK(forwarded == 3);
    depositkit_string_free(answer);
    order = MUST(depositkit_deposit_client_last_onramp_order(client, &order), order);
    CHECK(json_contains(order, "\"status\":\"completed\""));
    depositkit_string_free(order);
    bool delivered = false;
    CHECK(depositkit_deposit_client_handle_onramp_message(client, "{", &delivered) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("message_json is not valid JSON"));
    url = NULL;
    CHECK(depositkit_deposit_client_open_onramp(client, "fifty", &url) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(url == NULL);
}

/* Funding: the providers, their replies, and a balance list. Returns the list (the caller
 * frees it after the client, to show it outlives it), or NULL. */
static const depositkit_funding_balances *use_funding(const depositkit_deposit_client *client,
                                                       sink *s) {
    tag *evm_tag = tag_new(s, KIND_EVM);
    if (OK(depositkit_deposit_client_set_evm_wallet_provider(client, evm_wallet, evm_tag,
                                                             tag_free, NULL))) {
        count_registered(KIND_EVM);
    } else {
        free(evm_tag);
    }
    tag *sol_tag = tag_new(s, KIND_SOLANA);
    if (OK(depositkit_deposit_client_set_solana_wallet_provider(client, solana_wallet, sol_tag,
                                                                tag_free, NULL))) {
        count_registered(KIND_SOLANA);
    } else {
        free(sol_tag);
    }
    /* A balance provider replaced by a second one: the first is released at once. */
    for (int i = 0; i < 2; i++) {
        int before = released_of(KIND_BALANCE);
        tag *t = tag_new(s, KIND_BALANCE);
        if (OK(depositkit_deposit_client_set_balance_provider(client, balance_provider, t,
                                                              tag_free))) {
            count_registered(KIND_BALANCE);
            CHECK(released_of(KIND_BALANCE) == before + i);
        } else {
            free(t);
        }
    }

    /* Replies answered with results. */
    char *text = NULL;
    text = MUST(depositkit_deposit_client_connect_evm_wallet(client, &text), text);
    CHECK(text != NULL && strcasecmp(text, WALLET) == 0);
    depositkit_string_free(text);
    text = NULL;
    text = MUST(depositkit_deposit_client_evm_accounts(client, &text), text);
    CHECK(json_contains(text, WALLET));
    depositkit_string_free(text);
    text = NULL;
    text = MUST(depositkit_deposit_client_prompt_evm_account_selection(client, &text), text);
    CHECK(json_contains(text, WALLET));
    depositkit_string_free(text);
    text = NULL;
    text = MUST(depositkit_deposit_client_connect_solana_wallet(client, &text), text);
    CHECK(text != NULL && strcmp(text, SOLANA_WALLET) == 0);
    depositkit_string_free(text);

    /* A reply answered with an error: the user rejects. */
    pthread_mutex_lock(&s->lock);
    s->reject_next = 1;
    pthread_mutex_unlock(&s->lock);
    text = NULL;
    CHECK(depositkit_deposit_client_evm_accounts(client, &text) == DEPOSITKIT_STATUS_FUNDING);
    CHECK(text == NULL);
    CHECK(last_error_contains("rejected by the wallet (4001)"));

    /* A reply dropped unanswered: the request fails, naming the rule. */
    pthread_mutex_lock(&s->lock);
    s->drop_next = 1;
    pthread_mutex_unlock(&s->lock);
    const depositkit_funding_balances *list = NULL;
    CHECK(depositkit_deposit_client_wallet_balances(client, &list) == DEPOSITKIT_STATUS_FUNDING);
    CHECK(list == NULL);
    CHECK(last_error_contains("without answering"));

    /* A reply used after its callback returned is refused, not undefined behaviour. */
    pthread_mutex_lock(&s->lock);
    depositkit_provider_reply *stale = s->stale;
    pthread_mutex_unlock(&s->lock);
    CHECK(stale != NULL);
    CHECK(depositkit_provider_reply_result(stale, "null") == DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("is not a pending provider request"));
    CHECK(depositkit_provider_reply_error(stale, 4001, "late") ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);

    /* The balance list, produced by the provider's answer. */
    list = MUST(depositkit_deposit_client_wallet_balances(client, &list), list);
    CHECK(depositkit_funding_balances_len(list) == 2);
    int usdc = 0;
    for (size_t i = 0; i < depositkit_funding_balances_len(list); i++) {
        char *line = NULL;
        line = MUST(depositkit_funding_balances_get(list, i, &line), line);
        CHECK(json_contains(line, "\"source\":\"balanceProvider\""));
        usdc += line != NULL && strstr(line, "\"token\":\"USDC\"") != NULL &&
                strstr(line, "\"rawAmount\":\"25000000\"") != NULL;
        depositkit_string_free(line);
    }
    CHECK(usdc == 1);
    text = NULL;
    CHECK(depositkit_funding_balances_get(list, 2, &text) == DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(depositkit_deposit_client_fund_from_wallet(client, list, 99, NULL, &text) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("index 99 is out of range"));
    CHECK(text == NULL);

    /* A wallet behind a node's URL replaces the EVM provider, releasing it at once; clearing
     * the wallets releases the Solana provider (the balance provider stays). */
    int evm_before = released_of(KIND_EVM);
    CHECK(OK(depositkit_deposit_client_set_evm_wallet_url(client, "http://127.0.0.1:9", WALLET)));
    CHECK(released_of(KIND_EVM) == evm_before + 1);
    int solana_before = released_of(KIND_SOLANA);
    CHECK(OK(depositkit_deposit_client_clear_funding_wallet(client)));
    CHECK(released_of(KIND_SOLANA) == solana_before + 1);
    CHECK(depositkit_deposit_client_connect_evm_wallet(client, &text) ==
          DEPOSITKIT_STATUS_FUNDING);
    CHECK(text == NULL);

    pthread_mutex_lock(&s->lock);
    CHECK(s->bad_replies == 0);
    CHECK(s->dropped == 1);
    CHECK(s->provider_calls >= 6 && s->twice_refused == s->provider_calls);
    pthread_mutex_unlock(&s->lock);
    return list;
}

/* One deposit client, from its failed constructor to its free, on `devnet`. */
static void use_deposit_client(const depositkit_devnet *devnet, const char *services_url) {
    const depositkit_deposit_client *client = NULL;
    CHECK(depositkit_deposit_client_new(
              "{\"ownerAddress\":\"0x1234\",\"destination\":{\"chainId\":8453}}", &client) ==
          DEPOSITKIT_STATUS_CONFIGURATION);
    CHECK(client == NULL);
    CHECK(last_error_contains("\"0x1234\""));

    /* Durable state too: the store's connection must close with the client. */
    char store[256];
    snprintf(store, sizeof store, "/tmp/depositkit-handles-%s.sqlite", owner);
    char config[2048];
    snprintf(config, sizeof config,
             "{\"ownerAddress\":\"%s\",\"destination\":{\"chainId\":8453},"
             "\"storePath\":\"%s\","
             "\"servicesUrl\":\"%s\",\"autoSweep\":false,\"pollingIntervalMs\":50,"
             "\"minPollingIntervalMs\":20,\"sweepRetryDelayMs\":30,\"httpInitialBackoffMs\":5,"
             "\"callTimeoutMs\":%d,\"notifications\":{\"durationMs\":0},"
             "\"funding\":{\"enabled\":true},"
             "\"onramp\":{\"enabled\":true,\"widgetUrl\":\"%s/onramp/widget\"}}",
             owner, store, services_url, WAIT_SECONDS * 1000, services_url);
    if (!OK(depositkit_deposit_client_new(config, &client))) {
        return;
    }
    sink s;
    sink_init(&s);
    uint64_t subs[3] = {0, 0, 0};
    const int sub_kinds[3] = {KIND_EVENTS, KIND_NOTES, KIND_CLOSING};
    for (int i = 0; i < 3; i++) {
        tag *t = tag_new(&s, sub_kinds[i]);
        depositkit_status st =
            sub_kinds[i] == KIND_NOTES
                ? depositkit_deposit_client_subscribe_notifications(client, on_notes, t, tag_free,
                                                                    &subs[i])
                : depositkit_deposit_client_subscribe(client, on_event, t, tag_free, &subs[i]);
        if (OK(st)) {
            count_registered(sub_kinds[i]);
        } else {
            free(t);
        }
    }
    CHECK(subs[0] != 0 && subs[1] != 0 && subs[2] != 0);

    char *text = NULL;
    text = MUST(depositkit_deposit_client_initialize(client, &text), text);
    char evm[64] = "";
    CHECK(json_string(text, "evm", evm, sizeof evm) && strlen(evm) == 42);
    depositkit_string_free(text);
    if (evm[0] == '\0') {
        depositkit_deposit_client_free(client);
        sink_destroy(&s);
        return;
    }
    text = NULL;
    CHECK(depositkit_deposit_client_initialize(client, &text) == DEPOSITKIT_STATUS_CONFIGURATION);
    text = MUST(depositkit_deposit_client_deposit_addresses(client, &text), text);
    CHECK(json_contains(text, evm));
    depositkit_string_free(text);
    text = NULL;
    text = MUST(depositkit_deposit_client_set_destination(client, "{\"chainId\":8453}", &text),
                text);
    CHECK(json_contains(text, "\"token\":\"USDC\""));
    depositkit_string_free(text);
    text = NULL;
    CHECK(depositkit_deposit_client_set_destination(client, "{\"chainId\":196}", &text) ==
          DEPOSITKIT_STATUS_CONFIGURATION);
    CHECK(text == NULL);
    text = MUST(depositkit_deposit_client_get_destination(client, &text), text);
    CHECK(json_contains(text, owner));
    depositkit_string_free(text);
    text = NULL;
    text = MUST(depositkit_deposit_client_refund_config(client, &text), text);
    CHECK(json_contains(text, "\"refundToSender\":true"));
    depositkit_string_free(text);
    text = NULL;
    text = MUST(depositkit_deposit_client_notifications_config(client, &text), text);
    CHECK(json_contains(text, "\"durationMs\":0"));
    depositkit_string_free(text);
    depositkit_client_status status = DEPOSITKIT_CLIENT_STATUS_ERROR;
    CHECK(OK(depositkit_deposit_client_status(client, &status)) &&
          status == DEPOSITKIT_CLIENT_STATUS_READY);

    use_deposits(devnet, client, &s, evm);
    use_onramp(devnet, client);
    const depositkit_funding_balances *list = use_funding(client, &s);

    /* The watcher polls in the background for a moment. */
    CHECK(OK(depositkit_deposit_client_start_watching(client)));
    CHECK(OK(depositkit_deposit_client_status(client, &status)) &&
          status == DEPOSITKIT_CLIENT_STATUS_WATCHING);
    CHECK(OK(depositkit_deposit_client_stop_watching(client)));
    uint64_t count = 1;
    CHECK(OK(depositkit_deposit_client_callback_errors(client, &count)) && count == 0);
    CHECK(OK(depositkit_deposit_client_dropped_events(client, &count)) && count == 0);

    /* Unsubscribing releases one user_data at once; close releases the rest. */
    int events_before = released_of(KIND_EVENTS);
    bool removed = false;
    CHECK(OK(depositkit_deposit_client_unsubscribe(client, subs[0], &removed)) && removed);
    CHECK(released_of(KIND_EVENTS) == events_before + 1);
    int notes_before = released_of(KIND_NOTES);
    int closing_before = released_of(KIND_CLOSING);
    int balance_before = released_of(KIND_BALANCE);
    CHECK(OK(depositkit_deposit_client_close(client)));
    CHECK(released_of(KIND_NOTES) == notes_before + 1);
    CHECK(released_of(KIND_CLOSING) == closing_before + 1);
    CHECK(released_of(KIND_BALANCE) == balance_before + 1);

    /* A closed client's calls fail (and set the last error); its queue still drains. */
    text = NULL;
    CHECK(depositkit_deposit_client_poll_now(client, &text) == DEPOSITKIT_STATUS_DEPOSIT_SDK);
    CHECK(last_error_contains("closed"));
    CHECK(depositkit_deposit_client_open_onramp(client, NULL, &text) ==
          DEPOSITKIT_STATUS_DEPOSIT_SDK);
    CHECK(text == NULL);
    tag *late = tag_new(&s, KIND_EVENTS);
    uint64_t late_sub = 0;
    CHECK(depositkit_deposit_client_subscribe(client, on_event, late, tag_free, &late_sub) ==
          DEPOSITKIT_STATUS_DEPOSIT_SDK);
    free(late); /* a failed registration leaves user_data to the caller */
    int pulled = 0;
    drain_events(client, NULL, &pulled, DEPOSITKIT_STATUS_DEPOSIT_SDK);
    CHECK(pulled > 0);
    CHECK(last_error_contains("closed"));
    CHECK(text == NULL);
    /* The views of the running client fail too (their answers would be stale). */
    CHECK(depositkit_deposit_client_get_destination(client, &text) ==
          DEPOSITKIT_STATUS_DEPOSIT_SDK);
    CHECK(text == NULL);
    CHECK(last_error_contains("the client is closed"));
    CHECK(OK(depositkit_deposit_client_status(client, &status)) &&
          status == DEPOSITKIT_CLIENT_STATUS_IDLE);

    depositkit_deposit_client_free(client);
    remove_store(store);
    pthread_mutex_lock(&s.lock);
    CHECK(s.bad_length == 0);
    CHECK(s.credited == 2); /* seen by the events subscription and the closing one */
    pthread_mutex_unlock(&s.lock);
    sink_destroy(&s);

    /* The list outlives its client. */
    if (list != NULL) {
        text = NULL;
        text = MUST(depositkit_funding_balances_get(list, 0, &text), text);
        CHECK(json_contains(text, "\"walletAddress\":"));
        depositkit_string_free(text);
        depositkit_funding_balances_free(list);
    }
}

/* depositkit_devnet: a failed start, then one in process for a deposit client. */
static void use_devnet(void) {
    const depositkit_devnet *devnet = NULL;
    CHECK(depositkit_devnet_start_with_chains(NULL, false, "{\"evm\":", &devnet) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(devnet == NULL);
    CHECK(last_error_contains("chains_json is not a valid chains file"));

    if (!OK(depositkit_devnet_start(db_path, false, &devnet))) {
        return;
    }
    char *services_url = NULL;
    services_url = MUST(depositkit_devnet_services_url(devnet, &services_url), services_url);
    CHECK(json_contains(services_url, "http://127.0.0.1:"));
    char *raw = NULL;
    CHECK(depositkit_devnet_chain_balance(devnet, owner, BASE, USDC, &raw) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(raw == NULL);
    CHECK(depositkit_devnet_deposit(devnet, "0x12", BASE, USDC, "1", NULL, &raw) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(raw == NULL);
    if (services_url != NULL) {
        use_deposit_client(devnet, services_url);
    }
    /* The owner received what the sweep delivered. */
    raw = MUST(depositkit_devnet_ledger_balance(devnet, owner, BASE, USDC, &raw), raw);
    CHECK(raw != NULL && strtoll(raw, NULL, 10) > 20000000);
    depositkit_string_free(raw);
    depositkit_string_free(services_url);
    depositkit_devnet_free(devnet);
}

static void cycle(long i) {
    snprintf(owner, sizeof owner, "0x000000000000000000000000%08lx%08lx",
             (unsigned long)getpid() & 0xffffffffUL, (unsigned long)i);
    use_validation();
    use_user_rpc();
    use_devnet();
}

/* Removes the files of `dir` (the database and its journals), then `dir`. */
static void remove_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (d != NULL) {
        struct dirent *entry;
        while ((entry = readdir(d)) != NULL) {
            if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0) {
                char path[512];
                snprintf(path, sizeof path, "%s/%s", dir, entry->d_name);
                unlink(path);
            }
        }
        closedir(d);
    }
    CHECK(rmdir(dir) == 0);
}

int main(int argc, char **argv) {
    long cycles = 3;
    const char *from = argc > 1 ? argv[1] : getenv("DEPOSITKIT_HANDLE_CYCLES");
    if (from != NULL && from[0] != '\0') {
        char *end = NULL;
        cycles = strtol(from, &end, 10);
        if (*end != '\0' || cycles < 1 || cycles > 1000) {
            fprintf(stderr, "usage: %s [cycles (1 to 1000)]\n", argv[0]);
            return 2;
        }
    }
    rpc_url = require_env("test_handles", "DEPOSITKIT_TEST_USER_RPC_URL");
    project_id = require_env("test_handles", "DEPOSITKIT_TEST_PROJECT_ID");
    server_key = require_env("test_handles", "DEPOSITKIT_TEST_SERVER_KEY");
    user_uuid = require_env("test_handles", "DEPOSITKIT_TEST_USER_UUID");
    user_token = require_env("test_handles", "DEPOSITKIT_TEST_USER_TOKEN");
    jwt_uid = require_env("test_handles", "DEPOSITKIT_TEST_JWT_UID");
    evm_address = require_env("test_handles", "DEPOSITKIT_TEST_EVM_ADDRESS");

    const char *db = getenv("DEPOSITKIT_HANDLE_DEVNET_DB");
    if (db != NULL && db[0] != '\0') {
        snprintf(db_path, sizeof db_path, "%s", db);
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(db_dir, sizeof db_dir, "%s/depositkit-test-handles.XXXXXX",
                 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
        if (mkdtemp(db_dir) == NULL) {
            perror("test_handles: mkdtemp");
            return 2;
        }
        snprintf(db_path, sizeof db_path, "%s/devnet.sqlite", db_dir);
    }

    for (long i = 0; i < cycles; i++) {
        cycle(i);
    }
    if (db_dir[0] != '\0') {
        remove_dir(db_dir);
    }

    /* Every registration's user_data was released exactly once. */
    for (int k = 0; k < KINDS; k++) {
        if (registered[k] != released[k]) {
            fprintf(stderr, "FAIL: %s: %d registered, user_data_free called %d times\n",
                    KIND_NAMES[k], registered[k], released[k]);
        }
        CHECK(registered[k] == released[k]);
        CHECK(registered[k] == (k == KIND_BALANCE ? 2 : 1) * (int)cycles);
    }
    printf("test_handles: %ld cycle(s)\n", cycles);
    return summary();
}
