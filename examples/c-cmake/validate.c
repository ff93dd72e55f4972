/* depositkit from C, built with CMake (see CMakeLists.txt).
 *
 * Checks a deposit destination the way a backend would before it stores it: is the chain a
 * supported destination, is the address valid for that chain (EIP-55 checksum for EVM chains,
 * base58 for Solana), and which tokens can be delivered there.
 *
 *   validate                                                  a built-in EVM and Solana example
 *   validate 0x52908400098527886E0F7030069857D2E4169EE7 8453  an address on chain 8453 (Base)
 */
#include <depositkit.h>

#include <stdio.h>
#include <stdlib.h>

/* Prints whether `address` may receive deposits on `chain_id`; returns 0 when it may. */
static int check(const char *address, uint64_t chain_id) {
  char *name = NULL;
  if (depositkit_get_chain_name(chain_id, &name) != DEPOSITKIT_STATUS_OK) {
    name = NULL; /* unknown chain: the validation below says so */
  }
  printf("%s on %s (%llu): ", address, name ? name : "?", (unsigned long long)chain_id);
  depositkit_string_free(name);

  if (!depositkit_is_valid_destination_chain(chain_id)) {
    printf("not a destination chain\n");
    return 1;
  }
  depositkit_status status = depositkit_validate_address_for_chain(address, chain_id);
  if (status != DEPOSITKIT_STATUS_OK) {
    char message[512];
    size_t length = 0;
    depositkit_last_error_message(message, sizeof message, &length);
    printf("%s: %s\n", depositkit_status_str((uint32_t)status), message);
    return 1;
  }
  printf("valid; delivers");
  uint32_t tokens[16];
  size_t count = depositkit_default_supported_tokens(tokens, sizeof tokens / sizeof tokens[0]);
  for (size_t i = 0; i < count && i < sizeof tokens / sizeof tokens[0]; i++) {
    bool supported = false;
    const char *symbol = NULL;
    if (depositkit_is_supported_destination_token(tokens[i], chain_id, &supported) ==
            DEPOSITKIT_STATUS_OK &&
        supported && depositkit_token_symbol(tokens[i], &symbol) == DEPOSITKIT_STATUS_OK) {
      printf(" %s", symbol);
    }
  }
  printf("\n");
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3) {
    return check(argv[1], strtoull(argv[2], NULL, 10));
  }
  int failures = 0;
  failures += check("0x52908400098527886E0F7030069857D2E4169EE7", DEPOSITKIT_CHAIN_BASE);
  failures += check("9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", DEPOSITKIT_CHAIN_SOLANA);
  /* A checksum error: one letter's case changed. */
  if (check("0x52908400098527886e0F7030069857D2E4169EE7", DEPOSITKIT_CHAIN_BASE) == 0) {
    failures++;
  }
  return failures == 0 ? 0 : 1;
}
