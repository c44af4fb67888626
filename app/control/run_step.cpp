#include "app/control/run_step.h"

#include <algorithm>
#include <variant>

namespace tb::app {

void RunStep::noteEvent(const core::Event& event) {
  if (const auto* done = std::get_if<core::DoneEvent>(&event)) {
    if (done->step) m_event = *done->step;
  } else if (const auto* progress = std::get_if<core::ProgressEvent>(&event)) {
    m_event = progress->step;
  } else if (const auto* checkpoint = std::get_if<core::CheckpointEvent>(&event)) {
    m_event = checkpoint->step;
  }
}

void RunStep::setCheckpointSteps(const std::vector<std::int64_t>& steps) {
  m_checkpoint.reset();
  if (!steps.empty()) m_checkpoint = *std::max_element(steps.begin(), steps.end());
}

void RunStep::noteRow(std::int64_t step) { m_row = step; }

void RunStep::clear() {
  m_event.reset();
  m_checkpoint.reset();
  m_row.reset();
}

std::optional<std::int64_t> RunStep::value() const {
  if (m_event) return m_event;
  if (m_checkpoint) return m_checkpoint;
  return m_row;
}

}  // namespace tb::app
