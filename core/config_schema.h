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

struct RunConfig;

/// When a key matters, for keys that only matter for some values of others (`loss.r1_every` only
/// with the GAN and R1 on): the Setup page greys a key out while its condition does not hold.
struct AppliesWhen {
  bool (*holds)(const RunConfig&);
  const char* text;  ///< the condition in words: "loss.adversarial_weight > 0"
};

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
  /// The group of related keys it is shown and documented with ("Optimisation").
  FieldSpec& group(std::string g) {
    m_group = std::move(g);
    return *this;
  }
  /// Its name in forms when the words of the key do not say it (fieldLabel() otherwise).
  FieldSpec& label(std::string l) {
    m_label = std::move(l);
    return *this;
  }
  FieldSpec& appliesWhen(AppliesWhen condition) {
    m_applies = condition;
    return *this;
  }

  const std::string& doc() const { return m_doc; }
  const std::string& unitName() const { return m_unit; }
  const std::optional<double>& minValue() const { return m_min; }
  const std::optional<double>& maxValue() const { return m_max; }
  const std::optional<double>& aboveValue() const { return m_above; }
  const std::vector<std::string>& allowed() const { return m_choices; }
  const std::optional<int>& requiredLength() const { return m_length; }
  const std::string& groupName() const { return m_group; }
  const std::string& labelText() const { return m_label; }
  const std::optional<AppliesWhen>& condition() const { return m_applies; }

 private:
  std::string m_doc;
  std::string m_unit;
  std::optional<double> m_min;
  std::optional<double> m_max;
  std::optional<double> m_above;
  std::vector<std::string> m_choices;
  std::optional<int> m_length;
  std::string m_group;
  std::string m_label;
  std::optional<AppliesWhen> m_applies;
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

/// A key's name in forms: its FieldSpec::label, else the words of its last path part with the
/// abbreviations spelled out: "train.discr_lr" -> "Discriminator learning rate",
/// "data.num_frames" -> "Number of frames", "train.time_budget_s" -> "Time budget".
std::string fieldLabel(const FieldInfo& field);

/// The group a key belongs to: its FieldSpec::group, else "Other: <first path part>".
std::string fieldGroup(const FieldInfo& field);

/// Whether the key matters in `config` (true for keys without an AppliesWhen).
bool fieldApplies(const FieldInfo& field, const RunConfig& config);

}  // namespace tb::core
