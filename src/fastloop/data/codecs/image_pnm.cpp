// PNM decoding (P1-P6: PBM, PGM, PPM, plain and raw) as PIL's PpmImagePlugin reads them: its header
// tokens and comments, maxval scaling by round(v / maxval * 255) (Python's round), 16-bit greyscale held as
// mode "I" that convert("RGB") clips at 255. Written here: a PNM is a few lines of format, and the one
// Debian library (libnetpbm) reads FILE*s and scales maxval its own way.
#include "fastloop/data/codecs/image_formats.h"

#include <cmath>

namespace fastloop {
namespace image_format {
namespace {

constexpr size_t kMaxToken = 10;  // characters, as PIL

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

[[noreturn]] void pnm_fail(const std::string& name, const std::string& why) { fail(name, "PNM: " + why); }

struct PnmHeader {
  int kind = 0;  // the digit of P1 ... P6
  int64_t width = 0, height = 0;
  int64_t maxval = 1;
  size_t data_at = 0;
};

// A whole number of at most kMaxToken digits (a leading '+' allowed, as Python's int()), else -1.
int64_t token_value(std::string_view t) {
  if (!t.empty() && t[0] == '+') t.remove_prefix(1);
  if (t.empty() || t.size() > kMaxToken) return -1;
  int64_t v = 0;
  for (const char c : t) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

// PIL's _read_token: whitespace skipped, '#' comments to the end of the line, one whitespace ends it.
int64_t header_token(std::string_view b, size_t& pos, const std::string& name, const char* what) {
  std::string token;
  while (token.size() <= kMaxToken) {
    if (pos >= b.size()) break;
    const char c = b[pos++];
    if (is_space(c)) {
      if (token.empty()) continue;
      break;
    }
    if (c == '#') {
      while (pos < b.size() && b[pos] != '\r' && b[pos] != '\n') ++pos;
      if (pos < b.size()) ++pos;
      continue;
    }
    token += c;
  }
  if (token.empty()) pnm_fail(name, std::string("the file ends before its ") + what);
  const int64_t v = token_value(token);
  if (v < 0) pnm_fail(name, std::string("its ") + what + " '" + token.substr(0, 12) + "' is not a whole number");
  return v;
}

PnmHeader pnm_header(std::string_view b, const std::string& name) {
  size_t pos = 0;
  std::string magic;
  while (pos < b.size() && magic.size() < 6 && !is_space(b[pos])) magic += b[pos++];
  if (pos < b.size() && is_space(b[pos])) ++pos;
  PnmHeader h;
  if (magic.size() != 2 || magic[0] != 'P' || magic[1] < '1' || magic[1] > '6')
    pnm_fail(name, "'" + magic + "' files (float or Pillow's own PNM variants) are not supported; P1-P6 are");
  h.kind = magic[1] - '0';
  h.width = header_token(b, pos, name, "width");
  h.height = header_token(b, pos, name, "height");
  if (h.kind != 1 && h.kind != 4) {
    h.maxval = header_token(b, pos, name, "maxval");
    if (h.maxval <= 0 || h.maxval >= 65536) pnm_fail(name, "maxval must be in [1, 65535], not " + std::to_string(h.maxval));
  }
  h.data_at = pos;
  return h;
}

// A sample of maxval `maxval` as PIL stores it: round(v / maxval * out_max), clipped at out_max; PGMs
// above 8 bits become mode "I" (out_max 65535) and convert("RGB") clips that at 255.
uint8_t scaled(int64_t v, int64_t maxval, bool mode_i) {
  const double out_max = mode_i ? 65535.0 : 255.0;
  const double r = std::min(out_max, std::nearbyint(static_cast<double>(v) / static_cast<double>(maxval) * out_max));
  return static_cast<uint8_t>(std::min(255.0, r));
}

void pnm_raw(std::string_view b, const PnmHeader& h, const std::string& name, std::vector<uint8_t>& rgb) {
  const int bands = h.kind == 6 ? 3 : 1;
  const int64_t w = h.width, n = h.width * h.height;
  const bool mode_i = h.kind == 5 && h.maxval > 255;
  const int64_t row = h.kind == 4 ? (w + 7) / 8 : w * bands * (h.maxval > 255 ? 2 : 1);  // bytes
  const auto* in = reinterpret_cast<const uint8_t*>(b.data()) + h.data_at;
  if (static_cast<int64_t>(b.size() - h.data_at) / row < h.height) pnm_fail(name, "the file ends before its last row (truncated)");
  uint8_t* out = rgb.data();
  if (h.kind == 4) {  // 1 bit per pixel, 1 = black
    for (int64_t y = 0; y < h.height; ++y)
      for (int64_t x = 0; x < w; ++x, out += 3) out[0] = out[1] = out[2] = (in[y * row + x / 8] >> (7 - x % 8)) & 1 ? 0 : 255;
    return;
  }
  for (int64_t p = 0; p < n; ++p, out += 3) {
    for (int c = 0; c < bands; ++c) {
      const int64_t k = p * bands + c;
      uint8_t v;
      if (h.maxval == 255) {
        v = in[k];
      } else if (mode_i && h.maxval == 65535) {  // PIL's raw I;16B, clipped by convert("RGB")
        const int s = in[2 * k] << 8 | in[2 * k + 1];
        v = static_cast<uint8_t>(s > 255 ? 255 : s);
      } else {
        v = scaled(h.maxval > 255 ? (in[2 * k] << 8 | in[2 * k + 1]) : in[k], h.maxval, mode_i);
      }
      out[c] = v;
    }
    if (bands == 1) out[1] = out[2] = out[0];
  }
}

// Plain (ASCII) data as PIL's PpmPlainDecoder: comments removed with their line end, then tokens.
void pnm_plain(std::string_view b, const PnmHeader& h, const std::string& name, std::vector<uint8_t>& rgb) {
  const int bands = h.kind == 3 ? 3 : 1;
  const int64_t want = h.width * h.height * bands;
  const bool mode_i = h.kind == 2 && h.maxval > 255;
  std::vector<uint8_t> values;
  values.reserve(static_cast<size_t>(want));
  std::string token;
  const auto token_end = [&]() {
    if (token.empty()) return;
    if (token.size() > kMaxToken) pnm_fail(name, "a value longer than 10 characters: '" + token.substr(0, 11) + "'");
    if (token[0] == '-') pnm_fail(name, "a negative value: " + token);
    const int64_t v = token_value(token);
    if (v < 0) pnm_fail(name, "'" + token + "' is not a whole number");
    if (v > h.maxval) pnm_fail(name, "value " + token + " is above maxval " + std::to_string(h.maxval));
    values.push_back(scaled(v, h.maxval, mode_i));
    token.clear();
  };
  for (size_t pos = h.data_at; pos < b.size() && static_cast<int64_t>(values.size()) < want; ++pos) {
    const char c = b[pos];
    if (c == '#') {
      while (pos < b.size() && b[pos] != '\r' && b[pos] != '\n') ++pos;
      continue;  // the line end goes with the comment: tokens either side of it join, as in PIL
    }
    if (h.kind == 1) {  // one character per pixel, whitespace optional
      if (is_space(c)) continue;
      if (c != '0' && c != '1') pnm_fail(name, std::string("invalid character '") + c + "' in a plain PBM");
      values.push_back(c == '0' ? 255 : 0);
    } else if (is_space(c)) {
      token_end();
    } else {
      token += c;
      if (token.size() > kMaxToken) token_end();  // fails: PIL's "Token too long"
    }
  }
  if (static_cast<int64_t>(values.size()) < want) token_end();
  if (static_cast<int64_t>(values.size()) < want) pnm_fail(name, "the file ends before its last pixel (truncated)");
  for (int64_t p = 0; p < h.width * h.height; ++p)
    for (int c = 0; c < 3; ++c) rgb[static_cast<size_t>(3 * p + c)] = values[static_cast<size_t>(p * bands + (bands == 3 ? c : 0))];
}

}  // namespace

bool is_pnm(std::string_view b) { return b.size() >= 2 && b[0] == 'P' && b[1] >= '1' && b[1] <= '6'; }

ImageInfo pnm_info(std::string_view bytes, const std::string& name) {
  const PnmHeader h = pnm_header(bytes, name);
  ImageInfo info;
  info.format = ImageFormat::kPnm, info.width = h.width, info.height = h.height;
  return info;
}

ImageInfo pnm_decode(std::string_view bytes, const std::string& name, int64_t max_pixels, std::vector<uint8_t>& rgb) {
  const PnmHeader h = pnm_header(bytes, name);
  const ImageInfo info = pnm_info(bytes, name);
  check_size(info, max_pixels, name);
  rgb.resize(static_cast<size_t>(h.width * h.height * 3));
  if (h.kind <= 3) {
    pnm_plain(bytes, h, name, rgb);
  } else {
    pnm_raw(bytes, h, name, rgb);
  }
  return info;
}

}  // namespace image_format
}  // namespace fastloop
