#include "core/config_reference.h"

#include "core/presets.h"
#include "core/version.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace tb::core {
namespace {

// Shortest text that reads back as the same double; integers without a decimal point.
std::string formatNumber(double v) {
  char buffer[64];
  if (std::floor(v) == v && std::fabs(v) < 1e15) {
    std::snprintf(buffer, sizeof buffer, "%.0f", v);
    return buffer;
  }
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof buffer, "%.*g", precision, v);
    if (std::strtod(buffer, nullptr) == v) break;
  }
  return buffer;
}

bool isList(FieldType type) {
  return type == FieldType::IntList || type == FieldType::NumberList ||
         type == FieldType::StringList || type == FieldType::LayerList;
}

void appendCompactJson(const nlohmann::ordered_json& value, std::string& out) {
  if (value.is_array()) {
    out += '[';
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (i > 0) out += ", ";
      appendCompactJson(value[i], out);
    }
    out += ']';
  } else {
    out += value.dump();
  }
}

// Markdown table cells: a '|' would end the cell, a newline the row.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string parentOf(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? std::string() : path.substr(0, dot);
}

// One sentence under each section heading. Sections without an entry get none.
const std::map<std::string, std::string>& sectionIntroductions() {
  static const std::map<std::string, std::string> intro = {
      {"", "Keys at the top of the document."},
      {"data", "Where clips come from and how they are cut, resized and loaded."},
      {"model", "The tokenizer: MAGVIT-v2 (causal 3-D) or VQGAN (2-D, frame by frame)."},
      {"model.quantizer", "How encoder outputs become discrete tokens."},
      {"model.vqgan", "The taming-style encoder and decoder (used when `model.kind` is `vqgan`)."},
      {"model.discriminator",
       "The GAN discriminator (trained when `loss.adversarial_weight` > 0)."},
      {"loss", "Reconstruction, perceptual and adversarial losses and their weights."},
      {"train", "Optimisation, schedule, precision, EMA, validation, samples and checkpoints."},
      {"eval",
       "rFID and rFVD during training, as `evaluate` computes them (see "
       "[evaluation.md](evaluation.md))."},
      {"distributed",
       "Processes, nodes and the c10d rendezvous (see [distributed.md](distributed.md))."},
  };
  return intro;
}

void appendTable(const std::string& section, const std::vector<FieldInfo>& fields,
                 std::ostringstream& out) {
  out << "## " << (section.empty() ? std::string("Top level") : "`" + section + "`") << "\n\n";
  const auto& intro = sectionIntroductions();
  if (const auto it = intro.find(section); it != intro.end()) out << it->second << "\n\n";
  out << "| key | type | default | range | unit | description |\n"
      << "|---|---|---|---|---|---|\n";
  for (const auto& f : fields) {
    if (parentOf(f.path) != section) continue;
    const std::string range = describeRange(f);
    std::string doc = f.spec.doc();
    if (const auto& when = f.spec.condition())
      doc += " (used only when " + std::string(when->text) + ")";
    out << "| `" << f.path << "` | " << fieldTypeName(f.type) << " | `" << cell(describeDefault(f))
        << "` | " << cell(range) << " | " << cell(f.spec.unitName()) << " | " << cell(doc)
        << " |\n";
  }
  out << "\n";
}

}  // namespace

std::string describeRange(const FieldInfo& field) {
  const FieldSpec& s = field.spec;
  std::vector<std::string> parts;
  if (!s.allowed().empty()) {
    std::string choices;
    for (const auto& c : s.allowed()) {
      if (!choices.empty()) choices += ", ";
      choices += "`" + c + "`";
    }
    parts.push_back(choices);
  }
  const auto& lo = s.minValue();
  const auto& hi = s.maxValue();
  const auto& above = s.aboveValue();
  if (lo && hi) {
    parts.push_back(formatNumber(*lo) + " to " + formatNumber(*hi));
  } else if (above && hi) {
    parts.push_back("> " + formatNumber(*above) + ", <= " + formatNumber(*hi));
  } else {
    if (lo) parts.push_back(">= " + formatNumber(*lo));
    if (above) parts.push_back("> " + formatNumber(*above));
    if (hi) parts.push_back("<= " + formatNumber(*hi));
  }
  std::string text;
  for (const auto& p : parts) {
    if (!text.empty()) text += ", ";
    text += p;
  }
  if (isList(field.type) && !text.empty()) text = "each " + text;
  if (const auto& n = s.requiredLength()) {
    text += (text.empty() ? "" : "; ") + std::string("length ") + std::to_string(*n);
  }
  return text;
}

std::string describeDefault(const FieldInfo& field) {
  std::string out;
  appendCompactJson(field.default_value, out);
  return out;
}

std::string configReferenceMarkdown() {
  const std::vector<FieldInfo> fields = configSchema();
  std::ostringstream out;
  out << "# Configuration reference\n\n"
      << "<!-- Generated from the schema (core/run_config.h) by `tokenbench-trainer "
         "config-reference > docs/configuration.md`. Do not edit: a test fails when this file "
         "and the schema differ. -->\n\n"
      << "A run is configured by one JSON document (`config.json` in the run directory), schema "
         "version "
      << kConfigSchemaVersion
      << ". Keys missing from a file keep the defaults below; unknown keys, values of the "
         "wrong type and values out of range are errors, each reported with its path. Any key "
         "can be overridden on the trainer's command line with `--set key.path=value` "
         "(`--set train.lr=2e-4`, `--set model.quantizer.fsq_levels=[8,8,8]`).\n\n"
      << "- `tokenbench-trainer print-config [--preset NAME]` prints a complete document.\n"
      << "- `tokenbench-trainer validate-config FILE` checks one (exit 2 with every error).\n"
      << "- Ranges are inclusive unless written with `>`; for lists they apply to every "
         "element.\n\n"
      << "This reference has " << fields.size() << " keys.\n\n";
  appendTable("", fields, out);
  for (const auto& section : configSections()) appendTable(section, fields, out);

  out << "## Presets\n\n"
      << "Named starting points (`--preset NAME`), applied over the defaults above.\n\n"
      << "| name | description |\n|---|---|\n";
  for (const auto& p : presets()) out << "| `" << p.name << "` | " << cell(p.description) << " |\n";
  return out.str();
}

}  // namespace tb::core
