#pragma once
// What the device says about its own heat and power: the Linux thermal zones and power supplies
// under sysfs, read into plain values. The throttle monitor decides from these whether the edge
// model should give way to the cloud; the status page shows them, with what could not be read.
//
// Reading never fails as a whole and never throws: a missing directory means the device does
// not expose that class (containers, most desktops), and every file that is unreadable or
// malformed is skipped and named in `problems`. The sysfs root is a parameter so tests read a
// fake tree from a temporary directory.
//
// Thread-safety: read_device_state() keeps no state and may run on any thread; DeviceState is
// a plain value.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace tandem::telemetry {

// Limits that keep a hostile or broken tree from costing more than a few milliseconds.
inline constexpr size_t kMaxSysfsFileBytes = 4096;  // a sysfs attribute is at most one page
inline constexpr size_t kMaxSysfsEntries = 256;     // per class; phones have ~100 zones

// Readings outside this range are not temperatures a device can have: a driver bug or a sensor
// that is not connected (some report -273 °C or 1000+ °C), so they are skipped, not believed.
inline constexpr double kMinPlausibleTempC = -50.0;
inline constexpr double kMaxPlausibleTempC = 200.0;

struct ThermalZone {
  std::string name;  // the directory, e.g. "thermal_zone0"
  std::string type;  // contents of `type`, e.g. "x86_pkg_temp"; "" when absent or unreadable
  double temp_c = 0.0;
};

struct PowerSupply {
  std::string name;  // the directory, e.g. "BAT0", "AC"
  std::string type;  // Battery, Mains, USB, UPS, Wireless...; "" when absent or unreadable
  // `online`: whether an external supply delivers power; absent on most batteries.
  std::optional<bool> online;
  std::string status;  // Charging, Discharging, Full, Not charging, Unknown; "" when absent
  std::optional<double> capacity_percent;  // 0..100; absent when the file is absent or invalid
  // `scope`: "System" for the device's own battery, "Device" for a peripheral's (a wireless
  // mouse reports its battery here too); "" when the driver does not say, which is read as
  // System.
  std::string scope;
};

struct DeviceState {
  std::vector<ThermalZone> zones;     // sorted by name, numbers by value (zone2 < zone10)
  std::vector<PowerSupply> supplies;  // sorted likewise
  std::vector<std::string> problems;  // what could not be read and why, for the status page

  // The hottest zone's temperature; nullopt when no zone could be read.
  std::optional<double> max_temp_c() const;
  // Whether the device has a battery of its own (peripherals' batteries do not count).
  bool has_battery() const;
  // A battery of the device is discharging and no external supply (Mains, USB of any kind,
  // Wireless) reports online. An external supply whose `online` is unknown does not count as
  // online: without it the battery's own word decides.
  bool on_battery() const;
  // The lowest capacity among the device's batteries; nullopt when none reports one.
  std::optional<double> battery_percent() const;
};

// Reads `<sysfs_root>/class/thermal/thermal_zone*` and `<sysfs_root>/class/power_supply/*`.
//
// Temperatures are read as the kernel ABI defines them (Documentation/ABI/testing/
// sysfs-class-thermal): integer millidegrees Celsius, divided by 1000. No driver-specific
// guessing: a value such as "45" is 0.045 °C, because any rule that reads small values as whole
// degrees also misreads a real reading just above freezing. Zones whose temp is missing,
// unreadable, not an integer, or outside kMinPlausibleTempC..kMaxPlausibleTempC are left out,
// each with a problem. Power-supply files are optional (a battery has no `online`, a charger no
// `capacity`); an absent one is not a problem, an unreadable or malformed one is.
//
// Values are trimmed of surrounding whitespace; bytes outside printable ASCII in names and
// strings become '?', so the status page can show them as they are. Files larger than
// kMaxSysfsFileBytes and entries beyond the first kMaxSysfsEntries are skipped with a problem.
DeviceState read_device_state(const std::string& sysfs_root = "/sys");

}  // namespace tandem::telemetry
