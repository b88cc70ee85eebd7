// torchvision's containers: Compose, RandomApply (all of its transforms with probability p), RandomChoice
// (one transform, picked with weights p) and RandomOrder (all, in a random permutation), drawing as
// transforms.v2 does: torch.rand(1) >= p skips, multinomial(p, 1), randperm(n).
#include "fastloop/data/transforms/families.h"
#include "fastloop/data/transforms/spec.h"
#include "fastloop/data/transforms/registry.h"

#include <numeric>
#include <optional>

namespace fastloop {
namespace {

constexpr size_t kMaxOrdered = 32;  // RandomOrder's permutation lives on the stack: no allocation per image

std::vector<TransformPtr> children_make(const TransformArgs& args) {
  const auto& specs = args.get_transforms("transforms");
  if (specs.empty()) throw InputError(args.transform() + "(): Pass at least one transform");
  std::vector<TransformPtr> children;
  for (const auto& spec : specs) children.push_back(transform_registry().make(spec));
  return children;
}

std::string children_repr(const std::vector<TransformPtr>& children) {
  std::string out = "[";
  for (size_t i = 0; i < children.size(); ++i) out += (i ? ", " : "") + children[i]->repr();
  return out + "]";
}

// A child's draws, named "transforms[i].<name>" in the container's.
void children_draw(const std::vector<TransformPtr>& children, size_t i, int64_t height, int64_t width, Draws& draws,
                   TransformDraw& out) {
  for (auto& [name, values] : children[i]->draw(height, width, draws))
    out.emplace_back("transforms[" + std::to_string(i) + "]." + name, std::move(values));
}

// The children's sizes one after the other.
ImageSize children_output_size(const std::vector<TransformPtr>& children, ImageSize size) {
  for (const auto& child : children) size = child->output_size(size);
  return size;
}

// kNone when a child cannot take targets, else kMoves when one moves them, else kPixels.
TargetSupport children_support(const std::vector<TransformPtr>& children) {
  TargetSupport support = TargetSupport::kPixels;
  for (const auto& child : children) {
    const TargetSupport s = child->target_support();
    if (s == TargetSupport::kNone) return s;
    if (s == TargetSupport::kMoves) support = s;
  }
  return support;
}

class Compose : public Transform {
 public:
  explicit Compose(std::vector<TransformPtr> children) : children_(std::move(children)) {}
  std::string repr() const override { return "Compose(" + children_repr(children_) + ")"; }
  void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const override {
    for (const auto& child : children_) child->apply(image, draws, scratch);
  }
  TargetSupport target_support() const override { return children_support(children_); }
  void apply_targets(ImageU8& image, SampleTargets& targets, Draws& draws, TransformScratch& scratch) const override {
    for (const auto& child : children_) child->apply_targets(image, targets, draws, scratch);
  }
  TransformDraw draw(int64_t height, int64_t width, Draws& draws) const override {
    TransformDraw out;
    for (size_t i = 0; i < children_.size(); ++i) children_draw(children_, i, height, width, draws, out);
    return out;
  }
  ImageSize output_size(ImageSize in) const override { return children_output_size(children_, in); }
  const std::vector<TransformPtr>& children() const { return children_; }

 private:
  std::vector<TransformPtr> children_;
};

class RandomApply : public Transform {
 public:
  RandomApply(std::vector<TransformPtr> children, double p) : children_(std::move(children)), p_(p) {}
  std::string repr() const override {
    return "RandomApply(" + children_repr(children_) + ", p=" + float_repr(p_) + ")";
  }
  void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const override {
    if (draws.uniform(0.0, 1.0) >= p_) return;
    for (const auto& child : children_) child->apply(image, draws, scratch);
  }
  TargetSupport target_support() const override { return children_support(children_); }
  void apply_targets(ImageU8& image, SampleTargets& targets, Draws& draws, TransformScratch& scratch) const override {
    if (draws.uniform(0.0, 1.0) >= p_) return;
    for (const auto& child : children_) child->apply_targets(image, targets, draws, scratch);
  }
  TransformDraw draw(int64_t height, int64_t width, Draws& draws) const override {
    const bool applied = draws.uniform(0.0, 1.0) < p_;
    TransformDraw out{{"applied", {applied ? 1.0 : 0.0}}};
    if (applied)
      for (size_t i = 0; i < children_.size(); ++i) children_draw(children_, i, height, width, draws, out);
    return out;
  }
  ImageSize output_size(ImageSize in) const override {  // skipped or not, the same size, or it varies
    return children_output_size(children_, in) == in ? in : ImageSize{};
  }

 private:
  std::vector<TransformPtr> children_;
  double p_;
};

class RandomChoice : public Transform {
 public:
  RandomChoice(std::vector<TransformPtr> children, std::vector<double> p) : children_(std::move(children)), p_(std::move(p)) {}
  std::string repr() const override {
    std::string weights = "[";
    for (size_t i = 0; i < p_.size(); ++i) weights += (i ? ", " : "") + float_repr(p_[i]);
    return "RandomChoice(" + children_repr(children_) + ", p=" + weights + "])";
  }
  void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const override {
    children_[pick(draws)]->apply(image, draws, scratch);
  }
  TargetSupport target_support() const override { return children_support(children_); }
  void apply_targets(ImageU8& image, SampleTargets& targets, Draws& draws, TransformScratch& scratch) const override {
    children_[pick(draws)]->apply_targets(image, targets, draws, scratch);
  }
  TransformDraw draw(int64_t height, int64_t width, Draws& draws) const override {
    const size_t index = pick(draws);
    TransformDraw out{{"index", {static_cast<double>(index)}}};
    children_draw(children_, index, height, width, draws, out);
    return out;
  }
  ImageSize output_size(ImageSize in) const override {  // the one size every choice that can be drawn makes
    std::optional<ImageSize> size;
    for (size_t i = 0; i < children_.size(); ++i) {
      if (p_[i] <= 0.0) continue;
      const ImageSize out = children_[i]->output_size(in);
      if (size && *size != out) return {};
      size = out;
    }
    return size.value_or(in);
  }

 private:
  // torch.multinomial(p, 1): the first index whose cumulative weight exceeds a uniform draw.
  size_t pick(Draws& draws) const {
    const double u = draws.uniform(0.0, 1.0);
    double cumulative = 0.0;
    for (size_t i = 0; i < p_.size(); ++i) {
      cumulative += p_[i];
      if (u < cumulative && p_[i] > 0.0) return i;
    }
    for (size_t i = p_.size(); i-- > 0;)  // rounding left u at the top: the last index with weight
      if (p_[i] > 0.0) return i;
    return 0;
  }
  std::vector<TransformPtr> children_;
  std::vector<double> p_;  // normalised to sum 1, as torchvision stores it
};

class RandomOrder : public Transform {
 public:
  explicit RandomOrder(std::vector<TransformPtr> children) : children_(std::move(children)) {}
  std::string repr() const override { return "RandomOrder(" + children_repr(children_) + ")"; }
  void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const override {
    size_t order[kMaxOrdered];
    permute(draws, order);
    for (size_t i = 0; i < children_.size(); ++i) children_[order[i]]->apply(image, draws, scratch);
  }
  TargetSupport target_support() const override { return children_support(children_); }
  void apply_targets(ImageU8& image, SampleTargets& targets, Draws& draws, TransformScratch& scratch) const override {
    size_t order[kMaxOrdered];
    permute(draws, order);
    for (size_t i = 0; i < children_.size(); ++i) children_[order[i]]->apply_targets(image, targets, draws, scratch);
  }
  TransformDraw draw(int64_t height, int64_t width, Draws& draws) const override {
    size_t order[kMaxOrdered];
    permute(draws, order);
    TransformDraw out{{"order", {}}};
    for (size_t i = 0; i < children_.size(); ++i) out[0].second.push_back(static_cast<double>(order[i]));
    for (size_t i = 0; i < children_.size(); ++i) children_draw(children_, order[i], height, width, draws, out);
    return out;
  }
  ImageSize output_size(ImageSize in) const override {  // known only when no child changes the size
    for (const auto& child : children_)
      if (child->output_size(in) != in) return {};
    return in;
  }

 private:
  // torch.randperm(n) as a distribution: Fisher-Yates, every permutation equally likely.
  void permute(Draws& draws, size_t* order) const {
    const size_t n = children_.size();
    std::iota(order, order + n, size_t{0});
    for (size_t i = n; i-- > 1;) std::swap(order[i], order[draws.below(static_cast<int64_t>(i) + 1)]);
  }
  std::vector<TransformPtr> children_;
};

void check_p(const TransformArgs& args, double p) {
  if (!(p >= 0.0 && p <= 1.0))
    throw InputError(args.transform() + "(): `p` should be a floating point value in the interval [0.0, 1.0].");
}

}  // namespace

void transforms_register_containers(TransformRegistry& registry) {
  registry.add("Compose", {param_required("transforms")},
               [](const TransformArgs& args) -> TransformPtr { return std::make_shared<Compose>(children_make(args)); });
  registry.add("RandomApply", {param_required("transforms"), {"p", value_float(0.5)}},
               [](const TransformArgs& args) -> TransformPtr {
                 auto children = children_make(args);
                 const double p = args.get_double("p");
                 check_p(args, p);
                 return std::make_shared<RandomApply>(std::move(children), p);
               });
  registry.add("RandomChoice", {param_required("transforms"), {"p", value_none()}},
               [](const TransformArgs& args) -> TransformPtr {
                 auto children = children_make(args);
                 std::vector<double> p = args.is_none("p") ? std::vector<double>(children.size(), 1.0)
                                                           : args.get_doubles("p");
                 if (p.size() != children.size())
                   throw InputError("RandomChoice(): Length of p doesn't match the number of transforms: " +
                                    std::to_string(p.size()) + " != " + std::to_string(children.size()));
                 double total = 0.0;
                 for (double w : p) {
                   if (!(w >= 0.0)) throw InputError("RandomChoice(): p must hold weights >= 0, got " + float_repr(w));
                   total += w;
                 }
                 if (!(total > 0.0)) throw InputError("RandomChoice(): the weights p sum to 0; give at least one > 0");
                 for (double& w : p) w /= total;
                 return std::make_shared<RandomChoice>(std::move(children), std::move(p));
               });
  registry.add("RandomOrder", {param_required("transforms")}, [](const TransformArgs& args) -> TransformPtr {
    auto children = children_make(args);
    if (children.size() > kMaxOrdered)
      throw TransformTypeError("RandomOrder(): at most " + std::to_string(kMaxOrdered) + " transforms are supported, got " +
                               std::to_string(children.size()));
    return std::make_shared<RandomOrder>(std::move(children));
  });
}

} // namespace fastloop
