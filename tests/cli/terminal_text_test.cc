// EscapeControlBytes: what the CLI prints of input text never reaches the terminal as control
// bytes.
#include "cli/terminal_text.h"

#include <string>

#include "absl/status/status.h"
#include "catch2/catch.hpp"

using tuna::cli::EscapeControlBytes;

TEST_CASE("control bytes are escaped as \\xHH, newlines and text are kept", "[cli]") {
  CHECK(EscapeControlBytes(std::string("plain text")) == "plain text");
  CHECK(EscapeControlBytes(std::string("\x1b[31mred\x1b[0m")) == "\\x1b[31mred\\x1b[0m");
  CHECK(EscapeControlBytes(std::string("a\tb\rc\x7f" "d")) == "a\\x09b\\x0dc\\x7fd");
  CHECK(EscapeControlBytes(std::string("line 1\nline 2")) == "line 1\nline 2");
  CHECK(EscapeControlBytes(std::string("nul\0byte", 8)) == "nul\\x00byte");
  CHECK(EscapeControlBytes(std::string("caf\xc3\xa9")) == "caf\xc3\xa9");  // UTF-8 kept
  // Status messages (absl::string_view) go through the same helper.
  const absl::Status st = absl::InvalidArgumentError("key 1-2\x1b]0;pwned\x07-F: bad");
  CHECK(EscapeControlBytes(st.message()) == "key 1-2\\x1b]0;pwned\\x07-F: bad");
}
