#include "core/compare_report.h"

#include "core/detail/document_json.h"

namespace tb::core {

std::vector<std::string> CompareReport::tokenizerNames() const {
  std::vector<std::string> names;
  names.reserve(tokenizers.size());
  for (const CompareTokenizer& tokenizer : tokenizers) names.push_back(tokenizer.name);
  return names;
}

std::string CompareReport::repeatedTokenizerName() const {
  for (std::size_t i = 0; i < tokenizers.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (tokenizers[j].name == tokenizers[i].name) return tokenizers[i].name;
    }
  }
  return {};
}

nlohmann::ordered_json toJson(const CompareReport& report) {
  return detail::writeVersionedDocument(report, kCompareReportVersion);
}

std::string toJsonText(const CompareReport& report) { return toJson(report).dump(2) + "\n"; }

std::optional<CompareReport> parseCompareReport(std::string_view text, std::string* error) {
  return detail::readVersionedDocument<CompareReport>(text, kCompareReportVersion, "compare report",
                                                      error);
}

}  // namespace tb::core
