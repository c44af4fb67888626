#pragma once

#include "core/event_protocol.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace tb::app {

/// The step a run has reached (or ended at), by one rule for every place that says it: the
/// control bar, the Monitor, the Runs page and `tokenbench --no-gui`'s last line.
///
/// The run's events decide, in the order it wrote them (events.jsonl, or the trainer's stdout
/// while it runs): the step of its done event, else that of its last progress or checkpoint
/// event. Without such an event (a run directory without events.jsonl), the newest complete
/// checkpoint folder; failing that, the last metrics.jsonl row. Rows are written every
/// train.log_every steps, so they trail the run: one that completed at step 17 with log_every 10
/// has its last row at step 10, and one that completed at step 4 may have none at all.
class RunStep {
 public:
  /// Takes the step of a done event that has one, of a progress or of a checkpoint event, in
  /// the order the run wrote them; other events say nothing about where the run is.
  void noteEvent(const core::Event& event);
  /// Sets what noteEvent() over all the run's events would have left (for a reader that folded
  /// them with a RunStep of its own, as RunSummaryReader does over the end of events.jsonl).
  void setEventStep(std::optional<std::int64_t> step) { m_event = step; }
  /// The steps of the run's complete checkpoint folders (core::RunDirectory::
  /// listCheckpointSteps), as last listed.
  void setCheckpointSteps(const std::vector<std::int64_t>& steps);
  /// A metrics.jsonl row's step, rows in file order.
  void noteRow(std::int64_t step);

  /// Forgets what events, checkpoints or rows said (that file started over).
  void clearEvents() { m_event.reset(); }
  void clearRows() { m_row.reset(); }
  void clear();

  /// The run's step; nullopt while nothing says one.
  std::optional<std::int64_t> value() const;
  /// Whether an event gave value() (false: a checkpoint folder, a row, or nothing).
  bool fromEvents() const { return m_event.has_value(); }

 private:
  std::optional<std::int64_t> m_event;
  std::optional<std::int64_t> m_checkpoint;
  std::optional<std::int64_t> m_row;
};

}  // namespace tb::app
