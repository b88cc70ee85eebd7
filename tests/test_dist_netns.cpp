// Two "nodes" on one machine: two network namespaces joined by a veth pair, one rank in each, rank 0's
// namespace address as MASTER_ADDR. The run must give what one process gives (tests/dist_helper.cpp).
// Needs root and iproute2; skipped, saying why, where namespaces cannot be created.
#include "test_support.h"

#include <gtest/gtest.h>
#include <torch/serialize.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {
using fastloop::test::spawn;
using fastloop::test::wait_exit;

int shell(const std::string& command) {
  const int status = std::system((command + " >/dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// Two namespaces with a veth pair between them; removed (with the pair) when destroyed.
struct TwoNodes {
  std::string a, b;
  std::string addr_a = "10.213.7.1", addr_b = "10.213.7.2";
  bool ok = false;

  TwoNodes() {
    const std::string id = std::to_string(getpid());
    a = "fl" + id + "a", b = "fl" + id + "b";
    const std::string va = "flv" + id + "a", vb = "flv" + id + "b";
    ok = shell("ip netns add " + a) == 0 && shell("ip netns add " + b) == 0 &&
         shell("ip link add " + va + " type veth peer name " + vb) == 0 &&
         shell("ip link set " + va + " netns " + a) == 0 && shell("ip link set " + vb + " netns " + b) == 0 &&
         shell("ip -n " + a + " addr add " + addr_a + "/24 dev " + va) == 0 &&
         shell("ip -n " + b + " addr add " + addr_b + "/24 dev " + vb) == 0 &&
         shell("ip -n " + a + " link set " + va + " up") == 0 && shell("ip -n " + b + " link set " + vb + " up") == 0 &&
         shell("ip -n " + a + " link set lo up") == 0 && shell("ip -n " + b + " link set lo up") == 0;
  }
  ~TwoNodes() {
    shell("ip netns del " + a);
    shell("ip netns del " + b);
  }
};

std::string slurp(const std::string& path) {
  std::string text;
  if (FILE* f = std::fopen(path.c_str(), "r")) {
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof(buf), f)) > 0;) text.append(buf, n);
    std::fclose(f);
  }
  return text;
}
}  // namespace

TEST(DistNetns, OneRankInEachOfTwoNetworkNamespacesMatchesOneProcess) {
  if (geteuid() != 0) GTEST_SKIP() << "network namespaces need root (ip netns add); this test runs as uid " << geteuid();
  TwoNodes nodes;
  if (!nodes.ok) GTEST_SKIP() << "could not create two network namespaces joined by a veth pair (ip netns / ip link)";

  const fastloop::test::TempDir tmp;
  const std::string dir = tmp.path();
  const std::vector<std::string> args_one = {FASTLOOP_DIST_HELPER, dir + "/one.pt", "16", "1", "2", "512", "1"};
  ASSERT_EQ(wait_exit(spawn(args_one, {}, dir + "/one.log")), 0) << slurp(dir + "/one.log");

  // Rank 0 in namespace a listens on its veth address; rank 1 in namespace b reaches it across the pair.
  auto rank = [&](const std::string& ns, int r) {
    std::vector<std::string> args = {"ip", "netns", "exec", ns, FASTLOOP_DIST_HELPER, dir + "/two.pt", "8", "1", "2", "512", "1"};
    return spawn(args, {{"RANK", std::to_string(r)}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", nodes.addr_a},
                        {"MASTER_PORT", "29517"}},
                 dir + "/rank" + std::to_string(r) + ".log");
  };
  const pid_t r0 = rank(nodes.a, 0), r1 = rank(nodes.b, 1);
  const int c0 = wait_exit(r0), c1 = wait_exit(r1);
  ASSERT_EQ(c0, 0) << slurp(dir + "/rank0.log");
  ASSERT_EQ(c1, 0) << slurp(dir + "/rank1.log");

  std::vector<at::Tensor> one, two;
  torch::load(one, dir + "/one.pt");
  torch::load(two, dir + "/two.pt");
  ASSERT_EQ(one.size(), two.size());
  for (size_t i = 0; i < one.size(); ++i) EXPECT_LE((one[i] - two[i]).abs().max().item<double>(), 1e-5) << "tensor " << i;
}
