#include "server/dashboard.h"

#include <array>

namespace tandem::server {
namespace {

constexpr std::string_view kHtml = "text/html; charset=utf-8";
constexpr std::string_view kJavaScript = "text/javascript; charset=utf-8";
constexpr std::string_view kCss = "text/css; charset=utf-8";
constexpr std::string_view kText = "text/plain; charset=utf-8";

constexpr std::string_view kDashboardJs =
#include "web/dashboard.js.inc"
    ;
constexpr std::string_view kDashboardCss =
#include "web/dashboard.css.inc"
    ;
constexpr std::string_view kPlotsJs =
#include "web/plots.js.inc"
    ;
constexpr std::string_view kUplotJs =
#include "web/uPlot.iife.min.js.inc"
    ;
constexpr std::string_view kUplotCss =
#include "web/uPlot.min.css.inc"
    ;
constexpr std::string_view kUplotLicense =
#include "web/uPlot.LICENSE.txt.inc"
    ;
constexpr std::string_view kIndexHtml =
#include "web/index.html.inc"
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

struct Route {
  std::string_view path;
  StaticFile file;
};

// Every file there is, by path: the dashboard, its plots and their library (uPlot, with its
// licence), and the chat playground.
constexpr std::array kRoutes = {
    Route{"/dashboard/dashboard.js", {kJavaScript, kDashboardJs}},
    Route{"/dashboard/dashboard.css", {kCss, kDashboardCss}},
    Route{"/dashboard/plots.js", {kJavaScript, kPlotsJs}},
    Route{"/dashboard/vendor/uPlot.iife.min.js", {kJavaScript, kUplotJs}},
    Route{"/dashboard/vendor/uPlot.min.css", {kCss, kUplotCss}},
    Route{"/dashboard/vendor/uPlot.LICENSE.txt", {kText, kUplotLicense}},
    Route{"/chat/chat.js", {kJavaScript, kChatJs}},
    Route{"/chat/chat.css", {kCss, kChatCss}},
};

}  // namespace

std::optional<StaticFile> dashboard_file(std::string_view path) {
  if (path == "/" || path == "/index.html" || path == "/dashboard" || path == "/dashboard/") {
    return StaticFile{kHtml, kIndexHtml};
  }
  if (path == "/chat" || path == "/chat/") {
    return StaticFile{kHtml, kChatHtml};
  }
  for (const Route& route : kRoutes) {
    if (route.path == path) {
      return route.file;
    }
  }
  return std::nullopt;
}

}  // namespace tandem::server
