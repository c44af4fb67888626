#include "core/yaml_subset.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>
#include <vector>

namespace tb::core {
namespace {

using Json = nlohmann::json;

struct Line {
  int number = 0;    ///< 1-based line in the file
  int indent = 0;    ///< leading spaces
  std::string text;  ///< without indentation, comment and trailing spaces
};

std::string trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return std::string(s.substr(b, e - b));
}

class Parser {
 public:
  Parser(std::string_view text, std::string source) : m_source(std::move(source)) { split(text); }

  Json document() {
    if (m_lines.empty()) return nullptr;
    Json root = block(m_lines.front().indent);
    if (m_pos < m_lines.size())
      fail(m_lines[m_pos].number, "indentation does not line up with any level above");
    return root;
  }

 private:
  [[noreturn]] void fail(int line, const std::string& what) const {
    throw YamlError(m_source + ":" + std::to_string(line) + ": " + what);
  }

  /// Lines with content, comments cut (a '#' at the start or after a space, outside quotes).
  void split(std::string_view text) {
    int number = 0;
    std::size_t start = 0;
    while (start <= text.size()) {
      const std::size_t end = std::min(text.find('\n', start), text.size());
      const std::string_view raw = text.substr(start, end - start);
      start = end + 1;
      ++number;
      std::size_t indent = 0;
      while (indent < raw.size() && raw[indent] == ' ') ++indent;
      if (indent < raw.size() && raw[indent] == '\t') fail(number, "a tab in the indentation");
      std::string content;
      char quote = 0;
      for (std::size_t i = indent; i < raw.size(); ++i) {
        const char c = raw[i];
        if (quote) {
          if (c == quote) quote = 0;
        } else if (c == '"' || c == '\'') {
          quote = c;
        } else if (c == '#' && (i == indent || raw[i - 1] == ' ' || raw[i - 1] == '\t')) {
          break;
        }
        content += c;
      }
      content = trim(content);
      if (content.empty()) continue;
      if (content == "---" && m_lines.empty()) continue;
      if (content == "---" || content == "...")
        fail(number, "a second document (\"" + content + "\"): one document per file");
      m_lines.push_back({number, static_cast<int>(indent), content});
      if (start > text.size()) break;
    }
  }

  /// The collection whose lines start at m_pos with exactly `indent` spaces.
  Json block(int indent) {
    const Line& first = m_lines[m_pos];
    if (first.text == "-" || first.text.rfind("- ", 0) == 0) return sequence(indent);
    return mapping(indent);
  }

  Json sequence(int indent) {
    Json out = Json::array();
    while (m_pos < m_lines.size() && m_lines[m_pos].indent == indent &&
           (m_lines[m_pos].text == "-" || m_lines[m_pos].text.rfind("- ", 0) == 0)) {
      Line& line = m_lines[m_pos];
      if (line.text == "-") {
        ++m_pos;
        out.push_back(childOf(line, indent));
        continue;
      }
      // "- rest": rest is a scalar, a flow collection, or the first key of a mapping whose
      // other keys are indented to rest's column.
      std::size_t skip = 1;
      while (skip < line.text.size() && line.text[skip] == ' ') ++skip;
      const std::string rest = line.text.substr(skip);
      if (keyEnd(rest) != std::string::npos) {
        line.indent += static_cast<int>(skip);
        line.text = rest;
        out.push_back(mapping(line.indent));
      } else {
        ++m_pos;
        out.push_back(inlineValue(rest, line.number));
      }
    }
    return out;
  }

  Json mapping(int indent) {
    Json out = Json::object();
    while (m_pos < m_lines.size() && m_lines[m_pos].indent == indent) {
      const Line& line = m_lines[m_pos];
      if (line.text.rfind("- ", 0) == 0 || line.text == "-")
        fail(line.number, "a sequence item where a key of the mapping above was expected");
      const std::size_t colon = keyEnd(line.text);
      if (colon == std::string::npos)
        fail(line.number, "expected \"key: value\", got \"" + line.text + "\"");
      std::string key = trim(line.text.substr(0, colon));
      if (!key.empty() && (key.front() == '"' || key.front() == '\''))
        key = inlineValue(key, line.number).get<std::string>();
      if (out.contains(key)) fail(line.number, "the key \"" + key + "\" is given twice");
      const std::string value = trim(line.text.substr(colon + 1));
      ++m_pos;
      out[key] = value.empty() ? childOf(line, indent) : inlineValue(value, line.number);
    }
    return out;
  }

  /// The block under a "key:" or "-" line: more indented lines, or a sequence at the same
  /// indentation (YAML lets a mapping's list items start at the key's column); null when none.
  Json childOf(const Line& parent, int indent) {
    if (m_pos >= m_lines.size()) return nullptr;
    const Line& next = m_lines[m_pos];
    if (next.indent > indent) return block(next.indent);
    const bool item = next.text == "-" || next.text.rfind("- ", 0) == 0;
    if (next.indent == indent && item && parent.text != "-" && parent.text.rfind("- ", 0) != 0)
      return sequence(indent);
    return nullptr;
  }

  /// Position of the ':' that ends a mapping key in `text` (followed by a space or the end,
  /// outside quotes and flow brackets), or npos.
  static std::size_t keyEnd(const std::string& text) {
    char quote = 0;
    int depth = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (quote) {
        if (c == quote) quote = 0;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '[' || c == '{') {
        ++depth;
      } else if (c == ']' || c == '}') {
        --depth;
      } else if (c == ':' && depth == 0 && (i + 1 == text.size() || text[i + 1] == ' ')) {
        return i;
      }
    }
    return std::string::npos;
  }

  Json inlineValue(const std::string& text, int line) {
    if (text.empty()) return nullptr;
    const char c = text.front();
    if (c == '&' || c == '*') fail(line, "anchors and aliases are not read (\"" + text + "\")");
    if (c == '!') fail(line, "tags are not read (\"" + text + "\")");
    if (c == '|' || c == '>')
      fail(line, "block scalars (| and >) are not read: write the value on one line");
    if (c == '[' || c == '{') {
      std::size_t pos = 0;
      Json value = flow(text, pos, line);
      skipSpaces(text, pos);
      if (pos != text.size()) fail(line, "text after the closing bracket: \"" + text + "\"");
      return value;
    }
    return scalar(text, line);
  }

  static void skipSpaces(const std::string& text, std::size_t& pos) {
    while (pos < text.size() && text[pos] == ' ') ++pos;
  }

  /// A flow collection starting at text[pos]; leaves pos after its closing bracket.
  Json flow(const std::string& text, std::size_t& pos, int line) {
    const char open = text[pos++];
    const char close = open == '[' ? ']' : '}';
    Json out = open == '[' ? Json::array() : Json::object();
    for (;;) {
      skipSpaces(text, pos);
      if (pos >= text.size())
        fail(line, std::string("no closing '") + close +
                       "' on this line (flow collections must fit on one line)");
      if (text[pos] == close) {
        ++pos;
        return out;
      }
      Json value;
      std::string key;
      if (open == '{') {
        const std::size_t colon = text.find(':', pos);
        if (colon == std::string::npos) fail(line, "a flow mapping entry without ':'");
        key = trim(text.substr(pos, colon - pos));
        pos = colon + 1;
        skipSpaces(text, pos);
      }
      if (pos < text.size() && (text[pos] == '[' || text[pos] == '{')) {
        value = flow(text, pos, line);
      } else {
        std::size_t end = pos;
        char quote = 0;
        while (end < text.size() && (quote || (text[end] != ',' && text[end] != close))) {
          if (quote && text[end] == quote)
            quote = 0;
          else if (!quote && (text[end] == '"' || text[end] == '\''))
            quote = text[end];
          ++end;
        }
        value = scalar(trim(text.substr(pos, end - pos)), line);
        pos = end;
      }
      if (open == '[')
        out.push_back(value);
      else
        out[key] = value;
      skipSpaces(text, pos);
      if (pos < text.size() && text[pos] == ',') ++pos;
    }
  }

  Json scalar(const std::string& text, int line) {
    if (text.size() >= 2 && text.front() == '\'' && text.back() == '\'') {
      std::string out;
      for (std::size_t i = 1; i + 1 < text.size(); ++i) {
        out += text[i];
        if (text[i] == '\'' && text[i + 1] == '\'') ++i;  // '' is one quote
      }
      return out;
    }
    if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
      std::string out;
      for (std::size_t i = 1; i + 1 < text.size(); ++i) {
        if (text[i] != '\\') {
          out += text[i];
          continue;
        }
        const char e = text[++i];
        out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
      }
      return out;
    }
    if (text.front() == '"' || text.front() == '\'') fail(line, "an unclosed quote: " + text);
    static const std::regex kNull("~|null|Null|NULL");
    static const std::regex kTrue("yes|Yes|YES|true|True|TRUE|on|On|ON");
    static const std::regex kFalse("no|No|NO|false|False|FALSE|off|Off|OFF");
    static const std::regex kInt("[-+]?(0|[1-9][0-9_]*)");
    static const std::regex kFloat(
        "[-+]?([0-9][0-9_]*)?\\.[0-9_]*([eE][-+]?[0-9]+)?|[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+");
    static const std::regex kSpecial("[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|NAN)");
    if (std::regex_match(text, kNull)) return nullptr;
    if (std::regex_match(text, kTrue)) return true;
    if (std::regex_match(text, kFalse)) return false;
    std::string digits;
    for (char c : text)
      if (c != '_') digits += c;
    if (std::regex_match(text, kInt)) {
      errno = 0;
      const long long v = std::strtoll(digits.c_str(), nullptr, 10);
      if (errno == ERANGE) fail(line, "an integer out of range: " + text);
      return v;
    }
    if (std::regex_match(text, kFloat) && digits != "." && digits != "-." && digits != "+.")
      return std::strtod(digits.c_str(), nullptr);
    if (std::regex_match(text, kSpecial)) {
      if (text.find("nan") != std::string::npos || text.find("NaN") != std::string::npos ||
          text.find("NAN") != std::string::npos)
        return std::numeric_limits<double>::quiet_NaN();
      return text.front() == '-' ? -std::numeric_limits<double>::infinity()
                                 : std::numeric_limits<double>::infinity();
    }
    return text;
  }

  std::string m_source;
  std::vector<Line> m_lines;
  std::size_t m_pos = 0;
};

}  // namespace

nlohmann::json parseYamlSubset(std::string_view text, const std::string& source) {
  return Parser(text, source).document();
}

nlohmann::json readYamlSubsetFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw YamlError(path.string() + ": cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw YamlError(path.string() + ": cannot read");
  return parseYamlSubset(text.str(), path.string());
}

}  // namespace tb::core
