// torchrun and Slurm environments to a DistEnv.
#include "fastloop/dist/dist_env.h"

#include "fastloop/core/errors.h"

#include <algorithm>
#include <cstdlib>

namespace fastloop {

namespace {
int64_t int_var(const std::function<std::string(const std::string&)>& lookup, const std::string& name,
                int64_t fallback, int64_t min) {
  const std::string text = lookup(name);
  if (text.empty()) return fallback;
  size_t used = 0;
  int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value < min)
    throw InputError("environment variable " + name + "='" + text + "' must be an integer >= " + std::to_string(min));
  return value;
}
}  // namespace

std::string slurm_first_host(const std::string& nodelist) {
  const size_t comma = nodelist.find(',');
  const size_t bracket = nodelist.find('[');
  if (bracket == std::string::npos || (comma != std::string::npos && comma < bracket))
    return nodelist.substr(0, comma);
  // prefix[a-b,c] -> prefix + a (zero padding kept, as Slurm writes it)
  const size_t end = nodelist.find_first_of("-,]", bracket + 1);
  return nodelist.substr(0, bracket) + nodelist.substr(bracket + 1, end - bracket - 1);
}

DistEnv dist_env_from(const std::function<std::string(const std::string&)>& lookup) {
  DistEnv env;
  if (!lookup("WORLD_SIZE").empty()) {
    env.source = "torchrun";
    env.world_size = int_var(lookup, "WORLD_SIZE", 1, 1);
    env.rank = int_var(lookup, "RANK", 0, 0);
    env.local_rank = int_var(lookup, "LOCAL_RANK", env.rank, 0);
    env.local_world_size = int_var(lookup, "LOCAL_WORLD_SIZE", env.world_size, 1);
  } else if (!lookup("SLURM_NTASKS").empty() && !lookup("SLURM_PROCID").empty()) {
    env.source = "slurm";
    env.world_size = int_var(lookup, "SLURM_NTASKS", 1, 1);
    env.rank = int_var(lookup, "SLURM_PROCID", 0, 0);
    env.local_rank = int_var(lookup, "SLURM_LOCALID", 0, 0);
    const std::string per_node = lookup("SLURM_NTASKS_PER_NODE");  // "4" or "4(x2)"
    env.local_world_size = per_node.empty() ? 1 : std::max<int64_t>(1, std::atoll(per_node.c_str()));
    if (lookup("MASTER_ADDR").empty() && !lookup("SLURM_JOB_NODELIST").empty())
      env.master_addr = slurm_first_host(lookup("SLURM_JOB_NODELIST"));
  } else {
    return env;  // one process, nothing to join
  }
  if (!lookup("MASTER_ADDR").empty()) env.master_addr = lookup("MASTER_ADDR");
  env.agent_store = lookup("TORCHELASTIC_USE_AGENT_STORE") == "True";  // as torch.distributed.rendezvous reads it
  env.restart_count = int_var(lookup, "TORCHELASTIC_RESTART_COUNT", 0, 0);
  env.master_port = int_var(lookup, "MASTER_PORT", env.master_port, 1);
  if (env.master_port > 65535) throw InputError("MASTER_PORT=" + std::to_string(env.master_port) + " must be in [1, 65535]");
  if (env.rank >= env.world_size)
    throw InputError("rank " + std::to_string(env.rank) + " is not below the world size " +
                     std::to_string(env.world_size) + " (" + (env.source == "slurm" ? "SLURM_PROCID, SLURM_NTASKS" : "RANK, WORLD_SIZE") + ")");
  return env;
}

DistEnv dist_env_detect() {
  return dist_env_from([](const std::string& name) {
    const char* value = std::getenv(name.c_str());
    return std::string(value ? value : "");
  });
}

} // namespace fastloop
