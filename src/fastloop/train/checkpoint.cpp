// Checkpoint file: 24-byte header ("FLCKPT01", payload bytes u64 LE, CRC-32 u32 LE, 4 zero bytes),
// then LibTorch's serialized archive.
#include "fastloop/train/checkpoint.h"

#include "fastloop/core/errors.h"
#include "fastloop/train/amp.h"
#include "fastloop/train/lookahead.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <ATen/core/ivalue.h>
#include <torch/serialize/output-archive.h>

#include <zlib.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fastloop {

namespace {

constexpr char kMagic[8] = {'F', 'L', 'C', 'K', 'P', 'T', '0', '1'};
constexpr size_t kHeaderBytes = 24;

/// The CUDA devices whose generators a checkpoint keeps: every visible one (0 without CUDA).
int64_t cuda_generators() {
  return at::globalContext().hasCUDA() ? static_cast<int64_t>(at::detail::getCUDAHooks().deviceCount()) : 0;
}

/// The random states a resume continues from: the CPU generator ("rng") and, on CUDA, each device's
/// ("rng_cuda_<i>": dropout and on-device augmentation draw from them), as torch.cuda.get_rng_state_all().
void rng_save(torch::serialize::OutputArchive& archive) {
  auto cpu = at::detail::getDefaultCPUGenerator();
  {
    std::lock_guard<std::mutex> lock(cpu.mutex());
    archive.write("rng", cpu.get_state(), /*is_buffer=*/true);
  }
  for (int64_t i = 0; i < cuda_generators(); ++i) {
    auto cuda = at::globalContext().defaultGenerator(c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(i)));
    std::lock_guard<std::mutex> lock(cuda.mutex());
    archive.write("rng_cuda_" + std::to_string(i), cuda.get_state(), /*is_buffer=*/true);
  }
}

/// Restores what rng_save() wrote; devices the checkpoint has no state for (older files, more GPUs
/// here than where it was written) keep theirs.
void rng_restore(torch::serialize::InputArchive& archive) {
  at::Tensor state;
  archive.read("rng", state, /*is_buffer=*/true);
  auto cpu = at::detail::getDefaultCPUGenerator();
  {
    std::lock_guard<std::mutex> lock(cpu.mutex());
    cpu.set_state(state);
  }
  for (int64_t i = 0; i < cuda_generators(); ++i) {
    if (!archive.try_read("rng_cuda_" + std::to_string(i), state, /*is_buffer=*/true)) break;
    auto cuda = at::globalContext().defaultGenerator(c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(i)));
    std::lock_guard<std::mutex> lock(cuda.mutex());
    cuda.set_state(state);
  }
}

/// CRC-32 of the whole payload in one call: crc32_z takes a size_t length, where crc32's 32-bit uInt
/// would check only the first (size mod 4 GiB) bytes of a payload of 4 GiB or more.
uint32_t payload_crc(const char* data, size_t bytes) {
  return static_cast<uint32_t>(crc32_z(0L, reinterpret_cast<const Bytef*>(data), bytes));
}

std::string dir_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

void write_all(int fd, const char* data, size_t size, const std::string& path) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(path + ": write failed: " + std::strerror(errno));
    data += n;
    size -= static_cast<size_t>(n);
  }
}

void store_u64(char* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
uint64_t load_u64(const char* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  return v;
}

}  // namespace

void checkpoint_save(const std::string& path, const torch::nn::Module& model, const torch::optim::Optimizer* optimizer,
                     const TrainPosition& position, const std::string& config_json, const GradScaler* scaler,
                     const torch::nn::Module* ema, const std::string& model_info_json, const Lookahead* lookahead,
                     const std::string& loader_state_json) {
  torch::serialize::OutputArchive archive;
  torch::serialize::OutputArchive model_archive, optimizer_archive;
  model.save(model_archive);
  archive.write("model", model_archive);
  if (optimizer) {
    optimizer->save(optimizer_archive);
    archive.write("optimizer", optimizer_archive);
  }
  if (scaler) {
    torch::serialize::OutputArchive scaler_archive;
    scaler->save(scaler_archive);
    archive.write("scaler", scaler_archive);
  }
  if (ema) {
    torch::serialize::OutputArchive ema_archive;
    ema->save(ema_archive);
    archive.write("ema", ema_archive);
  }
  if (lookahead) {
    torch::serialize::OutputArchive lookahead_archive;
    lookahead->save(lookahead_archive);
    archive.write("lookahead", lookahead_archive);
  }
  archive.write("epoch", c10::IValue(position.epoch));
  archive.write("batch", c10::IValue(position.batch));
  archive.write("step", c10::IValue(position.step));
  archive.write("config", c10::IValue(config_json));
  if (!model_info_json.empty()) archive.write("model_info", c10::IValue(model_info_json));
  if (!loader_state_json.empty()) archive.write("loader_state", c10::IValue(loader_state_json));
  rng_save(archive);
  std::ostringstream payload_stream;
  archive.save_to(payload_stream);
  const std::string payload = payload_stream.str();

  char header[kHeaderBytes] = {};
  std::memcpy(header, kMagic, 8);
  store_u64(header + 8, payload.size());
  const uint32_t crc = payload_crc(payload.data(), payload.size());
  store_u64(header + 16, crc);

  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw std::runtime_error("cannot write checkpoint " + tmp + ": " + std::strerror(errno) +
                             "; check that the directory exists and is writable (the last checkpoint is intact)");
  }
  try {
    write_all(fd, header, kHeaderBytes, tmp);
    write_all(fd, payload.data(), payload.size(), tmp);
    if (::fsync(fd) != 0) throw std::runtime_error(tmp + ": fsync failed: " + std::strerror(errno));
  } catch (const std::exception& e) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw std::runtime_error(std::string("checkpoint not saved (") + e.what() +
                             "); free disk space and retry; the last checkpoint is intact");
  }
  ::close(fd);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot rename " + tmp + " to " + path + ": " + std::strerror(errno));
  }
  int dir_fd = ::open(dir_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {  // make the rename itself durable
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  // A process killed mid-write leaves its temporary file; the next good save removes it.
  std::error_code ignored;
  const std::string stale_prefix = std::filesystem::path(path).filename().string() + ".tmp.";
  for (const auto& entry : std::filesystem::directory_iterator(dir_of(path), ignored))
    if (entry.path().filename().string().rfind(stale_prefix, 0) == 0) std::filesystem::remove(entry.path(), ignored);
}

Checkpoint Checkpoint::read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open checkpoint: " + std::strerror(errno) + "; check the path");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto fail = [&](const std::string& what) -> InputError {
    return InputError(path + ": " + what + "; this checkpoint is damaged: use an earlier one or train again");
  };
  if (bytes.size() < kHeaderBytes)
    throw fail("truncated: " + std::to_string(bytes.size()) + " bytes, less than the 24-byte header");
  if (std::memcmp(bytes.data(), kMagic, 8) != 0) throw fail("byte 0: not a fastloop checkpoint (no FLCKPT01 magic)");
  const uint64_t size = load_u64(bytes.data() + 8);
  if (size != bytes.size() - kHeaderBytes) {
    throw fail("truncated or padded: header promises " + std::to_string(size) + " payload bytes, file has " +
               std::to_string(bytes.size() - kHeaderBytes));
  }
  const uint32_t crc = payload_crc(bytes.data() + kHeaderBytes, bytes.size() - kHeaderBytes);
  if (crc != static_cast<uint32_t>(load_u64(bytes.data() + 16))) throw fail("CRC-32 mismatch: the payload is corrupt");

  Checkpoint out;
  out.path_ = path;
  try {
    out.archive_.load_from(bytes.data() + kHeaderBytes, size);
    c10::IValue value;
    out.archive_.read("config", value);
    out.config_json_ = value.toStringRef();
    if (out.archive_.try_read("model_info", value)) out.model_info_json_ = value.toStringRef();
    if (out.archive_.try_read("loader_state", value)) out.loader_state_json_ = value.toStringRef();
    out.archive_.read("epoch", value);
    out.position_.epoch = value.toInt();
    out.archive_.read("batch", value);
    out.position_.batch = value.toInt();
    out.archive_.read("step", value);
    out.position_.step = value.toInt();
  } catch (const c10::Error& e) {
    throw fail(std::string("unreadable archive: ") + e.what_without_backtrace());
  } catch (const std::exception& e) {  // e.g. torch::jit::ErrorReport for a damaged type name in the archive
    throw fail(std::string("unreadable archive: ") + e.what());
  }
  return out;
}

void Checkpoint::restore(torch::nn::Module& model, torch::optim::Optimizer* optimizer, bool rng, GradScaler* scaler) {
  try {
    torch::serialize::InputArchive model_archive;
    archive_.read("model", model_archive);
    model.load(model_archive);
    if (optimizer) {
      torch::serialize::InputArchive optimizer_archive;
      archive_.read("optimizer", optimizer_archive);
      optimizer->load(optimizer_archive);
    }
    if (scaler) {
      torch::serialize::InputArchive scaler_archive;
      archive_.read("scaler", scaler_archive);
      scaler->load(scaler_archive);
    }
    if (rng) rng_restore(archive_);
  } catch (const c10::Error& e) {
    throw InputError(path_ + ": does not match this model or optimizer: " + e.what_without_backtrace() +
                     "; resume with the same --model, --stem and --optim it was written with");
  }
}

bool Checkpoint::has_ema() {
  torch::serialize::InputArchive ema_archive;
  return archive_.try_read("ema", ema_archive);
}

void Checkpoint::restore_ema(torch::nn::Module& module) {
  torch::serialize::InputArchive ema_archive;
  if (!archive_.try_read("ema", ema_archive))
    throw InputError(path_ + ": has no EMA weights; train with --ema-decay to keep them (or export without --ema)");
  try {
    module.load(ema_archive);
  } catch (const c10::Error& e) {
    throw InputError(path_ + ": its EMA weights do not match this model: " + e.what_without_backtrace());
  }
}

bool Checkpoint::restore_lookahead(Lookahead& lookahead) {
  torch::serialize::InputArchive lookahead_archive;
  if (!archive_.try_read("lookahead", lookahead_archive)) return false;
  try {
    lookahead.load(lookahead_archive);
  } catch (const c10::Error& e) {
    throw InputError(path_ + ": its Lookahead slow weights do not match this model: " + e.what_without_backtrace() +
                     "; resume with the same --model it was written with");
  }
  return true;
}

std::string checkpoint_path_in(const std::string& dir) { return dir + "/last.ckpt"; }

} // namespace fastloop
