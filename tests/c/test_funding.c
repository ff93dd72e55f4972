/*
 * Funding from a wallet and the fiat onramp through the C ABI, on REAL local chains: anvil
 * nodes started by tests/chains/launch.py (scripts/test-c.sh starts them once and passes the
 * chains file's JSON in DEPOSITKIT_TEST_CHAINS), and a chain-backed devnet started in this
 * process with depositkit_devnet_start_with_chains.
 *
 * - the onramp, overlay mode: a client whose destination is anvil's development account 1
 *   opens the widget URL (depositkit_deposit_client_open_onramp), devnet's simulated widget
 *   completes the order (a real USDC transfer on Base from devnet's vault), the widget's
 *   messages go to depositkit_deposit_client_handle_onramp_message: onramp:* events, then
 *   onramp:complete, and depositkit_deposit_client_last_onramp_order; the account's USDC on
 *   chain grew by the order's amount;
 * - fund from wallet: that account as the funding wallet through its node's URL
 *   (depositkit_deposit_client_set_evm_wallet_url), balances discovered over RPC
 *   ("balanceProvider": "rpc"), 5 USDC on Base sent to the deposit address
 *   (depositkit_deposit_client_fund_from_wallet), detected by the watcher, swept by devnet
 *   with real transactions, credited (event callback on the dispatcher thread); the receiver
 *   holds exactly the delivered amount on chain, the deposit address nothing;
 * - a rejecting wallet: a C provider callback (eth_chainId and eth_accounts answered from the
 *   chains file, eth_sendTransaction answered with error 4001, nothing else): the transfer fails
 *   with DEPOSITKIT_STATUS_FUNDING (502) and "rejected by the wallet (4001)", the wallet's
 *   balance is unchanged, and user_data_free runs exactly once;
 * - argument checks of the reply handle and the balance list.
 *
 * Every run uses a fresh owner (so fresh deposit and destination addresses) because the chains
 * live for the whole scripts/test-c.sh run (shared, static, valgrind and ASan builds).
 *
 * Built with gcc -std=c11 -Wall -Wextra -Wpedantic -Werror and linked twice by
 * scripts/test-c.sh. Prints "N passed, M failed" and exits non-zero on any failure; exits 2
 * when DEPOSITKIT_TEST_CHAINS is missing or the devnet cannot start.
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
#define WAIT_SECONDS 180

static const uint32_t USDC = DEPOSITKIT_TOKEN_TYPE_USDC;
static const uint64_t BASE = DEPOSITKIT_CHAIN_BASE;

/* What the chains file says, read once. */
static char base_rpc_url[256];
static char evm_rpc_urls[1024]; /* {"1":"http://...",...} */
static char dev_account[64];    /* anvil's development account 1 */

/* --- the chains file ------------------------------------------------------------------------ */

static int read_chains(const char *chains) {
    size_t used = 0;
    used += (size_t)snprintf(evm_rpc_urls + used, sizeof evm_rpc_urls - used, "{");
    int count = 0;
    for (const char *p = json_value_after(chains, "chainId"); p != NULL;
         p = json_value_after(p, "chainId")) {
        unsigned long long chain_id = strtoull(p, NULL, 10);
        char url[256];
        if (!json_read_string(json_value_after(p, "rpcUrl"), url, sizeof url)) {
            return 0;
        }
        if (chain_id == BASE) {
            snprintf(base_rpc_url, sizeof base_rpc_url, "%s", url);
        }
        used += (size_t)snprintf(evm_rpc_urls + used, sizeof evm_rpc_urls - used,
                                 "%s\"%llu\":\"%s\"", count > 0 ? "," : "", chain_id, url);
        count++;
        if (used >= sizeof evm_rpc_urls - 2) {
            return 0;
        }
    }
    snprintf(evm_rpc_urls + used, sizeof evm_rpc_urls - used, "}");
    const char *accounts = strstr(chains, "\"evmDevAccounts\"");
    const char *first = json_value_after(accounts, "address");
    const char *second = first != NULL ? json_value_after(first, "address") : NULL;
    return count > 0 && base_rpc_url[0] != '\0' &&
           json_read_string(second, dev_account, sizeof dev_account);
}

/* --- events ----------------------------------------------------------------------------------- */

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int events;
    char *credited; /* the first credited lifecycle event (malloc'ed) */
    char detected_amount[32];
} collector;

static void collector_init(collector *c) {
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->changed, NULL);
}

static void collector_destroy(collector *c) {
    free(c->credited);
    pthread_cond_destroy(&c->changed);
    pthread_mutex_destroy(&c->lock);
}

/* Runs on the client's dispatcher thread; event_json is valid only during the call. */
static int on_event(void *user_data, const char *event_json, size_t event_json_len) {
    collector *c = user_data;
    pthread_mutex_lock(&c->lock);
    c->events++;
    if (strstr(event_json, "\"type\":\"deposit:lifecycle\"") != NULL) {
        if (strstr(event_json, "\"phase\":\"detected\"") != NULL && c->detected_amount[0] == 0) {
            json_string(event_json, "amount", c->detected_amount, sizeof c->detected_amount);
        }
        if (strstr(event_json, "\"phase\":\"credited\"") != NULL && c->credited == NULL) {
            c->credited = malloc(event_json_len + 1);
            if (c->credited != NULL) {
                memcpy(c->credited, event_json, event_json_len + 1);
            }
        }
    }
    pthread_cond_broadcast(&c->changed);
    pthread_mutex_unlock(&c->lock);
    return 0;
}

/* Waits for a credited event; returns a copy of it (caller frees) or NULL. */
static char *wait_credited(collector *c) {
    struct timespec deadline = deadline_in(WAIT_SECONDS);
    pthread_mutex_lock(&c->lock);
    while (c->credited == NULL) {
        if (pthread_cond_timedwait(&c->changed, &c->lock, &deadline) == ETIMEDOUT) {
            break;
        }
    }
    char *copy = c->credited != NULL ? strdup(c->credited) : NULL;
    pthread_mutex_unlock(&c->lock);
    return copy;
}

/* Pulls events until one of `type`; returns it (caller frees) or NULL. */
static char *pull_until(const depositkit_deposit_client *client, const char *type) {
    char needle[96];
    snprintf(needle, sizeof needle, "\"type\":\"%s\"", type);
    for (int i = 0; i < 64; i++) {
        char *event = NULL;
        if (depositkit_deposit_client_next_event(client, WAIT_SECONDS * 1000, &event) !=
            DEPOSITKIT_STATUS_OK) {
            return NULL;
        }
        if (strstr(event, needle) != NULL) {
            return event;
        }
        depositkit_string_free(event);
    }
    return NULL;
}

/* --- helpers ---------------------------------------------------------------------------------- */

static void report(const char *what) {
    char *msg = last_error();
    fprintf(stderr, "  %s: %s\n", what, msg);
    free(msg);
}

/* The raw amount `address` holds of `token` on `chain_id`, from the chain; -1 on failure
 * (amounts here fit a long long). */
static long long chain_balance(const depositkit_devnet *devnet, const char *address,
                               uint64_t chain_id, uint32_t token) {
    char *raw = NULL;
    if (depositkit_devnet_chain_balance(devnet, address, chain_id, token, &raw) !=
        DEPOSITKIT_STATUS_OK) {
        report("chain_balance");
        return -1;
    }
    long long value = strtoll(raw, NULL, 10);
    depositkit_string_free(raw);
    return value;
}

static const depositkit_deposit_client *new_client(const char *config) {
    const depositkit_deposit_client *client = NULL;
    depositkit_status st = depositkit_deposit_client_new(config, &client);
    CHECK(st == DEPOSITKIT_STATUS_OK);
    if (st != DEPOSITKIT_STATUS_OK) {
        report("new client");
    }
    return client;
}

/* A fresh owner address for this run. */
static void fresh_owner(char *buf, size_t size, unsigned salt) {
    snprintf(buf, size, "0x%08x%08x%08x0000000000000000", (unsigned)getpid(),
             (unsigned)time(NULL), salt);
}

/* The index of the first entry of `list` on chain_id in token, or -1. */
static long find_balance(const depositkit_funding_balances *list, uint64_t chain_id,
                         const char *token) {
    char chain[48];
    char symbol[48];
    snprintf(chain, sizeof chain, "\"chainId\":%llu,", (unsigned long long)chain_id);
    snprintf(symbol, sizeof symbol, "\"token\":\"%s\"", token);
    size_t n = depositkit_funding_balances_len(list);
    for (size_t i = 0; i < n; i++) {
        char *json = NULL;
        CHECK(depositkit_funding_balances_get(list, i, &json) == DEPOSITKIT_STATUS_OK);
        int hit = json != NULL && strstr(json, chain) != NULL && strstr(json, symbol) != NULL;
        depositkit_string_free(json);
        if (hit) {
            return (long)i;
        }
    }
    return -1;
}

/* --- the onramp ------------------------------------------------------------------------------- */

static void test_onramp(const depositkit_devnet *devnet, const char *services_url) {
    char config[2048];
    snprintf(config, sizeof config,
             "{\"ownerAddress\":\"%s\",\"destination\":{\"chainId\":8453,\"address\":\"%s\"},"
             "\"servicesUrl\":\"%s\",\"callTimeoutMs\":%d,"
             "\"onramp\":{\"enabled\":true,\"widgetUrl\":\"%s/onramp/widget\"}}",
             dev_account, dev_account, services_url, WAIT_SECONDS * 1000, services_url);
    const depositkit_deposit_client *client = new_client(config);
    if (client == NULL) {
        return;
    }
    char *order = NULL;
    CHECK(depositkit_deposit_client_last_onramp_order(client, &order) == DEPOSITKIT_STATUS_OK);
    CHECK(order == NULL); /* none yet */

    char *url = NULL;
    CHECK(depositkit_deposit_client_open_onramp(client, "50", &url) == DEPOSITKIT_STATUS_OK);
    CHECK(json_contains(url, "/onramp/widget?partnerKey="));
    CHECK(json_contains(url, "&network=base&cryptoCurrency=USDC&fiatCurrency=USD&fiatAmount=50&"));
    CHECK(json_contains(url, "&mode=overlay&partnerOrderId="));
    CHECK(depositkit_deposit_client_open_onramp(client, "fifty", &order) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("fiat_amount must be a decimal number"));
    CHECK(depositkit_deposit_client_open_onramp(client, "-1", &order) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(order == NULL);

    /* The user pays: devnet's widget delivers real USDC on Base from its vault. */
    long long before = chain_balance(devnet, dev_account, BASE, USDC);
    char *answer = NULL;
    depositkit_status st = depositkit_devnet_complete_onramp_order(devnet, url, &answer);
    CHECK(st == DEPOSITKIT_STATUS_OK);
    if (st != DEPOSITKIT_STATUS_OK) {
        report("complete_onramp_order");
    }
    long long after = chain_balance(devnet, dev_account, BASE, USDC);
    CHECK(before >= 0 && after - before == 49500000); /* $50 at $1, less 1% */

    /* The overlay posts its messages; the host forwards each one. */
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
            CHECK(depositkit_deposit_client_handle_onramp_message(client, message, &delivered) ==
                  DEPOSITKIT_STATUS_OK);
            CHECK(delivered);
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
    depositkit_string_free(url);

    char *event = pull_until(client, "onramp:order_completed");
    CHECK(event != NULL);
    depositkit_string_free(event);
    event = pull_until(client, "onramp:complete");
    CHECK(json_contains(event, "\"amount\":\"49.5\""));
    CHECK(json_contains(event, "\"token\":\"USDC\""));
    CHECK(json_contains(event, "\"chainId\":8453"));
    CHECK(depositkit_deposit_client_last_onramp_order(client, &order) == DEPOSITKIT_STATUS_OK);
    CHECK(json_contains(order, "\"amount\":\"49.5\""));
    CHECK(json_contains(order, "\"status\":\"completed\""));
    CHECK(json_contains(order, "\"fiatAmount\":50.0"));
    CHECK(json_contains(order, "\"txHash\":\"0x"));
    depositkit_string_free(order);
    depositkit_string_free(event);

    /* Malformed messages name what is wrong. */
    bool delivered = false;
    CHECK(depositkit_deposit_client_handle_onramp_message(client, "{\"event\":\"order_shipped\"}",
                                                          &delivered) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("unknown onramp event \"order_shipped\""));
    CHECK(depositkit_deposit_client_handle_onramp_message(client, "{", &delivered) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("message_json is not valid JSON"));
    depositkit_deposit_client_free(client);
}

/* --- a rejecting wallet, as a C provider ------------------------------------------------------ */

typedef struct {
    pthread_mutex_t lock;
    int calls;
    int sends;        /* eth_sendTransaction requests */
    int send_ok;      /* its params named the wallet and the USDC contract */
    int bad_replies;  /* replies that failed */
    int late_status;  /* what a second answer got */
    int frees;
    char address[64];
} rejecting_wallet;

/* Runs on a library thread while fund_from_wallet waits; answers before returning. */
static void rejecting_provider(void *user_data, const char *method, const char *params_json,
                               depositkit_provider_reply *reply) {
    rejecting_wallet *w = user_data;
    pthread_mutex_lock(&w->lock);
    w->calls++;
    pthread_mutex_unlock(&w->lock);
    depositkit_status st;
    if (strcmp(method, "eth_chainId") == 0) {
        st = depositkit_provider_reply_result(reply, "\"0x2105\"");
    } else if (strcmp(method, "eth_accounts") == 0 || strcmp(method, "eth_requestAccounts") == 0) {
        char accounts[96];
        snprintf(accounts, sizeof accounts, "[\"%s\"]", w->address);
        st = depositkit_provider_reply_result(reply, accounts);
    } else if (strcmp(method, "eth_sendTransaction") == 0) {
        pthread_mutex_lock(&w->lock);
        w->sends++;
        /* [{"from": <wallet>, "to": <USDC on Base>, "data": transfer(...), ...}] */
        w->send_ok = strstr(params_json, "\"to\":\"0x833589") != NULL;
        pthread_mutex_unlock(&w->lock);
        st = depositkit_provider_reply_error(reply, 4001, "User rejected the request.");
        /* A second answer is an error status, not undefined behaviour. */
        w->late_status = (int)depositkit_provider_reply_result(reply, "\"0x00\"");
    } else {
        st = depositkit_provider_reply_error(reply, 4200, "unsupported method");
    }
    if (st != DEPOSITKIT_STATUS_OK) {
        pthread_mutex_lock(&w->lock);
        w->bad_replies++;
        pthread_mutex_unlock(&w->lock);
    }
}

static void rejecting_wallet_free(void *user_data) {
    rejecting_wallet *w = user_data;
    pthread_mutex_lock(&w->lock);
    w->frees++;
    pthread_mutex_unlock(&w->lock);
}

static int frees_of(rejecting_wallet *w) {
    pthread_mutex_lock(&w->lock);
    int n = w->frees;
    pthread_mutex_unlock(&w->lock);
    return n;
}

/* --- fund from wallet ------------------------------------------------------------------------- */

static void test_fund_from_wallet(const depositkit_devnet *devnet, const char *services_url) {
    char owner[64];
    fresh_owner(owner, sizeof owner, 0xf00du);
    char config[4096];
    snprintf(config, sizeof config,
             "{\"ownerAddress\":\"%s\",\"destination\":{\"chainId\":8453},"
             "\"servicesUrl\":\"%s\",\"pollingIntervalMs\":100,\"minPollingIntervalMs\":20,"
             "\"sweepRetryDelayMs\":200,\"httpInitialBackoffMs\":5,\"callTimeoutMs\":%d,"
             "\"requestTimeoutMs\":%d,"
             "\"funding\":{\"enabled\":true,\"balanceProvider\":\"rpc\",\"evmRpcUrls\":%s}}",
             owner, services_url, WAIT_SECONDS * 1000, WAIT_SECONDS * 1000, evm_rpc_urls);
    const depositkit_deposit_client *client = new_client(config);
    if (client == NULL) {
        return;
    }
    collector events;
    collector_init(&events);
    uint64_t sub = 0;
    CHECK(depositkit_deposit_client_subscribe(client, on_event, &events, NULL, &sub) ==
          DEPOSITKIT_STATUS_OK);

    char *addresses = NULL;
    char evm[64] = "";
    depositkit_status st = depositkit_deposit_client_initialize(client, &addresses);
    CHECK(st == DEPOSITKIT_STATUS_OK);
    if (st != DEPOSITKIT_STATUS_OK) {
        report("initialize");
    }
    CHECK(json_string(addresses, "evm", evm, sizeof evm));
    depositkit_string_free(addresses);

    /* The funding wallet: anvil's account 1, unlocked in the Base node. */
    CHECK(depositkit_deposit_client_set_evm_wallet_url(client, base_rpc_url, dev_account) ==
          DEPOSITKIT_STATUS_OK);
    const depositkit_funding_balances *list = NULL;
    st = depositkit_deposit_client_wallet_balances(client, &list);
    CHECK(st == DEPOSITKIT_STATUS_OK);
    if (st != DEPOSITKIT_STATUS_OK) {
        report("wallet_balances");
    }
    long usdc = find_balance(list, BASE, "USDC");
    CHECK(usdc >= 0);
    CHECK(find_balance(list, BASE, "ETH") >= 0);             /* 10,000 ETH of anvil's */
    CHECK(find_balance(list, DEPOSITKIT_CHAIN_ARBITRUM, "ETH") >= 0);
    if (usdc >= 0) {
        char *line = NULL;
        CHECK(depositkit_funding_balances_get(list, (size_t)usdc, &line) == DEPOSITKIT_STATUS_OK);
        CHECK(json_contains(line, "\"source\":\"rpc\""));
        CHECK(json_contains(line, "\"walletAddress\":\"0x70997970C51812dc3A010C7d01b50e0d17dc79C8\""));
        depositkit_string_free(line);
    }

    /* Misuse of the list: out of range; not written on failure. */
    char *result = NULL;
    CHECK(depositkit_deposit_client_fund_from_wallet(client, list, 999, NULL, &result) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("index 999 is out of range"));
    CHECK(depositkit_deposit_client_fund_from_wallet(client, NULL, 0, NULL, &result) ==
          DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(depositkit_deposit_client_fund_from_wallet(client, list, 0, "5 USDC", &result) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("invalid raw amount \"5 USDC\""));
    CHECK(result == NULL);

    /* 5 USDC on Base to the deposit address, through the wallet's node. */
    long long wallet_before = chain_balance(devnet, dev_account, BASE, USDC);
    CHECK(depositkit_deposit_client_start_watching(client) == DEPOSITKIT_STATUS_OK);
    st = usdc >= 0 ? depositkit_deposit_client_fund_from_wallet(client, list, (size_t)usdc,
                                                                "5000000", &result)
                   : DEPOSITKIT_STATUS_NOT_FOUND;
    CHECK(st == DEPOSITKIT_STATUS_OK);
    if (st != DEPOSITKIT_STATUS_OK) {
        report("fund_from_wallet");
    }
    CHECK(json_contains(result, "\"txHash\":\"0x"));
    CHECK(json_contains(result, "\"chainId\":8453"));
    CHECK(json_contains(result, "\"rawAmount\":\"5000000\""));
    CHECK(json_contains(result, "\"amount\":\"5\""));
    CHECK(json_contains(result, evm)); /* "to": the deposit address */
    depositkit_string_free(result);
    result = NULL;
    CHECK(wallet_before >= 0 &&
          chain_balance(devnet, dev_account, BASE, USDC) == wallet_before - 5000000);

    /* The watcher detects it, devnet sweeps it with real transactions, it is credited. */
    char *credited = wait_credited(&events);
    CHECK(credited != NULL);
    pthread_mutex_lock(&events.lock);
    CHECK(strcmp(events.detected_amount, "5") == 0);
    pthread_mutex_unlock(&events.lock);
    char id[64] = "";
    CHECK(json_string(credited, "id", id, sizeof id));
    free(credited);

    char *sweep = NULL;
    CHECK(depositkit_deposit_client_sweep_result(client, id, &sweep) == DEPOSITKIT_STATUS_OK);
    CHECK(json_contains(sweep, "\"status\":\"success\""));
    char delivered[48] = "";
    CHECK(json_string(json_value_after(sweep, "delivered"), "rawAmount", delivered,
                      sizeof delivered));
    depositkit_string_free(sweep);
    /* The receiver (the owner) holds exactly what was delivered, on chain. */
    long long received = chain_balance(devnet, owner, BASE, USDC);
    CHECK(received > 4000000 && received < 5000000);
    CHECK(received == strtoll(delivered, NULL, 10));
    if (received != strtoll(delivered, NULL, 10)) {
        fprintf(stderr, "  on chain %lld, delivered %s\n", received, delivered);
    }
    CHECK(chain_balance(devnet, evm, BASE, USDC) == 0); /* the deposit address was swept */

    /* A wallet that rejects: FUNDING (502), nothing sent, user_data released once. */
    rejecting_wallet wallet;
    memset(&wallet, 0, sizeof wallet);
    pthread_mutex_init(&wallet.lock, NULL);
    snprintf(wallet.address, sizeof wallet.address, "%s", dev_account);
    CHECK(depositkit_deposit_client_set_evm_wallet_provider(client, rejecting_provider, &wallet,
                                                            rejecting_wallet_free, NULL) ==
          DEPOSITKIT_STATUS_OK);
    const depositkit_funding_balances *fresh = NULL;
    CHECK(depositkit_deposit_client_wallet_balances(client, &fresh) == DEPOSITKIT_STATUS_OK);
    long fresh_usdc = find_balance(fresh, BASE, "USDC");
    CHECK(fresh_usdc >= 0);
    long long rejected_before = chain_balance(devnet, dev_account, BASE, USDC);
    st = depositkit_deposit_client_fund_from_wallet(client, fresh, (size_t)(fresh_usdc < 0 ? 0 : fresh_usdc),
                                                    "1000000", &result);
    CHECK(st == DEPOSITKIT_STATUS_FUNDING);
    CHECK((int)st == 502);
    CHECK(result == NULL);
    CHECK(last_error_contains("rejected by the wallet (4001)"));
    CHECK(last_error_contains("User rejected the request."));
    CHECK(chain_balance(devnet, dev_account, BASE, USDC) == rejected_before);
    pthread_mutex_lock(&wallet.lock);
    CHECK(wallet.sends == 1 && wallet.send_ok);
    CHECK(wallet.bad_replies == 0);
    CHECK(wallet.late_status == (int)DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    pthread_mutex_unlock(&wallet.lock);
    CHECK(frees_of(&wallet) == 0);

    /* The old list belongs to this client too; replacing the wallet releases user_data. */
    CHECK(depositkit_deposit_client_set_evm_wallet_url(client, base_rpc_url, dev_account) ==
          DEPOSITKIT_STATUS_OK);
    CHECK(frees_of(&wallet) == 1);
    depositkit_funding_balances_free(fresh);

    /* A balance list of another client is refused, naming the list. */
    const depositkit_deposit_client *other = new_client(config);
    if (other != NULL) {
        CHECK(depositkit_deposit_client_fund_from_wallet(other, list, (size_t)(usdc < 0 ? 0 : usdc),
                                                         "1", &result) ==
              DEPOSITKIT_STATUS_INVALID_ARGUMENT);
        CHECK(last_error_contains("balances was issued by another client"));
        depositkit_deposit_client_free(other);
    }
    depositkit_funding_balances_free(list);

    depositkit_deposit_client_free(client);
    CHECK(frees_of(&wallet) == 1);
    pthread_mutex_destroy(&wallet.lock);
    collector_destroy(&events);
}

/* --- the reply handle and NULLs ---------------------------------------------------------------- */

static void test_arguments(void) {
    CHECK(depositkit_provider_reply_result(NULL, "1") == DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_contains("reply must not be NULL"));
    CHECK(depositkit_provider_reply_error(NULL, 4001, "no") == DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(depositkit_funding_balances_len(NULL) == 0);
    char *json = NULL;
    CHECK(depositkit_funding_balances_get(NULL, 0, &json) == DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_contains("balances must not be NULL"));
    CHECK(json == NULL);
    depositkit_funding_balances_free(NULL);
    CHECK(depositkit_deposit_client_set_evm_wallet_url(NULL, "http://127.0.0.1:1", NULL) ==
          DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_contains("client must not be NULL"));
    const depositkit_devnet *devnet = NULL;
    CHECK(depositkit_devnet_start_with_chains(NULL, false, "{\"evm\":", &devnet) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("chains_json is not a valid chains file"));
    CHECK(devnet == NULL);
}

int main(void) {
    const char *chains = getenv("DEPOSITKIT_TEST_CHAINS");
    if (chains == NULL || chains[0] == '\0') {
        fprintf(stderr, "test_funding: DEPOSITKIT_TEST_CHAINS is not set: run scripts/test-c.sh, "
                        "which starts the local chains (tests/chains/launch.py)\n");
        return 2;
    }
    if (!read_chains(chains)) {
        fprintf(stderr, "test_funding: DEPOSITKIT_TEST_CHAINS lacks Base or evmDevAccounts: %s\n",
                chains);
        return 2;
    }
    test_arguments();

    const depositkit_devnet *devnet = NULL;
    if (depositkit_devnet_start_with_chains(NULL, false, chains, &devnet) !=
        DEPOSITKIT_STATUS_OK) {
        char *msg = last_error();
        fprintf(stderr, "test_funding: cannot start the chain-backed devnet: %s\n", msg);
        free(msg);
        return 2;
    }
    char *services_url = NULL;
    CHECK(depositkit_devnet_services_url(devnet, &services_url) == DEPOSITKIT_STATUS_OK);

    test_onramp(devnet, services_url);
    test_fund_from_wallet(devnet, services_url);

    depositkit_string_free(services_url);
    depositkit_devnet_free(devnet);
    return summary();
}
