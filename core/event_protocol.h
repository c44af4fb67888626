#pragma once
// Event protocol v1: what the trainer (rank 0) writes on stdout and the front end reads.
//
// Framing: NDJSON, one compact JSON object per line, '\n'-terminated (a trailing '\r' is
// tolerated). Every line starts with `"v":1,"type":"<type>"`, followed by the fields of that
// type in the order documented below. Readers ignore fields they do not know, so a later v1
// trainer may add optional fields; removing or retyping a field needs a new protocol version.
//
// Both processes use this one implementation, and both are tested against
// tests/golden/events_v1.ndjson (one line of every type, byte-exact encoder output). Each event
// type names itself (kType) and describes its fields once (describe(), core/document_field.h):
// the encoder and the decoder both walk that description, in its order.
//
// Numbers: int64 fields are JSON integers (a float such as 120.0 is rejected). Double fields are
// written with the shortest text that reads back to the same double; JSON has no NaN/Inf, so a
// non-finite double (in any double field, including metric values) is written as `null` and
// read back as quiet NaN (the sign and Inf-ness are lost on purpose: "not a number" is what a
// plot needs to know).
//
// Paths (sample, checkpoint) are relative to the run directory, or absolute; readers check them
// with RunDirectory::contains before opening anything.

#include "core/document_field.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace tb::core {

/// Longest line (bytes before '\n', a trailing '\r' included) a reader accepts: 1 MiB.
inline constexpr std::size_t kMaxEventLineBytes = std::size_t{1} << 20;

/// Deepest bracket nesting a reader accepts before it even parses a line. Valid events nest 2
/// deep; the margin leaves room for future optional fields.
inline constexpr int kMaxEventNestingDepth = 32;

/// `{"type":"hello"}`: first event, once the trainer has set up its runtime.
struct HelloEvent {
  std::string trainer_version;  ///< e.g. "0.1.0"
  std::string torch_version;    ///< LibTorch version, e.g. "1.13.1"
  int protocol = 0;             ///< protocol version the trainer speaks (kProtocolVersion)
  int world_size = 1;           ///< number of training processes
  std::string launcher;         ///< "single", "local", "torchrun", "slurm" or "mpirun"
  std::string device;           ///< the device training runs on, e.g. "cpu", "cuda:0"
  std::string blas;             ///< BLAS library in use, e.g. "openblas"
  int threads = 0;              ///< intra-op threads per process
  int interop_threads = 0;      ///< inter-op threads per process
  std::string run_dir;          ///< run directory as the trainer sees it
  std::string device_name;      ///< e.g. "NVIDIA H200", or the CPU's model (optional)
  std::int64_t device_memory_bytes =
      0;  ///< the GPU's memory, or the machine's (optional; 0: unknown)
  /// The CPU's vector and matrix units, e.g. "AVX2 AVX-512 AVX512-BF16 AMX-BF16 (oneDNN: ...)"
  /// (optional).
  std::string cpu;
  /// train.precision as it runs: "fp32", "bf16" or "fp16", with why when it was "auto", e.g.
  /// "bf16 (auto: the CPU computes bf16: AMX-BF16)" (optional).
  std::string precision;

  static constexpr std::string_view kType = "hello";
  template <class V>
  void describe(V& v) {
    v.field("trainer_version", trainer_version);
    v.field("torch_version", torch_version);
    v.field("protocol", protocol);
    v.field("world_size", world_size);
    v.field("launcher", launcher);
    v.field("device", device);
    v.field("device_name", device_name, DocField().omitUnset());
    v.field("device_memory_bytes", device_memory_bytes, DocField().omitUnset());
    v.field("cpu", cpu, DocField().omitUnset());
    v.field("precision", precision, DocField().omitUnset());
    v.field("blas", blas);
    v.field("threads", threads);
    v.field("interop_threads", interop_threads);
    v.field("run_dir", run_dir);
  }
};

/// `{"type":"progress"}`: throughput and position in the run.
struct ProgressEvent {
  std::int64_t step = 0;   ///< optimizer steps done
  std::int64_t total = 0;  ///< optimizer steps planned
  double it_per_s = 0.0;   ///< optimizer steps per second (NaN: unknown)
  double eta_s = 0.0;      ///< seconds to go (NaN: unknown)

  static constexpr std::string_view kType = "progress";
  template <class V>
  void describe(V& v) {
    v.field("step", step);
    v.field("total", total);
    v.field("it_per_s", it_per_s, DocField().nanAsNull());
    v.field("eta_s", eta_s, DocField().nanAsNull());
  }
};

/// `{"type":"metric"}`: scalar metrics at one step; decoded, no longer sent (see `values`).
struct MetricEvent {
  std::int64_t step = 0;
  /// name -> value (a JSON object) in emission order; null for NaN; a repeated name is written
  /// once (last value, first position). Metric rows go to metrics.jsonl only: the type stays in
  /// v1 so that older trainers' streams and their runs' events.jsonl decode; readers ignore it.
  std::vector<std::pair<std::string, double>> values;

  static constexpr std::string_view kType = "metric";
  template <class V>
  void describe(V& v) {
    v.field("step", step);
    v.field("values", values, DocField().nanAsNull());
  }
};

/// `{"type":"sample"}`: an image/clip file that is already complete on disk.
struct SampleEvent {
  std::int64_t step = 0;
  std::string kind;  ///< e.g. "reconstruction", "comparison"
  std::string path;  ///< relative to the run directory, or absolute

  static constexpr std::string_view kType = "sample";
  template <class V>
  void describe(V& v) {
    v.field("step", step);
    v.field("kind", kind);
    v.field("path", path);
  }
};

/// `{"type":"checkpoint"}`: a checkpoint folder that is complete on disk.
struct CheckpointEvent {
  std::int64_t step = 0;
  std::string path;  ///< relative to the run directory, or absolute

  static constexpr std::string_view kType = "checkpoint";
  template <class V>
  void describe(V& v) {
    v.field("step", step);
    v.field("path", path);
  }
};

/// `{"type":"log"}`: a line for the user-visible log.
struct LogEvent {
  std::string level;  ///< "debug", "info", "warning" or "error" (anything else is rejected)
  std::string text;

  static constexpr std::string_view kType = "log";
  template <class V>
  void describe(V& v) {
    v.field("level", level, DocField().oneOf("debug|info|warning|error"));
    v.field("text", text);
  }
};

/// `{"type":"warning"}`: something the user should see, training continues.
struct WarningEvent {
  std::string code;                  ///< stable machine-readable identifier, e.g. "nan_loss"
  std::string message;               ///< human-readable
  std::optional<std::int64_t> step;  ///< omitted from the line when empty

  static constexpr std::string_view kType = "warning";
  template <class V>
  void describe(V& v) {
    v.field("code", code);
    v.field("message", message);
    v.field("step", step);
  }
};

/// `{"type":"error"}`: a fatal problem; a `done` with status "failed" follows.
struct ErrorEvent {
  std::string code;     ///< stable machine-readable identifier, e.g. "dataset_empty"
  std::string message;  ///< human-readable
  std::string hint;     ///< what the user can do about it; may be empty (always written)

  static constexpr std::string_view kType = "error";
  template <class V>
  void describe(V& v) {
    v.field("code", code);
    v.field("message", message);
    v.field("hint", hint);
  }
};

/// `{"type":"done"}`: last event. Success is exit code 0 *and* a done event.
struct DoneEvent {
  std::string status;  ///< "completed", "stopped" or "failed" (anything else is rejected)
  std::optional<std::int64_t> step;  ///< last step reached; omitted from the line when empty

  static constexpr std::string_view kType = "done";
  template <class V>
  void describe(V& v) {
    v.field("status", status, DocField().oneOf("completed|stopped|failed"));
    v.field("step", step);
  }
};

/// `{"type":"phase"}`: what the trainer does before its first progress event (indexing the
/// data, building the model, loading a checkpoint, fitting the classic VQ reference, the first
/// steps), so that a front end can say more than "running" for the seconds or minutes it takes.
/// Sent as each phase begins and, where it is counted, as it advances; the first progress event
/// ends the last phase.
struct PhaseEvent {
  std::string phase;       ///< "data", "model", "precision", "resume", "reference" or "first_steps"
  std::string text;        ///< for a person, e.g. "fitting the classic VQ reference: k-means"
  std::int64_t done = 0;   ///< units done of `total`
  std::int64_t total = 0;  ///< 0: not counted

  static constexpr std::string_view kType = "phase";
  template <class V>
  void describe(V& v) {
    v.field("phase", phase);
    v.field("text", text);
    v.field("done", done);
    v.field("total", total);
  }
};

/// One event. The index order is fixed (new types go last); eventTypeName() gives the wire name.
using Event = std::variant<HelloEvent, ProgressEvent, MetricEvent, SampleEvent, CheckpointEvent,
                           LogEvent, WarningEvent, ErrorEvent, DoneEvent, PhaseEvent>;

/// Why a line could not be decoded. The message names the problem for a human, e.g.
/// `missing field "step" in progress event`.
struct ProtocolError {
  enum class Kind {
    Malformed,       ///< not JSON (incl. empty line, invalid UTF-8, too deep nesting)
    NotAnObject,     ///< valid JSON but not an object
    WrongVersion,    ///< "v" is an integer other than kProtocolVersion
    UnknownType,     ///< "type" names no v1 event
    MissingField,    ///< a required field (or "v"/"type") is absent
    WrongFieldType,  ///< a field has the wrong JSON type, is out of range or not an allowed value
    Oversized,       ///< line longer than kMaxEventLineBytes
  };
  Kind kind = Kind::Malformed;
  std::string message;
};

/// Stable name of a ProtocolError::Kind, e.g. "missing_field" (for logs and tests).
std::string_view protocolErrorKindName(ProtocolError::Kind kind);

/// Either a decoded event or the reason there is none.
struct DecodeResult {
  std::variant<Event, ProtocolError> value;

  bool ok() const { return value.index() == 0; }
  /// The event, or nullptr when decoding failed.
  const Event* event() const { return std::get_if<Event>(&value); }
  /// The error, or nullptr when decoding succeeded.
  const ProtocolError* error() const { return std::get_if<ProtocolError>(&value); }
};

/// Wire name of the event's type: "hello", "progress", "metric", ...
std::string_view eventTypeName(const Event& event);

/// One NDJSON line (no trailing newline), compact, keys in the documented order. Never throws
/// on content: non-finite doubles become null, and bytes that are not valid UTF-8 in strings are
/// replaced by U+FFFD so the line is always valid JSON. Does not truncate: keep log texts well
/// under kMaxEventLineBytes or readers will reject the line as oversized.
std::string encodeEvent(const Event& event);

/// Decodes one line (without its '\n'; a trailing '\r' is ignored). Tolerant: never throws and
/// never crashes, whatever the bytes; unknown fields are ignored.
DecodeResult decodeEventLine(std::string_view line);

/// Deepest nesting of '[' / '{' outside JSON strings in `text`, counting no further than
/// `limit + 1` (so the scan stays cheap and tells "too deep" apart). Used to reject hostile
/// lines before they reach a parser.
int jsonNestingDepth(std::string_view text, int limit = kMaxEventNestingDepth);

/// Cuts a byte stream (a pipe read in arbitrary chunks) into lines. Keeps the partial last line
/// between feed() calls and never buffers more than `maxLineBytes`: a line that grows past the
/// cap is reported once, as a Line with `oversized` set, at the moment it crosses the cap; its
/// remaining bytes are dropped up to the next '\n', and splitting resumes after it.
/// Empty lines are returned as they are (the decoder reports them as Malformed).
class EventLineSplitter {
 public:
  struct Line {
    std::string text;        ///< line without '\n' (may end in '\r'); empty when oversized
    bool oversized = false;  ///< the line exceeded the cap; its bytes were discarded
  };

  /// `maxLineBytes`: largest line kept, counted in bytes before '\n'.
  explicit EventLineSplitter(std::size_t maxLineBytes = kMaxEventLineBytes);

  /// Appends `bytes` and returns the lines they complete, in order.
  std::vector<Line> feed(std::string_view bytes);
  /// Returns the unterminated last line, if there is one (for end of stream), and clears it.
  /// Returns nothing for a line already reported as oversized.
  std::optional<Line> flush();

  /// Bytes of the partial line held now (never more than maxLineBytes()).
  std::size_t bufferedBytes() const { return m_buffer.size(); }
  std::size_t maxLineBytes() const { return m_maxLineBytes; }
  /// How many oversized lines have been reported so far.
  std::size_t oversizedLines() const { return m_oversizedLines; }

 private:
  std::size_t m_maxLineBytes;
  std::string m_buffer;
  bool m_discarding = false;  // inside an oversized line, waiting for its '\n'
  std::size_t m_oversizedLines = 0;
};

/// Decodes a splitter line: an oversized marker becomes ProtocolError::Kind::Oversized.
DecodeResult decodeEventLine(const EventLineSplitter::Line& line);

}  // namespace tb::core
