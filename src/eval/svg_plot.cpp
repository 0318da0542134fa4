#include "eval/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace tandem::eval {
namespace {

constexpr double kWidth = 640;
constexpr double kHeight = 420;
constexpr double kLeft = 60;
constexpr double kRight = 170;  // room for the legend
constexpr double kTop = 40;
constexpr double kBottom = 50;

const char* const kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", v);
  return text;
}

struct Frame {
  double low;
  double high;
  double x(double share) const { return kLeft + share * (kWidth - kLeft - kRight); }
  double y(double quality) const {
    return kHeight - kBottom - (quality - low) / (high - low) * (kHeight - kTop - kBottom);
  }
};

// The quality range the curves span, widened a little and rounded to 5 points.
Frame frame_for(const std::vector<const PolicyResult*>& lines) {
  double low = 1;
  double high = 0;
  for (const auto* p : lines) {
    for (const auto& point : p->curve) {
      low = std::min(low, point.quality);
      high = std::max(high, point.quality);
    }
  }
  low = std::floor(std::max(0.0, low - 0.02) * 20) / 20;
  high = std::ceil(std::min(1.0, high + 0.02) * 20) / 20;
  if (high <= low) {
    high = low + 0.05;
  }
  return Frame{low, high};
}

// The grid, the axes' labels and the line at 95% of the cloud's quality.
void draw_axes(std::ostringstream& svg, const Frame& f, double cloud_quality) {
  const double low = f.low;
  const double high = f.high;
  for (int i = 0; i <= 10; i += 2) {
    const double share = i / 10.0;
    svg << "<line x1=\"" << num(f.x(share)) << "\" y1=\"" << num(f.y(low)) << "\" x2=\""
        << num(f.x(share)) << "\" y2=\"" << num(f.y(high)) << "\" stroke=\"#eee\"/>\n"
        << "<text x=\"" << num(f.x(share)) << "\" y=\"" << num(f.y(low) + 16)
        << "\" text-anchor=\"middle\">" << i * 10 << "%</text>\n";
  }
  for (double q = low; q <= high + 1e-9; q += 0.05) {
    svg << "<line x1=\"" << num(f.x(0)) << "\" y1=\"" << num(f.y(q)) << "\" x2=\"" << num(f.x(1))
        << "\" y2=\"" << num(f.y(q)) << "\" stroke=\"#eee\"/>\n"
        << "<text x=\"" << num(f.x(0) - 6) << "\" y=\"" << num(f.y(q) + 4)
        << "\" text-anchor=\"end\">" << num(q * 100) << "</text>\n";
  }
  svg << "<text x=\"" << num(f.x(0.5)) << "\" y=\"" << num(kHeight - 12)
      << "\" text-anchor=\"middle\">share of queries answered by the cloud</text>\n"
      << "<text transform=\"translate(16," << num(f.y((low + high) / 2))
      << ") rotate(-90)\" text-anchor=\"middle\">quality (mean score, %)</text>\n";
  const double target = 0.95 * cloud_quality;
  if (target >= low && target <= high) {
    svg << "<line x1=\"" << num(f.x(0)) << "\" y1=\"" << num(f.y(target)) << "\" x2=\""
        << num(f.x(1)) << "\" y2=\"" << num(f.y(target))
        << "\" stroke=\"#999\" stroke-dasharray=\"2,3\"/>\n"
        << "<text x=\"" << num(f.x(1) + 4) << "\" y=\"" << num(f.y(target) + 4)
        << "\" fill=\"#666\">95% of cloud</text>\n";
  }
}

// One polyline a policy, dashed for the random and oracle baselines, and the legend.
void draw_curves(std::ostringstream& svg, const Frame& f,
                 const std::vector<const PolicyResult*>& lines) {
  size_t colour = 0;
  double legend_y = kTop + 10;
  for (const auto* p : lines) {
    const bool baseline = p->name == "random" || p->name == "oracle";
    const std::string stroke = baseline ? (p->name == "random" ? "#777" : "#000")
                                        : kColours[colour++ % std::size(kColours)];
    svg << "<polyline fill=\"none\" stroke=\"" << stroke << "\" stroke-width=\"1.6\""
        << (baseline ? " stroke-dasharray=\"5,4\"" : "") << " points=\"";
    for (const auto& point : p->curve) {
      svg << num(f.x(point.cloud_share)) << "," << num(f.y(point.quality)) << " ";
    }
    svg << "\"/>\n";
    char label[96];
    std::snprintf(label, sizeof label, "%s (APGR %.3f)", p->name.c_str(),
                  p->summary.apgr.value_or(std::nan("")));
    svg << "<line x1=\"" << num(kWidth - kRight + 12) << "\" y1=\"" << num(legend_y) << "\" x2=\""
        << num(kWidth - kRight + 32) << "\" y2=\"" << num(legend_y) << "\" stroke=\"" << stroke
        << "\" stroke-width=\"2\"" << (baseline ? " stroke-dasharray=\"5,4\"" : "") << "/>\n"
        << "<text x=\"" << num(kWidth - kRight + 36) << "\" y=\"" << num(legend_y + 4)
        << "\" font-size=\"10\">" << escape(label) << "</text>\n";
    legend_y += 16;
  }
}

}  // namespace

std::string curves_svg(const EvalReport& report, const std::string& title) {
  std::vector<const PolicyResult*> lines;
  for (const auto& p : report.policies) {
    if (p.available) {
      lines.push_back(&p);
    }
  }
  if (report.three_tier && report.three_tier->available) {
    lines.push_back(&*report.three_tier);
  }
  const Frame f = frame_for(lines);
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
      << "\" viewBox=\"0 0 " << kWidth << " " << kHeight
      << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << kLeft << "\" y=\"22\" font-size=\"13\">" << escape(title) << "</text>\n";
  draw_axes(svg, f, report.cloud_quality);
  draw_curves(svg, f, lines);
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace tandem::eval
