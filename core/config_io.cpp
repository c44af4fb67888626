#include "core/config_io.h"

#include "core/detail/config_values.h"
#include "core/event_protocol.h"
#include "core/version.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace tb::core {
namespace {

using detail::joinPath;
using detail::Json;

// Fills a RunConfig from a (partial) document; records type errors and unknown keys.
class JsonReader {
 public:
  JsonReader(const Json& root, std::vector<ConfigError>& errors) : m_errors(errors) {
    m_stack.push_back(&root);
  }

  template <class T>
  void field(const char* key, T& value, const FieldSpec&) {
    m_known.back().push_back(key);
    const Json* obj = m_stack.back();
    if (obj == nullptr) return;
    auto it = obj->find(key);
    if (it == obj->end()) return;
    std::vector<detail::ValueError> errs;
    detail::readValue(*it, joinPath(m_prefix, key), value, errs);
    for (auto& e : errs) m_errors.push_back({e.path, e.message});
  }

  template <class S>
  void section(const char* key, S& sec) {
    m_known.back().push_back(key);
    const Json* obj = m_stack.back();
    const Json* child = nullptr;
    const std::string path = joinPath(m_prefix, key);
    if (obj != nullptr) {
      auto it = obj->find(key);
      if (it != obj->end()) {
        if (it->is_object()) {
          child = &*it;
        } else {
          m_errors.push_back({path, "expected an object, got " + detail::describeJson(*it)});
        }
      }
    }
    const std::string saved = m_prefix;
    m_prefix = path;
    enter(child);
    sec.describe(*this);
    leave();
    m_prefix = saved;
  }

  void enter(const Json* obj) {
    m_stack.push_back(obj);
    m_known.emplace_back();
  }

  // Unknown keys of the object being left, with a suggestion among its known keys.
  void leave() {
    const Json* obj = m_stack.back();
    const auto& known = m_known.back();
    if (obj != nullptr) {
      for (auto it = obj->begin(); it != obj->end(); ++it) {
        if (std::find(known.begin(), known.end(), it.key()) != known.end()) continue;
        std::string message = "unknown key";
        if (auto guess = closestMatch(it.key(), known))
          message += " (did you mean \"" + *guess + "\"?)";
        m_errors.push_back({joinPath(m_prefix, it.key()), message});
      }
    }
    m_stack.pop_back();
    m_known.pop_back();
  }

 private:
  std::vector<ConfigError>& m_errors;
  std::vector<const Json*> m_stack;
  std::vector<std::vector<std::string>> m_known;
  std::string m_prefix;
};

class JsonWriter {
 public:
  explicit JsonWriter(Json& out) { m_stack.push_back(&out); }

  template <class T>
  void field(const char* key, T& value, const FieldSpec&) {
    (*m_stack.back())[key] = detail::valueToJson(value);
  }
  template <class S>
  void section(const char* key, S& sec) {
    Json& child = (*m_stack.back())[key];
    child = Json::object();
    m_stack.push_back(&child);
    sec.describe(*this);
    m_stack.pop_back();
  }

 private:
  std::vector<Json*> m_stack;
};

// Leaf paths and values, for comparing two configurations.
class LeafCollector {
 public:
  template <class T>
  void field(const char* key, T& value, const FieldSpec&) {
    m_leaves.emplace_back(joinPath(m_prefix, key), detail::valueToJson(value));
  }
  template <class S>
  void section(const char* key, S& sec) {
    const std::string saved = m_prefix;
    m_prefix = joinPath(m_prefix, key);
    sec.describe(*this);
    m_prefix = saved;
  }
  std::vector<std::pair<std::string, Json>> m_leaves;

 private:
  std::string m_prefix;
};

std::vector<std::pair<std::string, Json>> leaves(const RunConfig& config) {
  RunConfig copy = config;
  LeafCollector c;
  copy.describe(c);
  return std::move(c.m_leaves);
}

}  // namespace

std::string ConfigError::toString() const { return path.empty() ? message : path + ": " + message; }

ConfigLoad parseRunConfig(const Json& doc) {
  ConfigLoad result;
  if (!doc.is_object()) {
    result.errors.push_back(
        {"", "expected a JSON object at the top level, got " + detail::describeJson(doc)});
    return result;
  }
  auto version = doc.find("version");
  if (version != doc.end() && version->is_number() && *version != Json(kConfigSchemaVersion)) {
    result.errors.push_back({"version", "unsupported schema version " + version->dump() +
                                            " (this build reads version " +
                                            std::to_string(kConfigSchemaVersion) + ")"});
    return result;
  }
  JsonReader reader(doc, result.errors);
  reader.enter(&doc);
  result.config.describe(reader);
  reader.leave();
  // Range and cross-key rules only on keys that were read cleanly: a value with the wrong type
  // kept its default, and checking that default would report a problem the user did not write.
  std::set<std::string> bad;
  for (const auto& e : result.errors) bad.insert(e.path);
  for (auto& e : validate(result.config)) {
    if (bad.count(e.path) == 0) result.errors.push_back(std::move(e));
  }
  return result;
}

std::optional<ConfigError> readConfigDocument(std::string_view json_text, Json& doc) {
  if (jsonNestingDepth(json_text, kMaxConfigNestingDepth) > kMaxConfigNestingDepth) {
    return ConfigError{
        "", "JSON nested deeper than " + std::to_string(kMaxConfigNestingDepth) + " levels"};
  }
  try {
    doc = Json::parse(json_text.begin(), json_text.end());
  } catch (const Json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
    // nlohmann's message starts with "[json.exception.parse_error.101] parse error at line..."
    std::string what = e.what();
    const auto pos = what.find("] ");
    return ConfigError{"",
                       "invalid JSON: " + (pos == std::string::npos ? what : what.substr(pos + 2))};
  }
  return std::nullopt;
}

ConfigLoad parseRunConfig(std::string_view json_text) {
  Json doc;
  if (auto error = readConfigDocument(json_text, doc)) {
    ConfigLoad result;
    result.errors.push_back(std::move(*error));
    return result;
  }
  return parseRunConfig(doc);
}

ConfigLoad loadRunConfig(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    ConfigLoad result;
    result.errors.push_back({"", "cannot read " + file.string()});
    return result;
  }
  std::ostringstream text;
  text << in.rdbuf();
  const std::string content = text.str();
  return parseRunConfig(std::string_view(content));
}

Json toJson(const RunConfig& config) {
  Json out = Json::object();
  RunConfig copy = config;
  JsonWriter writer(out);
  copy.describe(writer);
  return out;
}

std::string toJsonText(const RunConfig& config) { return toJson(config).dump(2) + "\n"; }

std::optional<ConfigError> applyOverride(Json& doc, std::string_view assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return ConfigError{
        "", "override \"" + std::string(assignment) + "\" is not of the form key.path=value"};
  }
  const std::string path(assignment.substr(0, eq));
  const std::string text(assignment.substr(eq + 1));
  Json value;
  try {
    value = Json::parse(text);
  } catch (const Json::exception&) {
    value = text;  // bare words (and numbers past double) are strings: --set data.path=/clips
  }
  if (!doc.is_object()) doc = Json::object();
  Json* node = &doc;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    const std::string key =
        path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (key.empty()) return ConfigError{path, "empty key in override path"};
    if (dot == std::string::npos) {
      (*node)[key] = std::move(value);
      return std::nullopt;
    }
    Json& child = (*node)[key];
    if (child.is_null()) child = Json::object();
    if (!child.is_object()) {
      return ConfigError{path.substr(0, dot), "is not a section, cannot set " + path};
    }
    node = &child;
    start = dot + 1;
  }
}

const std::vector<std::string>& resumeSafeKeys() {
  static const std::vector<std::string> k = {
      "train.max_steps", "train.log_every", "train.valid_every", "train.valid_clips",
      "train.sample_every", "train.checkpoint_every", "train.checkpoint_total_limit",
      "train.checkpoint_keep", "train.time_budget_s", "eval.every_steps", "eval.clips",
      "eval.fid_weights", "eval.fvd_weights",
      // Read only when a run starts from step 0.
      "train.init_checkpoint", "data.workers", "data.prefetch", "train.threads",
      // Losses switched on later in a run: the LPIPS network is frozen and read from its files,
      // and the discriminator (loss.adversarial_weight > 0) is in every checkpoint from step 0.
      "loss.discr_start_step", "loss.perceptual_weight", "loss.perceptual_net",
      "loss.lpips_backbone", "loss.lpips_lin", "loss.perceptual_frames",
      // A checkpoint loads at any world size and under either strategy.
      "distributed.strategy", "distributed.backend", "distributed.nproc_per_node",
      "distributed.nnodes", "distributed.node_rank", "distributed.master_addr",
      "distributed.master_port", "distributed.gpu_ids", "distributed.timeout_s",
      "distributed.bucket_mb"};
  return k;
}

std::vector<std::string> changedKeys(const RunConfig& a, const RunConfig& b) {
  const auto la = leaves(a);
  const auto lb = leaves(b);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < la.size() && i < lb.size(); ++i) {
    if (la[i].second != lb[i].second) out.push_back(la[i].first);
  }
  return out;
}

// Optimal string alignment distance: Levenshtein plus adjacent transpositions ("trian" is one
// edit from "train"), the typos people make most.
std::size_t editDistance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size();
  const std::size_t m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

std::optional<std::string> closestMatch(std::string_view word,
                                        const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  for (const auto& c : candidates) {
    const std::size_t d = editDistance(word, c);
    if (!best || d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  // A third of the word's length, at least one edit: "bach_size" -> "batch_size", but not
  // "foo" -> "lr".
  const std::size_t allowed = std::max<std::size_t>(1, word.size() / 3);
  if (best && best_distance <= allowed) return best;
  return std::nullopt;
}

}  // namespace tb::core
