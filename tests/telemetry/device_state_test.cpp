// read_device_state() against fake sysfs trees built in a temporary directory.

#include "telemetry/device_state.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tandem::telemetry {
namespace {

namespace fs = std::filesystem;

// A fresh directory under $TMPDIR (or /tmp) acting as the sysfs root, removed with its contents.
class FakeSysfs {
 public:
  FakeSysfs() {
    const char* base = std::getenv("TMPDIR");  // NOLINT(concurrency-mt-unsafe): no setenv here
    std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") +
                          "/tandem_device_state_test_XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) {
      root_ = pattern;
    }
  }
  ~FakeSysfs() {
    if (!root_.empty()) {
      std::error_code ignored;
      // A test may have taken permissions away; give them back so removal succeeds.
      fs::permissions(root_, fs::perms::owner_all, fs::perm_options::add, ignored);
      for (auto it = fs::recursive_directory_iterator(root_, ignored);
           it != fs::recursive_directory_iterator(); it.increment(ignored)) {
        fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ignored);
      }
      fs::remove_all(root_, ignored);
    }
  }
  FakeSysfs(const FakeSysfs&) = delete;
  FakeSysfs& operator=(const FakeSysfs&) = delete;

  bool ok() const { return !root_.empty(); }
  const std::string& root() const { return root_; }

  // Writes `<root>/<relative>`, creating its directories.
  void write(const std::string& relative, const std::string& contents) const {
    const fs::path path = fs::path(root_) / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << contents;
  }
  std::string path(const std::string& relative) const { return root_ + "/" + relative; }

  void zone(const std::string& name, const std::string& type, const std::string& temp) const {
    write("class/thermal/" + name + "/type", type + "\n");
    write("class/thermal/" + name + "/temp", temp);
  }
  void supply(const std::string& name, const std::string& file, const std::string& value) const {
    write("class/power_supply/" + name + "/" + file, value + "\n");
  }
  void battery(const std::string& name, const std::string& status,
               const std::string& capacity) const {
    supply(name, "type", "Battery");
    supply(name, "status", status);
    supply(name, "capacity", capacity);
  }
  void external(const std::string& name, const std::string& type, const std::string& online) const {
    supply(name, "type", type);
    supply(name, "online", online);
  }

 private:
  std::string root_;
};

// Whether some problem mentions `needle`.
bool has_problem(const DeviceState& state, const std::string& needle) {
  for (const std::string& problem : state.problems) {
    if (problem.find(needle) != std::string::npos) {
      return true;
    }
  }
  return false;
}

TEST(DeviceStateTest, ReadsZonesSortedByNameWithNumbersByValue) {
  FakeSysfs sysfs;
  ASSERT_TRUE(sysfs.ok());
  sysfs.zone("thermal_zone10", "battery", "30000\n");
  sysfs.zone("thermal_zone1", "acpitz", "91500\n");
  sysfs.zone("thermal_zone0", "x86_pkg_temp", "45000\n");
  sysfs.write("class/thermal/cooling_device0/type", "Processor\n");  // not a zone

  const DeviceState state = read_device_state(sysfs.root());

  ASSERT_EQ(state.zones.size(), 3u);
  EXPECT_EQ(state.zones[0].name, "thermal_zone0");
  EXPECT_EQ(state.zones[0].type, "x86_pkg_temp");
  EXPECT_DOUBLE_EQ(state.zones[0].temp_c, 45.0);
  EXPECT_EQ(state.zones[1].name, "thermal_zone1");
  EXPECT_EQ(state.zones[1].type, "acpitz");
  EXPECT_DOUBLE_EQ(state.zones[1].temp_c, 91.5);
  EXPECT_EQ(state.zones[2].name, "thermal_zone10");
  EXPECT_EQ(state.max_temp_c(), 91.5);
  EXPECT_TRUE(state.problems.empty());
  EXPECT_TRUE(state.supplies.empty());
}

TEST(DeviceStateTest, ReadsMillidegreesAsTheKernelAbiSaysAndTrimsWhitespace) {
  FakeSysfs sysfs;
  ASSERT_TRUE(sysfs.ok());
  sysfs.zone("thermal_zone0", "  cpu-thermal \r\n", "  -5500 \n\n");
  sysfs.zone("thermal_zone1", "legacy", "45");  // plain degrees from a broken driver

  const DeviceState state = read_device_state(sysfs.root());

  ASSERT_EQ(state.zones.size(), 2u);
  EXPECT_EQ(state.zones[0].type, "cpu-thermal");
  EXPECT_DOUBLE_EQ(state.zones[0].temp_c, -5.5);
  // Documented: no guessing; 45 millidegrees is 0.045 °C.
  EXPECT_DOUBLE_EQ(state.zones[1].temp_c, 0.045);
}

TEST(DeviceStateTest, BatteryDischargingWithMainsOfflineIsOnBattery) {
  FakeSysfs sysfs;
  ASSERT_TRUE(sysfs.ok());
  sysfs.battery("BAT0", "Discharging", "15");
  sysfs.external("AC", "Mains", "0");

  const DeviceState state = read_device_state(sysfs.root());

  ASSERT_EQ(state.supplies.size(), 2u);
  EXPECT_EQ(state.supplies[0].name, "AC");
  EXPECT_EQ(state.supplies[0].type, "Mains");
  EXPECT_EQ(state.supplies[0].online, false);
  EXPECT_FALSE(state.supplies[0].capacity_percent.has_value());
  EXPECT_EQ(state.supplies[1].name, "BAT0");
  EXPECT_EQ(state.supplies[1].status, "Discharging");
  EXPECT_FALSE(state.supplies[1].online.has_value());  // batteries have no `online`
  EXPECT_TRUE(state.has_battery());
  EXPECT_TRUE(state.on_battery());
  EXPECT_EQ(state.battery_percent(), 15.0);
  EXPECT_TRUE(state.problems.empty()) << state.problems.front();
}

TEST(DeviceStateTest, MainsOnlineIsNotOnBattery) {
  FakeSysfs sysfs;
  ASSERT_TRUE(sysfs.ok());
  sysfs.battery("BAT0", "Discharging", "15");  // heavy load can outrun the charger
  sysfs.external("AC", "Mains", "1");

  const DeviceState state = read_device_state(sysfs.root());

  EXPECT_TRUE(state.has_battery());
  EXPECT_FALSE(state.on_battery());
  EXPECT_EQ(state.battery_percent(), 15.0);
}

TEST(DeviceStateTest, UsbChargerOnlineIsNotOnBattery) {
  FakeSysfs sysfs;
  ASSERT_TRUE(sysfs.ok());
  sysfs.battery("battery", "Discharging", "40");
  sysfs.external("usb", "USB_PD", "2");  // 2: online, programmable

  const DeviceState state = read_device_state(sysfs.root());

  EXPECT_EQ(state.supplies[1].online, true);
  EXPECT_FALSE(state.on_battery());
}

TEST(DeviceStateTest, LowestSystemBatteryCountsAndPeripheralsDoNot) {
  FakeSysfs sysfs;
  ASSERT_TRUE(sysfs.ok());
  sysfs.battery("BAT0", "Discharging", "60");
  sysfs.battery("BAT1", "Discharging", "35");
  sysfs.battery("hid-mouse-battery", "Discharging", "3");
  sysfs.supply("hid-mouse-battery", "scope", "Device");

  const DeviceState state = read_device_state(sysfs.root());

  EXPECT_EQ(state.battery_percent(), 35.0);
  EXPECT_TRUE(state.on_battery());
}

TEST(DeviceStateTest, PeripheralBatteryAloneIsNoBattery) {
  FakeSysfs sysfs;
  ASSERT_TRUE(sysfs.ok());
  sysfs.battery("hid-mouse-battery", "Discharging", "3");
  sysfs.supply("hid-mouse-battery", "scope", "Device");

  const DeviceState state = read_device_state(sysfs.root());

  EXPECT_FALSE(state.has_battery());
  EXPECT_FALSE(state.on_battery());
  EXPECT_FALSE(state.battery_percent().has_value());
}

TEST(DeviceStateTest, BadZonesAreSkippedWithAProblemEach) {
  FakeSysfs sysfs;
  ASSERT_TRUE(sysfs.ok());
  sysfs.zone("thermal_zone0", "ok", "50000");
  sysfs.zone("thermal_zone1", "garbage", "hot\n");
  sysfs.zone("thermal_zone2", "empty", "");
  sysfs.write("class/thermal/thermal_zone3/type", "no-temp\n");
  sysfs.zone("thermal_zone4", "too-hot", "250000");
  sysfs.zone("thermal_zone5", "absolute-zero", "-273150");
  sysfs.zone("thermal_zone6", "overflow", "99999999999999999999999999");
  sysfs.zone("thermal_zone7", "fraction", "45000.5");
  sysfs.zone("thermal_zone8", "huge", std::string(10000, '7'));

  const DeviceState state = read_device_state(sysfs.root());

  ASSERT_EQ(state.zones.size(), 1u);
  EXPECT_EQ(state.zones[0].name, "thermal_zone0");
  EXPECT_EQ(state.problems.size(), 8u);
  EXPECT_TRUE(has_problem(state, "thermal_zone1/temp: not an integer millidegree value: \"hot\""));
  EXPECT_TRUE(has_problem(state, "thermal_zone2/temp: not an integer millidegree value: \"\""));
  EXPECT_TRUE(has_problem(state, "thermal_zone3/temp: No such file or directory"));
  EXPECT_TRUE(has_problem(state, "thermal_zone4/temp: 250 C is outside the plausible -50..200 C"));
  EXPECT_TRUE(has_problem(state, "thermal_zone5/temp: -273.15 C is outside"));
  EXPECT_TRUE(has_problem(state, "thermal_zone6/temp: not an integer"));
  EXPECT_TRUE(has_problem(state, "thermal_zone7/temp: not an integer"));
  EXPECT_TRUE(has_problem(state, "thermal_zone8/temp: larger than 4096 bytes"));
}

TEST(DeviceStateTest, BadSupplyAttributesAreDroppedWithAProblem) {
  FakeSysfs sysfs;
  ASSERT_TRUE(sysfs.ok());
  sysfs.battery("BAT0", "Discharging", "150");
  sysfs.supply("BAT0", "online", "yes");
  sysfs.external("AC", "Mains", "-1");

  const DeviceState state = read_device_state(sysfs.root());

  ASSERT_EQ(state.supplies.size(), 2u);
  EXPECT_FALSE(state.supplies[1].capacity_percent.has_value());
  EXPECT_FALSE(state.supplies[1].online.has_value());
  EXPECT_FALSE(state.supplies[0].online.has_value());
  EXPECT_TRUE(has_problem(state, "BAT0/capacity: 150% is outside 0..100"));
  EXPECT_TRUE(has_problem(state, "BAT0/online: not an integer: \"yes\""));
  EXPECT_TRUE(has_problem(state, "AC/online: unexpected value -1"));
  EXPECT_FALSE(state.battery_percent().has_value());
  // The battery's own status still says it is discharging; the unknown Mains does not count.
  EXPECT_TRUE(state.on_battery());
}

TEST(DeviceStateTest, NonPrintableBytesAreReplaced) {
  FakeSysfs sysfs;
  ASSERT_TRUE(sysfs.ok());
  sysfs.zone("thermal_zone0", std::string("cpu\x01\xff"), "40000");

  const DeviceState state = read_device_state(sysfs.root());

  ASSERT_EQ(state.zones.size(), 1u);
  EXPECT_EQ(state.zones[0].type, "cpu??");
}

TEST(DeviceStateTest, FifoIsRefusedWithoutBlocking) {
  FakeSysfs sysfs;
  ASSERT_TRUE(sysfs.ok());
  sysfs.write("class/thermal/thermal_zone0/type", "fifo\n");
  ASSERT_EQ(::mkfifo(sysfs.path("class/thermal/thermal_zone0/temp").c_str(), 0600), 0);

  const DeviceState state = read_device_state(sysfs.root());

  EXPECT_TRUE(state.zones.empty());
  EXPECT_TRUE(has_problem(state, "thermal_zone0/temp: not a regular file"));
}

TEST(DeviceStateTest, DirectoryWithoutPermissionIsAProblem) {
  if (::geteuid() == 0) {
    GTEST_SKIP() << "root ignores file permissions";
  }
  FakeSysfs sysfs;
  ASSERT_TRUE(sysfs.ok());
  sysfs.zone("thermal_zone0", "ok", "50000");
  sysfs.zone("thermal_zone1", "locked", "60000");
  sysfs.battery("BAT0", "Discharging", "50");
  ASSERT_EQ(::chmod(sysfs.path("class/thermal/thermal_zone1").c_str(), 0), 0);
  ASSERT_EQ(::chmod(sysfs.path("class/power_supply").c_str(), 0), 0);

  const DeviceState state = read_device_state(sysfs.root());

  ASSERT_EQ(state.zones.size(), 1u);
  EXPECT_EQ(state.zones[0].name, "thermal_zone0");
  EXPECT_TRUE(has_problem(state, "thermal_zone1/temp: Permission denied"));
  EXPECT_TRUE(has_problem(state, "class/power_supply: Permission denied"));
  EXPECT_TRUE(state.supplies.empty());
}

TEST(DeviceStateTest, MissingClassesAreNotProblems) {
  FakeSysfs sysfs;
  ASSERT_TRUE(sysfs.ok());

  const DeviceState state = read_device_state(sysfs.root());

  EXPECT_TRUE(state.zones.empty());
  EXPECT_TRUE(state.supplies.empty());
  EXPECT_TRUE(state.problems.empty());
}

TEST(DeviceStateTest, NonexistentRootGivesAnEmptyState) {
  const DeviceState state = read_device_state("/nonexistent/tandem/sysfs/root");

  EXPECT_TRUE(state.zones.empty());
  EXPECT_TRUE(state.supplies.empty());
  EXPECT_TRUE(state.problems.empty());
  EXPECT_FALSE(state.max_temp_c().has_value());
  EXPECT_FALSE(state.has_battery());
  EXPECT_FALSE(state.on_battery());
  EXPECT_FALSE(state.battery_percent().has_value());
}

TEST(DeviceStateTest, RootThatIsAFileGivesAnEmptyState) {
  FakeSysfs sysfs;
  ASSERT_TRUE(sysfs.ok());
  sysfs.write("class", "not a directory\n");

  const DeviceState state = read_device_state(sysfs.root());

  EXPECT_TRUE(state.zones.empty());
  EXPECT_TRUE(state.supplies.empty());
  EXPECT_TRUE(state.problems.empty());
}

TEST(DeviceStateTest, ReadsTheRealSysfsWithoutFailing) {
  // Whatever this machine has (often nothing in a container); only that it returns.
  const DeviceState state = read_device_state();
  EXPECT_LE(state.zones.size(), kMaxSysfsEntries);
}

}  // namespace
}  // namespace tandem::telemetry
