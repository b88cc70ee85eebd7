// Where this process sits in a distributed run, read from the environment launchers set: torchrun's
// (and `fastloop launch`'s) RANK / WORLD_SIZE / LOCAL_RANK / MASTER_ADDR / MASTER_PORT, or Slurm's
// SLURM_PROCID / SLURM_NTASKS / SLURM_LOCALID when srun started the processes directly.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace fastloop {

struct DistEnv {
  int64_t rank = 0;
  int64_t world_size = 1;         // 1: not distributed
  int64_t local_rank = 0;         // rank on this node: picks the GPU
  int64_t local_world_size = 1;
  std::string master_addr = "127.0.0.1";  // host of rank 0, where the TCPStore rendezvous listens
  int64_t master_port = 29500;
  std::string source = "none";    // "torchrun", "slurm" or "none": which variables were used
  bool agent_store = false;       // torchrun's agent hosts the TCPStore at MASTER_ADDR:MASTER_PORT
                                  // (TORCHELASTIC_USE_AGENT_STORE=True): every rank joins it as a client
  int64_t restart_count = 0;      // TORCHELASTIC_RESTART_COUNT: torchrun's restarts of this group so far; each
                                  // attempt keys the agent's store under its own prefix, as torch.distributed does

  bool distributed() const { return world_size > 1; }
};

/// Reads the environment of this process (getenv). Throws InputError naming a malformed variable.
DistEnv dist_env_detect();

/// The same from any lookup (name -> value, empty when unset); tests pass a map.
DistEnv dist_env_from(const std::function<std::string(const std::string&)>& lookup);

/// The first host of a Slurm node list: "gpu[03-05,07],cpu1" -> "gpu03".
std::string slurm_first_host(const std::string& nodelist);

} // namespace fastloop
