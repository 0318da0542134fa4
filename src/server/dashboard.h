#pragma once
// The operations dashboard (web/dashboard/): three static files compiled into the binary and
// served at GET / and /dashboard/*. The page reads /v1/tandem/status and the review queue
// with the operator's key; nothing is fetched from anywhere else.

#include <optional>
#include <string_view>

namespace tandem::server {

struct StaticFile {
  std::string_view content_type;
  std::string_view body;
};

// The file for a request path ("/" and "/index.html" are the page); nullopt for anything else,
// so no path can reach beyond the three files.
std::optional<StaticFile> dashboard_file(std::string_view path);

}  // namespace tandem::server
