// GETs with retries, Range resume, named errors, a timeout and cancellation, by libcurl (see http_fetch.h).
#include "fastloop/data/sources/http_fetch.h"

#include "fastloop/data/sources/curl_library.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <thread>

namespace fastloop {
namespace {

using Clock = std::chrono::steady_clock;

// Set from a signal handler, so it cannot live in a struct (as train_main's stop request).
std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free, "a signal handler stores it");

bool cancelled(const std::atomic<bool>* cancel) { return g_interrupted.load() || (cancel && cancel->load()); }

// One attempt's state, shared with libcurl's callbacks.
struct Transfer {
  CURL* curl = nullptr;
  std::string* out = nullptr;
  int64_t asked_from = 0;      // the object's byte the request's Range starts at
  int64_t limit = -1;          // bytes `out` may hold in all (size of the request; -1: no limit)
  int64_t skip = 0;            // bytes to drop: a 200 that ignored our Range starts at byte 0
  long status = 0;
  bool started = false;
  std::string error_body;      // a 4xx/5xx answer's body (S3's XML names the error's Code)
  int64_t total = -1;          // the object's size: a 206's Content-Range says it, a 200's Content-Length
  const std::atomic<bool>* cancel = nullptr;
  Clock::time_point last_byte;
  FetchCounters* counters = nullptr;
  const std::function<void(int64_t)>* progress = nullptr;  // stream(): told the bytes in `out` after each block
};

size_t on_data(char* data, size_t size, size_t count, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const size_t bytes = size * count;
  if (!t.started) {
    t.started = true;
    curl_library().easy_getinfo(t.curl, CURLINFO_RESPONSE_CODE, &t.status);
    if (t.status == 200) t.skip = t.asked_from;
    curl_off_t length = -1;  // the body's size, when the server said it: one allocation, no regrowth
    curl_library().easy_getinfo(t.curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
    if (t.status == 200 && length >= 0) t.total = length;
    if (t.limit < 0 && t.status < 300 && length > 0 && length < (int64_t{1} << 34))
      t.out->reserve(t.out->size() + static_cast<size_t>(length - std::min<curl_off_t>(length, t.skip)));
  }
  if (t.status >= 300) {
    t.error_body.append(data, std::min<size_t>(bytes, 4096 - std::min<size_t>(4096, t.error_body.size())));
    return bytes;
  }
  t.last_byte = Clock::now();
  t.counters->bytes += static_cast<int64_t>(bytes);
  size_t at = 0;
  if (t.skip > 0) {
    at = static_cast<size_t>(std::min<int64_t>(t.skip, static_cast<int64_t>(bytes)));
    t.skip -= static_cast<int64_t>(at);
  }
  size_t keep = bytes - at;
  if (t.limit >= 0) keep = std::min<size_t>(keep, static_cast<size_t>(t.limit - static_cast<int64_t>(t.out->size())));
  t.out->append(data + at, keep);
  if (t.progress && keep > 0) (*t.progress)(static_cast<int64_t>(t.out->size()));
  return bytes;
}

// "Content-Range: bytes FIRST-LAST/TOTAL" (any case): the object's TOTAL size.
size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const std::string line(data, size * count);
  std::string name = line.substr(0, std::min(line.size(), sizeof("content-range:") - 1));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const size_t slash = line.rfind('/');
  if (name == "content-range:" && slash != std::string::npos) {
    char* end = nullptr;
    const long long total = std::strtoll(line.c_str() + slash + 1, &end, 10);
    if (end != line.c_str() + slash + 1 && total >= 0) t.total = total;
  }
  return size * count;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto& t = *static_cast<Transfer*>(user);
  return cancelled(t.cancel) ? 1 : 0;  // non-zero: CURLE_ABORTED_BY_CALLBACK
}

std::string xml_code(const std::string& body) {
  const size_t a = body.find("<Code>"), b = body.find("</Code>");
  return a != std::string::npos && b != std::string::npos && b > a ? body.substr(a + 6, b - a - 6) : "";
}

bool retriable(CURLcode rc) {
  return rc == CURLE_COULDNT_CONNECT || rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR ||
         rc == CURLE_PARTIAL_FILE || rc == CURLE_GOT_NOTHING || rc == CURLE_OPERATION_TIMEDOUT;
}

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3g", s);
  return text;
}

struct ListDeleter {
  void operator()(curl_slist* l) const { curl_library().slist_free_all(l); }
};

// What stays the same across one fetch's attempts.
struct Request {
  const RemoteUrl& url;
  std::string target;  // the HTTP URL
  std::string where;   // what messages name
  bool sign = false;
  std::string sigv4;
  curl_slist* headers = nullptr;
};

void configure(Transfer& t, const Request& r, const AwsCredentials& credentials, long budget, const std::string& range) {
  const CurlLibrary& lib = curl_library();
  lib.easy_reset(t.curl);
  lib.easy_setopt(t.curl, CURLOPT_URL, r.target.c_str());
  lib.easy_setopt(t.curl, CURLOPT_NOSIGNAL, 1L);
  lib.easy_setopt(t.curl, CURLOPT_USERAGENT, "fastloop");
  lib.easy_setopt(t.curl, CURLOPT_WRITEFUNCTION, on_data);
  lib.easy_setopt(t.curl, CURLOPT_WRITEDATA, &t);
  lib.easy_setopt(t.curl, CURLOPT_HEADERFUNCTION, on_header);
  lib.easy_setopt(t.curl, CURLOPT_HEADERDATA, &t);
  lib.easy_setopt(t.curl, CURLOPT_NOPROGRESS, 0L);
  lib.easy_setopt(t.curl, CURLOPT_XFERINFOFUNCTION, on_progress);
  lib.easy_setopt(t.curl, CURLOPT_XFERINFODATA, &t);
  lib.easy_setopt(t.curl, CURLOPT_LOW_SPEED_LIMIT, 1L);  // bytes/s: below it for `budget` s is a stall
  lib.easy_setopt(t.curl, CURLOPT_LOW_SPEED_TIME, budget);
  lib.easy_setopt(t.curl, CURLOPT_CONNECTTIMEOUT, budget);
  if (!r.sign) lib.easy_setopt(t.curl, CURLOPT_FOLLOWLOCATION, 1L);
  if (r.sign) {
    lib.easy_setopt(t.curl, CURLOPT_AWS_SIGV4, r.sigv4.c_str());
    lib.easy_setopt(t.curl, CURLOPT_USERNAME, credentials.access_key.c_str());
    lib.easy_setopt(t.curl, CURLOPT_PASSWORD, credentials.secret_key.c_str());
  }
  if (r.headers) lib.easy_setopt(t.curl, CURLOPT_HTTPHEADER, r.headers);
  if (!range.empty()) lib.easy_setopt(t.curl, CURLOPT_RANGE, range.c_str());
}

// Throws the named error of an answer no retry can change (4xx, an unknown host, a non-network failure).
void throw_if_final(const Transfer& t, CURLcode rc, const Request& r, const AwsCredentials& credentials) {
  if (rc == CURLE_OK && t.status >= 400 && t.status < 500 && t.status != 429) {
    const std::string code = xml_code(t.error_body);
    const std::string what = std::to_string(t.status) + (code.empty() ? "" : " " + code);
    if (t.status == 401 || t.status == 403)
      throw InputError(r.where + ": " + what + ": access denied; credentials: " + credentials.source +
                       ". Give the key read access to the object, or set AWS_ACCESS_KEY_ID / AWS_PROFILE");
    if (t.status == 404)
      throw InputError(r.where + ": " + what + ": no such object; check the bucket and key" +
                       (r.url.scheme == "s3" ? " and the endpoint (AWS_ENDPOINT_URL)" : std::string()));
    throw InputError(r.where + ": the server answered " + what);
  }
  if (rc == CURLE_COULDNT_RESOLVE_HOST)
    throw InputError(r.where + ": cannot resolve the host; check the URL (and AWS_ENDPOINT_URL)");
  if (rc != CURLE_OK && !retriable(rc)) throw RunError(r.where + ": " + curl_library().easy_strerror(rc));
}

} // namespace

void fetch_interrupt_all() noexcept { g_interrupted = true; }
void fetch_interrupt_clear() noexcept { g_interrupted = false; }
bool fetch_interrupted() noexcept { return g_interrupted.load(); }

HttpFetcher::HttpFetcher(AwsCredentials credentials, FetchOptions options)
    : credentials_(std::move(credentials)), options_(options) {
  curl_library();  // a machine without libcurl is told so when the source is made
}

HttpFetcher::~HttpFetcher() {
  for (void* handle : idle_) curl_library().easy_cleanup(handle);
}

// A libcurl handle for one fetch, taken from the idle ones (with their open connections) and given back after.
class HttpFetcher::Lease {
 public:
  explicit Lease(const HttpFetcher& owner) : owner_(owner) {
    std::lock_guard<std::mutex> lock(owner_.idle_mutex_);
    if (!owner_.idle_.empty()) {
      handle_ = owner_.idle_.back();
      owner_.idle_.pop_back();
    }
  }
  ~Lease() {
    if (!handle_) return;
    std::lock_guard<std::mutex> lock(owner_.idle_mutex_);
    owner_.idle_.push_back(handle_);
  }
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  CURL* get() {
    if (!handle_) handle_ = curl_library().easy_init();
    return handle_;
  }

 private:
  const HttpFetcher& owner_;
  CURL* handle_ = nullptr;
};

void HttpFetcher::receive(const RemoteUrl& url, int64_t offset, int64_t size, std::string& out, int64_t limit,
                          const std::function<void(int64_t)>* progress, const std::atomic<bool>* cancel,
                          int64_t* total) const {
  const CurlLibrary& lib = curl_library();
  const std::string target = remote_url_http(url, credentials_.endpoint, credentials_.region);
  Request r{url, target, url.text + (url.scheme == "s3" ? " (" + target + ")" : ""),
            url.scheme == "s3" && !credentials_.anonymous(), "aws:amz:" + credentials_.region + ":s3", nullptr};
  Lease curl(*this);
  if (!curl.get()) throw RunError(r.where + ": libcurl could not start a transfer");
  std::unique_ptr<curl_slist, ListDeleter> headers;
  if (r.sign && !credentials_.session_token.empty())
    headers.reset(lib.slist_append(nullptr, ("x-amz-security-token: " + credentials_.session_token).c_str()));
  r.headers = headers.get();
  const std::string stopped = r.where + ": fetch cancelled (the loader stopped, or Ctrl-C)";
  Clock::time_point last_byte = Clock::now();
  double backoff = options_.backoff_s;
  for (int64_t attempt = 0;; ++attempt) {
    if (cancelled(cancel)) throw FetchCancelled(stopped);
    Transfer t;
    t.curl = curl.get();
    t.out = &out;
    t.asked_from = offset + static_cast<int64_t>(out.size());
    t.limit = limit;
    t.cancel = cancel;
    t.last_byte = last_byte;
    t.counters = &counters_;
    t.progress = progress;
    const double waited = std::chrono::duration<double>(Clock::now() - last_byte).count();
    const long budget = std::max(1L, static_cast<long>(options_.timeout_s - waited + 0.999));
    const bool ranged = t.asked_from > 0 || size >= 0;
    configure(t, r, credentials_, budget, ranged ? std::to_string(t.asked_from) + "-" + (size >= 0 ? std::to_string(offset + size - 1) : "") : "");
    if (size == 0) return;
    ++counters_.requests;
    const CURLcode rc = lib.easy_perform(t.curl);
    long connects = 0;
    if (lib.easy_getinfo(t.curl, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK) counters_.connections += connects;
    if (t.last_byte != last_byte) attempt = 0, backoff = options_.backoff_s;  // progress: a fresh fault budget
    last_byte = t.last_byte;
    // Only on_progress aborts a transfer, for a cancel that may be lifted again by now (the loader restarted).
    if (rc == CURLE_ABORTED_BY_CALLBACK || cancelled(cancel)) throw FetchCancelled(stopped);
    if (rc == CURLE_OK && (t.status == 200 || t.status == 206)) {
      if (total) *total = t.total;
      return;
    }
    if (rc == CURLE_OK && t.status == 416 && t.asked_from > offset) return;  // the resumed part was empty
    throw_if_final(t, rc, r, credentials_);
    const std::string fault = rc != CURLE_OK ? std::string(lib.easy_strerror(rc)) : "HTTP " + std::to_string(t.status);
    const double silent = std::chrono::duration<double>(Clock::now() - last_byte).count();
    if (silent >= options_.timeout_s)
      throw RunError(r.where + ": no data for " + seconds(silent) + " s (--data-timeout " + seconds(options_.timeout_s) +
                     "): the server stopped answering (last: " + fault + ")");
    if (attempt >= options_.retries)
      throw RunError(r.where + ": failed " + std::to_string(attempt + 1) + " times in a row, with backoff (last: " +
                     fault + "); the store keeps failing");
    ++counters_.retries;
    for (auto until = Clock::now() + std::chrono::duration<double>(backoff); Clock::now() < until;) {
      if (cancelled(cancel)) throw FetchCancelled(stopped);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    backoff = std::min(backoff * 2, 5.0);
  }
}

std::string HttpFetcher::get(const RemoteUrl& url, int64_t offset, int64_t size, const std::atomic<bool>* cancel) const {
  std::string out;
  if (size >= 0) out.reserve(static_cast<size_t>(size));
  receive(url, offset, size, out, size, nullptr, cancel);
  return out;
}

void HttpFetcher::stream(const RemoteUrl& url, std::string& out, const std::function<void(int64_t)>& progress,
                         const std::atomic<bool>* cancel) const {
  receive(url, 0, -1, out, static_cast<int64_t>(out.capacity()), &progress, cancel);
}

int64_t HttpFetcher::size(const RemoteUrl& url, const std::atomic<bool>* cancel) const {
  std::string first;
  int64_t total = -1;
  receive(url, 0, 1, first, 1, nullptr, cancel, &total);
  if (total < 0) throw RunError(url.text + ": the server did not say the object's size (no Content-Range)");
  return total;
}

bool HttpFetcher::get_if_exists(const RemoteUrl& url, std::string& out, const std::atomic<bool>* cancel) const {
  try {
    out = get(url, 0, -1, cancel);
    return true;
  } catch (const InputError& e) {
    if (std::string(e.what()).find(": 404") == std::string::npos) throw;
    return false;
  }
}

} // namespace fastloop
