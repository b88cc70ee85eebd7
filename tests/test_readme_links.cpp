// The links of README.md and docs/*.md: every relative link names a file of the repository, every
// `page#anchor` a heading of that page (GitHub's anchors), and none leaves the repository; and the pages speak
// of the software, not of the project's history. The pages' commands: test_readme.cpp.
#include "readme_commands.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <utility>
#include <vector>

namespace fastloop {
namespace {

namespace fs = std::filesystem;

/// The anchors GitHub gives a page's headings: lower case, punctuation but `-` and `_` dropped, spaces `-`.
std::vector<std::string> readme_anchors(const fs::path& page) {
  std::ifstream in(page);
  std::vector<std::string> anchors;
  bool in_fence = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```", 0) == 0) in_fence = !in_fence;
    std::smatch m;
    if (in_fence || !std::regex_match(line, m, std::regex("#+ (.*)"))) continue;
    std::string anchor;
    for (const unsigned char c : m[1].str())
      if (std::isalnum(c) || c == '-' || c == '_') anchor += static_cast<char>(std::tolower(c));
      else if (c == ' ') anchor += '-';
    anchors.push_back(anchor);
  }
  return anchors;
}

/// The relative targets of a page's markdown links `[text](target)`, outside code blocks and spans, each
/// with its line: http(s) and mailto links left out; `page#anchor` and `#anchor` (this page) kept whole.
std::vector<std::pair<int, std::string>> readme_relative_links(const std::string& page) {
  std::ifstream in(fs::path(FASTLOOP_TEST_DIR).parent_path() / page);
  std::vector<std::pair<int, std::string>> links;
  static const std::regex code_span("`[^`]*`"), link("\\]\\(([^)\\s]+)\\)");
  bool in_fence = false;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.rfind("```", 0) == 0) in_fence = !in_fence;
    if (in_fence) continue;
    const std::string text = std::regex_replace(line, code_span, "");
    for (std::sregex_iterator m(text.begin(), text.end(), link), end; m != end; ++m) {
      const std::string target = (*m)[1].str();
      if (std::regex_search(target, std::regex("^(https?|mailto):"))) continue;
      links.emplace_back(number, target);
    }
  }
  return links;
}

TEST(Readme, EveryRelativeLinkOfTheReadmeAndDocsNamesAFileOfTheRepository) {
  const fs::path root = fs::path(FASTLOOP_TEST_DIR).parent_path();
  const auto pages = readme_pages();
  ASSERT_GE(pages.size(), 8u) << "README.md and docs/*.md (getting-started, cli, python, recipes, ...)";
  size_t checked = 0;
  for (const std::string& page : pages) {
    for (const auto& [line, link] : readme_relative_links(page)) {
      ++checked;
      const std::string target = link.substr(0, link.find('#'));
      const std::string anchor = link.find('#') == std::string::npos ? "" : link.substr(link.find('#') + 1);
      const fs::path resolved = target.empty() ? root / page : (root / page).parent_path() / target;
      EXPECT_TRUE(fs::exists(resolved)) << page << ":" << line << ": the link " << link << " names no file";
      if (!anchor.empty() && resolved.extension() == ".md" && fs::exists(resolved)) {
        const auto anchors = readme_anchors(resolved);
        EXPECT_NE(std::find(anchors.begin(), anchors.end(), anchor), anchors.end())
            << page << ":" << line << ": the link " << link << " names no heading of " << resolved.filename();
      }
      const std::string relative = fs::relative(fs::weakly_canonical(resolved), fs::weakly_canonical(root)).string();
      EXPECT_NE(relative.rfind("..", 0), 0u) << page << ":" << line << ": " << target << " leaves the repository";
    }
  }
  EXPECT_GE(checked, 30u) << "the pages lost their links";
}

// "stop 45", "session 12", "issue 34": the project's own history, which means nothing to a reader (dates and
// commits say when; an upstream tracker's "issues #190" keeps its '#').
TEST(Readme, ThePagesSpeakOfTheSoftwareNotOfTheProjectsHistory) {
  const fs::path root = fs::path(FASTLOOP_TEST_DIR).parent_path();
  const std::regex history("\\b(stops?|sessions?|issues?) [0-9]+", std::regex::icase);
  size_t lines = 0;
  for (const std::string& page : readme_pages()) {
    std::ifstream in(root / page);
    int number = 0;
    for (std::string line; std::getline(in, line); ++lines) {
      ++number;
      EXPECT_FALSE(std::regex_search(line, history)) << page << ":" << number << ": " << line;
    }
  }
  EXPECT_GE(lines, 1000u) << "the pages were not read";
}

}  // namespace
}  // namespace fastloop
