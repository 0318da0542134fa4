#include "server/dashboard.h"

namespace tandem::server {
namespace {

constexpr std::string_view kIndexHtml =
#include "web/index.html.inc"
    ;
constexpr std::string_view kDashboardJs =
#include "web/dashboard.js.inc"
    ;
constexpr std::string_view kDashboardCss =
#include "web/dashboard.css.inc"
    ;
constexpr std::string_view kChatHtml =
#include "web/chat.html.inc"
    ;
constexpr std::string_view kChatJs =
#include "web/chat.js.inc"
    ;
constexpr std::string_view kChatCss =
#include "web/chat.css.inc"
    ;

}  // namespace

std::optional<StaticFile> dashboard_file(std::string_view path) {
  if (path == "/" || path == "/index.html" || path == "/dashboard" || path == "/dashboard/") {
    return StaticFile{"text/html; charset=utf-8", kIndexHtml};
  }
  if (path == "/dashboard/dashboard.js") {
    return StaticFile{"text/javascript; charset=utf-8", kDashboardJs};
  }
  if (path == "/dashboard/dashboard.css") {
    return StaticFile{"text/css; charset=utf-8", kDashboardCss};
  }
  if (path == "/chat" || path == "/chat/") {
    return StaticFile{"text/html; charset=utf-8", kChatHtml};
  }
  if (path == "/chat/chat.js") {
    return StaticFile{"text/javascript; charset=utf-8", kChatJs};
  }
  if (path == "/chat/chat.css") {
    return StaticFile{"text/css; charset=utf-8", kChatCss};
  }
  return std::nullopt;
}

}  // namespace tandem::server
