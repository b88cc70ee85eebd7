// A test's own temporary folder: a fresh mkdtemp folder named after the running test, so two suite
// runs at once never share a path; removed with everything in it when the test passed, kept (and
// named on stderr) when it failed, for a look at what the test left.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace fastloop::test {

class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string label = info ? std::string(info->test_suite_name()) + "." + info->name() : "fastloop_test";
    for (char& c : label)
      if (c == '/') c = '_';  // parameterised tests' names hold slashes
    std::string tmpl = (std::filesystem::temp_directory_path() / (label + "_XXXXXX")).string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed for " + tmpl);
    path_ = tmpl;
  }
  ~TempDir() {
    if (::testing::Test::HasFailure()) {
      std::cerr << "kept " << path_ << ": the test failed, its files are there to look at\n";
      return;
    }
    std::error_code ignored;  // a folder a test made unwritable is still removed where it can be
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  /// A path inside the folder; nothing is created.
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  /// A new empty folder inside (its parents too); its path.
  std::string sub(const std::string& name) const {
    const std::string dir = *this / name;
    std::filesystem::create_directories(dir);
    return dir;
  }

 private:
  std::string path_;
};

} // namespace fastloop::test
