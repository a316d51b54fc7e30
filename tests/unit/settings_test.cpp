// SPDX-License-Identifier: BSD-3-Clause
// The ONESIDED_* settings table: its parse, its rows, and docs/settings.md's copy of it.
#include "settings.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace onesided::settings {
namespace {

TEST(Settings, NamesAreUniqueAndPrefixed) {
  std::set<std::string> seen;
  for (const Setting& s : all()) {
    EXPECT_EQ(std::string(s.name).rfind("ONESIDED_", 0), 0U) << s.name;
    EXPECT_TRUE(seen.insert(s.name).second) << s.name;
    EXPECT_NE(std::string(s.meaning), "") << s.name;
    // Every default parses: a control variable reads it when the variable is unset.
    if (!s.internal) {
      EXPECT_TRUE(parse(s, nullptr).has_value()) << s.name;
    }
  }
  EXPECT_STREQ(get(Id::kCollCell).name, "ONESIDED_COLL_CELL");
  EXPECT_STREQ(get(Id::kReportSignal).name, "ONESIDED_REPORT_SIGNAL");
}

TEST(Settings, CountParse) {
  const Setting& cell = get(Id::kCollCell);  // 64 .. 4096, default 256
  EXPECT_EQ(parse(cell, nullptr)->number, 256U);
  EXPECT_EQ(parse(cell, "")->number, 256U);
  EXPECT_EQ(parse(cell, "128")->number, 128U);
  EXPECT_EQ(parse(cell, "64")->number, 64U);
  EXPECT_EQ(parse(cell, "4096")->number, 4096U);
  EXPECT_FALSE(parse(cell, "63"));
  EXPECT_FALSE(parse(cell, "4097"));
  EXPECT_FALSE(parse(cell, "-1"));
  EXPECT_FALSE(parse(cell, "12k"));
  EXPECT_FALSE(parse(cell, "99999999999999999999999"));
}

TEST(Settings, ChoiceParse) {
  const Setting& wait = get(Id::kWait);
  EXPECT_EQ(parse(wait, nullptr)->choice, 0);  // adaptive
  EXPECT_EQ(parse(wait, "spin")->choice, 1);
  EXPECT_FALSE(parse(wait, "busy"));
  const Setting& thread = get(Id::kProgressThread);  // 0 / off, 1 / on
  EXPECT_EQ(parse(thread, "on")->choice, parse(thread, "1")->choice);
  EXPECT_EQ(parse(thread, "off")->choice, parse(thread, "0")->choice);
  EXPECT_STREQ(thread.choices[parse(thread, nullptr)->choice], "1");
}

TEST(Settings, TextParse) {
  const Setting& log = get(Id::kLog);
  EXPECT_EQ(parse(log, "warn,ucx=trace")->text, "warn,ucx=trace");
  EXPECT_EQ(parse(log, nullptr)->text, "off");
  EXPECT_EQ(parse(get(Id::kP2pRing), nullptr)->text, "auto");
}

TEST(Settings, InternalOnesAreTheLaunchers) {
  std::set<std::string> internal;
  for (const Setting& s : all()) {
    if (s.internal) internal.insert(s.name);
  }
  EXPECT_EQ(internal, (std::set<std::string>{
                          "ONESIDED_RANK", "ONESIDED_SIZE", "ONESIDED_LOCAL_RANK",
                          "ONESIDED_LOCAL_SIZE", "ONESIDED_RENDEZVOUS", "ONESIDED_JOBID",
                          "ONESIDED_SECRET", "ONESIDED_REPORT_FD", "ONESIDED_REPORT_SIGNAL"}));
}

// docs/settings.md's generated tables are the table's markdown, line for line
// (onesided-run --settings-table prints them).
TEST(Settings, DocsTablesMatch) {
  std::ifstream in(ONESIDED_SOURCE_DIR "/docs/settings.md");
  ASSERT_TRUE(in) << "docs/settings.md not found";
  const std::string begin = "<!-- generated: onesided-run --settings-table";
  const std::string end = "<!-- end of generated tables -->";
  std::string line;
  while (std::getline(in, line) && line.rfind(begin, 0) != 0) {
  }
  ASSERT_EQ(line.rfind(begin, 0), 0U) << "no generated region in docs/settings.md";
  std::string tables;
  while (std::getline(in, line) && line != end) tables += line + "\n";
  EXPECT_EQ(line, end);
  EXPECT_EQ(tables, markdownTable())
      << "docs/settings.md's tables differ from src/settings.cpp: regenerate them with "
         "onesided-run --settings-table";
}

}  // namespace
}  // namespace onesided::settings
