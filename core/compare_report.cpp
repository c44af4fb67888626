#include "core/compare_report.h"

#include "core/detail/document_fields.h"

#include <cmath>
#include <stdexcept>

namespace tb::core {
namespace {

using detail::Json;

// A score as written: non-finite numbers are null (JSON has no NaN or infinity).
Json scoreValue(double value) { return std::isfinite(value) ? Json(value) : Json(nullptr); }

Json scoresJson(const CompareScores& scores) {
  Json j = Json::object();
  j["psnr"] = scoreValue(scores.psnr);
  j["ssim"] = scoreValue(scores.ssim);
  if (scores.lpips) j["lpips"] = scoreValue(*scores.lpips);
  return j;
}

// A score as read: a number, or null for one that was not finite.
double readScore(const Json& object, const char* key) {
  const Json& value = detail::documentField(object, key, &Json::is_primitive, "a number");
  if (value.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (!value.is_number()) throw std::runtime_error(std::string("\"") + key + "\" is not a number");
  return value.get<double>();
}

CompareScores readScores(const Json& object) {
  CompareScores scores;
  scores.psnr = readScore(object, "psnr");
  scores.ssim = readScore(object, "ssim");
  if (object.contains("lpips")) scores.lpips = readScore(object, "lpips");
  return scores;
}

std::vector<double> readNumbers(const Json& object, const char* key) {
  std::vector<double> values;
  for (const Json& v : detail::documentField(object, key, &Json::is_array, "an array")) {
    values.push_back(v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN());
  }
  return values;
}

Json numbersJson(const std::vector<double>& values) {
  Json j = Json::array();
  for (double v : values) j.push_back(scoreValue(v));
  return j;
}

// An integer field that reports before it may lack.
int optionalInteger(const Json& object, const char* key, int fallback) {
  return object.contains(key) ? static_cast<int>(detail::documentInteger(object, key)) : fallback;
}

// The object `object[key]` keyed by tokenizer name, as a list in `tokenizers`' order.
template <typename Value, typename Read>
std::vector<Value> byTokenizer(const Json& object, const char* key,
                               const std::vector<CompareTokenizer>& tokenizers, Read read) {
  const Json& byName = detail::documentField(object, key, &Json::is_object, "an object");
  std::vector<Value> values;
  for (const CompareTokenizer& tokenizer : tokenizers) {
    const auto it = byName.find(tokenizer.name);
    if (it == byName.end()) {
      throw std::runtime_error(std::string("\"") + key + "\" has nothing for tokenizer \"" +
                               tokenizer.name + "\"");
    }
    if (!it->is_object()) {
      throw std::runtime_error(std::string("\"") + key + "\": \"" + tokenizer.name +
                               "\" is not an object");
    }
    values.push_back(read(*it));
  }
  return values;
}

}  // namespace

Json toJson(const CompareReport& report) {
  Json j;
  j["version"] = kCompareReportVersion;
  Json tokenizers = Json::array();
  for (const CompareTokenizer& t : report.tokenizers) {
    Json entry = {{"name", t.name},
                  {"checkpoint", t.checkpoint},
                  {"weights", t.weights},
                  {"model_kind", t.model_kind}};
    if (!t.label.empty()) entry["label"] = t.label;
    tokenizers.push_back(std::move(entry));
  }
  j["tokenizers"] = std::move(tokenizers);
  Json clips = Json::array();
  for (const CompareClip& c : report.clips) {
    Json metrics = Json::object();
    for (std::size_t k = 0; k < c.scores.size() && k < report.tokenizers.size(); ++k) {
      metrics[report.tokenizers[k].name] = scoresJson(c.scores[k]);
    }
    clips.push_back({{"clip", c.index},
                     {"source", c.source},
                     {"frames", c.frames},
                     {"width", c.width},
                     {"height", c.height},
                     {"metrics", std::move(metrics)}});
  }
  j["clips"] = std::move(clips);
  Json mean = Json::object();
  for (std::size_t k = 0; k < report.mean.size() && k < report.tokenizers.size(); ++k) {
    mean[report.tokenizers[k].name] = scoresJson(report.mean[k]);
  }
  j["mean"] = std::move(mean);
  if (!report.per_frame.empty()) {
    Json perFrame = Json::object();
    for (std::size_t k = 0; k < report.per_frame.size() && k < report.tokenizers.size(); ++k) {
      perFrame[report.tokenizers[k].name] = {{"psnr", numbersJson(report.per_frame[k].psnr)},
                                             {"ssim", numbersJson(report.per_frame[k].ssim)}};
    }
    j["per_frame"] = std::move(perFrame);
  }
  return j;
}

std::string toJsonText(const CompareReport& report) { return toJson(report).dump(2) + "\n"; }

std::optional<CompareReport> parseCompareReport(std::string_view text, std::string* error) {
  try {
    const Json doc = detail::readDocumentObject(text, kCompareReportVersion);
    CompareReport report;
    for (const Json& t : detail::documentField(doc, "tokenizers", &Json::is_array, "an array")) {
      if (!t.is_object()) throw std::runtime_error("a tokenizer is not an object");
      CompareTokenizer tokenizer;
      tokenizer.name = detail::documentString(t, "name");
      if (tokenizer.name.empty()) throw std::runtime_error("a tokenizer has an empty \"name\"");
      for (const CompareTokenizer& other : report.tokenizers) {
        if (other.name == tokenizer.name) {
          throw std::runtime_error("two tokenizers are named \"" + tokenizer.name + "\"");
        }
      }
      tokenizer.checkpoint = detail::documentString(t, "checkpoint");
      tokenizer.weights = detail::documentString(t, "weights");
      tokenizer.model_kind = detail::documentString(t, "model_kind");
      if (t.contains("label")) tokenizer.label = detail::documentString(t, "label");
      report.tokenizers.push_back(std::move(tokenizer));
    }
    if (report.tokenizers.empty()) throw std::runtime_error("\"tokenizers\" is empty");
    for (const Json& c : detail::documentField(doc, "clips", &Json::is_array, "an array")) {
      if (!c.is_object()) throw std::runtime_error("a clip is not an object");
      CompareClip clip;
      clip.index = optionalInteger(c, "clip", static_cast<int>(report.clips.size()));
      if (c.contains("source")) clip.source = detail::documentString(c, "source");
      clip.frames = optionalInteger(c, "frames", 0);
      clip.width = optionalInteger(c, "width", 0);
      clip.height = optionalInteger(c, "height", 0);
      clip.scores = byTokenizer<CompareScores>(c, "metrics", report.tokenizers, readScores);
      report.clips.push_back(std::move(clip));
    }
    report.mean = byTokenizer<CompareScores>(doc, "mean", report.tokenizers, readScores);
    if (doc.contains("per_frame")) {
      report.per_frame = byTokenizer<CompareFrameMeans>(
          doc, "per_frame", report.tokenizers, [](const Json& object) {
            return CompareFrameMeans{readNumbers(object, "psnr"), readNumbers(object, "ssim")};
          });
    }
    return report;
  } catch (const std::exception& e) {
    if (error != nullptr) *error = std::string("compare report: ") + e.what();
    return std::nullopt;
  }
}

}  // namespace tb::core
