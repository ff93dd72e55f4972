/*
 * The validation layer through the C ABI, using only include/depositkit.h.
 *
 * Built with gcc -std=c11 -Wall -Wextra -Wpedantic -Werror and linked twice by
 * scripts/test-c.sh: against libdepositkit.so and statically against libdepositkit.a.
 * Prints "N passed, M failed" and exits non-zero on any failure.
 */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int last_error_is(const char *want) {
    char *msg = last_error();
    int same = strcmp(msg, want) == 0;
    if (!same) {
        fprintf(stderr, "  last error \"%s\", expected \"%s\"\n", msg, want);
    }
    free(msg);
    return same;
}

/* Compares a string depositkit handed out with want, then frees it. */
static int take_equals(char *s, const char *want) {
    int same = s != NULL && strcmp(s, want) == 0;
    if (!same) {
        fprintf(stderr, "  got \"%s\", expected \"%s\"\n", s ? s : "(null)", want);
    }
    depositkit_string_free(s);
    return same;
}

static void test_version_and_status_names(void) {
    char want[64];
    snprintf(want, sizeof want, "%d.%d.%d", DEPOSITKIT_VERSION_MAJOR, DEPOSITKIT_VERSION_MINOR,
             DEPOSITKIT_VERSION_PATCH);
    CHECK(strcmp(depositkit_version(), want) == 0);

#define CHECK_NAME(status) CHECK(strcmp(depositkit_status_str(status), #status) == 0)
    CHECK_NAME(DEPOSITKIT_STATUS_OK);
    CHECK_NAME(DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK_NAME(DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK_NAME(DEPOSITKIT_STATUS_INVALID_UTF8);
    CHECK_NAME(DEPOSITKIT_STATUS_BUFFER_TOO_SMALL);
    CHECK_NAME(DEPOSITKIT_STATUS_CONFIGURATION);
    CHECK_NAME(DEPOSITKIT_STATUS_NOT_FOUND);
    CHECK_NAME(DEPOSITKIT_STATUS_PANIC);
#undef CHECK_NAME
    CHECK(strcmp(depositkit_status_str(12345), "DEPOSITKIT_STATUS_UNKNOWN") == 0);
    CHECK(DEPOSITKIT_STATUS_CONFIGURATION == 200 && DEPOSITKIT_STATUS_PANIC == 901);

    CHECK(DEPOSITKIT_MAX_DECIMALS == 77);
    CHECK(DEPOSITKIT_DEFAULT_POLLING_INTERVAL_MS == 3000);
    CHECK(DEPOSITKIT_DEFAULT_MIN_VALUE_USD > 0.49 && DEPOSITKIT_DEFAULT_MIN_VALUE_USD < 0.51);
}

static void test_chains(void) {
    char *name = NULL;
    CHECK(depositkit_get_chain_name(DEPOSITKIT_CHAIN_ETHEREUM, &name) == DEPOSITKIT_STATUS_OK);
    CHECK(take_equals(name, "Ethereum"));
    CHECK(depositkit_get_chain_name(56, &name) == DEPOSITKIT_STATUS_OK);
    CHECK(take_equals(name, "BNB Chain"));
    CHECK(depositkit_get_chain_name(DEPOSITKIT_CHAIN_XLAYER, &name) == DEPOSITKIT_STATUS_OK);
    CHECK(take_equals(name, "X Layer"));
    CHECK(depositkit_get_chain_name(7, &name) == DEPOSITKIT_STATUS_OK);
    CHECK(take_equals(name, "Unknown Chain (7)"));

    CHECK(depositkit_is_valid_destination_chain(DEPOSITKIT_CHAIN_BASE));
    CHECK(depositkit_is_valid_destination_chain(101));
    CHECK(!depositkit_is_valid_destination_chain(196));
    CHECK(!depositkit_is_valid_destination_chain(7));
    CHECK(depositkit_get_address_type(DEPOSITKIT_CHAIN_SOLANA) == DEPOSITKIT_ADDRESS_TYPE_SOLANA);
    CHECK(depositkit_get_address_type(8453) == DEPOSITKIT_ADDRESS_TYPE_EVM);
    CHECK(DEPOSITKIT_CHAIN_BERACHAIN == 80094 && DEPOSITKIT_CHAIN_HYPERVM == 999);
}

static int destination(uint32_t token, uint64_t chain) {
    bool out = false;
    CHECK(depositkit_is_supported_destination_token(token, chain, &out) == DEPOSITKIT_STATUS_OK);
    return out;
}

static int onramp(uint32_t token, uint64_t chain) {
    bool out = false;
    CHECK(depositkit_is_onramp_token_supported(token, chain, &out) == DEPOSITKIT_STATUS_OK);
    return out;
}

static void test_tokens(void) {
    CHECK(!destination(DEPOSITKIT_TOKEN_TYPE_USDT, DEPOSITKIT_CHAIN_BASE));
    CHECK(destination(DEPOSITKIT_TOKEN_TYPE_ETH, DEPOSITKIT_CHAIN_BNB));
    CHECK(destination(DEPOSITKIT_TOKEN_TYPE_USDC, DEPOSITKIT_CHAIN_SOLANA));
    CHECK(!destination(DEPOSITKIT_TOKEN_TYPE_ETH, DEPOSITKIT_CHAIN_SOLANA));
    CHECK(destination(DEPOSITKIT_TOKEN_TYPE_SOL, DEPOSITKIT_CHAIN_SOLANA));
    for (uint32_t t = DEPOSITKIT_TOKEN_TYPE_ETH; t <= DEPOSITKIT_TOKEN_TYPE_BNB; t++) {
        CHECK(!destination(t, DEPOSITKIT_CHAIN_XLAYER));
    }

    CHECK(onramp(DEPOSITKIT_TOKEN_TYPE_ETH, DEPOSITKIT_CHAIN_BASE));
    CHECK(!onramp(DEPOSITKIT_TOKEN_TYPE_ETH, DEPOSITKIT_CHAIN_ARBITRUM));
    CHECK(onramp(DEPOSITKIT_TOKEN_TYPE_BNB, DEPOSITKIT_CHAIN_BNB));
    CHECK(onramp(DEPOSITKIT_TOKEN_TYPE_USDT, DEPOSITKIT_CHAIN_SOLANA));
    CHECK(!onramp(DEPOSITKIT_TOKEN_TYPE_BTC, DEPOSITKIT_CHAIN_ETHEREUM));
    CHECK(!onramp(DEPOSITKIT_TOKEN_TYPE_USDC, DEPOSITKIT_CHAIN_XLAYER));

    uint8_t decimals = 0;
    CHECK(depositkit_get_token_decimals(DEPOSITKIT_TOKEN_TYPE_USDC, 56, &decimals) ==
          DEPOSITKIT_STATUS_OK);
    CHECK(decimals == 18);
    CHECK(depositkit_get_token_decimals(DEPOSITKIT_TOKEN_TYPE_USDC, 0, &decimals) ==
          DEPOSITKIT_STATUS_OK);
    CHECK(decimals == 6);

    uint32_t token = 99;
    CHECK(depositkit_token_type_from_str("usdt", &token) == DEPOSITKIT_STATUS_OK);
    CHECK(token == DEPOSITKIT_TOKEN_TYPE_USDT);
    const char *symbol = NULL;
    CHECK(depositkit_token_symbol(DEPOSITKIT_TOKEN_TYPE_SOL, &symbol) == DEPOSITKIT_STATUS_OK);
    CHECK(symbol != NULL && strcmp(symbol, "SOL") == 0);

    uint32_t tokens[8] = {0};
    CHECK(depositkit_default_supported_tokens(NULL, 0) == 6);
    CHECK(depositkit_default_supported_tokens(tokens, 8) == 6);
    CHECK(tokens[0] == DEPOSITKIT_TOKEN_TYPE_ETH && tokens[5] == DEPOSITKIT_TOKEN_TYPE_BNB);

    char *json = NULL;
    CHECK(depositkit_token_info_json(DEPOSITKIT_TOKEN_TYPE_USDC, 56, &json) ==
          DEPOSITKIT_STATUS_OK);
    CHECK(take_equals(json, "{\"token\":\"USDC\",\"chainId\":56,\"contract\":"
                            "\"0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d\","
                            "\"bridgedContract\":null,\"decimals\":18}"));
    json = NULL;
    CHECK(depositkit_token_info_json(DEPOSITKIT_TOKEN_TYPE_ETH, DEPOSITKIT_CHAIN_POLYGON, &json) ==
          DEPOSITKIT_STATUS_NOT_FOUND);
    CHECK(json == NULL);
    CHECK(last_error_contains("Polygon"));
}

static void test_token_errors(void) {
    bool supported = true;
    CHECK(depositkit_is_supported_destination_token(99, 1, &supported) ==
          DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(supported); /* not written on failure */
    CHECK(last_error_contains("unknown token 99"));

    uint8_t decimals = 42;
    CHECK(depositkit_get_token_decimals(99, 1, &decimals) == DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(decimals == 42);

    uint32_t token = 42;
    CHECK(depositkit_token_type_from_str("DOGE", &token) == DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(token == 42);
    CHECK(last_error_contains("\"DOGE\""));
}

static void test_addresses(void) {
    CHECK(depositkit_is_valid_evm_address("0x52908400098527886E0F7030069857D2E4169EE7"));
    /* the case of the last letter flipped: the EIP-55 checksum no longer matches */
    CHECK(!depositkit_is_valid_evm_address("0x52908400098527886E0F7030069857D2E4169Ee7"));
    CHECK(!depositkit_is_valid_evm_address(NULL));
    CHECK(depositkit_is_valid_solana_address("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"));
    /* 32 '1's decode to 32 zero bytes (the system program); 31 decode to 31 bytes */
    CHECK(depositkit_is_valid_solana_address("11111111111111111111111111111111"));
    CHECK(!depositkit_is_valid_solana_address("1111111111111111111111111111111"));
    CHECK(!depositkit_is_valid_solana_address(NULL));

    CHECK(depositkit_validate_address_for_chain("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
                                                DEPOSITKIT_CHAIN_SOLANA) == DEPOSITKIT_STATUS_OK);
    CHECK(depositkit_validate_address_for_chain("0xnot-an-address", DEPOSITKIT_CHAIN_BASE) ==
          DEPOSITKIT_STATUS_CONFIGURATION);
    CHECK(last_error_contains("0xnot-an-address"));
    CHECK(last_error_contains("Base (8453)"));
    CHECK(depositkit_validate_address_for_chain("0x52908400098527886E0F7030069857D2E4169EE7",
                                                12345) == DEPOSITKIT_STATUS_CONFIGURATION);
    CHECK(last_error_is("Unknown chain ID: 12345"));
}

static void test_units(void) {
    char *out = NULL;
    CHECK(depositkit_format_units("1500000", 6, &out) == DEPOSITKIT_STATUS_OK);
    CHECK(take_equals(out, "1.5"));
    CHECK(depositkit_format_units(
              "115792089237316195423570985008687907853269984665640564039457584007913129639935",
              77, &out) == DEPOSITKIT_STATUS_OK);
    CHECK(take_equals(
        out, "1.15792089237316195423570985008687907853269984665640564039457584007913129639935"));
    CHECK(depositkit_parse_units("1.5", 6, &out) == DEPOSITKIT_STATUS_OK);
    CHECK(take_equals(out, "1500000"));
    CHECK(depositkit_parse_units("0.4", 18, &out) == DEPOSITKIT_STATUS_OK);
    CHECK(take_equals(out, "400000000000000000"));
    CHECK(last_error_is(""));
}

static void test_unit_errors(void) {
    char *out = NULL;
    CHECK(depositkit_parse_units("-1", 6, &out) == DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_is("invalid amount \"-1\": signs are not allowed"));
    CHECK(depositkit_parse_units("1e6", 6, &out) == DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_is("invalid amount \"1e6\": exponents are not allowed"));
    CHECK(depositkit_parse_units("1.2345678", 6, &out) == DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_is("invalid amount \"1.2345678\": 7 fractional digits is more than the 6 "
                        "decimals allowed"));
    /* 2^256 */
    CHECK(depositkit_parse_units(
              "115792089237316195423570985008687907853269984665640564039457584007913129639936",
              0, &out) == DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("exceeds"));
    CHECK(depositkit_parse_units("2", 77, &out) == DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("exceeds"));
    CHECK(depositkit_parse_units("1", 78, &out) == DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_is("decimals 78 is out of range: expected 0 to 77"));
    CHECK(depositkit_format_units("1", 78, &out) == DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(depositkit_format_units("1.5", 6, &out) == DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    CHECK(last_error_contains("invalid raw amount \"1.5\""));
    CHECK(out == NULL); /* never written on failure */
}

static void test_null_and_utf8(void) {
    char *out = NULL;
    uint32_t token = 0;
    CHECK(depositkit_parse_units(NULL, 6, &out) == DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_is("text must not be NULL"));
    CHECK(depositkit_parse_units("1", 6, NULL) == DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_is("out_raw must not be NULL"));
    CHECK(depositkit_get_chain_name(1, NULL) == DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_is("out_name must not be NULL"));
    CHECK(depositkit_validate_address_for_chain(NULL, 1) == DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_is("address must not be NULL"));
    CHECK(depositkit_token_type_from_str(NULL, &token) == DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_is("symbol must not be NULL"));

    CHECK(depositkit_parse_units("1.\xff", 6, &out) == DEPOSITKIT_STATUS_INVALID_UTF8);
    CHECK(last_error_is("text is not valid UTF-8: invalid byte 0xff at offset 2"));
    CHECK(depositkit_validate_address_for_chain("0x\xc3", 1) == DEPOSITKIT_STATUS_INVALID_UTF8);
    CHECK(last_error_contains("address is not valid UTF-8"));
    CHECK(!depositkit_is_valid_evm_address("0x\xff"));
    CHECK(out == NULL);

    depositkit_string_free(NULL);
}

static void test_last_error_buffer(void) {
    char *out = NULL;
    CHECK(depositkit_parse_units("-1", 6, &out) == DEPOSITKIT_STATUS_INVALID_ARGUMENT);
    const char *full = "invalid amount \"-1\": signs are not allowed";

    size_t n = 0;
    CHECK(depositkit_last_error_message(NULL, 0, &n) == DEPOSITKIT_STATUS_BUFFER_TOO_SMALL);
    CHECK(n == strlen(full));

    char small[8];
    memset(small, 'x', sizeof small);
    n = 0;
    CHECK(depositkit_last_error_message(small, sizeof small, &n) ==
          DEPOSITKIT_STATUS_BUFFER_TOO_SMALL);
    CHECK(n == strlen(full));
    CHECK(strcmp(small, "invalid") == 0); /* truncated to 7 bytes and NUL-terminated */

    CHECK(depositkit_last_error_message(small, sizeof small, NULL) ==
          DEPOSITKIT_STATUS_NULL_ARGUMENT);
    CHECK(last_error_is(full)); /* reading never changes the last error */

    /* success clears it */
    char *name = NULL;
    CHECK(depositkit_get_chain_name(1, &name) == DEPOSITKIT_STATUS_OK);
    depositkit_string_free(name);
    CHECK(last_error_is(""));
}

int main(void) {
    test_version_and_status_names();
    test_chains();
    test_tokens();
    test_token_errors();
    test_addresses();
    test_units();
    test_unit_errors();
    test_null_and_utf8();
    test_last_error_buffer();

    return summary();
}
