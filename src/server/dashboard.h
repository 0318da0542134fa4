#pragma once
// The operations dashboard (web/dashboard/) and the chat playground (web/chat/): static files
// compiled into the binary, served at GET /, /dashboard/* and /chat, /chat/*. The dashboard
// reads /v1/tandem/status, /v1/tandem/series and the review queue with the operator's key and
// draws its plots with uPlot (web/vendor, served at /dashboard/vendor/* with its licence); the
// playground streams /v1/chat/completions with a client key. Nothing is fetched from anywhere
// else.
//
// Thread-safety: the files are constants; lookups are pure.

#include <optional>
#include <string_view>

namespace tandem::server {

struct StaticFile {
  std::string_view content_type;
  std::string_view body;
};

// The file for a request path ("/" and "/index.html" are the dashboard, "/chat" the
// playground); nullopt for anything else, so no path can reach beyond these files.
std::optional<StaticFile> dashboard_file(std::string_view path);

}  // namespace tandem::server
