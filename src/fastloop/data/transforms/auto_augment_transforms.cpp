// torchvision's automatic augmentations (AutoAugment with its ImageNet, CIFAR10 and SVHN policies,
// RandAugment, TrivialAugmentWide, AugMix): signatures, checks and draws in torchvision's order over the
// operations of auto_augment_ops.h. Each apply() draws and applies one operation at a time, as
// torchvision's forward() does.
#include "fastloop/data/transforms/auto_augment_ops.h"
#include "fastloop/data/transforms/color_args.h"
#include "fastloop/data/transforms/families.h"
#include "fastloop/data/transforms/spec.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fastloop {
namespace {

/// One drawn operation: its index in the space and its signed magnitude (0 where it has none).
struct AugChoice {
  int64_t index;
  double magnitude;
};

TransformDraw choices_draw(const std::vector<AugChoice>& choices) {
  TransformDraw out{{"op_index", {}}, {"magnitude", {}}};
  for (const auto& c : choices) {
    out[0].second.push_back(static_cast<double>(c.index));
    out[1].second.push_back(c.magnitude);
  }
  return out;
}

/// Arguments every automatic augmentation has (keyword-only in torchvision: interpolation, fill).
struct AugBase {
  AugGeometry geometry;
  std::string fill_repr;  // "" for None
  /// ", interpolation=InterpolationMode.NEAREST[, fill=...]" for the reprs.
  std::string tail() const {
    return std::string(", interpolation=") + interpolation_repr(geometry.interpolation) +
           (fill_repr.empty() ? "" : ", fill=" + fill_repr);
  }
};

AugBase aug_base(const TransformArgs& args) {
  AugBase base;
  base.geometry.interpolation = affine_interpolation(args);
  base.geometry.fill = fill_values(args);
  if (!args.is_none("fill")) base.fill_repr = value_repr(args.get("fill"));
  return base;
}

/// RandAugment: num_ops times, an operation uniformly from its 14 and the fixed magnitude bin, signed at random.
class RandAugment final : public Transform {
 public:
  RandAugment(AugBase base, int64_t num_ops, int64_t magnitude, int64_t num_bins)
      : base_(std::move(base)), num_ops_(num_ops), magnitude_(magnitude), num_bins_(num_bins) {}
  std::string repr() const override {
    return "RandAugment(num_ops=" + std::to_string(num_ops_) + ", magnitude=" + std::to_string(magnitude_) +
           ", num_magnitude_bins=" + std::to_string(num_bins_) + base_.tail() + ")";
  }
  void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const override {
    const int64_t height = image.height, width = image.width;
    for (int64_t k = 0; k < num_ops_; ++k) {
      const AugChoice c = choose(draws, height, width);
      aug_op_apply(image, rand_augment_space().entries[c.index].op, c.magnitude, base_.geometry, scratch);
    }
  }
  TransformDraw draw(int64_t height, int64_t width, Draws& draws) const override {
    std::vector<AugChoice> choices;
    for (int64_t k = 0; k < num_ops_; ++k) choices.push_back(choose(draws, height, width));
    return choices_draw(choices);
  }

 private:
  AugChoice choose(Draws& draws, int64_t height, int64_t width) const {
    const AugSpace space = rand_augment_space();
    const int64_t index = draws.below(space.size);
    const AugEntry& entry = space.entries[index];
    return {index, signed_magnitude(entry, magnitude_at(entry, num_bins_, magnitude_, height, width), draws)};
  }
  AugBase base_;
  int64_t num_ops_, magnitude_, num_bins_;
};

/// TrivialAugmentWide: one operation uniformly from its 14, a magnitude bin uniformly, signed at random.
class TrivialAugmentWide final : public Transform {
 public:
  TrivialAugmentWide(AugBase base, int64_t num_bins) : base_(std::move(base)), num_bins_(num_bins) {}
  std::string repr() const override {
    return "TrivialAugmentWide(num_magnitude_bins=" + std::to_string(num_bins_) + base_.tail() + ")";
  }
  void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const override {
    const AugChoice c = choose(draws, image.height, image.width);
    aug_op_apply(image, trivial_wide_space().entries[c.index].op, c.magnitude, base_.geometry, scratch);
  }
  TransformDraw draw(int64_t height, int64_t width, Draws& draws) const override {
    return choices_draw({choose(draws, height, width)});
  }

 private:
  AugChoice choose(Draws& draws, int64_t height, int64_t width) const {
    const AugSpace space = trivial_wide_space();
    const int64_t index = draws.below(space.size);
    const AugEntry& entry = space.entries[index];
    if (entry.bins == AugEntry::Bins::kNone) return {index, 0.0};
    const int64_t bin = draws.below(num_bins_);
    return {index, signed_magnitude(entry, magnitude_at(entry, num_bins_, bin, height, width), draws)};
  }
  AugBase base_;
  int64_t num_bins_;
};

const AugEntry& auto_augment_entry(AugOp op) {
  const AugSpace space = auto_augment_space();
  for (int64_t i = 0; i < space.size; ++i)
    if (space.entries[i].op == op) return space.entries[i];
  return space.entries[0];
}

/// AutoAugment: a sub-policy uniformly; each of its two steps with its probability, at its magnitude bin of 10,
/// signed at random.
class AutoAugment final : public Transform {
 public:
  AutoAugment(AugBase base, AutoAugmentPolicy policy) : base_(std::move(base)), policy_(policy) {
    policies_ = auto_augment_policies(policy, count_);
  }
  std::string repr() const override {
    static const char* const kNames[] = {"IMAGENET", "CIFAR10", "SVHN"};
    return std::string("AutoAugment(policy=AutoAugmentPolicy.") + kNames[static_cast<int>(policy_)] +
           base_.tail() + ")";
  }
  void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const override {
    const int64_t height = image.height, width = image.width;
    const SubPolicy& sub = policies_[draws.below(count_)];
    for (const PolicyStep& step : sub) {
      double magnitude = 0.0;
      if (!take(step, draws, height, width, magnitude)) continue;
      aug_op_apply(image, step.op, magnitude, base_.geometry, scratch);
    }
  }
  TransformDraw draw(int64_t height, int64_t width, Draws& draws) const override {
    const int64_t index = draws.below(count_);
    TransformDraw out{{"policy_index", {static_cast<double>(index)}}, {"applied", {}}, {"magnitude", {}}};
    for (const PolicyStep& step : policies_[index]) {
      double magnitude = 0.0;
      out[1].second.push_back(take(step, draws, height, width, magnitude) ? 1.0 : 0.0);
      out[2].second.push_back(magnitude);
    }
    return out;
  }

 private:
  static bool take(const PolicyStep& step, Draws& draws, int64_t height, int64_t width, double& magnitude) {
    if (!(torch_rand(draws) <= step.probability)) return false;
    const AugEntry& entry = auto_augment_entry(step.op);
    magnitude = entry.bins == AugEntry::Bins::kNone ? 0.0 : magnitude_at(entry, 10, step.magnitude_bin, height, width);
    magnitude = signed_magnitude(entry, magnitude, draws);
    return true;
  }
  AugBase base_;
  AutoAugmentPolicy policy_;
  const SubPolicy* policies_ = nullptr;
  int64_t count_ = 0;
};

/// AugMix: Beta(alpha, alpha) weights of the original and the mixture and Dirichlet(alpha...) weights of
/// `mixture_width` chains of 1..3 (or chain_depth) operations; the float32 sum truncated to uint8.
class AugMix final : public Transform {
 public:
  struct Options {
    int64_t severity, mixture_width, chain_depth;
    double alpha;
    bool all_ops;
  };
  AugMix(AugBase base, Options options) : base_(std::move(base)), options_(options) {}
  std::string repr() const override {
    return "AugMix(severity=" + std::to_string(options_.severity) +
           ", mixture_width=" + std::to_string(options_.mixture_width) +
           ", chain_depth=" + std::to_string(options_.chain_depth) + ", alpha=" + float_repr(options_.alpha) +
           ", all_ops=" + (options_.all_ops ? "True" : "False") + base_.tail() + ")";
  }
  void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const override;
  TransformDraw draw(int64_t height, int64_t width, Draws& draws) const override;

 private:
  /// torch._sample_dirichlet([alpha] * n) in float32 into `out`.
  void dirichlet(Draws& draws, int64_t n, float* out) const {
    double sum = 0.0;
    double gammas[64];
    for (int64_t i = 0; i < n; ++i) sum += (gammas[std::min<int64_t>(i, 63)] = gamma_draw(draws, options_.alpha));
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(gammas[i] / sum);
  }
  AugChoice choose(Draws& draws, int64_t height, int64_t width) const {
    const AugSpace space = aug_mix_space(options_.all_ops);
    const int64_t index = draws.below(space.size);
    const AugEntry& entry = space.entries[index];
    if (entry.bins == AugEntry::Bins::kNone) return {index, 0.0};
    const int64_t bin = draws.below(options_.severity);
    return {index, signed_magnitude(entry, magnitude_at(entry, 10, bin, height, width), draws)};
  }
  int64_t depth(Draws& draws) const { return options_.chain_depth > 0 ? options_.chain_depth : 1 + draws.below(3); }
  AugBase base_;
  Options options_;
};

void AugMix::apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const {
  const int64_t n = image.bytes(), width_chains = options_.mixture_width;
  // Per-thread buffers that only grow: [m0, m1, weights..., mix...] and the chain's image. Not scratch.floats
  // or scratch.spare: the chain's operations (affine_u8, sharpness) use those themselves.
  thread_local std::vector<float> buffer;
  thread_local ImageU8 chain;
  if (buffer.size() < static_cast<size_t>(2 + width_chains + n)) buffer.resize(2 + width_chains + n);
  float* m = buffer.data();
  float* weights = m + 2;
  float* mix = weights + width_chains;
  dirichlet(draws, 2, m);
  dirichlet(draws, width_chains, weights);
  for (int64_t i = 0; i < width_chains; ++i) weights[i] *= m[1];
  const uint8_t* original = image.data();
  for (int64_t j = 0; j < n; ++j) mix[j] = m[0] * static_cast<float>(original[j]);
  for (int64_t i = 0; i < width_chains; ++i) {
    chain.reshape(image.height, image.width, image.channels);
    std::copy(image.data(), image.data() + n, chain.data());
    for (int64_t k = depth(draws); k > 0; --k) {
      const AugChoice c = choose(draws, image.height, image.width);
      aug_op_apply(chain, aug_mix_space(true).entries[c.index].op, c.magnitude, base_.geometry, scratch);
    }
    const uint8_t* aug = chain.data();
    for (int64_t j = 0; j < n; ++j) mix[j] += weights[i] * static_cast<float>(aug[j]);
  }
  uint8_t* out = image.data();
  for (int64_t j = 0; j < n; ++j) out[j] = static_cast<uint8_t>(mix[j]);
}

TransformDraw AugMix::draw(int64_t height, int64_t width, Draws& draws) const {
  std::vector<float> m(2), weights(options_.mixture_width);
  dirichlet(draws, 2, m.data());
  dirichlet(draws, options_.mixture_width, weights.data());
  TransformDraw out{{"beta", {m[0], m[1]}}, {"weights", {}}, {"depth", {}}, {"op_index", {}}, {"magnitude", {}}};
  for (float w : weights) out[1].second.push_back(w * m[1]);
  for (int64_t i = 0; i < options_.mixture_width; ++i) {
    const int64_t d = depth(draws);
    out[2].second.push_back(static_cast<double>(d));
    for (int64_t k = 0; k < d; ++k) {
      const AugChoice c = choose(draws, height, width);
      out[3].second.push_back(static_cast<double>(c.index));
      out[4].second.push_back(c.magnitude);
    }
  }
  return out;
}

AutoAugmentPolicy auto_augment_policy(const TransformArgs& args) {
  std::string name = args.get_string("policy");
  const std::string spelled = value_repr(args.get("policy")), prefix = "AutoAugmentPolicy.";
  if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return std::tolower(ch); });
  if (name == "imagenet") return AutoAugmentPolicy::kImageNet;
  if (name == "cifar10") return AutoAugmentPolicy::kCifar10;
  if (name == "svhn") return AutoAugmentPolicy::kSvhn;
  throw InputError("The provided policy " + spelled + " is not recognized.");
}

void check_magnitude_bins(const TransformArgs& args, int64_t num_bins) {
  // torchvision indexes the bins at run time; with one bin Posterize's divides by zero.
  if (num_bins < 2)
    throw InputError(args.transform() + ": num_magnitude_bins must be at least 2, got " + std::to_string(num_bins));
}

} // namespace

void transforms_register_auto(TransformRegistry& registry) {
  const TransformValue none = value_none();
  registry.add("AutoAugment",
               {{"policy", value_string("AutoAugmentPolicy.IMAGENET")}, {"interpolation", value_string("nearest")},
                {"fill", none}},
               [](const TransformArgs& args) -> TransformPtr {
                 const AutoAugmentPolicy policy = auto_augment_policy(args);
                 return std::make_shared<AutoAugment>(aug_base(args), policy);
               });
  registry.add("RandAugment",
               {{"num_ops", value_int(2)}, {"magnitude", value_int(9)}, {"num_magnitude_bins", value_int(31)},
                {"interpolation", value_string("nearest")}, {"fill", none}},
               [](const TransformArgs& args) -> TransformPtr {
                 const TransformValue& ops = args.get("num_ops");
                 if (ops.kind != TransformValue::Kind::kInt || ops.integer < 0)
                   throw InputError("num_ops should be a non-negative integer, but got " + value_repr(ops) +
                                    " instead.");
                 const int64_t magnitude = args.get_int("magnitude"), bins = args.get_int("num_magnitude_bins");
                 check_magnitude_bins(args, bins);
                 if (magnitude < -bins || magnitude >= bins)  // torchvision: magnitudes[magnitude]
                   throw InputError("RandAugment: index " + std::to_string(magnitude) +
                                    " is out of bounds for dimension 0 with size " + std::to_string(bins) +
                                    " (magnitude must be below num_magnitude_bins)");
                 return std::make_shared<RandAugment>(aug_base(args), ops.integer,
                                                      magnitude < 0 ? magnitude + bins : magnitude, bins);
               });
  registry.add("TrivialAugmentWide",
               {{"num_magnitude_bins", value_int(31)}, {"interpolation", value_string("nearest")}, {"fill", none}},
               [](const TransformArgs& args) -> TransformPtr {
                 const int64_t bins = args.get_int("num_magnitude_bins");
                 check_magnitude_bins(args, bins);
                 return std::make_shared<TrivialAugmentWide>(aug_base(args), bins);
               });
  registry.add("AugMix",
               {{"severity", value_int(3)}, {"mixture_width", value_int(3)}, {"chain_depth", value_int(-1)},
                {"alpha", value_float(1.0)}, {"all_ops", value_bool(true)},
                {"interpolation", value_string("bilinear")}, {"fill", none}},
               [](const TransformArgs& args) -> TransformPtr {
                 AugMix::Options options{args.get_int("severity"), args.get_int("mixture_width"),
                                         args.get_int("chain_depth"), args.get_double("alpha"),
                                         args.get_bool("all_ops")};
                 if (options.severity < 1 || options.severity > 10)
                   throw InputError("The severity must be between [1, 10]. Got " + std::to_string(options.severity) +
                                    " instead.");
                 // torchvision checks neither; its Dirichlet draw fails for them at run time.
                 if (options.mixture_width < 1 || options.mixture_width > 64)
                   throw InputError("AugMix: mixture_width must be in [1, 64], got " +
                                    std::to_string(options.mixture_width));
                 if (!(options.alpha > 0))
                   throw InputError("AugMix: alpha must be positive (the Dirichlet's concentration), got " +
                                    float_repr(options.alpha));
                 return std::make_shared<AugMix>(aug_base(args), options);
               });
}

} // namespace fastloop
