// The tar reader and writer under the shard reader: archives written by GNU tar and Python's tarfile
// (ustar, GNU long names, pax headers) list with the same names and bytes; what fastloop writes, tar and
// tarfile read back; every malformed header is an InputError naming the file and the header's offset.
#include "fastloop/data/sources/tar.h"

#include "data_files.h"
#include "shard_files.h"
#include "test_support.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>

namespace fastloop {
namespace {

using namespace test_data;
using namespace test_shards;

// The archive TarWriter makes of `files` (name → bytes), read back into a string.
std::string written(const TempDir& dir, const std::vector<std::pair<std::string, std::string>>& files) {
  TarWriter w(dir / "w.tar");
  for (const auto& [name, bytes] : files) w.add(name, bytes);
  w.close();
  return read_all(dir / "w.tar");
}

std::map<std::string, std::string> listed(const std::string& archive, const std::string& path = "a.tar") {
  std::map<std::string, std::string> out;
  for (const TarMember& m : tar_list(archive, path)) out[m.name] = archive.substr(static_cast<size_t>(m.offset), static_cast<size_t>(m.size));
  return out;
}

// Recomputes the checksum of the header at `at` after a test edited it.
void fix_checksum(std::string& archive, size_t at) {
  std::memset(&archive[at + 148], ' ', 8);
  unsigned sum = 0;
  for (size_t i = 0; i < 512; ++i) sum += static_cast<unsigned char>(archive[at + i]);
  std::snprintf(&archive[at + 148], 8, "%06o", sum);
}

void put_field(std::string& archive, size_t at, const std::string& value) { archive.replace(at, value.size(), value); }

TEST(TarReader, ReadsWhatTheWriterWroteWithOffsetsOnBlockBoundaries) {
  TempDir dir;
  const std::string long_dir(120, 'd');
  const std::string archive = written(dir, {{"a.jpg", fake_image(1, 513)}, {"a.cls", "7"}, {"empty.txt", ""},
                                            {long_dir + "/b.png", fake_image(2, 1024)}});
  const auto members = tar_list(archive, dir / "w.tar");
  ASSERT_EQ(members.size(), 4u);
  EXPECT_EQ(members[0].name, "a.jpg");
  EXPECT_EQ(members[0].offset, 512);
  EXPECT_EQ(members[1].offset, 512 + 512 + 1024);  // header, 513 bytes padded to 1024, next header
  EXPECT_EQ(members[3].name, long_dir + "/b.png");  // through ustar's prefix field
  for (const TarMember& m : members) EXPECT_EQ(m.offset % 512, 0);
  EXPECT_EQ(listed(archive)[long_dir + "/b.png"], fake_image(2, 1024));
  EXPECT_EQ(listed(archive)["empty.txt"], "");
  EXPECT_EQ(archive.size() % 512, 0u);
}

TEST(TarWriter, GnuTarAndPythonTarfileReadItsArchives) {
  TempDir dir;
  const std::string long_name = std::string(150, 'p') + "/000001.jpg";
  written(dir, {{"000000.jpg", fake_image(0)}, {"000000.cls", "3"}, {long_name, fake_image(1)}});
  const auto tar = test::shell_run("tar tf " + dir / "w.tar");
  ASSERT_EQ(tar.code, 0) << tar.output;
  EXPECT_EQ(tar.output, "000000.jpg\n000000.cls\n" + long_name + "\n");
  const auto extract = test::shell_run("cd " + dir.path() + " && tar xf w.tar");
  EXPECT_EQ(read_all(dir / "000000.jpg"), fake_image(0)) << extract.output;
  FASTLOOP_SKIP_WITHOUT_VENV();
  const auto lines = peer_run("tarfile " + dir / "w.tar");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2]["name"], long_name);
  EXPECT_EQ(lines[2]["hex"], hex(fake_image(1)));
  EXPECT_EQ(lines[1]["hex"], hex("3"));
}

TEST(TarWriter, RefusesANameThatNoUstarHeaderHolds) {
  TempDir dir;
  TarWriter w(dir / "w.tar");
  const std::string unsplittable(304, 'x');  // no '/' to split at, and over 100 bytes
  EXPECT_CONTAINS(input_error_of([&] { w.add(unsplittable, "x"); }), "too long");
  EXPECT_CONTAINS(input_error_of([&] { TarWriter bad(dir / "no/such/dir/x.tar"); }), "no/such/dir/x.tar");
}

TEST(TarReader, ReadsPythonTarfileArchivesInUstarGnuAndPaxFormatsIdentically) {
  FASTLOOP_SKIP_WITHOUT_VENV();
  TempDir dir;
  const std::string long_dir = std::string(140, 'k'), long_name = long_dir + "/" + std::string(130, 'n') + ".png";
  std::filesystem::create_directories(dir / ("src/" + long_dir));
  std::map<std::string, std::string> files = {{"a.jpg", fake_image(1)}, {"a.cls", "4"}, {long_name, fake_image(2, 5000)}};
  for (const auto& [name, bytes] : files) write_all(dir / ("src/" + name), bytes);
  for (const std::string format : {"pax", "gnu", "ustar"}) {
    if (format == "ustar") {  // ustar cannot hold the 271-byte name: only the short ones
      std::filesystem::remove_all(dir / ("src/" + long_dir));
      files.erase(long_name);
    }
    const std::string out = dir / (format + ".tar");
    peer_run("write " + out + " " + format + " " + dir / "src");
    EXPECT_EQ(listed(read_all(out), out), files) << format;
  }
}

TEST(TarReader, ReadsGnuTarArchivesWithLongNamesAndPaxHeaders) {
  TempDir dir;
  const std::string deep = std::string(90, 'a') + "/" + std::string(90, 'b') + "/" + std::string(110, 'c') + ".jpg";
  std::filesystem::create_directories(std::filesystem::path(dir / ("src/" + deep)).parent_path());
  write_all(dir / ("src/" + deep), fake_image(9, 2000));
  write_all(dir / "src/x.cls", "2");
  for (const std::string format : {"gnu", "posix"}) {
    const auto r = test::shell_run("cd " + dir / "src" + " && tar --format=" + format + " -cf ../" + format + ".tar x.cls " + deep);
    ASSERT_EQ(r.code, 0) << r.output;
    const auto got = listed(read_all(dir / (format + ".tar")));
    EXPECT_EQ(got, (std::map<std::string, std::string>{{deep, fake_image(9, 2000)}, {"x.cls", "2"}})) << format;
  }
}

TEST(TarReader, SkipsDirectoriesAndLinksAndAcceptsAnArchiveWithoutEndBlocks) {
  TempDir dir;
  std::filesystem::create_directories(dir / "src/d");
  write_all(dir / "src/d/f.jpg", "jpeg");
  const auto r = test::shell_run("cd " + dir / "src" + " && ln -s f.jpg d/l.jpg && tar -cf ../t.tar d");
  ASSERT_EQ(r.code, 0) << r.output;
  std::string archive = read_all(dir / "t.tar");
  EXPECT_EQ(listed(archive), (std::map<std::string, std::string>{{"d/f.jpg", "jpeg"}}));
  std::string cut = written(dir, {{"a.jpg", "x"}});
  cut.resize(1024);  // header and data, no end blocks
  EXPECT_EQ(listed(cut), (std::map<std::string, std::string>{{"a.jpg", "x"}}));
  EXPECT_TRUE(tar_list("", "empty.tar").empty());
}

TEST(TarReader, ReadsBase256Sizes) {
  TempDir dir;
  std::string archive = written(dir, {{"a.jpg", fake_image(3, 700)}});
  std::string size(12, '\0');
  size[0] = static_cast<char>(0x80);
  size[10] = static_cast<char>(700 >> 8);
  size[11] = static_cast<char>(700 & 0xff);
  put_field(archive, 124, size);
  fix_checksum(archive, 0);
  EXPECT_EQ(listed(archive)["a.jpg"], fake_image(3, 700));
}

TEST(TarReader, MalformedHeadersAreInputErrorsNamingTheFileAndOffset) {
  TempDir dir;
  const std::string good = written(dir, {{"a.jpg", fake_image(1, 600)}, {"a.cls", "1"}});
  const size_t second = 512 + 1024;  // the second header
  std::string bad_sum = good;
  bad_sum[second + 3] ^= 1;
  EXPECT_CONTAINS(input_error_of([&] { tar_list(bad_sum, "/data/s.tar"); }), "/data/s.tar: tar header at byte 1536: checksum mismatch");
  std::string bad_size = good;
  put_field(bad_size, 124, "0000000009x");
  fix_checksum(bad_size, 0);
  EXPECT_CONTAINS(input_error_of([&] { tar_list(bad_size, "s.tar"); }), "byte 0: size field is not an octal number");
  std::string bad_mode = good;
  put_field(bad_mode, second + 100, "00z0644");
  fix_checksum(bad_mode, second);
  EXPECT_CONTAINS(input_error_of([&] { tar_list(bad_mode, "s.tar"); }), "is not octal");
  EXPECT_CONTAINS(input_error_of([&] { tar_list(good.substr(0, 900), "s.tar"); }), "runs past the end of the file");
  EXPECT_CONTAINS(input_error_of([&] { tar_list(good.substr(0, second + 200), "s.tar"); }), "byte 1536: truncated");
  std::string huge = good;
  put_field(huge, 124, "77777777777");
  fix_checksum(huge, 0);
  EXPECT_CONTAINS(input_error_of([&] { tar_list(huge, "s.tar"); }), "8589934591 bytes runs past the end");
}

TEST(TarReader, MalformedPaxHeadersAreInputErrors) {
  TempDir dir;
  auto pax = [&](const std::string& records) {
    std::string a = written(dir, {{"PaxHeader", records}, {"a.jpg", "x"}});
    a[156] = 'x';
    fix_checksum(a, 0);
    return a;
  };
  EXPECT_EQ(listed(pax("20 path=renamed.jpg\n")).count("renamed.jpg"), 1u);
  std::string sized = pax("10 size=1\n");
  put_field(sized, 1024 + 124, "00000000000");  // the header says 0 bytes: pax's size wins
  fix_checksum(sized, 1024);
  EXPECT_EQ(listed(sized)["a.jpg"], "x");
  EXPECT_CONTAINS(input_error_of([&] { tar_list(pax("99 path=x\n"), "p.tar"); }), "p.tar: tar header at byte 0: malformed pax");
  EXPECT_CONTAINS(input_error_of([&] { tar_list(pax("8 pathx\n"), "p.tar"); }), "without 'key=value'");
  EXPECT_CONTAINS(input_error_of([&] { tar_list(pax("11 size=1a\n"), "p.tar"); }), "not a decimal number");
  std::string alone = pax("20 path=renamed.jpg\n").substr(0, 1024);
  EXPECT_CONTAINS(input_error_of([&] { tar_list(alone, "p.tar"); }), "not followed by its member");
}

} // namespace
} // namespace fastloop
