#pragma once
// How one field of a core document (an event, data-info, model-info, the compare report,
// reference.json) is written and read. Documents describe their fields once, in a
// `template <class V> void describe(V& v)` member that calls
//
//   v.field("name", member [, DocField(...)])   a value, a described struct, or a list of them
//   v.object("name", [&](auto& o) { ... })      an object whose keys are members of this struct
//   v.keyed("name", list, keys, "noun")         list[k] written under keys[k] in one object
//   v.fieldOr("name", member, fallback)         read as `fallback` when absent, always written
//   v.require(condition, "message")             a reader refuses the document when false
//
// core/detail/document_json.h walks that description to write and read JSON; the document's
// key order is the order of the calls. (The run configuration has its own, richer description:
// core/run_config.h.)

#include <string_view>

namespace tb::core {

/// Options of one document field (a builder: chain the setters). The default: required on read,
/// always written. Texts are kept as views: pass string literals.
class DocField {
 public:
  enum class Presence {
    Required,   ///< read: must be present; write: always
    Optional,   ///< read: may be absent (the member keeps its default); write: always
    OmitUnset,  ///< as Optional, but written only when set: non-empty text or list, number > 0
  };

  /// May be absent on read; the member keeps its default.
  DocField& optional() {
    m_presence = Presence::Optional;
    return *this;
  }
  /// May be absent on read, and left out on write while unset (empty, or a number <= 0).
  DocField& omitUnset() {
    m_presence = Presence::OmitUnset;
    return *this;
  }
  /// Doubles: a non-finite value is written as null (JSON has no NaN), null reads as NaN. In a
  /// list of numbers any element that is not a number reads as NaN.
  DocField& nanAsNull() {
    m_nanAsNull = true;
    return *this;
  }
  /// Strings: the values a reader accepts, '|'-separated ("completed|stopped|failed").
  DocField& oneOf(std::string_view allowed) {
    m_allowed = allowed;
    return *this;
  }
  /// Lists of objects: how the refusal of an element that is not an object names it ("a clip"
  /// gives `a clip is not an object`); by default `"clips" holds a non-object`.
  DocField& element(std::string_view noun) {
    m_element = noun;
    return *this;
  }

  Presence presence() const { return m_presence; }
  bool isNanAsNull() const { return m_nanAsNull; }
  std::string_view allowed() const { return m_allowed; }
  std::string_view elementNoun() const { return m_element; }

 private:
  Presence m_presence = Presence::Required;
  bool m_nanAsNull = false;
  std::string_view m_allowed;
  std::string_view m_element;
};

}  // namespace tb::core
