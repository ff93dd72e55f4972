/*
 * The `particle` backend through the C ABI with each of its three signers, against a devnet
 * started in this process (depositkit_devnet_start; its Particle JSON-RPC at
 * <servicesUrl>/particle, the built-in project's credentials of docs/protocol.md section 1).
 * Each scenario gets its own devnet, so that the accounts of one never meet another's.
 *
 * - the deposit flow with each signer: 25 USDC to the EVM deposit address on Base, detected by
 *   depositkit_deposit_client_poll_now, swept by depositkit_deposit_client_sweep (detected ->
 *   processing -> credited), and the ledger at the destination (USDC on Arbitrum) holds exactly
 *   the delivered amount; then 5 USDC from a sender, refunded: the sender's ledger holds exactly
 *   the refund's deliveredAmount and the deposit address nothing more;
 * - the key signer: "particle": {"signerKey": ...}, and the same key through the environment
 *   variable DEPOSITKIT_PARTICLE_SIGNER_KEY ("signer": "key") gives the same account;
 * - the seed signer: two owners get different accounts, and a new client re-derives the same;
 * - the callback signer (depositkit_deposit_client_new_with_signer): a C function signing the
 *   EIP-191 digest with libsecp256k1 (Debian's libsecp256k1-dev; scripts/test-c.sh installs it
 *   and links this program with -lsecp256k1); its user_data is released exactly once, at
 *   depositkit_deposit_client_free, and on every failure of the call;
 * - faults: a callback that fails (returns non-zero) or signs with another key: the sweep fails
 *   naming the problem and nothing is sent (the money stays in the deposit address); a key that
 *   does not parse: DEPOSITKIT_STATUS_CONFIGURATION naming the option, never the key.
 *
 * Built with gcc -std=c11 -Wall -Wextra -Wpedantic -Werror and linked twice by
 * scripts/test-c.sh. Needs no environment. Prints "N passed, M failed" and exits non-zero on any
 * failure.
 */
#define _POSIX_C_SOURCE 200809L
#define DEPOSITKIT_DEVNET 1

#include "check.h"

#include <pthread.h>
#include <secp256k1.h>
#include <secp256k1_recovery.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* How long a blocking call may take: generous, so that the test passes under valgrind too. */
#define WAIT_SECONDS 120

static const uint32_t USDC = DEPOSITKIT_TOKEN_TYPE_USDC;
static const uint64_t BASE = DEPOSITKIT_CHAIN_BASE;
static const uint64_t ARBITRUM = DEPOSITKIT_CHAIN_ARBITRUM;

/* anvil's first two keys (the `test test ... junk` mnemonic) and their addresses. */
static const char *const KEY_A = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
static const char *const ADDRESS_A = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
static const char *const KEY_B = "59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
/* A master seed: the 32 bytes 0x00 ... 0x1f. */
static const char *const SEED = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

static const char *const OWNER_1 = "0x00000000000000000000000000000000000a1101";
static const char *const OWNER_2 = "0x00000000000000000000000000000000000a1102";
static const char *const SENDER = "0x00000000000000000000000000000000005e4de1";

/* --- a devnet and the configuration of a particle client ------------------------------------ */

typedef struct {
    const depositkit_devnet *devnet;
    char particle_url[256];
} net;

static int net_start(net *n) {
    n->devnet = NULL;
    if (!OK(depositkit_devnet_start(NULL, false, &n->devnet))) {
        return 0;
    }
    char *url = NULL;
    if (!OK(depositkit_devnet_services_url(n->devnet, &url))) {
        depositkit_devnet_free(n->devnet);
        return 0;
    }
    snprintf(n->particle_url, sizeof n->particle_url, "%s/particle", url);
    depositkit_string_free(url);
    return 1;
}

/*
 * A client configuration on the particle backend for `owner`, delivering USDC on Arbitrum to
 * the owner, sweeping only when asked; `signer` is the rest of the "particle" object (a
 * signerKey, a signerSeed, "signer": "key", or "" for a host signer).
 */
static void particle_config(char *buf, size_t size, const net *n, const char *owner,
                            const char *signer) {
    snprintf(buf, size,
             "{\"ownerAddress\":\"%s\",\"destination\":{\"chainId\":42161},"
             "\"backend\":\"particle\",\"particle\":{\"rpcUrl\":\"%s\","
             "\"projectId\":\"depositkit-builtin-project\",\"clientKey\":\"ck_depositkit_builtin\""
             "%s},\"autoSweep\":false,\"pollingIntervalMs\":50,\"minPollingIntervalMs\":20,"
             "\"sweepRetryDelayMs\":30,\"httpInitialBackoffMs\":5,\"callTimeoutMs\":%d}",
             owner, n->particle_url, signer, WAIT_SECONDS * 1000);
}

static const depositkit_deposit_client *new_client(const net *n, const char *owner,
                                                   const char *signer) {
    char config[2048];
    particle_config(config, sizeof config, n, owner, signer);
    const depositkit_deposit_client *client = NULL;
    return MUST(depositkit_deposit_client_new(config, &client), client);
}

/* Initializes the client; copies its EVM deposit address into evm (43 bytes at least). */
static int initialize(const depositkit_deposit_client *client, char *evm, size_t size) {
    char *addresses = NULL;
    addresses = MUST(depositkit_deposit_client_initialize(client, &addresses), addresses);
    int ok = json_string(addresses, "evm", evm, size) && strlen(evm) == 42;
    CHECK(ok);
    CHECK(json_contains(addresses, "\"solana\":\""));
    depositkit_string_free(addresses);
    return ok;
}

/* What `address` holds (or received) of USDC on `chain`, in smallest units. */
static char *ledger(const net *n, const char *address, uint64_t chain) {
    char *raw = NULL;
    return MUST(depositkit_devnet_ledger_balance(n->devnet, address, chain, USDC, &raw), raw);
}

static int ledger_is(const net *n, const char *address, uint64_t chain, const char *expected) {
    char *raw = ledger(n, address, chain);
    int same = raw != NULL && strcmp(raw, expected) == 0;
    if (!same) {
        fprintf(stderr, "  %s holds %s on %llu, not %s\n", address, raw ? raw : "(null)",
                (unsigned long long)chain, expected);
    }
    depositkit_string_free(raw);
    return same;
}

/* Deposits `raw` USDC on Base from `sender` (NULL: a devnet sender) and polls; copies the
 * detected deposit's id into id. */
static int deposit(const net *n, const depositkit_deposit_client *client, const char *evm,
                   const char *raw, const char *sender, char *id, size_t size) {
    if (!OK(depositkit_devnet_deposit(n->devnet, evm, BASE, USDC, raw, sender, NULL))) {
        return 0;
    }
    char *found = NULL;
    found = MUST(depositkit_deposit_client_poll_now(client, &found), found);
    CHECK(json_contains(found, "\"phase\":\"detected\""));
    int ok = json_string(found, "id", id, size);
    CHECK(ok);
    depositkit_string_free(found);
    return ok;
}

/* The phases of deposit `id` seen on the pull queue so far, "detected,processing,..." */
static void phases_of(const depositkit_deposit_client *client, const char *id, char *buf,
                      size_t size) {
    buf[0] = '\0';
    for (;;) {
        char *event = NULL;
        if (depositkit_deposit_client_next_event(client, 0, &event) != DEPOSITKIT_STATUS_OK) {
            return;
        }
        char phase[32];
        if (strstr(event, "\"type\":\"deposit:lifecycle\"") != NULL && strstr(event, id) != NULL &&
            json_string(event, "phase", phase, sizeof phase)) {
            size_t used = strlen(buf);
            snprintf(buf + used, size - used, "%s%s", used ? "," : "", phase);
        }
        depositkit_string_free(event);
    }
}

/*
 * The flow every signer goes through on a fresh client: a deposit detected, swept and credited
 * at the destination; a second one refunded to its sender.
 */
static void flow_and_refund(const net *n, const depositkit_deposit_client *client,
                            const char *owner) {
    char evm[64];
    if (!initialize(client, evm, sizeof evm)) {
        return;
    }
    char id[64];
    if (!deposit(n, client, evm, "25000000", NULL, id, sizeof id)) {
        return;
    }
    char *result = NULL;
    result = MUST(depositkit_deposit_client_sweep(client, id, &result), result);
    CHECK(json_contains(result, "\"status\":\"success\""));
    char delivered[80] = "";
    CHECK(json_string(result, "rawAmount", delivered, sizeof delivered));
    depositkit_string_free(result);
    char phases[256];
    phases_of(client, id, phases, sizeof phases);
    CHECK(strcmp(phases, "detected,processing,credited") == 0);
    if (strcmp(phases, "detected,processing,credited") != 0) {
        fprintf(stderr, "  phases: %s\n", phases);
    }
    /* The destination holds exactly what the sweep delivered: about $24.6 of the $25. */
    CHECK(ledger_is(n, owner, ARBITRUM, delivered));
    CHECK(strlen(delivered) == 8 && delivered[0] == '2' && delivered[1] == '4');

    /* 5 USDC from SENDER, refunded to it. */
    if (!deposit(n, client, evm, "5000000", SENDER, id, sizeof id)) {
        return;
    }
    char *refund = NULL;
    refund = MUST(depositkit_deposit_client_refund(client, id, NULL, &refund), refund);
    CHECK(json_contains(refund, "\"status\":\"success\""));
    char to[64] = "";
    char delivered_amount[40] = "";
    CHECK(json_string(refund, "refundedTo", to, sizeof to) && strcasecmp(to, SENDER) == 0);
    CHECK(json_string(refund, "deliveredAmount", delivered_amount, sizeof delivered_amount));
    depositkit_string_free(refund);
    char *raw = NULL;
    raw = MUST(depositkit_parse_units(delivered_amount, 6, &raw), raw);
    if (raw != NULL) {
        CHECK(ledger_is(n, SENDER, BASE, raw));
        CHECK(strlen(raw) == 7 && raw[0] == '4'); /* 5 USDC less the gas */
    }
    depositkit_string_free(raw);
    /* Never twice. */
    char *again = NULL;
    CHECK(depositkit_deposit_client_refund(client, id, NULL, &again) == DEPOSITKIT_STATUS_REFUND);
    CHECK(again == NULL);
}

/* --- the callback signer: libsecp256k1 over the digest (user_data: a c_signer) --------------- */

typedef struct {
    secp256k1_context *ctx;
    unsigned char key[32];
    int32_t fail_with; /* non-zero: return it instead of signing */
    pthread_mutex_t lock;
    int calls;
    int frees;
} c_signer;

static void hex_to_bytes(const char *hex, unsigned char *out, size_t n) {
    for (size_t i = 0; i < n; i++) {
        unsigned int byte = 0;
        sscanf(hex + 2 * i, "%2x", &byte);
        out[i] = (unsigned char)byte;
    }
}

static void c_signer_init(c_signer *s, const char *key_hex, int32_t fail_with) {
    memset(s, 0, sizeof *s);
    s->ctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
    hex_to_bytes(key_hex, s->key, sizeof s->key);
    s->fail_with = fail_with;
    pthread_mutex_init(&s->lock, NULL);
}

static void c_signer_destroy(c_signer *s) {
    secp256k1_context_destroy(s->ctx);
    pthread_mutex_destroy(&s->lock);
    memset(s->key, 0, sizeof s->key);
}

/* A depositkit_sign_fn for DEPOSITKIT_SIGN_INPUT_DIGEST: signs the 32 bytes as they are, v 27/28.
 * Runs on a library thread. */
static int32_t sign_digest(void *user_data, const uint8_t *message, uint8_t *out_signature) {
    c_signer *s = user_data;
    pthread_mutex_lock(&s->lock);
    s->calls++;
    pthread_mutex_unlock(&s->lock);
    if (s->fail_with != 0) {
        return s->fail_with;
    }
    secp256k1_ecdsa_recoverable_signature signature;
    if (!secp256k1_ecdsa_sign_recoverable(s->ctx, &signature, message, s->key, NULL, NULL)) {
        return 1;
    }
    int recovery = 0;
    secp256k1_ecdsa_recoverable_signature_serialize_compact(s->ctx, out_signature, &recovery,
                                                            &signature);
    out_signature[64] = (uint8_t)(27 + recovery);
    return 0;
}

static void c_signer_free(void *user_data) {
    c_signer *s = user_data;
    pthread_mutex_lock(&s->lock);
    s->frees++;
    pthread_mutex_unlock(&s->lock);
}

static int counter(c_signer *s, const int *field) {
    pthread_mutex_lock(&s->lock);
    int n = *field;
    pthread_mutex_unlock(&s->lock);
    return n;
}

static const depositkit_deposit_client *new_callback_client(const net *n, const char *owner,
                                                            c_signer *s) {
    char config[2048];
    particle_config(config, sizeof config, n, owner, "");
    const depositkit_deposit_client *client = NULL;
    return MUST(depositkit_deposit_client_new_with_signer(config, ADDRESS_A,
                                                          DEPOSITKIT_SIGN_INPUT_DIGEST,
                                                          sign_digest, s, c_signer_free, &client),
                client);
}

/* --- tests ------------------------------------------------------------------------------------ */

static void test_key_signer(void) {
    net n;
    if (!net_start(&n)) {
        return;
    }
    char signer[128];
    snprintf(signer, sizeof signer, ",\"signerKey\":\"0x%s\"", KEY_A);
    const depositkit_deposit_client *client = new_client(&n, OWNER_1, signer);
    char evm[64] = "";
    if (client != NULL) {
        flow_and_refund(&n, client, OWNER_1);
        char *addresses = NULL;
        addresses = MUST(depositkit_deposit_client_deposit_addresses(client, &addresses), addresses);
        CHECK(json_string(addresses, "evm", evm, sizeof evm));
        depositkit_string_free(addresses);
        depositkit_deposit_client_free(client);
    }
    /* The same key from DEPOSITKIT_PARTICLE_SIGNER_KEY: the same account. */
    CHECK(setenv("DEPOSITKIT_PARTICLE_SIGNER_KEY", KEY_A, 1) == 0);
    const depositkit_deposit_client *from_env = new_client(&n, OWNER_2, ",\"signer\":\"key\"");
    unsetenv("DEPOSITKIT_PARTICLE_SIGNER_KEY");
    char again[64] = "";
    if (from_env != NULL && initialize(from_env, again, sizeof again)) {
        CHECK(strcmp(again, evm) == 0);
    }
    depositkit_deposit_client_free(from_env);
    /* Unset, "signer": "key" has no key: a configuration error naming the variable. */
    char config[2048];
    particle_config(config, sizeof config, &n, OWNER_1, ",\"signer\":\"key\"");
    const depositkit_deposit_client *none = NULL;
    CHECK(depositkit_deposit_client_new(config, &none) == DEPOSITKIT_STATUS_CONFIGURATION);
    CHECK(none == NULL);
    CHECK(last_error_contains("DEPOSITKIT_PARTICLE_SIGNER_KEY"));
    depositkit_devnet_free(n.devnet);
}

static void test_seed_signer(void) {
    net n;
    if (!net_start(&n)) {
        return;
    }
    char signer[160];
    snprintf(signer, sizeof signer, ",\"signerSeed\":\"%s\"", SEED);
    char first[64] = "";
    char second[64] = "";
    char again[64] = "";
    const depositkit_deposit_client *one = new_client(&n, OWNER_1, signer);
    if (one != NULL) {
        flow_and_refund(&n, one, OWNER_1);
        char *addresses = NULL;
        addresses = MUST(depositkit_deposit_client_deposit_addresses(one, &addresses), addresses);
        CHECK(json_string(addresses, "evm", first, sizeof first));
        depositkit_string_free(addresses);
    }
    /* Another owner: another key, another account. */
    const depositkit_deposit_client *two = new_client(&n, OWNER_2, signer);
    if (two != NULL && initialize(two, second, sizeof second)) {
        CHECK(strlen(first) == 42 && strcmp(first, second) != 0);
    }
    depositkit_deposit_client_free(two);
    depositkit_deposit_client_free(one);
    /* The key derived again (a new client, as after a disaster): the same account. */
    const depositkit_deposit_client *rederived = new_client(&n, OWNER_1, signer);
    if (rederived != NULL && initialize(rederived, again, sizeof again)) {
        CHECK(strcmp(again, first) == 0);
    }
    depositkit_deposit_client_free(rederived);
    depositkit_devnet_free(n.devnet);
}

static void test_callback_signer(void) {
    net n;
    if (!net_start(&n)) {
        return;
    }
    c_signer s;
    c_signer_init(&s, KEY_A, 0);
    const depositkit_deposit_client *client = new_callback_client(&n, OWNER_1, &s);
    if (client != NULL) {
        flow_and_refund(&n, client, OWNER_1);
        CHECK(counter(&s, &s.calls) >= 2); /* the sweep and the refund */
        CHECK(counter(&s, &s.frees) == 0);
        /* close() keeps the signer; free() releases it, once. */
        CHECK(depositkit_deposit_client_close(client) == DEPOSITKIT_STATUS_OK);
        CHECK(counter(&s, &s.frees) == 0);
        depositkit_deposit_client_free(client);
        CHECK(counter(&s, &s.frees) == 1);
    }
    c_signer_destroy(&s);
    depositkit_devnet_free(n.devnet);
}

/* A sweep with a signer that cannot sign: failed, naming why, and the money did not move. */
static void sweep_fails(const net *n, const depositkit_deposit_client *client, const char *why) {
    char evm[64];
    char id[64];
    if (!initialize(client, evm, sizeof evm) ||
        !deposit(n, client, evm, "25000000", NULL, id, sizeof id)) {
        return;
    }
    char *result = NULL;
    result = MUST(depositkit_deposit_client_sweep(client, id, &result), result);
    CHECK(json_contains(result, "\"status\":\"failed\""));
    CHECK(json_contains(result, why));
    depositkit_string_free(result);
    CHECK(ledger_is(n, evm, BASE, "25000000"));
    CHECK(ledger_is(n, OWNER_1, ARBITRUM, "0"));
}

static void test_callback_faults(void) {
    /* A callback that returns non-zero. */
    net n;
    if (net_start(&n)) {
        c_signer s;
        c_signer_init(&s, KEY_A, 5);
        const depositkit_deposit_client *client = new_callback_client(&n, OWNER_1, &s);
        if (client != NULL) {
            sweep_fails(&n, client, "the signer callback failed: it returned 5");
            CHECK(counter(&s, &s.calls) >= 1);
            depositkit_deposit_client_free(client);
        }
        CHECK(counter(&s, &s.frees) == 1);
        c_signer_destroy(&s);
        depositkit_devnet_free(n.devnet);
    }
    /* A callback that signs with another key than the address it was given. */
    if (net_start(&n)) {
        c_signer s;
        c_signer_init(&s, KEY_B, 0);
        const depositkit_deposit_client *client = new_callback_client(&n, OWNER_1, &s);
        if (client != NULL) {
            sweep_fails(&n, client, "not from the account's owner");
            depositkit_deposit_client_free(client);
        }
        c_signer_destroy(&s);
        depositkit_devnet_free(n.devnet);
    }
}

static void test_bad_arguments(void) {
    net n;
    if (!net_start(&n)) {
        return;
    }
    char config[2048];
    const depositkit_deposit_client *client = NULL;
    /* A key that does not parse: the option is named, the key never shown. */
    particle_config(config, sizeof config, &n, OWNER_1,
                    ",\"signerKey\":\"0xfeedfacefeedfacefeedfacefeedfacefeedfacefeedfacefeedfacefeedfaceZZ\"");
    CHECK(depositkit_deposit_client_new(config, &client) == DEPOSITKIT_STATUS_CONFIGURATION);
    CHECK(client == NULL);
    CHECK(last_error_contains("particle.signerKey: "));
    char *message = last_error();
    CHECK(strstr(message, "feedface") == NULL);
    free(message);

    /* Every failure of new_with_signer releases user_data, once; out_client is not written. */
    particle_config(config, sizeof config, &n, OWNER_1, "");
    c_signer s;
    c_signer_init(&s, KEY_A, 0);
    CHECK(depositkit_deposit_client_new_with_signer(config, ADDRESS_A, DEPOSITKIT_SIGN_INPUT_DIGEST,
                                                    NULL, &s, c_signer_free,
                                                    &client) == DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_contains("sign must not be NULL"));
    CHECK(counter(&s, &s.frees) == 1);
    CHECK(depositkit_deposit_client_new_with_signer(config, ADDRESS_A, 7, sign_digest, &s,
                                                    c_signer_free,
                                                    &client) == DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("not 7"));
    CHECK(counter(&s, &s.frees) == 2);
    CHECK(depositkit_deposit_client_new_with_signer(config, "0x1234", DEPOSITKIT_SIGN_INPUT_DIGEST,
                                                    sign_digest, &s, c_signer_free,
                                                    &client) == DEPOSITKIT_STATUS_CONFIGURATION);
    CHECK(last_error_contains("\"0x1234\""));
    CHECK(counter(&s, &s.frees) == 3);
    CHECK(depositkit_deposit_client_new_with_signer("{", ADDRESS_A, DEPOSITKIT_SIGN_INPUT_DIGEST,
                                                    sign_digest, &s, c_signer_free,
                                                    &client) == DEPOSITKIT_STATUS_CONFIGURATION);
    CHECK(counter(&s, &s.frees) == 4);
    CHECK(depositkit_deposit_client_new_with_signer(config, NULL, DEPOSITKIT_SIGN_INPUT_MESSAGE,
                                                    sign_digest, &s, c_signer_free,
                                                    &client) == DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_contains("signer_address must not be NULL"));
    CHECK(counter(&s, &s.frees) == 5);
    CHECK(depositkit_deposit_client_new_with_signer(config, ADDRESS_A, DEPOSITKIT_SIGN_INPUT_DIGEST,
                                                    sign_digest, &s, c_signer_free,
                                                    NULL) == DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(counter(&s, &s.frees) == 6);
    CHECK(client == NULL);
    CHECK(counter(&s, &s.calls) == 0);
    c_signer_destroy(&s);
    depositkit_devnet_free(n.devnet);
}

int main(void) {
    test_bad_arguments();
    test_key_signer();
    test_seed_signer();
    test_callback_signer();
    test_callback_faults();
    return summary();
}
