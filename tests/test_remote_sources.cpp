// Remote tar shards without a server: URL and pattern parsing, the AWS credential chain (never naming a
// secret), the shards.idx file and the cache folder. Against a real store: tests/test_remote_shards.cpp.
#include "fastloop/data/sources/aws_credentials.h"
#include "fastloop/data/sources/remote_url.h"
#include "fastloop/data/sources/shard_cache.h"
#include "fastloop/data/sources/shard_index_file.h"
#include "fastloop/data/sources/shards.h"

#include "data_files.h"
#include "shard_files.h"
#include "test_support.h"

#include <gtest/gtest.h>
#include <utime.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>

namespace fastloop {
namespace {

using namespace test_data;
using namespace test_shards;

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const char* name) {
    const auto it = vars.find(name);
    return it == vars.end() ? std::string() : it->second;
  };
}

TEST(RemoteUrl, ParsesS3AndHttpAndNamesWhatIsWrong) {
  const RemoteUrl s3 = remote_url_parse("s3://my-bucket/dir/train-000001.tar");
  EXPECT_EQ(s3.scheme, "s3");
  EXPECT_EQ(s3.bucket, "my-bucket");
  EXPECT_EQ(s3.key, "dir/train-000001.tar");
  EXPECT_EQ(remote_url_http(s3, "http://127.0.0.1:8333/", "eu-west-1"), "http://127.0.0.1:8333/my-bucket/dir/train-000001.tar");
  EXPECT_EQ(remote_url_http(s3, "", "eu-west-1"), "https://my-bucket.s3.eu-west-1.amazonaws.com/dir/train-000001.tar");
  EXPECT_EQ(remote_url_http(remote_url_parse("https://h:8080/a+b%.tar"), "", ""), "https://h:8080/a%2Bb%25.tar");
  EXPECT_EQ(remote_url_sibling(s3, "shards.idx").text, "s3://my-bucket/dir/shards.idx");
  EXPECT_EQ(remote_url_basename(s3), "train-000001.tar");
  EXPECT_CONTAINS(input_error_of([] { remote_url_parse("s3://Bad_Bucket/x.tar"); }), "is not a bucket name");
  EXPECT_CONTAINS(input_error_of([] { remote_url_parse("s3://bucket/"); }), "no object named");
  EXPECT_CONTAINS(input_error_of([] { remote_url_parse("ftp://h/x.tar"); }), "expected s3://BUCKET/KEY");
  EXPECT_CONTAINS(input_error_of([] { remote_url_parse("http://user:pw@h/x.tar"); }), "credentials come from the AWS");
  // Found by fuzz/remote_url_fuzzer.cpp: a non-ASCII host went into the request URL.
  EXPECT_CONTAINS(input_error_of([] { remote_url_parse("https://h\x92st:8443/x.tar"); }), "non-ASCII byte in the host");
  EXPECT_EQ(remote_url_http(remote_url_parse("http://h/caf\xc3\xa9.tar"), "", ""), "http://h/caf%C3%A9.tar");
}

TEST(RemoteUrl, PatternsExpandBracesAndSplitAtTheDoubleColon) {
  std::string train, val;
  remote_spec_split("s3://b1b/train-{0..2}.tar::http://h:81/val-{a,b}.tar", train, val);
  EXPECT_EQ(train, "s3://b1b/train-{0..2}.tar");
  EXPECT_EQ(val, "http://h:81/val-{a,b}.tar");
  const auto urls = remote_pattern_expand(train);
  ASSERT_EQ(urls.size(), 3u);
  EXPECT_EQ(urls[2].text, "s3://b1b/train-2.tar");
  EXPECT_EQ(remote_pattern_expand("http://h/v-{000008..000010}.tar")[2].key, "v-000010.tar");
  EXPECT_CONTAINS(input_error_of([] { remote_pattern_expand("s3://bbb/t-{0..2.tar"); }), "'{' without '}'");
}

TEST(AwsCredentials, EnvironmentThenProfileThenAnonymousAndTheSourceIsNamedNeverTheSecret) {
  TempDir dir;
  write_all(dir / "credentials", "# keys\n[default]\naws_access_key_id = AKDEFAULT\naws_secret_access_key = s3cr3t-default\n"
                                 "[ci]\naws_access_key_id=AKCI\naws_secret_access_key=s3cr3t-ci\naws_session_token = tok\n");
  write_all(dir / "config", "[default]\nregion = eu-north-1\n[profile ci]\nregion=ap-south-1\nendpoint_url = http://127.0.0.1:9\n"
                            "s3 =\n  addressing_style = path\n");
  const std::string home = dir.path();
  std::map<std::string, std::string> env = {{"HOME", home}, {"AWS_SHARED_CREDENTIALS_FILE", dir / "credentials"},
                                            {"AWS_CONFIG_FILE", dir / "config"}};
  AwsCredentials c = aws_credentials_resolve(env_of(env));
  EXPECT_EQ(c.access_key, "AKDEFAULT");
  EXPECT_EQ(c.region, "eu-north-1");
  EXPECT_EQ(c.source, "profile 'default' in " + (dir / "credentials"));
  env["AWS_PROFILE"] = "ci";
  c = aws_credentials_resolve(env_of(env));
  EXPECT_EQ(c.secret_key, "s3cr3t-ci");
  EXPECT_EQ(c.session_token, "tok");
  EXPECT_CONTAINS(c.source, "profile 'ci' in");
  EXPECT_CONTAINS(c.source, "with a session token");
  EXPECT_EQ(c.region, "ap-south-1");
  EXPECT_EQ(c.endpoint, "http://127.0.0.1:9");
  env["AWS_ACCESS_KEY_ID"] = "AKENV";
  env["AWS_SECRET_ACCESS_KEY"] = "s3cr3t-env";
  env["AWS_REGION"] = "us-west-2";
  env["AWS_ENDPOINT_URL"] = "http://127.0.0.1:10";
  c = aws_credentials_resolve(env_of(env));
  EXPECT_EQ(c.access_key, "AKENV");
  EXPECT_EQ(c.source, "environment (AWS_ACCESS_KEY_ID)");
  EXPECT_EQ(c.region, "us-west-2");
  EXPECT_EQ(c.endpoint, "http://127.0.0.1:10");
  env.erase("AWS_SECRET_ACCESS_KEY");
  const std::string half = input_error_of([&] { aws_credentials_resolve(env_of(env)); });
  EXPECT_CONTAINS(half, "AWS_SECRET_ACCESS_KEY is not");
  env = {{"HOME", home + "/nowhere"}};
  EXPECT_TRUE(aws_credentials_resolve(env_of(env)).anonymous());
  EXPECT_CONTAINS(aws_credentials_resolve(env_of(env)).source, "anonymous");
  env["AWS_PROFILE"] = "missing";
  const std::string missing = input_error_of([&] { aws_credentials_resolve(env_of(env)); });
  EXPECT_CONTAINS(missing, "AWS_PROFILE=missing: no [missing]");
  for (const std::string& message : {half, missing}) EXPECT_EQ(message.find("s3cr3t"), std::string::npos) << message;
}

TEST(AwsIni, ReadsSectionsCommentsAndNestedBlocksAndNamesABadLine) {
  const AwsIni ini = aws_ini_parse("top = ignored\n[a]\n; c\nKey = v = w \n\n[ b ]\nx=1\ns3 =\n  y = 2\nz=3\n", "f");
  EXPECT_EQ(ini.at("a").at("key"), "v = w");
  EXPECT_EQ(ini.at("b").at("x"), "1");
  EXPECT_EQ(ini.at("b").count("y"), 0u);
  EXPECT_EQ(ini.at("b").at("z"), "3");
  EXPECT_CONTAINS(input_error_of([] { aws_ini_parse("[a]\nnot a setting\n", "/h/.aws/config"); }), "/h/.aws/config: line 2");
  EXPECT_CONTAINS(input_error_of([] { aws_ini_parse("[a\n", "f"); }), "line 1: a section header");
}

TEST(ShardIndexFile, RoundTripsThePackedShardsAndNamesABadLine) {
  TempDir dir;
  write_shard(dir / "train-000000.tar", fake_samples(0, 7));
  write_shard(dir / "train-000001.tar", fake_samples(7, 5, 3));
  const auto written = shard_index_write(dir.path());
  const auto read = shard_index_parse(read_all(dir / kShardIndexName), "idx");
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0].name, "train-000000.tar");
  EXPECT_EQ(read[0].samples, 7);
  EXPECT_EQ(read[0].classes, 5);
  EXPECT_EQ(read[1].bytes, static_cast<int64_t>(read_all(dir / "train-000001.tar").size()));
  EXPECT_EQ(shard_index_format(written), shard_index_format(read));
  EXPECT_CONTAINS(input_error_of([] { shard_index_parse("hello\n", "s3://b/shards.idx"); }),
                  "s3://b/shards.idx: line 1: not a fastloop shard index");
  const std::string head = shard_index_format({});
  EXPECT_CONTAINS(input_error_of([&] { shard_index_parse(head + "a.tar 1 x 2\n", "i"); }), "line 2: expected 'NAME BYTES");
  EXPECT_CONTAINS(input_error_of([&] { shard_index_parse(head + "a.tar 1 1 1\na.tar 1 1 1\n", "i"); }), "listed twice");
}

TEST(ShardCache, KeepsTheRecentlyUsedWithinItsBoundAndToleratesVanishedFiles) {
  TempDir dir;
  const ShardCache cache(dir / "cache", 2500);
  std::string out;
  EXPECT_FALSE(cache.get("s3://b/a.tar", 1000, out));
  cache.put("s3://b/a.tar", std::string(1000, 'a'));
  cache.put("s3://b/b.tar", std::string(1000, 'b'));
  const std::string a = dir / ("cache/" + ShardCache::file_name("s3://b/a.tar"));
  const std::string b = dir / ("cache/" + ShardCache::file_name("s3://b/b.tar"));
  struct utimbuf old {1000, 1000};
  ::utime(b.c_str(), &old);  // b is the least recently used
  EXPECT_TRUE(cache.get("s3://b/a.tar", 1000, out));
  EXPECT_EQ(out, std::string(1000, 'a'));
  EXPECT_FALSE(cache.get("s3://b/a.tar", 999, out));  // not the index's size: a miss
  cache.put("s3://b/c.tar", std::string(1000, 'c'));
  EXPECT_FALSE(std::filesystem::exists(b));
  EXPECT_TRUE(std::filesystem::exists(a));
  std::filesystem::remove(a);  // another rank evicted it
  EXPECT_FALSE(cache.get("s3://b/a.tar", 1000, out));
  cache.put("s3://b/huge.tar", std::string(3000, 'h'));  // over the bound: not kept
  EXPECT_FALSE(cache.get("s3://b/huge.tar", 3000, out));
  for (const auto& entry : std::filesystem::directory_iterator(dir / "cache"))
    EXPECT_EQ(entry.path().filename().string().rfind(".tmp", 0), std::string::npos) << "a temporary file was left";
}

TEST(ShardCache, OpeningItRemovesTheTemporaryFilesOfWritersThatDiedAndKeepsLiveOnes) {
  TempDir dir;
  std::filesystem::create_directories(dir / "cache");
  const std::string dead = dir / "cache/.tmp-4242-0-0123456789abcdef-train-000000.tar.shard";
  const std::string live = dir / "cache/.tmp-4243-0-0123456789abcdef-train-000001.tar.shard";
  const std::string kept = dir / ("cache/" + ShardCache::file_name("s3://b/a.tar"));
  for (const std::string& path : {dead, live, kept}) std::ofstream(path) << "partial";
  const time_t long_ago = std::time(nullptr) - ShardCache::kStaleTempSeconds - 60;
  struct utimbuf old {long_ago, long_ago};
  ::utime(dead.c_str(), &old);
  ::utime(kept.c_str(), &old);  // an old shard is the LRU's to evict, not the sweep's
  const ShardCache cache(dir / "cache", 1 << 20);
  EXPECT_FALSE(std::filesystem::exists(dead));
  EXPECT_TRUE(std::filesystem::exists(live));
  EXPECT_TRUE(std::filesystem::exists(kept));
}

} // namespace
} // namespace fastloop
