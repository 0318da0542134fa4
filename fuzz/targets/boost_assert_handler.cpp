// Boost's assertions in http_request.cpp call this handler instead of assert(), in every build
// type (bodies.cmake defines BOOST_ENABLE_ASSERT_HANDLER for that file): a failed one is a
// finding like a broken property, except the one assertion Boost 1.74 gets wrong.

#include <boost/assert.hpp>
#include <string_view>

#include "fuzz/property_check.h"

namespace boost {

void assertion_failed(char const* expr, char const* function, char const* file, long line) {
  // Beast's chunked-body parser asserts 5 bytes where 3 are valid and handled by the code after
  // it (boostorg/beast#2861, fixed in Boost 1.86): a read that ends inside the last chunk's
  // "0\r\n\r\n" trips it. Release builds, the gateway's, compile the assertion out.
  if (std::string_view(expr) == "n >= 5" &&
      std::string_view(file).ends_with("beast/http/impl/basic_parser.ipp")) {
    return;
  }
  tandem::fuzz::property_broken(expr, file, static_cast<int>(line), function);
}

void assertion_failed_msg(char const* expr, char const* msg, char const* function, char const* file,
                          long line) {
  tandem::fuzz::property_broken(expr, file, static_cast<int>(line),
                                std::string(function) + ": " + msg);
}

}  // namespace boost
