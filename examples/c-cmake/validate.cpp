// depositkit from C++, built with CMake (see CMakeLists.txt): the C header as is (its
// declarations are extern "C"), with the strings the library hands out owned by a unique_ptr
// whose deleter is depositkit_string_free, and failures turned into exceptions.
#include <depositkit.h>

#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

namespace {

struct StringFree {
  void operator()(char *s) const noexcept { depositkit_string_free(s); }
};
using OwnedString = std::unique_ptr<char, StringFree>;

// Throws the last error of this thread when `status` is a failure.
void check(depositkit_status status, const char *what) {
  if (status == DEPOSITKIT_STATUS_OK) {
    return;
  }
  size_t length = 0;
  depositkit_last_error_message(nullptr, 0, &length);
  std::string message(length + 1, '\0');
  depositkit_last_error_message(message.data(), message.size(), &length);
  message.resize(length);
  throw std::runtime_error(std::string(what) + ": " +
                           depositkit_status_str(static_cast<uint32_t>(status)) + ": " + message);
}

std::string parse_units(const std::string &amount, uint32_t decimals) {
  char *raw = nullptr;
  check(depositkit_parse_units(amount.c_str(), decimals, &raw), "parse_units");
  return OwnedString(raw).get();
}

}  // namespace

int main() {
  try {
    std::cout << "depositkit " << depositkit_version() << " from C++\n";
    std::cout << "25.5 USDC on Base = " << parse_units("25.5", 6) << " smallest units\n";
    check(depositkit_validate_address_for_chain("0x52908400098527886E0F7030069857D2E4169EE7",
                                                DEPOSITKIT_CHAIN_ARBITRUM),
          "validate");
    std::cout << "0x5290...9EE7 is a valid Arbitrum address\n";
  } catch (const std::runtime_error &error) {
    std::cerr << error.what() << "\n";
    return 1;
  }
  try {
    parse_units("1e6", 6);  // exponents are not amounts
  } catch (const std::runtime_error &error) {
    std::cout << "as expected: " << error.what() << "\n";
    return 0;
  }
  std::cerr << "parse_units accepted 1e6\n";
  return 1;
}
