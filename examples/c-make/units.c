/* depositkit from C, built with a plain Makefile and pkg-config (see Makefile and README.md).
 *
 * Converts a decimal amount of a token to its smallest units on a chain and back, and shows how
 * a failure is reported: a status, and a message from depositkit_last_error_message().
 *
 *   ./units                 1.5 USDC on BNB Chain (56): 18 decimals
 *   ./units 25 USDC 8453    25 USDC on Base: 6 decimals
 */
#include <depositkit.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prints what went wrong in the last call on this thread to `out` and returns 1. */
static int report(FILE *out, const char *what, depositkit_status status) {
  char message[512];
  size_t length = 0;
  depositkit_last_error_message(message, sizeof message, &length); /* truncates when longer */
  fprintf(out, "%s: %s: %s\n", what, depositkit_status_str((uint32_t)status), message);
  return 1;
}

int main(int argc, char **argv) {
  const char *amount = argc > 1 ? argv[1] : "1.5";
  const char *symbol = argc > 2 ? argv[2] : "USDC";
  uint64_t chain_id = argc > 3 ? strtoull(argv[3], NULL, 10) : DEPOSITKIT_CHAIN_BNB;

  /* The header and the library loaded at run time must be the same release. */
  char header_version[32];
  snprintf(header_version, sizeof header_version, "%d.%d.%d", DEPOSITKIT_VERSION_MAJOR,
           DEPOSITKIT_VERSION_MINOR, DEPOSITKIT_VERSION_PATCH);
  if (strcmp(header_version, depositkit_version()) != 0) {
    fprintf(stderr, "header %s, library %s\n", header_version, depositkit_version());
    return 1;
  }

  uint32_t token = 0;
  depositkit_status status = depositkit_token_type_from_str(symbol, &token);
  if (status != DEPOSITKIT_STATUS_OK) return report(stderr, "token", status);
  uint8_t decimals = 0;
  status = depositkit_get_token_decimals(token, chain_id, &decimals);
  if (status != DEPOSITKIT_STATUS_OK) return report(stderr, "decimals", status);

  char *raw = NULL;
  status = depositkit_parse_units(amount, decimals, &raw);
  if (status != DEPOSITKIT_STATUS_OK) return report(stderr, "parse_units", status);
  char *back = NULL;
  status = depositkit_format_units(raw, decimals, &back);
  if (status != DEPOSITKIT_STATUS_OK) {
    depositkit_string_free(raw);
    return report(stderr, "format_units", status);
  }
  printf("depositkit %s: %s %s on chain %llu = %s smallest units (%u decimals) = %s\n",
         depositkit_version(), amount, symbol, (unsigned long long)chain_id, raw,
         (unsigned)decimals, back);
  depositkit_string_free(back);
  depositkit_string_free(raw);

  /* A failure: exponents are not amounts. The status says which kind, the message why. */
  status = depositkit_parse_units("1e6", 6, &raw);
  if (status == DEPOSITKIT_STATUS_OK) {
    fprintf(stderr, "parse_units accepted 1e6\n");
    depositkit_string_free(raw);
    return 1;
  }
  report(stdout, "as expected", status);
  return 0;
}
