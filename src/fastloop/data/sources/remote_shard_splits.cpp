// remote_shards_load(): a remote `shards:` argument (a URL folder with its shards.idx, or URL patterns) as the
// train and val RemoteShardImages, their classes from classes.txt (see remote_shards.h).
#include "fastloop/data/sources/remote_shards.h"

#include "fastloop/core/errors.h"

#include <algorithm>
#include <map>

namespace fastloop {

namespace {

std::vector<ShardIndexEntry> index_for(const HttpFetcher& fetcher, const RemoteUrl& shard,
                                       std::map<std::string, std::vector<ShardIndexEntry>>& indices, RemoteUrl& at) {
  at = remote_url_sibling(shard, kShardIndexName);
  auto it = indices.find(at.text);
  if (it != indices.end()) return it->second;
  std::string text;
  if (!fetcher.get_if_exists(at, text))
    throw InputError(at.text + ": no shard index beside the shards. Remote shards need it (each shard's sample count, "
                     "for the epoch order, without downloading the shards at start): `fastloop pack` writes it; for "
                     "shards made elsewhere run `fastloop pack --index-only DIR` on a local copy and upload "
                     "DIR/shards.idx beside them");
  return indices[at.text] = shard_index_parse(text, at.text);
}

std::shared_ptr<RemoteShardImages> split_load(const std::string& pattern, const std::vector<ShardIndexEntry>* listed,
                                              const RemoteUrl* dir, std::shared_ptr<const HttpFetcher> fetcher,
                                              std::shared_ptr<const ShardCache> cache, bool shuffled,
                                              const RemoteShardOptions& options,
                                              std::map<std::string, std::vector<ShardIndexEntry>>& indices) {
  std::vector<RemoteUrl> urls;
  std::vector<ShardIndexEntry> entries;
  if (listed) {
    for (const ShardIndexEntry& e : *listed) {
      urls.push_back(remote_url_sibling(*dir, e.name));
      entries.push_back(e);
    }
  } else {
    urls = remote_pattern_expand(pattern);
    for (const RemoteUrl& url : urls) {
      RemoteUrl at;
      const std::vector<ShardIndexEntry> index = index_for(*fetcher, url, indices, at);
      const std::string name = remote_url_basename(url);
      const auto it = std::find_if(index.begin(), index.end(), [&](const ShardIndexEntry& e) { return e.name == name; });
      if (it == index.end())
        throw InputError(url.text + ": not listed in " + at.text + "; a pattern may name only shards of the index "
                         "(rewrite it with `fastloop pack --index-only DIR` if the shards changed)");
      entries.push_back(*it);
    }
  }
  return std::make_shared<RemoteShardImages>(std::move(urls), std::move(entries), std::move(fetcher), std::move(cache),
                                             options.shuffled.value_or(shuffled), options);
}

std::vector<std::string> classes_parse(const std::string& text, int64_t num_classes, const std::string& where) {
  std::vector<std::string> names;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    names.push_back(line);
    at = end + 1;
  }
  if (static_cast<int64_t>(names.size()) < num_classes ||
      std::any_of(names.begin(), names.end(), [](const std::string& n) { return n.empty(); }))
    throw InputError(where + ": " + std::to_string(names.size()) + " names for " + std::to_string(num_classes) +
                     " classes, or an empty line; one class name per line");
  return names;
}

} // namespace

RemoteShardSplits remote_shards_load(const std::string& arg, const RemoteShardOptions& options) {
  auto fetcher = std::make_shared<const HttpFetcher>(aws_credentials_resolve(env_lookup_process()), options.fetch);
  auto cache = options.cache_dir.empty() ? nullptr : std::make_shared<const ShardCache>(options.cache_dir, options.cache_bytes);
  std::string train, val;
  remote_spec_split(arg, train, val);
  std::map<std::string, std::vector<ShardIndexEntry>> indices;
  RemoteShardSplits splits;
  const bool dir_form = val.empty() && train.find('{') == std::string::npos &&
                        (train.size() < 4 || train.compare(train.size() - 4, 4, ".tar") != 0);
  if (dir_form) {
    std::string base = train;
    while (!base.empty() && base.back() == '/') base.pop_back();
    const RemoteUrl dir = remote_url_parse(base + "/" + kShardIndexName);
    RemoteUrl at;
    const std::vector<ShardIndexEntry> index = index_for(*fetcher, dir, indices, at);
    std::vector<ShardIndexEntry> train_entries, val_entries;
    for (const auto& e : index) {
      if (e.name.rfind("train-", 0) == 0) train_entries.push_back(e);
      if (e.name.rfind("val-", 0) == 0) val_entries.push_back(e);
    }
    if (train_entries.empty()) throw InputError(at.text + " lists no train-*.tar shards; `fastloop pack` names them so");
    splits.train = split_load("", &train_entries, &dir, fetcher, cache, true, options, indices);
    if (!val_entries.empty()) splits.val = split_load("", &val_entries, &dir, fetcher, cache, false, options, indices);
  } else {
    splits.train = split_load(train, nullptr, nullptr, fetcher, cache, true, options, indices);
    if (!val.empty()) splits.val = split_load(val, nullptr, nullptr, fetcher, cache, false, options, indices);
  }
  splits.num_classes = std::max(splits.train->num_classes(), splits.val ? splits.val->num_classes() : 0);
  const RemoteUrl classes_url =
      dir_form ? remote_url_parse(train + (train.back() == '/' ? "" : "/") + "classes.txt")
               : remote_url_sibling(remote_pattern_expand(train).front(), "classes.txt");
  std::string text;
  splits.classes = fetcher->get_if_exists(classes_url, text) ? classes_parse(text, splits.num_classes, classes_url.text)
                                                              : std::vector<std::string>();
  if (splits.classes.empty())
    for (int64_t c = 0; c < splits.num_classes; ++c) splits.classes.push_back(std::to_string(c));
  for (RemoteShardImages* split : {splits.train.get(), splits.val.get()})
    if (split) split->classes_ = splits.classes;
  return splits;
}

} // namespace fastloop
