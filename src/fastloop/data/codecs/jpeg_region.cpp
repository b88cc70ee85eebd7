// Region decoding with libjpeg's API (jpeg_region.h says why this is not TurboJPEG). libjpeg reports a
// fatal error by calling error_exit, which must not return: it longjmps back into region_decode(), the one
// function that calls libjpeg, whose locals are all trivially destructible so the jump skips no destructor.
#include "fastloop/data/codecs/jpeg_region.h"

#include <cstdio>  // jpeglib.h needs FILE and size_t declared first
#include <algorithm>
#include <csetjmp>

#include <jerror.h>
#include <jpeglib.h>

namespace fastloop {
namespace {

struct ErrorManager {
  jpeg_error_mgr base;  // first: libjpeg's err pointer is also ours
  std::jmp_buf jump;
  bool truncated = false;
  char message[JMSG_LENGTH_MAX] = {};
};

void error_exit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

// Warnings (extraneous bytes, a corrupt segment libjpeg recovered from) leave a picture, as in PIL and as in
// the TurboJPEG full decode; data that ends early is a truncated file, as PIL's "image file is truncated".
void emit_message(j_common_ptr cinfo, int level) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  if (level >= 0) return;  // trace messages
  ++cinfo->err->num_warnings;
  if (cinfo->err->msg_code == JWRN_JPEG_EOF) {
    err->truncated = true;
    (*cinfo->err->format_message)(cinfo, err->message);
  }
}

}  // namespace

struct JpegRegionDecoder::State {
  jpeg_decompress_struct cinfo{};
  ErrorManager err;
  std::vector<JSAMPROW> rows;
};

JpegRegionDecoder::JpegRegionDecoder() : state_(std::make_unique<State>()) {
  state_->cinfo.err = jpeg_std_error(&state_->err.base);
  state_->err.base.error_exit = error_exit;
  state_->err.base.emit_message = emit_message;
  jpeg_create_decompress(&state_->cinfo);  // only allocation failure can fail here
}

JpegRegionDecoder::~JpegRegionDecoder() { jpeg_destroy_decompress(&state_->cinfo); }

namespace {

// Rows decoded above the wanted ones: fancy upsampling of subsampled chroma reads the row above, which
// jpeg_skip_scanlines may not have produced exactly as a full decode does; one iMCU row of margin keeps
// every wanted row a row that libjpeg decoded in sequence.
int64_t context_rows(const jpeg_decompress_struct& cinfo) {
  return static_cast<int64_t>(cinfo.max_v_samp_factor) * cinfo.min_DCT_scaled_size;
}
int64_t context_cols(const jpeg_decompress_struct& cinfo) {
  return static_cast<int64_t>(cinfo.max_h_samp_factor) * cinfo.min_DCT_scaled_size;
}

// The libjpeg calls, between setjmp and the end of the decode. Returns false after a fatal error.
bool region_decode(jpeg_decompress_struct& cinfo, ErrorManager& err, std::string_view bytes, ImageScale scale,
                   const PixelRect& want, std::vector<uint8_t>& out, std::vector<JSAMPROW>& rows, PixelRect& got) {
  if (setjmp(err.jump)) {
    jpeg_abort_decompress(&cinfo);
    return false;
  }
  jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&cinfo, TRUE);
  cinfo.out_color_space = JCS_RGB;  // from YCbCr, RGB or greyscale; CMYK is left to the full decode
  cinfo.dct_method = JDCT_ISLOW;    // TurboJPEG's TJFLAG_ACCURATEDCT, PIL's default
  cinfo.scale_num = static_cast<unsigned int>(scale.num);
  cinfo.scale_denom = static_cast<unsigned int>(scale.denom);
  jpeg_start_decompress(&cinfo);
  const int64_t W = cinfo.output_width, H = cinfo.output_height;
  const int64_t top = std::max<int64_t>(0, want.top - context_rows(cinfo));
  const int64_t bottom = std::min<int64_t>(H, want.top + want.height);
  const int64_t left = std::max<int64_t>(0, want.left - context_cols(cinfo));
  const int64_t right = std::min<int64_t>(W, want.left + want.width + context_cols(cinfo));
  auto xoffset = static_cast<JDIMENSION>(left);
  auto width = static_cast<JDIMENSION>(right - left);
  if (left > 0 || right < W) jpeg_crop_scanline(&cinfo, &xoffset, &width);  // widens to iMCU boundaries
  got = {top, static_cast<int64_t>(xoffset), bottom - top, static_cast<int64_t>(width)};
  const auto stride = static_cast<size_t>(width) * 3;
  const size_t size = stride * static_cast<size_t>(got.height);
  if (out.size() < size) out.resize(size);  // grown only: libjpeg writes every row read, no zeroing needed
  rows.resize(static_cast<size_t>(got.height));
  for (size_t r = 0; r < rows.size(); ++r) rows[r] = out.data() + r * stride;
  if (top > 0) jpeg_skip_scanlines(&cinfo, static_cast<JDIMENSION>(top));
  while (static_cast<int64_t>(cinfo.output_scanline) < bottom) {
    const auto next = static_cast<size_t>(cinfo.output_scanline - top);
    if (jpeg_read_scanlines(&cinfo, rows.data() + next, static_cast<JDIMENSION>(bottom - cinfo.output_scanline)) == 0)
      break;  // cannot happen with a memory source (it never suspends); never loop on it
  }
  jpeg_abort_decompress(&cinfo);  // the rows below are not needed
  return true;
}

}  // namespace

JpegRegionStatus JpegRegionDecoder::decode(std::string_view bytes, ImageScale scale, const PixelRect& want,
                                           std::vector<uint8_t>& out, PixelRect& got, std::string& error) {
  State& s = *state_;
  s.err.truncated = false;
  s.err.message[0] = '\0';
  const bool done = region_decode(s.cinfo, s.err, bytes, scale, want, out, s.rows, got);
  error = s.err.message;
  if (s.err.truncated) return JpegRegionStatus::kTruncated;
  return done ? JpegRegionStatus::kDone : JpegRegionStatus::kCorrupt;
}

bool jpeg_ends_with_eoi(std::string_view bytes) {
  constexpr size_t kPadding = 64;  // bytes: some writers pad after EOI
  size_t end = bytes.size();
  while (end > 0 && bytes.size() - end < kPadding && (bytes[end - 1] == '\0' || bytes[end - 1] == '\n')) --end;
  return end >= 2 && static_cast<uint8_t>(bytes[end - 2]) == 0xFF && static_cast<uint8_t>(bytes[end - 1]) == 0xD9;
}

} // namespace fastloop
