// SPDX-License-Identifier: BSD-3-Clause
#include "log.hpp"
#include "settings.hpp"

#include <spdlog/cfg/helpers.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <array>
#include <cstdlib>
#include <mutex>

namespace onesided::log {
namespace {

constexpr std::array<const char*, 6> kNames = {"core", "ucx", "verbs", "coll", "capi", "boot"};

struct Loggers {
  std::array<std::shared_ptr<spdlog::logger>, kNames.size()> all;
  Loggers() {
    auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    for (std::size_t i = 0; i < kNames.size(); ++i) {
      all[i] = std::make_shared<spdlog::logger>(kNames[i], sink);
      all[i]->set_level(spdlog::level::off);
    }
    // One sink, so one pattern: set_pattern sets the sink's formatter, and the last logger to
    // set it would name every line. %n is the logger's (subsystem's) name.
    all[0]->set_pattern("[%H:%M:%S.%f] [onesided] [%n] %l: %v");
    if (const char* spec = settings::raw(settings::Id::kLog); spec != nullptr && *spec != '\0') {
      // Same syntax as SPDLOG_LEVEL: "debug" or "warn,ucx=trace"; names without the prefix.
      std::string s(spec);
      std::string global;
      std::size_t pos = 0;
      while (pos <= s.size()) {
        auto end = s.find(',', pos);
        if (end == std::string::npos) end = s.size();
        auto item = s.substr(pos, end - pos);
        auto eq = item.find('=');
        if (eq == std::string::npos) {
          global = item;
        } else {
          auto name = item.substr(0, eq);
          auto lvl = spdlog::level::from_str(item.substr(eq + 1));
          for (std::size_t i = 0; i < kNames.size(); ++i) {
            if (name == kNames[i]) all[i]->set_level(lvl);
          }
        }
        pos = end + 1;
      }
      if (!global.empty()) {
        auto lvl = spdlog::level::from_str(global);
        for (std::size_t i = 0; i < kNames.size(); ++i) {
          bool named = s.find(std::string(kNames[i]) + "=") != std::string::npos;
          if (!named) all[i]->set_level(lvl);
        }
      }
    }
  }
};

Loggers& loggers() {
  static Loggers l;
  return l;
}

}  // namespace

void init() { (void)loggers(); }

void setRank(int rank) {
  loggers().all[0]->set_pattern("[%H:%M:%S.%f] [r" + std::to_string(rank) + "] [%n] %l: %v");
}

spdlog::logger& core() { return *loggers().all[0]; }
spdlog::logger& ucx() { return *loggers().all[1]; }
spdlog::logger& verbs() { return *loggers().all[2]; }
spdlog::logger& coll() { return *loggers().all[3]; }
spdlog::logger& capi() { return *loggers().all[4]; }
spdlog::logger& boot() { return *loggers().all[5]; }

}  // namespace onesided::log
