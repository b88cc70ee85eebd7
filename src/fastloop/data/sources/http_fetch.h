// GETs of remote shards over HTTP(S) by the system's libcurl (opened at run time: curl_library.h), S3 requests signed by
// libcurl's own SigV4 (CURLOPT_AWS_SIGV4, curl >= 7.75) rather than by a signer of ours or the AWS SDK for
// C++ (not packaged by Debian; ~40 MB of libraries for what one curl option does here).
// Faults: a 5xx, 429 or dropped connection is retried with doubling backoff and the transfer resumes with a
// Range request at the byte where it stopped; 4xx answers are named errors (403 names the credential
// source, never the secret); no byte for `timeout_s` ends the fetch with a stated timeout; a cancel flag,
// polled by libcurl's progress callback and by the backoff, stops a fetch within about a second.
#pragma once

#include "fastloop/core/errors.h"
#include "fastloop/data/sources/aws_credentials.h"
#include "fastloop/data/sources/remote_url.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace fastloop {

struct FetchOptions {
  double timeout_s = 60.0;   // seconds without a byte (across retries) before the server is taken as gone
  int64_t retries = 8;       // attempts after the first, on 5xx, 429 or a dropped connection
  double backoff_s = 0.2;    // seconds before the first retry; doubles per retry, at most 5 s
};

/// What the fetches of one source asked of the store (tests count the requests a cached epoch makes).
struct FetchCounters {
  std::atomic<int64_t> requests{0};  // GETs sent, retries included
  std::atomic<int64_t> retries{0};   // of those, retries after a fault
  std::atomic<int64_t> bytes{0};     // body bytes received
  std::atomic<int64_t> connections{0};  // TCP connections opened (a reused one is not counted again)
};

/// A fetch stopped by its cancel flag (the loader stopping its workers, Ctrl-C).
class FetchCancelled : public RunError {
 public:
  using RunError::RunError;
};

/// Cancels every fetch of the process, and fails those that start, until fetch_interrupt_clear(): what a
/// Ctrl-C handler calls (async-signal-safe), so that a fetch outside the loader (a run's setup reading its
/// first images) stops too. The loader's own stop cancels only its split's fetches (reads_cancelled).
void fetch_interrupt_all() noexcept;
void fetch_interrupt_clear() noexcept;
/// Whether fetch_interrupt_all() was called (and not cleared since).
bool fetch_interrupted() noexcept;

class HttpFetcher {
 public:
  HttpFetcher(AwsCredentials credentials, FetchOptions options);
  ~HttpFetcher();
  HttpFetcher(const HttpFetcher&) = delete;
  HttpFetcher& operator=(const HttpFetcher&) = delete;

  /// The bytes [offset, offset + size) of the object at `url` (size < 0: to its end). Throws InputError
  /// for a 4xx answer (naming url.text, the status and, for 401/403, credentials().source), RunError
  /// when the retries or the timeout run out, FetchCancelled when `*cancel` became true.
  std::string get(const RemoteUrl& url, int64_t offset = 0, int64_t size = -1,
                  const std::atomic<bool>* cancel = nullptr) const;

  /// As get() of the whole object, appended to `out` (empty, its capacity reserved by the caller: at most
  /// that many bytes are kept, so the buffer never moves), calling `progress(bytes in out)` after each
  /// block: other threads may read the bytes reported so far while the rest arrives.
  void stream(const RemoteUrl& url, std::string& out, const std::function<void(int64_t)>& progress,
              const std::atomic<bool>* cancel = nullptr) const;

  /// The object's size in bytes, from the answer to a GET of its first byte (Content-Range; a server that
  /// ignores ranges: Content-Length). Throws as get(), and RunError when the answer says neither.
  int64_t size(const RemoteUrl& url, const std::atomic<bool>* cancel = nullptr) const;

  /// As get() of the whole object, but a 404 gives false (optional files beside the shards).
  bool get_if_exists(const RemoteUrl& url, std::string& out, const std::atomic<bool>* cancel = nullptr) const;

  const AwsCredentials& credentials() const { return credentials_; }
  const FetchOptions& options() const { return options_; }
  FetchCounters& counters() const { return counters_; }

 private:
  AwsCredentials credentials_;
  FetchOptions options_;
  class Lease;
  void receive(const RemoteUrl& url, int64_t offset, int64_t size, std::string& out, int64_t limit,
               const std::function<void(int64_t)>* progress, const std::atomic<bool>* cancel,
               int64_t* total = nullptr) const;

  mutable FetchCounters counters_;
  // libcurl handles between fetches (CURL*, a void* in curl.h): each keeps its open connection, so the next
  // fetch from the same host skips the TCP (and TLS) handshake, as a browser's or the AWS SDK's pool does.
  mutable std::mutex idle_mutex_;
  mutable std::vector<void*> idle_;
};

} // namespace fastloop
