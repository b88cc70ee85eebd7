// `fastloop launch --nproc-per-node N [--nnodes M --node-rank K --master-addr A] [--master-port P] -- train ...`:
// torchrun's static launch for fastloop (dist/launch.h), exiting with the failing rank's code.
#include "commands.h"
#include "flag_checks.h"

#include "fastloop/dist/launch.h"

#include <memory>
#include <string>
#include <vector>

namespace fastloop {

Subcommand launch_command(CLI::App& root, const std::vector<std::string>& launched) {
  auto* app = root.add_subcommand(
      "launch", "Start the ranks of a distributed run on this node: fastloop launch --nproc-per-node N -- train ...");
  auto flags = std::make_shared<LaunchOptions>();
  app->add_option("--nproc-per-node", flags->nproc_per_node(), "ranks (processes) on this node")
      ->check(CLI::Range(1, 1024))->capture_default_str();
  app->add_option("--nnodes", flags->nnodes(), "nodes of the run")->check(CLI::Range(1, 65536))->capture_default_str();
  app->add_option("--node-rank", flags->node_rank(), "this node's index in [0, nnodes)")
      ->check(kNonNegative)->capture_default_str();
  app->add_option("--master-addr", flags->master_addr(), "host of rank 0 (node 0), where the rendezvous listens")
      ->capture_default_str();
  app->add_option("--master-port", flags->master_port(), "rendezvous port (0: a free one, single node)")
      ->check(CLI::Range(0, 65535))->capture_default_str();
  app->add_option("--grace-s", flags->grace_s(), "seconds from SIGTERM to SIGKILL when stopping ranks after a failure")
      ->check(kNonNegative)->capture_default_str();
  app->prefix_command();  // without --: everything from the first positional on is the command
  return {app, [flags, app, &launched] { return launch_ranks(*flags, launched.empty() ? app->remaining() : launched); }};
}

} // namespace fastloop
