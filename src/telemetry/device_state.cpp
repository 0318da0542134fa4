#include "telemetry/device_state.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tandem::telemetry {
namespace {

// Whether a file held a value. Absence and unreadability are told apart because many
// power-supply attributes are legitimately absent, while an unreadable one is worth reporting.
enum class ReadOutcome {
  // The file was read whole; `text` holds its contents.
  kOk,
  // There is no such file (or a path component is not a directory).
  kAbsent,
  // The file exists but could not be read: permission, I/O error, not a regular file, too
  // large. `error` says which.
  kUnreadable,
};

struct FileText {
  ReadOutcome outcome = ReadOutcome::kAbsent;
  std::string text;
  std::string error;
};

std::string errno_text(int error) {
  return std::error_code(error, std::generic_category()).message();
}

// Reads at most kMaxSysfsFileBytes. O_NONBLOCK and the regular-file check keep a FIFO or a
// device node in a fake or misconfigured root from blocking the caller.
FileText read_small_file(const std::string& path) {
  FileText result;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int error = errno;
    result.outcome =
        (error == ENOENT || error == ENOTDIR) ? ReadOutcome::kAbsent : ReadOutcome::kUnreadable;
    result.error = errno_text(error);
    return result;
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    result.outcome = ReadOutcome::kUnreadable;
    result.error = "not a regular file";
    return result;
  }
  // One byte more than the cap tells "exactly at the cap" from "larger".
  std::string buffer(kMaxSysfsFileBytes + 1, '\0');
  size_t used = 0;
  while (used < buffer.size()) {
    const ssize_t got = ::read(fd, buffer.data() + used, buffer.size() - used);
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0) {
      result.outcome = ReadOutcome::kUnreadable;
      result.error = errno_text(errno);
      ::close(fd);
      return result;
    }
    if (got == 0) {
      break;
    }
    used += static_cast<size_t>(got);
  }
  ::close(fd);
  if (used > kMaxSysfsFileBytes) {
    result.outcome = ReadOutcome::kUnreadable;
    result.error = "larger than " + std::to_string(kMaxSysfsFileBytes) + " bytes";
    return result;
  }
  buffer.resize(used);
  result.outcome = ReadOutcome::kOk;
  result.text = std::move(buffer);
  return result;
}

std::string_view trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n\v\f";
  const size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) {
    return {};
  }
  return text.substr(begin, text.find_last_not_of(kSpace) - begin + 1);
}

// Sysfs strings are ASCII; anything else is corruption, and replacing it keeps the status page
// (JSON, which must be valid UTF-8) from choking on it.
std::string printable(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte > 0x7e) {
      c = '?';
    }
  }
  return out;
}

// A short quoted excerpt of a bad value for a problem message.
std::string quoted(std::string_view text) {
  constexpr size_t kMaxShown = 32;
  if (text.size() > kMaxShown) {
    return "\"" + printable(text.substr(0, kMaxShown)) + "...\"";
  }
  return "\"" + printable(text) + "\"";
}

std::optional<int64_t> parse_int(std::string_view text) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
    return std::nullopt;
  }
  return value;
}

std::string format_number(double value) {
  // Whole numbers print as such ("1000000", not the shorter "1e+06"): people read these.
  if (std::isfinite(value) && value == std::trunc(value) && std::fabs(value) < 1e15) {
    return std::to_string(static_cast<int64_t>(value));
  }
  char buffer[32];
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return error == std::errc() ? std::string(buffer, end) : std::string("?");
}

// Names in order with digit runs compared by value, so thermal_zone2 sorts before
// thermal_zone10 as a person expects; falls back to byte order for a total order.
bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      size_t a_end = i, b_end = j;
      while (a_end < a.size() && is_digit(a[a_end])) {
        ++a_end;
      }
      while (b_end < b.size() && is_digit(b[b_end])) {
        ++b_end;
      }
      std::string_view a_num(a.data() + i, a_end - i), b_num(b.data() + j, b_end - j);
      a_num.remove_prefix(std::min(a_num.find_first_not_of('0'), a_num.size()));
      b_num.remove_prefix(std::min(b_num.find_first_not_of('0'), b_num.size()));
      if (a_num.size() != b_num.size()) {
        return a_num.size() < b_num.size();
      }
      if (a_num != b_num) {
        return a_num < b_num;
      }
      i = a_end;
      j = b_end;
      continue;
    }
    if (a[i] != b[j]) {
      return a[i] < b[j];
    }
    ++i;
    ++j;
  }
  if ((i < a.size()) != (j < b.size())) {
    return j < b.size();
  }
  return a < b;
}

// The entries of `dir` whose names start with `prefix`, in natural order, at most
// kMaxSysfsEntries. A missing directory is normal (no such class on this machine).
std::vector<std::string> list_entries(const std::string& dir, std::string_view prefix,
                                      std::vector<std::string>& problems) {
  namespace fs = std::filesystem;
  // Listing is bounded too, so a directory with millions of entries cannot exhaust memory.
  constexpr size_t kMaxListed = 16 * kMaxSysfsEntries;
  std::vector<std::string> names;
  std::error_code error;
  fs::directory_iterator it(dir, error);
  if (error) {
    if (error != std::errc::no_such_file_or_directory && error != std::errc::not_a_directory) {
      problems.push_back(printable(dir + ": " + error.message()));
    }
    return names;
  }
  for (const fs::directory_iterator end; it != end && names.size() < kMaxListed;) {
    std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) == 0) {
      names.push_back(std::move(name));
    }
    it.increment(error);
    if (error) {
      problems.push_back(printable(dir + ": listing stopped: " + error.message()));
      break;
    }
  }
  std::sort(names.begin(), names.end(), natural_less);
  if (names.size() > kMaxSysfsEntries) {
    problems.push_back(printable(dir + ": more than " + std::to_string(kMaxSysfsEntries) +
                                 " entries; only the first are read"));
    names.resize(kMaxSysfsEntries);
  }
  return names;
}

// The trimmed contents of an optional string attribute; "" when absent or unreadable (the
// latter reported).
std::string read_string(const std::string& path, std::vector<std::string>& problems) {
  FileText file = read_small_file(path);
  if (file.outcome == ReadOutcome::kUnreadable) {
    problems.push_back(printable(path + ": " + file.error));
  }
  return file.outcome == ReadOutcome::kOk ? printable(trim(file.text)) : std::string();
}

// An optional integer attribute; nullopt when absent, unreadable or not an integer (the last two
// reported).
std::optional<int64_t> read_int(const std::string& path, std::vector<std::string>& problems) {
  FileText file = read_small_file(path);
  if (file.outcome == ReadOutcome::kAbsent) {
    return std::nullopt;
  }
  if (file.outcome == ReadOutcome::kUnreadable) {
    problems.push_back(printable(path + ": " + file.error));
    return std::nullopt;
  }
  const std::string_view text = trim(file.text);
  std::optional<int64_t> value = parse_int(text);
  if (!value) {
    problems.push_back(printable(path + ": not an integer: ") + quoted(text));
  }
  return value;
}

std::optional<ThermalZone> read_zone(const std::string& dir, const std::string& name,
                                     std::vector<std::string>& problems) {
  const std::string temp_path = dir + "/temp";
  const FileText file = read_small_file(temp_path);
  if (file.outcome != ReadOutcome::kOk) {
    problems.push_back(printable(temp_path + ": " + file.error));
    return std::nullopt;
  }
  const std::string_view text = trim(file.text);
  const std::optional<int64_t> millidegrees = parse_int(text);
  if (!millidegrees) {
    problems.push_back(printable(temp_path + ": not an integer millidegree value: ") +
                       quoted(text));
    return std::nullopt;
  }
  const double celsius = static_cast<double>(*millidegrees) / 1000.0;
  if (celsius < kMinPlausibleTempC || celsius > kMaxPlausibleTempC) {
    problems.push_back(printable(
        temp_path + ": " + format_number(celsius) + " C is outside the plausible " +
        format_number(kMinPlausibleTempC) + ".." + format_number(kMaxPlausibleTempC) + " C"));
    return std::nullopt;
  }
  return ThermalZone{printable(name), read_string(dir + "/type", problems), celsius};
}

PowerSupply read_supply(const std::string& dir, const std::string& name,
                        std::vector<std::string>& problems) {
  PowerSupply supply;
  supply.name = printable(name);
  supply.type = read_string(dir + "/type", problems);
  supply.status = read_string(dir + "/status", problems);
  supply.scope = read_string(dir + "/scope", problems);
  // 0 offline; 1 online; 2 online and programmable (USB PD). Anything else is malformed.
  const std::string online_path = dir + "/online";
  if (std::optional<int64_t> online = read_int(online_path, problems)) {
    if (*online >= 0 && *online <= 2) {
      supply.online = *online != 0;
    } else {
      problems.push_back(printable(online_path + ": unexpected value " + std::to_string(*online)));
    }
  }
  const std::string capacity_path = dir + "/capacity";
  if (std::optional<int64_t> capacity = read_int(capacity_path, problems)) {
    if (*capacity >= 0 && *capacity <= 100) {
      supply.capacity_percent = static_cast<double>(*capacity);
    } else {
      problems.push_back(
          printable(capacity_path + ": " + std::to_string(*capacity) + "% is outside 0..100"));
    }
  }
  return supply;
}

std::string child(const std::string& dir, const std::string& name) {
  std::string path = dir;
  path += '/';
  path += name;
  return path;
}

bool is_system_battery(const PowerSupply& supply) {
  return supply.type == "Battery" && supply.scope != "Device";
}

// Supplies that power the device from outside. Older kernels name USB chargers by kind
// (USB_DCP, USB_C, USB_PD...), newer ones say "USB".
bool is_external(const PowerSupply& supply) {
  return supply.type == "Mains" || supply.type == "Wireless" ||
         supply.type.compare(0, 3, "USB") == 0;
}

}  // namespace

std::optional<double> DeviceState::max_temp_c() const {
  std::optional<double> hottest;
  for (const ThermalZone& zone : zones) {
    if (!hottest || zone.temp_c > *hottest) {
      hottest = zone.temp_c;
    }
  }
  return hottest;
}

bool DeviceState::has_battery() const {
  return std::any_of(supplies.begin(), supplies.end(), is_system_battery);
}

bool DeviceState::on_battery() const {
  const bool discharging = std::any_of(supplies.begin(), supplies.end(), [](const auto& s) {
    return is_system_battery(s) && s.status == "Discharging";
  });
  const bool external_online = std::any_of(supplies.begin(), supplies.end(), [](const auto& s) {
    return is_external(s) && s.online.value_or(false);
  });
  return discharging && !external_online;
}

std::optional<double> DeviceState::battery_percent() const {
  std::optional<double> lowest;
  for (const PowerSupply& supply : supplies) {
    if (is_system_battery(supply) && supply.capacity_percent &&
        (!lowest || *supply.capacity_percent < *lowest)) {
      lowest = supply.capacity_percent;
    }
  }
  return lowest;
}

DeviceState read_device_state(const std::string& sysfs_root) {
  DeviceState state;
  const std::string thermal_dir = sysfs_root + "/class/thermal";
  for (const std::string& name : list_entries(thermal_dir, "thermal_zone", state.problems)) {
    if (std::optional<ThermalZone> zone =
            read_zone(child(thermal_dir, name), name, state.problems)) {
      state.zones.push_back(std::move(*zone));
    }
  }
  const std::string power_dir = sysfs_root + "/class/power_supply";
  for (const std::string& name : list_entries(power_dir, "", state.problems)) {
    state.supplies.push_back(read_supply(child(power_dir, name), name, state.problems));
  }
  return state;
}

}  // namespace tandem::telemetry
