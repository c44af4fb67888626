#include "core/config_schema.h"

#include "core/detail/config_values.h"
#include "core/run_config.h"

namespace tb::core {
namespace {

class SchemaCollector {
 public:
  template <class T>
  void field(const char* key, T& value, const FieldSpec& spec) {
    m_fields.push_back(FieldInfo{detail::joinPath(m_prefix, key), detail::typeOf(value),
                                 detail::valueToJson(value), spec});
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

}  // namespace tb::core
