// The writer dumps each report as one ordered JSON object; the reader goes line by line with nlohmann::json,
// numbers checked for type and finiteness, nulls (a NaN loss) read as NaN.
#include "fastloop/io/metrics_file.h"

#include "fastloop/core/errors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace fastloop {

namespace {

constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();

struct LineError {
  std::string what;
};

/// `key` of a line: a finite number, or NaN when absent or null unless `required`.
double number(const nlohmann::json& line, const char* key, bool required) {
  const auto it = line.find(key);
  if (it == line.end() || it->is_null()) {
    if (required) throw LineError{std::string("no \"") + key + "\" number"};
    return kMissing;
  }
  if (!it->is_number()) throw LineError{std::string("\"") + key + "\" is not a number"};
  const double v = it->get<double>();
  if (!std::isfinite(v)) throw LineError{std::string("\"") + key + "\" is out of range"};
  return v;
}

MetricsPoint point_of(const nlohmann::json& line, bool epoch) {
  MetricsPoint p;
  p.step = number(line, "step", true);
  p.elapsed_s = number(line, "elapsed_s", true);
  if (p.step < 0 || p.elapsed_s < 0) throw LineError{"\"step\" and \"elapsed_s\" must be >= 0"};
  p.train_loss = number(line, "train_loss", false);
  p.img_per_s = number(line, "img_per_s", false);
  p.lr = epoch ? kMissing : number(line, "lr", false);
  p.test_loss = epoch ? number(line, "test_loss", false) : kMissing;
  p.test_acc = epoch ? number(line, "test_acc", false) : kMissing;
  return p;
}

/// A resumed run's first line: drop what it redoes, and continue its clock from where the last one ended.
void restart_at(MetricsRun& run, const MetricsPoint& first, double& offset_s, double last_elapsed_s) {
  auto redone = [&](const MetricsPoint& p) { return p.step >= first.step; };
  run.steps.erase(std::remove_if(run.steps.begin(), run.steps.end(), redone), run.steps.end());
  run.epochs.erase(std::remove_if(run.epochs.begin(), run.epochs.end(), redone), run.epochs.end());
  offset_s = last_elapsed_s;
}

}  // namespace

MetricsWriter::MetricsWriter(const std::string& path) {
  if (path.empty()) return;
  out_.open(path, std::ios::app);
  if (!out_) throw std::runtime_error("--metrics " + path + ": cannot open for appending; check the directory");
}

void MetricsWriter::step(const StepReport& r) {
  if (!out_.is_open()) return;
  nlohmann::ordered_json line = {{"kind", "step"},          {"epoch", r.epoch},
                                 {"step", r.step},          {"train_loss", r.train_loss},
                                 {"lr", r.lr},              {"img_per_s", r.img_per_s},
                                 {"data_wait_s", r.data_wait_s}, {"elapsed_s", r.elapsed_s}};
  out_ << line.dump() << '\n' << std::flush;
}

void MetricsWriter::epoch(const EpochReport& r) {
  if (!out_.is_open()) return;
  nlohmann::ordered_json line = {{"kind", "epoch"}, {"epoch", r.epoch}, {"step", r.step}, {"train_loss", r.train_loss}};
  if (r.evaluated) line["test_loss"] = r.test_loss, line["test_acc"] = r.test_acc, line["tta"] = r.tta;
  line["img_per_s"] = r.img_per_s;
  line["elapsed_s"] = r.elapsed_s;
  out_ << line.dump() << '\n' << std::flush;
}

void MetricsWriter::record(const std::string& kind, const std::string& json_object) {
  if (!out_.is_open()) return;
  nlohmann::ordered_json line = {{"kind", kind}};
  const auto fields = nlohmann::ordered_json::parse(json_object);  // held: items() refers into it
  for (const auto& [key, value] : fields.items()) line[key] = value;
  out_ << line.dump() << '\n' << std::flush;
}

MetricsRun metrics_parse(const std::string& text, const std::string& file) {
  MetricsRun run;
  run.name = file;
  std::istringstream in(text);
  std::string line;
  double offset_s = 0.0, last_elapsed_s = -1.0, last_raw_s = -1.0;
  for (int64_t number_of_line = 1; std::getline(in, line); ++number_of_line) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      const nlohmann::json parsed = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (parsed.is_discarded()) throw LineError{"not valid JSON"};
      if (!parsed.is_object()) throw LineError{"not a JSON object"};
      const auto kind = parsed.find("kind");
      if (kind == parsed.end() || !kind->is_string()) throw LineError{"no \"kind\" string"};
      const bool epoch = *kind == "epoch";
      if (!epoch && *kind != "step") continue;
      MetricsPoint p = point_of(parsed, epoch);
      if (p.elapsed_s < last_raw_s) restart_at(run, p, offset_s, last_elapsed_s);
      last_raw_s = p.elapsed_s;
      p.elapsed_s += offset_s;
      last_elapsed_s = p.elapsed_s;
      (epoch ? run.epochs : run.steps).push_back(p);
    } catch (const LineError& e) {
      throw InputError(file + " line " + std::to_string(number_of_line) + ": " + e.what +
                       "; expected the JSON lines `fastloop train --metrics FILE` writes");
    }
  }
  if (run.steps.empty() && run.epochs.empty())
    throw InputError(file + ": no \"step\" or \"epoch\" lines; give a file `fastloop train --metrics FILE` wrote");
  return run;
}

MetricsRun metrics_read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot read this metrics file; check the path");
  std::ostringstream text;
  text << in.rdbuf();
  return metrics_parse(text.str(), path);
}

} // namespace fastloop
