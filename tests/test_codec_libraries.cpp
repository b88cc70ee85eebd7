// codec_libraries(): `fastloop doctor`'s lines on which file each image codec was loaded from.
#include "fastloop/data/codecs/codec_libraries.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace fastloop;

TEST(CodecLibraries, EachNamesTheSharedObjectItsCodeWasLoadedFrom) {
  const auto codecs = codec_libraries();
  ASSERT_EQ(codecs.size(), 6u);
  for (const auto& codec : codecs) {
    EXPECT_FALSE(codec.name.empty());
    EXPECT_FALSE(codec.formats.empty()) << codec.name;
    ASSERT_FALSE(codec.path.empty()) << codec.name << ": linked dynamically, so dladdr names a file";
    EXPECT_TRUE(std::filesystem::exists(codec.path)) << codec.name << ": " << codec.path;
    EXPECT_EQ(std::filesystem::path(codec.path).lexically_normal().string(), codec.path) << "no ../ left in it";
  }
}

TEST(CodecLibraries, ReportTheVersionsTheLibrariesGive) {
  for (const auto& codec : codec_libraries()) {
    if (codec.name == "libspng" || codec.name == "libwebp" || codec.name == "libtiff") {
      EXPECT_NE(codec.version.find('.'), std::string::npos) << codec.name << " version '" << codec.version << "'";
    }
  }
}

TEST(CodecLibraries, LibraryPathOfAnAddressOutsideAnyObjectIsEmpty) {
  EXPECT_EQ(library_path_of(nullptr), "");
}
