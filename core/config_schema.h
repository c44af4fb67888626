#pragma once
// The schema of the run configuration: what each key is, its type, default and allowed values.
// Sections describe their fields once (RunConfig::describe in run_config.h); readers, writers,
// validation, the generated configuration reference and the window's forms all walk that one
// description, so none of them can drift from the others.

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace tb::core {

/// Documentation and constraints of one configuration key (a builder: chain the setters).
class FieldSpec {
 public:
  explicit FieldSpec(std::string doc) : m_doc(std::move(doc)) {}

  FieldSpec& unit(std::string u) {
    m_unit = std::move(u);
    return *this;
  }
  /// Inclusive lower bound; for lists, of every element.
  FieldSpec& min(double v) {
    m_min = v;
    return *this;
  }
  /// Inclusive upper bound; for lists, of every element.
  FieldSpec& max(double v) {
    m_max = v;
    return *this;
  }
  /// Exclusive lower bound (for rates that must be strictly positive).
  FieldSpec& above(double v) {
    m_above = v;
    return *this;
  }
  /// Allowed values of a string key (or of every element of a string list).
  FieldSpec& choices(std::vector<std::string> c) {
    m_choices = std::move(c);
    return *this;
  }
  /// Required length of a list.
  FieldSpec& length(int n) {
    m_length = n;
    return *this;
  }

  const std::string& doc() const { return m_doc; }
  const std::string& unitName() const { return m_unit; }
  const std::optional<double>& minValue() const { return m_min; }
  const std::optional<double>& maxValue() const { return m_max; }
  const std::optional<double>& aboveValue() const { return m_above; }
  const std::vector<std::string>& allowed() const { return m_choices; }
  const std::optional<int>& requiredLength() const { return m_length; }

 private:
  std::string m_doc;
  std::string m_unit;
  std::optional<double> m_min;
  std::optional<double> m_max;
  std::optional<double> m_above;
  std::vector<std::string> m_choices;
  std::optional<int> m_length;
};

enum class FieldType { Bool, Int, Number, String, IntList, NumberList, StringList, LayerList };

/// Name of a type as written in messages and documents ("integer", "list of integers", ...).
const char* fieldTypeName(FieldType type);

/// One leaf key of the configuration, e.g. path "train.batch_size".
struct FieldInfo {
  std::string path;
  FieldType type;
  nlohmann::ordered_json default_value;
  FieldSpec spec;
};

/// Every leaf key of RunConfig in document order, with its default.
std::vector<FieldInfo> configSchema();

/// The section paths ("data", "model", "model.quantizer", ...) in document order.
std::vector<std::string> configSections();

}  // namespace tb::core
