// The bench result as markdown, CSV and JSON. The markdown prints the tables of report_tables.cpp (seed
// 001's shape, rows × models, and what the seed could not show); CSV and JSON loop over the field list.
#include "fastloop/bench/report.h"

#include "fastloop/bench/cell_fields.h"
#include "fastloop/bench/report_tables.h"
#include "fastloop/core/out_file.h"
#include "fastloop/core/text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <variant>

namespace fastloop {

namespace {

std::string markdown_cell(const std::string& s) {  // a "|" inside a cell would end it
  std::string out;
  for (char ch : s) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return out;
}

std::string csv_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

std::string csv_value(const BenchValue& value) {
  struct Text {
    std::string operator()(std::monostate) const { return ""; }
    std::string operator()(bool v) const { return v ? "true" : "false"; }
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return csv_number(v); }
    std::string operator()(const std::string& v) const { return csv_field(v); }
    std::string operator()(const std::vector<double>& v) const {  // one field: ';' needs no quoting
      std::string out;
      for (size_t i = 0; i < v.size(); ++i) {
        if (i) out += ';';
        out += csv_number(v[i]);
      }
      return out;
    }
  };
  return std::visit(Text{}, value);
}

nlohmann::ordered_json json_value(std::monostate) { return nullptr; }
template <typename T>
nlohmann::ordered_json json_value(const T& v) { return v; }

}  // namespace

std::string report_markdown(const ReportTable& t) {
  std::ostringstream md;
  if (!t.title.empty()) md << "## " << t.title << "\n\n" << t.note << "\n\n";
  md << "|";
  for (const auto& h : t.header) md << " " << h << " |";
  md << "\n|";
  for (size_t i = 0; i < t.header.size(); ++i) md << (i == 0 ? "---|" : "---:|");
  md << "\n";
  for (const auto& row : t.rows) {
    md << "|";
    for (const auto& cell : row) md << " " << markdown_cell(cell) << " |";
    md << "\n";
  }
  return md.str();
}

std::string bench_markdown(const BenchResult& result) {
  std::ostringstream md;
  md << "# fastloop bench\n\n| environment | |\n|---|---|\n";
  for (const auto& [key, value] : report_environment(result))
    md << "| " << key << " | " << (key == "command" ? "`" + value + "`" : value) << " |\n";
  md << "\n" << report_settings(result) << "\n";
  for (const auto& t : report_tables(result)) md << "\n" << report_markdown(t);
  const auto rows = report_row_descriptions(result);
  if (!rows.empty()) {
    md << "\n## Rows\n\n";
    for (const auto& [name, what] : rows) md << "- `" << name << "`: " << what << "\n";
  }
  return md.str();
}

std::string bench_csv(const BenchResult& result) {
  const auto& fields = bench_cell_fields();
  std::ostringstream csv;
  for (const auto& [key, value] : report_environment(result)) csv << "# " << key << ": " << value << "\n";
  csv << "# settings: " << report_settings(result) << "\n";
  std::string units;
  for (const auto& f : fields)
    if (f.in_csv && *f.unit) units += std::string(units.empty() ? "" : ", ") + f.name + " " + f.unit;
  csv << "# units: " << units << "\n";
  std::string header;
  for (const auto& f : fields)
    if (f.in_csv) header += std::string(header.empty() ? "" : ",") + f.name;
  csv << header << "\n";
  for (const auto& c : result.cells) {
    bool first = true;
    for (const auto& f : fields) {
      if (!f.in_csv) continue;
      csv << (first ? "" : ",") << csv_value(f.get(c));
      first = false;
    }
    csv << "\n";
  }
  return csv.str();
}

std::string bench_json(const BenchResult& result) {
  using Json = nlohmann::ordered_json;
  const auto& e = result.environment;
  const auto& o = result.options;
  Json out;
  out["bench"] = "grid";
  out["environment"] = {{"cpu_model", e.cpu_model}, {"cores", e.cores}, {"threads", e.threads}, {"gpu", e.gpu},
                        {"gpu_driver", e.gpu_driver}, {"device", e.device}, {"libtorch_version", e.libtorch_version},
                        {"blas", e.blas}, {"commit", e.commit}, {"peak_gemm_gflops", e.peak_gemm_gflops},
                        {"peak_gemm_method", e.peak_gemm_method},
                        {"peak_gemm_bf16_gflops", e.peak_gemm_bf16_gflops}, {"peak_gemm_fp16_gflops", e.peak_gemm_fp16_gflops}, {"load_average", e.load_average},
                        {"pytorch_version", e.pytorch_version}, {"command", e.command}, {"date", e.date}};
  out["options"] = {{"models", o.models}, {"rows", o.rows}, {"repeat", o.repeat}, {"steps", o.steps},
                    {"eval_steps", o.eval_steps}, {"warmup", o.warmup}, {"batch_size", o.batch_size},
                    {"data", o.data}, {"device", o.device}, {"threads", o.threads}, {"full", o.full},
                    {"compare_python", o.compare_python}, {"python", o.python}, {"nproc", o.nproc}, {"bucket_mb", o.bucket_mb},
                    {"progress", o.progress}};
  out["train_images"] = result.train_images;
  out["test_images"] = result.test_images;
  out["seconds"] = result.seconds;
  try {
    out["config"] = result.config_json.empty() ? Json() : Json::parse(result.config_json);
  } catch (const Json::parse_error& err) {
    throw std::runtime_error(std::string("bench report: the resolved config is not JSON: ") + err.what());
  }
  out["rows"] = Json::array();
  for (const auto& [name, what] : report_row_descriptions(result)) out["rows"].push_back({{"name", name}, {"description", what}});
  const auto& fields = bench_cell_fields();
  out["cell_fields"] = Json::array();
  for (const auto& f : fields)
    out["cell_fields"].push_back({{"name", f.name}, {"unit", f.unit}, {"group", f.group}, {"about", f.about}});
  out["cells"] = Json::array();
  for (const auto& c : result.cells) {
    Json cell = Json::object();
    for (const auto& f : fields) {
      if (f.multi_rank_only && c.nproc <= 1) continue;
      Json& into = *f.group ? cell[f.group] : cell;
      into[f.name] = std::visit([](const auto& v) { return json_value(v); }, f.get(c));
    }
    out["cells"].push_back(std::move(cell));
  }
  return out.dump(2) + "\n";
}

std::vector<std::string> bench_write_reports(const BenchResult& result, const std::string& prefix) {
  const std::pair<const char*, std::string> files[] = {{".md", bench_markdown(result)},
                                                       {".csv", bench_csv(result)},
                                                       {".json", bench_json(result)},
                                                       {".html", bench_html(result)}};
  std::vector<std::string> paths;
  for (const auto& [extension, text] : files) {
    paths.push_back(prefix + extension);
    out_file_write(paths.back(), text);
  }
  return paths;
}

} // namespace fastloop
