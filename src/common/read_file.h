#pragma once
// A whole file as a string, for the loaders of small JSON files (weights, priors).

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>

#include "common/result.h"

namespace tandem {

// kNotFound "PATH: cannot open: <errno text>" when the file cannot be opened.
inline Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return make_error(ErrorCode::kNotFound, path + ": cannot open: " + errno_message(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace tandem
