// The table of `fastloop bench`'s grid flags (bench_flags.h): name, field, help, allowed values and
// whether a multi-rank cell passes it on to its ranks.
#include "fastloop/bench/bench_flags.h"

#include <sstream>
#include <type_traits>
#include <variant>

namespace fastloop {

namespace {

using O = BenchOptions;
using BenchMember = std::variant<int64_t O::*, double O::*, bool O::*, std::string O::*,
                                 std::vector<std::string> O::*, std::vector<int64_t> O::*>;

struct BenchFlag {
  const char* name;
  BenchMember member;
  const char* help;
  bool to_ranks;                     // re-emitted to the ranks of a multi-rank cell
  std::vector<std::string> allowed;  // empty: any value
  int64_t min = 0, max = 0;          // max > 0: the range of an integer
};

const std::vector<BenchFlag>& bench_flags() {
  static const std::vector<BenchFlag> flags = {
      {"--models", &O::models, "comma-separated models", false, {}},
      {"--repeat", &O::repeat, "repetitions per cell; median and min/max over them", true, {}},
      {"--steps", &O::steps, "timed training steps per repetition (CPU default 3)", true, {}},
      {"--eval-steps", &O::eval_steps, "timed evaluation batches per repetition (CPU default 3)", true, {}},
      {"--warmup", &O::warmup, "untimed steps before each cell's timing (CPU default 1)", true, {}},
      {"--batch-size", &O::batch_size, "images per step (seed 001: 128; CPU default 16)", true, {}},
      {"--data", &O::data, "synthetic[:CxHxW[:N]] | cifar10:DIR | fashion-mnist[:DIR] | imagefolder:DIR | shards:...",
       true, {}},
      {"--image-size", &O::image_size, "image folders and shards: side of the square crop the models see (pixels)",
       true, {}, 8, 4096},
      {"--stem", &O::stem,
       "auto: imagenet on image folders and shards (small_cnn: cifar, its only stem), cifar on in-memory data; or "
       "cifar | imagenet for every model",
       true, {"auto", "cifar", "imagenet"}},
      {"--device", &O::device, "auto | cpu | cuda", true, {"auto", "cpu", "cuda"}},
      {"--threads", &O::threads, "intra-op threads; 0: the usable cores", false, {}},
      {"--full", &O::full, "seed 001's run: 5 epochs of CIFAR-10 per cell (first excluded), batch 128", true, {}},
      {"--compare-python", &O::compare_python, "also run the same cells in PyTorch (bench/peers/bench_peer.py)", false, {}},
      {"--twin", &O::twin,
       "a built-in model timed alternately with each torchscript:FILE cell of the same row (its scripted twin)", false,
       {}},
      {"--python", &O::python, "interpreter for the peer (default $FASTLOOP_PYTHON or ./.venv/bin/python)", false, {}},
      {"--nproc", &O::nproc,
       "comma-separated rank counts: every cell runs once per count, as DDP ranks (processes) on this machine that "
       "split its cores (CUDA: one GPU each)",
       false, {}},
      {"--bucket-mb", &O::bucket_mb, "DDP gradient bucket size of the multi-rank cells (MiB)", true, {}},
  };
  return flags;
}

template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};

std::string arg_text(double value) {  // every digit, so the ranks get the same value
  std::ostringstream s;
  s.precision(17);
  s << value;
  return s.str();
}
std::string arg_text(int64_t value) { return std::to_string(value); }
std::string arg_text(const std::string& value) { return value; }

}  // namespace

void bench_flags_add(CLI::App& app, BenchOptions& options) {
  for (const BenchFlag& f : bench_flags()) {
    std::visit(
        [&](auto member) {
          auto& value = options.*member;
          using T = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<T, bool>) {
            app.add_flag(f.name, value, f.help);
          } else {
            CLI::Option* option = app.add_option(f.name, value, f.help)->capture_default_str();
            if constexpr (IsVector<T>::value) option->delimiter(',');
            if (!f.allowed.empty()) option->check(CLI::IsMember(f.allowed));
            if (f.max > 0) option->check(CLI::Range(f.min, f.max));
          }
        },
        f.member);
  }
}

std::vector<std::string> bench_rank_args(const BenchOptions& options) {
  std::vector<std::string> args;
  for (const BenchFlag& f : bench_flags()) {
    if (!f.to_ranks) continue;
    std::visit(
        [&](auto member) {
          const auto& value = options.*member;
          using T = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<T, bool>) {
            if (value) args.push_back(f.name);
          } else if constexpr (!IsVector<T>::value) {
            args.push_back(f.name);
            args.push_back(arg_text(value));
          }
        },
        f.member);
  }
  return args;
}

} // namespace fastloop
