// SPDX-License-Identifier: BSD-3-Clause
// The UCX settings the runtime chooses (ucx/defaults.hpp): soft-RoCE detection from a sysfs
// tree made here, and the settings for each case, never overriding what the user set.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "ucx/defaults.hpp"

namespace onesided::transport::ucx {
namespace {

namespace fs = std::filesystem;

class UcxDefaults : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("onesided-ucx-defaults-" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  /// A device with one port in `state`; `parent`: rxe's attribute naming its netdev.
  void device(const std::string& name, const std::string& state, bool parent) {
    fs::create_directories(root_ / name / "ports" / "1");
    std::ofstream(root_ / name / "ports" / "1" / "state") << state << "\n";
    if (parent) std::ofstream(root_ / name / "parent") << "eth0\n";
  }
  static std::map<std::string, std::string> chosen(const std::vector<RdmaDevice>& devs,
                                                   const std::map<std::string, std::string>& env) {
    std::map<std::string, std::string> out;
    for (const auto& s : chooseSettings(devs, [&](const char* v) -> const char* {
           auto it = env.find(v);
           return it == env.end() ? nullptr : it->second.c_str();
         })) {
      out[s.name] = s.value;
      EXPECT_FALSE(s.why.empty()) << s.name;
    }
    return out;
  }
  fs::path root_;
};

TEST_F(UcxDefaults, FindsSoftRoceDevicesAndActivePorts) {
  EXPECT_TRUE(rdmaDevices((root_ / "missing").string()).empty());
  device("mlx5_0", "4: ACTIVE", false);
  device("rxe0", "4: ACTIVE", true);
  device("roce_soft", "1: DOWN", true);  // renamed rxe: found by its parent attribute
  const auto devs = rdmaDevices(root_.string());
  ASSERT_EQ(devs.size(), 3U);
  EXPECT_EQ(devs[0].name, "mlx5_0");
  EXPECT_FALSE(devs[0].softRoce);
  EXPECT_TRUE(devs[0].active);
  EXPECT_EQ(devs[1].name, "roce_soft");
  EXPECT_TRUE(devs[1].softRoce);
  EXPECT_FALSE(devs[1].active);
  EXPECT_EQ(devs[2].name, "rxe0");
  EXPECT_TRUE(devs[2].softRoce);
  EXPECT_TRUE(devs[2].active);
}

TEST_F(UcxDefaults, NothingChosenWithoutSoftRoce) {
  // UCX_TLS stays UCX's (ucx/defaults.cpp says why System V segments stay on).
  EXPECT_TRUE(chosen({}, {}).empty());
  EXPECT_TRUE(chosen({}, {{"UCX_TLS", "sm,self"}}).empty());
  // A hardware port alone changes nothing.
  EXPECT_TRUE(chosen({{"mlx5_0", false, true}}, {}).empty());
}

TEST_F(UcxDefaults, SoftRoceGetsTheSuiteSettings) {
  const std::vector<RdmaDevice> rxe{{"rxe0", true, true}};
  auto c = chosen(rxe, {});
  EXPECT_EQ(c["UD_TIMEOUT"], "600s");
  EXPECT_EQ(c["IB_GID_INDEX"], "0");
  EXPECT_EQ(c.count("TLS"), 0U);
  // What the user set stays theirs.
  c = chosen(rxe, {{"UCX_UD_TIMEOUT", "60s"}, {"UCX_IB_GID_INDEX", "3"}, {"UCX_TLS", "rc"}});
  EXPECT_TRUE(c.empty());
  // Next to a hardware port the GID index is left to UCX (it applies to every device).
  c = chosen({{"rxe0", true, true}, {"mlx5_0", false, true}}, {});
  EXPECT_EQ(c["UD_TIMEOUT"], "600s");
  EXPECT_EQ(c.count("IB_GID_INDEX"), 0U);
  // A soft-RoCE device without an active port: nothing for it.
  c = chosen({{"rxe0", true, false}}, {});
  EXPECT_EQ(c.count("UD_TIMEOUT"), 0U);
}

}  // namespace
}  // namespace onesided::transport::ucx
