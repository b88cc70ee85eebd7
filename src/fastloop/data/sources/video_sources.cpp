// videofolder: and videocsv: (video_sources.h). The folder listing follows python/fastloop/_video.py's
// _videos_listed (torchvision's ImageFolder order: classes = sorted folder names; sorted(os.walk(class_dir,
// followlinks=True)) with each folder's files sorted), so the CLI and fastloop.VideoFolder number classes alike.
#include "fastloop/data/sources/video_sources.h"

#include "fastloop/core/errors.h"
#include "fastloop/core/text.h"
#include "fastloop/data/sources/class_names.h"
#include "fastloop/data/sources/csv_files.h"
#include "fastloop/data/sources/data_spec.h"
#include "fastloop/data/sources/video_csv.h"
#include "fastloop/data/transforms/pipeline.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <utility>

namespace fastloop {
namespace {

namespace fs = std::filesystem;

constexpr const char* kVideoExtensions[] = {".mp4", ".mkv", ".webm", ".avi", ".mov", ".m4v"};
constexpr const char* kVideoExtensionList = ".mp4 .mkv .webm .avi .mov .m4v";
constexpr int kMaxDepth = 64;  // folder levels below a class folder: a symlink loop would never end
// Kinetics-400's per-channel statistics, as torchvision's video classification reference normalises clips.
constexpr float kKineticsMean[3] = {0.43216f, 0.394666f, 0.37645f};
constexpr float kKineticsStd[3] = {0.22803f, 0.22145f, 0.216989f};

bool is_dir(const std::string& path) {
  std::error_code error;
  return fs::is_directory(path, error);
}

// The sorted names of the folders (symlinks followed) in `dir`.
std::vector<std::string> class_folders(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error))
    if (it->is_directory(error)) names.push_back(it->path().filename().string());
  if (error)
    throw InputError("video folder " + dir + ": cannot read it (" + error.message() + "); check that it is readable");
  std::sort(names.begin(), names.end());
  return names;
}

// The videos under `class_dir` in os.walk's sorted order: folders sorted by path, each folder's files sorted.
std::vector<std::string> class_videos(const std::string& class_dir) {
  std::vector<std::pair<std::string, std::vector<std::string>>> folders{{class_dir, {}}};
  std::error_code error;
  fs::recursive_directory_iterator it(class_dir, fs::directory_options::follow_directory_symlink, error), end;
  for (; !error && it != end; it.increment(error)) {
    if (it.depth() >= kMaxDepth)
      throw InputError("video folder " + class_dir + ": more than " + std::to_string(kMaxDepth) +
                       " levels of folders (a symlink loop?)");
    const std::string path = it->path().string();
    if (it->is_directory(error)) {
      folders.push_back({path, {}});
    } else if (video_file_name(path)) {
      const std::string parent = it->path().parent_path().string();
      auto folder = std::find_if(folders.begin(), folders.end(), [&](const auto& f) { return f.first == parent; });
      (folder == folders.end() ? folders.emplace_back(parent, std::vector<std::string>{}) : *folder).second.push_back(path);
    }
  }
  if (error)
    throw InputError("video folder " + class_dir + ": cannot read it (" + error.message() + "); check that it is readable");
  std::sort(folders.begin(), folders.end());
  std::vector<std::string> videos;
  for (auto& [folder, files] : folders) {
    std::sort(files.begin(), files.end());
    videos.insert(videos.end(), files.begin(), files.end());
  }
  return videos;
}

struct VideoListing {
  std::vector<std::string> paths;
  std::vector<int64_t> labels;
  std::vector<std::string> classes;
  std::vector<VideoRange> ranges;  // a CSV list's, one per video; empty: whole videos
};

// One split's folder: ROOT/CLASS/**/VIDEO; with `expected` (val read after train), exactly train's classes.
VideoListing folder_list(const std::string& spec, const std::string& root, const std::vector<std::string>* expected) {
  VideoListing listing;
  listing.classes = class_folders(root);
  if (listing.classes.empty())
    data_spec_fail(spec, "video folder " + root + " holds no class folders; expected " + root + "/CLASS/VIDEO.mp4 (" +
                             kVideoExtensionList + ") or DIR/train/CLASS/VIDEO.mp4 (--data)");
  if (expected && *expected != listing.classes)
    data_spec_fail(spec, "video folder " + root + ": its " + std::to_string(listing.classes.size()) +
                             " class folders differ from train's " + std::to_string(expected->size()) +
                             "; val/ needs the same class folders as train/ so that class indices agree");
  for (size_t c = 0; c < listing.classes.size(); ++c) {
    const std::string class_dir = root + "/" + listing.classes[c];
    const std::vector<std::string> videos = class_videos(class_dir);
    if (videos.empty())
      data_spec_fail(spec, "video folder " + class_dir + ": no videos in this class folder (" + kVideoExtensionList +
                               "); add some or remove the folder");
    listing.paths.insert(listing.paths.end(), videos.begin(), videos.end());
    listing.labels.insert(listing.labels.end(), videos.size(), static_cast<int64_t>(c));
  }
  return listing;
}

// A split pair of clips with the run's settings; `test` may hold no videos (no test split).
DatasetSplits clip_splits(const std::string& name, VideoListing train, VideoListing test, int64_t num_classes,
                          const DataOptions& options) {
  DatasetSplits splits;
  splits.name = name;
  Dataset& d = splits.train;
  d.encoded = std::make_shared<const VideoClips>(std::move(train.paths), std::move(train.labels),
                                                 video_clip_options(options, /*train=*/true), std::move(train.ranges),
                                                 options.skip_bad_images);
  d.num_classes = num_classes;
  d.classes = train.classes.empty() ? class_names_numbered(num_classes) : std::move(train.classes);
  d.mean.assign(std::begin(kKineticsMean), std::end(kKineticsMean));
  d.stddev.assign(std::begin(kKineticsStd), std::end(kKineticsStd));
  splits.test = d;  // its frame size is resolved apart (split_size.h), from its own transform
  splits.test.encoded = std::make_shared<const VideoClips>(std::move(test.paths), std::move(test.labels),
                                                           video_clip_options(options, /*train=*/false),
                                                           std::move(test.ranges), options.skip_bad_images);
  return splits;
}

std::string csv_text_read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("CSV file " + path + ": cannot open it; check that it exists (--data videocsv:" + path + ")");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError("CSV file " + path + ": cannot read it");
  return text.str();
}

// One CSV file's videos, each row's file checked (the error names the file and line).
VideoListing csv_list(const std::string& path, const CsvListing* train, CsvListing& read) {
  const std::string text = csv_text_read(path);
  const size_t slash = path.rfind('/');  // the paths in it are relative to its folder, as csv: reads them
  VideoCsvListing parsed =
      video_csv_parse(text, path, slash == std::string::npos ? "" : path.substr(0, std::max<size_t>(slash, 1)), train);
  read = std::move(parsed.listing);
  VideoListing listing;
  if (std::any_of(parsed.ranges.begin(), parsed.ranges.end(), [](const VideoRange& r) { return !r.whole(); }))
    listing.ranges = std::move(parsed.ranges);
  for (size_t i = 0; i < read.paths.size(); ++i) {
    std::error_code error;
    if (!fs::is_regular_file(read.paths[i], error))
      throw InputError(path + " line " + std::to_string(read.lines[i]) + ": " + read.paths[i] +
                       ": no such video file; check the path (relative to the CSV file's folder)");
    listing.paths.push_back(read.paths[i]);
    listing.labels.push_back(read.labels[i]);
  }
  listing.classes = train ? train->classes : read.classes;
  return listing;
}

}  // namespace

bool video_file_name(const std::string& name) {
  const std::string lowered = ascii_lower(name);
  for (const char* ext : kVideoExtensions) {
    const std::string e = ext;
    if (lowered.size() > e.size() && lowered.compare(lowered.size() - e.size(), e.size(), e) == 0) return true;
  }
  return false;
}

VideoClipOptions video_clip_options(const DataOptions& data, bool train) {
  const ClipSettings& clip = data.clip;
  VideoClipOptions options;
  options.frames_per_clip = clip.frames;
  options.frames_between = clip.step;
  options.clips = clip.per_video;
  options.timestamps = clip.sampler == "random_timestamps" || clip.sampler == "regular_timestamps";
  options.random = clip.sampler == "random_timestamps" || (train && clip.sampler == "random");
  options.seconds_between_frames = clip.seconds;
  options.seconds_between_clip_starts = clip.every;
  options.policy = clip.policy;
  options.channels_first = clip.layout == "CTHW";
  const std::string& transform = train ? data.transform : data.eval_transform;
  if (!transform.empty()) options.subsample = Pipeline(transform).temporal_subsample();
  return options;
}

DatasetSplits video_folder_load(const std::string& spec, const std::string& folder, const DataOptions& options) {
  std::string dir = folder;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (!is_dir(dir))
    data_spec_fail(spec, "no folder " + dir + "; a video folder holds CLASS/VIDEO.mp4, or train/CLASS/VIDEO.mp4 and "
                         "val/CLASS/VIDEO.mp4 (--data)");
  const bool split = is_dir(dir + "/train");  // torchvision's Kinetics layout
  VideoListing train = folder_list(spec, split ? dir + "/train" : dir, nullptr);
  VideoListing test;
  if (split && is_dir(dir + "/val")) test = folder_list(spec, dir + "/val", &train.classes);
  const auto classes = static_cast<int64_t>(train.classes.size());
  return clip_splits("videofolder", std::move(train), std::move(test), classes, options);
}

DatasetSplits video_csv_load(const std::string& spec, const std::string& arg, const DataOptions& options) {
  const size_t sep = arg.find("::");
  const std::string train_csv = arg.substr(0, sep);
  const std::string val_csv = sep == std::string::npos ? "" : arg.substr(sep + 2);
  if (train_csv.empty() || (sep != std::string::npos && val_csv.empty()))
    data_spec_fail(spec, "expected videocsv:TRAIN.csv or videocsv:TRAIN.csv::VAL.csv");
  CsvListing train_read, val_read;
  VideoListing train = csv_list(train_csv, nullptr, train_read);
  VideoListing test;
  if (!val_csv.empty()) test = csv_list(val_csv, &train_read, val_read);
  return clip_splits("videocsv", std::move(train), std::move(test), train_read.num_classes, options);
}

} // namespace fastloop
