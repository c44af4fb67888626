#include "core/config_schema.h"

#include "core/detail/config_values.h"
#include "core/run_config.h"

#include <map>

namespace tb::core {
namespace {

class SchemaCollector {
 public:
  template <class T>
  void field(const char* key, T& value, const FieldSpec& spec) {
    m_fields.push_back(FieldInfo{detail::joinPath(m_prefix, key), detail::typeOf(value),
                                 detail::valueToJson(value), detail::specOf(value, spec)});
  }
  template <class S>
  void section(const char* key, S& sec) {
    const std::string saved = m_prefix;
    m_prefix = detail::joinPath(m_prefix, key);
    m_sections.push_back(m_prefix);
    sec.describe(*this);
    m_prefix = saved;
  }

  std::vector<FieldInfo> m_fields;
  std::vector<std::string> m_sections;

 private:
  std::string m_prefix;
};

SchemaCollector collect() {
  RunConfig defaults;
  SchemaCollector c;
  defaults.describe(c);
  return c;
}

}  // namespace

const char* fieldTypeName(FieldType type) {
  switch (type) {
    case FieldType::Bool:
      return "boolean";
    case FieldType::Int:
      return "integer";
    case FieldType::Number:
      return "number";
    case FieldType::String:
      return "string";
    case FieldType::IntList:
      return "list of integers";
    case FieldType::NumberList:
      return "list of numbers";
    case FieldType::StringList:
      return "list of strings";
    case FieldType::LayerList:
      return "layer list";
  }
  return "value";
}

std::vector<FieldInfo> configSchema() { return collect().m_fields; }

std::vector<std::string> configSections() { return collect().m_sections; }

std::string fieldLabel(const FieldInfo& field) {
  if (!field.spec.labelText().empty()) return field.spec.labelText();
  static const std::map<std::string, std::string> kWords = {
      {"lr", "learning rate"},
      {"discr", "discriminator"},
      {"num", "number of"},
      {"nproc", "processes"},
      {"nnodes", "nodes"},
      {"addr", "address"},
      {"attn", "attention"},
      {"conv", "convolution"},
      {"recon", "reconstruction"},
      {"mult", "multiplier"},
      {"ff", "feed-forward"},
      {"mem", "memory"},
      {"kv", "key/values"},
      {"cond", "conditioning"},
      {"ema", "EMA"},
      {"fsq", "FSQ"},
      {"vq", "VQ"},
      {"lfq", "LFQ"},
      {"r1", "R1"},
      {"lecam", "LeCAM"},
      {"lpips", "LPIPS"},
      {"gpu", "GPU"},
      {"ids", "IDs"},
      {"l2", "L2"},
      {"adam", "Adam"},
      {"hflip", "horizontal flip"},
      {"patchgan", "PatchGAN"},
      {"grad", "gradient"},
      {"accum", "accumulation"},
      {"nan", "NaN"},
      {"res", "residual"},
      {"fid", "rFID"},
      {"fvd", "rFVD"},
  };
  const std::size_t dot = field.path.rfind('.');
  const std::string key = dot == std::string::npos ? field.path : field.path.substr(dot + 1);
  std::vector<std::string> words;
  for (std::size_t start = 0;;) {
    const std::size_t end = key.find('_', start);
    words.push_back(key.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  // "time_budget_s" and "bucket_mb" end with their unit, which a form shows anyway.
  if (words.size() > 1 &&
      (words.back() == "s" || (words.back() == "mb" && field.spec.unitName() == "MiB"))) {
    words.pop_back();
  }
  // "num_frames" reads "Number of frames"; inside a name ("attn_num_mem_kv") "num" says nothing.
  for (std::size_t i = 1; i < words.size();) {
    if (words[i] == "num") {
      words.erase(words.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  std::string label;
  for (const std::string& word : words) {
    const auto spelled = kWords.find(word);
    if (!label.empty()) label += ' ';
    label += spelled == kWords.end() ? word : spelled->second;
  }
  // Capitalised, unless it starts with a term spelled in mixed case ("rFID weights").
  const bool mixed = label.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") < label.find(' ');
  if (!label.empty() && !mixed && label.front() >= 'a' && label.front() <= 'z')
    label.front() -= 'a' - 'A';
  return label;
}

std::string fieldGroup(const FieldInfo& field) {
  if (!field.spec.groupName().empty()) return field.spec.groupName();
  return "Other: " + field.path.substr(0, field.path.find('.'));
}

bool fieldApplies(const FieldInfo& field, const RunConfig& config) {
  return !field.spec.condition() || field.spec.condition()->holds(config);
}

}  // namespace tb::core
