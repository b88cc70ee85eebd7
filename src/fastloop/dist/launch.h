// torchrun's static launch for fastloop: starts the local ranks of a command with torchrun's environment
// (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK), prefixes their
// output lines with "[rank] ", forwards Ctrl-C / SIGTERM, and when a rank fails stops the others
// (SIGTERM, SIGKILL after a grace period). `fastloop launch` and the bench's multi-rank cells use it.
#pragma once

#include <torch/arg.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fastloop {

struct LaunchOptions {
  TORCH_ARG(int64_t, nproc_per_node) = 1;
  TORCH_ARG(int64_t, nnodes) = 1;
  TORCH_ARG(int64_t, node_rank) = 0;
  TORCH_ARG(std::string, master_addr) = "127.0.0.1";
  /// 0: a free port of this host (single node only).
  TORCH_ARG(int64_t, master_port) = 29500;
  /// Seconds between SIGTERM and SIGKILL when stopping the ranks after a failure.
  TORCH_ARG(double, grace_s) = 10.0;
  /// Print which ranks start where (failures are printed always).
  TORCH_ARG(bool, announce) = true;
};

/// Runs `command` as this node's ranks and waits for all of them. A command without '/' in its first
/// word is a fastloop subcommand and runs this executable. Returns 0, or the exit code of the first
/// rank that failed (128 + signal when killed). Throws InputError for inconsistent options.
int launch_ranks(const LaunchOptions& options, std::vector<std::string> command);

/// A free TCP port on 127.0.0.1: bound to port 0, then released, so another process may still take it
/// before it is used. Throws InputError (it serves --master-port 0) when no socket can be bound.
int free_port();

/// The path of the running executable (/proc/self/exe).
std::string self_executable();

} // namespace fastloop
