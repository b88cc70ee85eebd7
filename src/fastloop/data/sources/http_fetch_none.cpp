// HttpFetcher of a build without libcurl (CMakeLists.txt picks this file then): every fetch says so.
#include "fastloop/data/sources/http_fetch.h"

namespace fastloop {

void fetch_interrupt_all() noexcept {}
void fetch_interrupt_clear() noexcept {}
bool fetch_interrupted() noexcept { return false; }

HttpFetcher::HttpFetcher(AwsCredentials credentials, FetchOptions options)
    : credentials_(std::move(credentials)), options_(options) {
  throw InputError("this fastloop was built without libcurl, so it cannot read s3:// or http(s):// shards; "
                   "install libcurl4-openssl-dev (Debian) and build again");
}

HttpFetcher::~HttpFetcher() = default;

std::string HttpFetcher::get(const RemoteUrl&, int64_t, int64_t, const std::atomic<bool>*) const { return {}; }

void HttpFetcher::stream(const RemoteUrl&, std::string&, const std::function<void(int64_t)>&,
                         const std::atomic<bool>*) const {}

int64_t HttpFetcher::size(const RemoteUrl&, const std::atomic<bool>*) const { return 0; }

bool HttpFetcher::get_if_exists(const RemoteUrl&, std::string&, const std::atomic<bool>*) const { return false; }

} // namespace fastloop
