#pragma once
// Numbers as the plan's texts show them, so the reasons and the CLI's table agree.

#include <string>

namespace tandem::planning {

std::string format_fixed(double value, int decimals);
// "4.00 GiB", "1.12 MiB", "640 bytes": binary units, the way memory is sold.
std::string format_bytes(double bytes);
// "793 ms", "0.3 ms".
std::string format_ms(double ms);
// "$213", "$85.17", "$0.0070": cents below $100, more digits below $1.
std::string format_usd(double usd);
// "26%", "0.5%".
std::string format_percent(double share);

}  // namespace tandem::planning
