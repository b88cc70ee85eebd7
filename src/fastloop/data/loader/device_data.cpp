// DeviceData: per epoch, the order and the per-sample draws go to the device once (a few int64 per
// sample); per batch, one advanced-indexing gather crops and flips, a second maps pixels through the
// normalization table. Indexing in [B, H, W, C] order gives channels_last batches with no extra pass.
#include "fastloop/data/loader/device_data.h"

#include "fastloop/data/transforms/augment.h"
#include "fastloop/data/transforms/random_erasing.h"

#include <ATen/ATen.h>

namespace fastloop {

DeviceData::DeviceData(const Dataset& dataset, const LoaderOptions& options) : options_(options) {
  TORCH_CHECK(dataset.images.scalar_type() == at::kByte && dataset.images.dim() == 4,
              "DeviceData: images must be uint8 [N, C, H, W], got ", dataset.images.scalar_type(), " ",
              dataset.images.sizes());
  TORCH_CHECK(dataset.labels.numel() == dataset.size(), "DeviceData: ", dataset.labels.numel(), " labels for ",
              dataset.size(), " images");
  const auto bad = at::logical_or(dataset.labels < 0, dataset.labels >= dataset.num_classes).nonzero();
  TORCH_CHECK(bad.numel() == 0, "DeviceData: sample ", bad.numel() ? bad[0].item<int64_t>() : -1,
              ": label outside [0, ", dataset.num_classes, ")");
  size_ = dataset.size(), channels_ = dataset.channels(), height_ = dataset.height(), width_ = dataset.width();
  pad_ = options_.augment.crop ? options_.augment.pad : 0;
  TORCH_CHECK(pad_ >= 0, "DeviceData: pad must be >= 0, got ", pad_);
  images_ = at::constant_pad_nd(dataset.images, {pad_, pad_, pad_, pad_}, 0).to(options_.device).contiguous();
  labels_ = dataset.labels.to(options_.device);
  const auto lut = normalize_lut(dataset);
  lut_ = at::tensor(lut, at::kFloat).reshape({channels_, 256}).to(options_.dtype).to(options_.device);
}

int64_t DeviceData::batches_per_epoch() const {
  const int64_t world = options_.sampler.world_size;
  const int64_t per_rank = (size_ + world - 1) / world;
  return options_.drop_last ? per_rank / options_.batch_size
                            : (per_rank + options_.batch_size - 1) / options_.batch_size;
}

void DeviceData::start_epoch(int64_t epoch, int64_t first_batch) {
  const auto order = sampler_epoch_indices(size_, epoch, options_.sampler);
  const auto m = static_cast<int64_t>(order.size());
  at::Tensor draws = at::empty({3, m}, at::kLong);  // rows: oy, ox, flip
  auto d = draws.accessor<int64_t, 2>();
  for (int64_t k = 0; k < m; ++k) {
    const SampleDraw draw = augment_draw(options_.augment, options_.sampler.seed, epoch, order[static_cast<size_t>(k)]);
    d[0][k] = draw.oy, d[1][k] = draw.ox, d[2][k] = draw.flip;
  }
  draws = draws.to(options_.device);
  order_ = at::tensor(order, at::kLong).to(options_.device);
  order_host_ = order;
  epoch_ = epoch;
  oy_ = draws[0], ox_ = draws[1], flip_ = draws[2].to(at::kBool);
  end_ = batches_per_epoch();
  next_batch_ = std::min(first_batch, end_);
}

std::optional<Batch> DeviceData::next() {
  if (next_batch_ >= end_) return std::nullopt;
  const int64_t batch = next_batch_++;
  const int64_t begin = batch * options_.batch_size;
  const int64_t count = std::min(options_.batch_size, order_.size(0) - begin);
  const auto on = at::TensorOptions(at::kLong).device(options_.device);
  const at::Tensor index = order_.narrow(0, begin, count);
  const at::Tensor y = at::arange(height_, on), x = at::arange(width_, on), c = at::arange(channels_, on);
  const at::Tensor rows = oy_.narrow(0, begin, count).unsqueeze(1) + y;                       // [B, H]
  const at::Tensor cols = at::where(flip_.narrow(0, begin, count).unsqueeze(1), width_ - 1 - x, x) +
                          ox_.narrow(0, begin, count).unsqueeze(1);                            // [B, W]
  const bool nhwc = options_.channels_last;
  // Gather [B, H, W, C] (channels_last) or [B, C, H, W]; index shapes broadcast to the output shape.
  const at::Tensor pixels = nhwc ? images_.index({index.view({count, 1, 1, 1}), c.view({1, 1, 1, channels_}),
                                                  rows.view({count, height_, 1, 1}), cols.view({count, 1, width_, 1})})
                                 : images_.index({index.view({count, 1, 1, 1}), c.view({1, channels_, 1, 1}),
                                                  rows.view({count, 1, height_, 1}), cols.view({count, 1, 1, width_})});
  const at::Tensor channel = nhwc ? c.view({1, 1, 1, channels_}) : c.view({1, channels_, 1, 1});
  at::Tensor images = lut_.index({channel, pixels.to(at::kLong)});
  if (nhwc) images = images.permute({0, 3, 1, 2});  // sizes [B, C, H, W], memory NHWC
  random_erasing_apply(images, order_host_.data() + begin, count, options_.augment.erase, options_.sampler.seed, epoch_);
  return Batch{images, labels_.index_select(0, index), batch, {}, {}, {}};
}

} // namespace fastloop
