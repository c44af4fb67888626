#include "core/event_protocol.h"

#include "core/version.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace tb::core {
namespace {

using Kind = ProtocolError::Kind;

std::vector<std::string> readLines(const std::string& name) {
  std::ifstream in(std::string(TB_TEST_DATA_DIR) + "/golden/" + name, std::ios::binary);
  EXPECT_TRUE(in.is_open()) << name;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The events of tests/golden/events_v1.ndjson, line by line.
std::vector<Event> goldenEvents() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return {
      HelloEvent{"0.1.0", "1.13.1", 1, 2, "local", "cpu", "openblas", 8, 1, "/runs/demo", "", 0, "",
                 ""},
      ProgressEvent{120, 10000, 3.25, 3040.0},
      MetricEvent{120,
                  {{"train/recon_loss", 0.071}, {"train/lfq_entropy", 1.5}, {"val/psnr", nan}}},
      SampleEvent{120, "reconstruction", "samples/step_120_reconstruction.gif"},
      CheckpointEvent{1000, "checkpoints/step_1000"},
      LogEvent{"info", "loaded 1200 clips from data/clips"},
      WarningEvent{"nan_loss", "loss was NaN; rolled back to step 900", 950},
      ErrorEvent{"dataset_empty", "no clips found in /data/clips",
                 "check data.path in config.json"},
      DoneEvent{"completed", 10000},
      PhaseEvent{"reference", "fitting the classic VQ reference: drawing blocks", 4096, 16384},
  };
}

ProtocolError::Kind errorKind(const DecodeResult& result) {
  EXPECT_FALSE(result.ok());
  return result.error() != nullptr ? result.error()->kind : Kind::Malformed;
}

TEST(EventProtocolGolden, EveryTypeOnceInDeclarationOrder) {
  const std::vector<std::string> lines = readLines("events_v1.ndjson");
  ASSERT_EQ(lines.size(), std::variant_size_v<Event>);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const DecodeResult result = decodeEventLine(lines[i]);
    ASSERT_TRUE(result.ok()) << lines[i] << ": " << result.error()->message;
    EXPECT_EQ(result.event()->index(), i) << lines[i];
  }
}

TEST(EventProtocolGolden, DecodeThenEncodeGivesIdenticalBytes) {
  for (const char* file : {"events_v1.ndjson", "events_v1_variants.ndjson"}) {
    const std::vector<std::string> lines = readLines(file);
    ASSERT_FALSE(lines.empty()) << file;
    for (const std::string& line : lines) {
      const DecodeResult result = decodeEventLine(line);
      ASSERT_TRUE(result.ok()) << line << ": " << result.error()->message;
      EXPECT_EQ(encodeEvent(*result.event()), line);
    }
  }
}

TEST(EventProtocolGolden, EncodeOfConstructedEventsEqualsGoldenLines) {
  const std::vector<std::string> lines = readLines("events_v1.ndjson");
  const std::vector<Event> events = goldenEvents();
  ASSERT_EQ(lines.size(), events.size());
  for (std::size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(encodeEvent(events[i]), lines[i]);
  }
}

TEST(EventProtocolGolden, DecodedFieldsHaveTheWrittenValues) {
  const std::vector<std::string> lines = readLines("events_v1.ndjson");
  ASSERT_EQ(lines.size(), 10u);

  const auto hello = std::get<HelloEvent>(*decodeEventLine(lines[0]).event());
  EXPECT_EQ(hello.protocol, kProtocolVersion);
  EXPECT_EQ(hello.world_size, 2);
  EXPECT_EQ(hello.launcher, "local");
  EXPECT_EQ(hello.interop_threads, 1);
  EXPECT_EQ(hello.run_dir, "/runs/demo");

  const auto progress = std::get<ProgressEvent>(*decodeEventLine(lines[1]).event());
  EXPECT_EQ(progress.step, 120);
  EXPECT_EQ(progress.total, 10000);
  EXPECT_DOUBLE_EQ(progress.it_per_s, 3.25);

  const auto metric = std::get<MetricEvent>(*decodeEventLine(lines[2]).event());
  ASSERT_EQ(metric.values.size(), 3u);
  EXPECT_EQ(metric.values[0].first, "train/recon_loss");
  EXPECT_DOUBLE_EQ(metric.values[0].second, 0.071);
  EXPECT_EQ(metric.values[2].first, "val/psnr");
  EXPECT_TRUE(std::isnan(metric.values[2].second));

  const auto warning = std::get<WarningEvent>(*decodeEventLine(lines[6]).event());
  ASSERT_TRUE(warning.step.has_value());
  EXPECT_EQ(*warning.step, 950);

  const auto done = std::get<DoneEvent>(*decodeEventLine(lines[8]).event());
  EXPECT_EQ(done.status, "completed");
  EXPECT_EQ(done.step, std::optional<std::int64_t>(10000));

  const auto phase = std::get<PhaseEvent>(*decodeEventLine(lines[9]).event());
  EXPECT_EQ(phase.phase, "reference");
  EXPECT_EQ(phase.done, 4096);
  EXPECT_EQ(phase.total, 16384);
}

TEST(EventProtocolGolden, TypeNamesMatchTheWire) {
  const std::vector<std::string> lines = readLines("events_v1.ndjson");
  const std::vector<Event> events = goldenEvents();
  ASSERT_EQ(lines.size(), events.size());
  for (std::size_t i = 0; i < events.size(); ++i) {
    const std::string expected =
        "{\"v\":1,\"type\":\"" + std::string(eventTypeName(events[i])) + "\",";
    EXPECT_EQ(lines[i].rfind(expected, 0), 0u) << lines[i];
  }
  EXPECT_EQ(eventTypeName(Event{DoneEvent{}}), "done");
  EXPECT_EQ(eventTypeName(Event{HelloEvent{}}), "hello");
}

TEST(EventProtocolEncode, NonFiniteDoublesBecomeNullAndDecodeAsNaN) {
  const double inf = std::numeric_limits<double>::infinity();
  const Event event = MetricEvent{
      7, {{"a", std::numeric_limits<double>::quiet_NaN()}, {"b", inf}, {"c", -inf}, {"d", 0.5}}};
  const std::string line = encodeEvent(event);
  EXPECT_EQ(line,
            R"({"v":1,"type":"metric","step":7,"values":{"a":null,"b":null,"c":null,"d":0.5}})");
  const DecodeResult result = decodeEventLine(line);
  ASSERT_TRUE(result.ok());
  const auto& values = std::get<MetricEvent>(*result.event()).values;
  ASSERT_EQ(values.size(), 4u);
  EXPECT_TRUE(std::isnan(values[0].second));
  EXPECT_TRUE(std::isnan(values[1].second));
  EXPECT_TRUE(std::isnan(values[2].second));
  EXPECT_DOUBLE_EQ(values[3].second, 0.5);

  const std::string progress = encodeEvent(ProgressEvent{1, 2, inf, std::nan("")});
  EXPECT_EQ(progress,
            R"({"v":1,"type":"progress","step":1,"total":2,"it_per_s":null,"eta_s":null})");
}

TEST(EventProtocolEncode, InvalidUtf8InStringsStillGivesValidJson) {
  const std::string line =
      encodeEvent(SampleEvent{3, "reconstruction", "samples/bad\xff\xfename.gif"});
  const DecodeResult result = decodeEventLine(line);
  ASSERT_TRUE(result.ok()) << line;
  EXPECT_EQ(std::get<SampleEvent>(*result.event()).path,
            "samples/bad\xEF\xBF\xBD\xEF\xBF\xBDname.gif");
}

TEST(EventProtocolEncode, OptionalStepIsOmittedWhenEmpty) {
  EXPECT_EQ(encodeEvent(DoneEvent{"stopped", std::nullopt}),
            R"({"v":1,"type":"done","status":"stopped"})");
  EXPECT_EQ(encodeEvent(WarningEvent{"c", "m", 4}),
            R"({"v":1,"type":"warning","code":"c","message":"m","step":4})");
}

TEST(EventProtocolDecode, UnknownFieldsAreIgnored) {
  const std::string line =
      R"({"v":1,"type":"checkpoint","future":{"nested":[1,{"x":null}]},"step":1000,)"
      R"("path":"checkpoints/step_1000","bytes":123})";
  const DecodeResult result = decodeEventLine(line);
  ASSERT_TRUE(result.ok()) << result.error()->message;
  EXPECT_EQ(encodeEvent(*result.event()), readLines("events_v1.ndjson").at(4));
}

TEST(EventProtocolDecode, TrailingCarriageReturnAndSurroundingSpacesAreTolerated) {
  const std::string golden = readLines("events_v1.ndjson").at(8);
  EXPECT_TRUE(decodeEventLine(golden + "\r").ok());
  EXPECT_TRUE(decodeEventLine("  " + golden + "\t ").ok());
  EXPECT_EQ(errorKind(decodeEventLine("\r")), Kind::Malformed);
}

TEST(EventProtocolDecode, UnsignedIntegersInRangeAreAccepted) {
  const DecodeResult result =
      decodeEventLine(R"({"v":1,"type":"checkpoint","step":9223372036854775807,"path":"p"})");
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(std::get<CheckpointEvent>(*result.event()).step,
            std::numeric_limits<std::int64_t>::max());
}

struct BadLine {
  const char* name;
  std::string line;
  Kind kind;
  const char* messagePart;  // substring the message must contain ("" = any)
};

TEST(EventProtocolDecode, BadInputsGiveTheRightErrorKind) {
  const std::string hello = readLines("events_v1.ndjson").at(0);
  const std::vector<BadLine> cases = {
      {"empty", "", Kind::Malformed, "empty line"},
      {"open brace", "{", Kind::Malformed, "malformed JSON"},
      {"null", "null", Kind::NotAnObject, "got null"},
      {"array", "[]", Kind::NotAnObject, "got array"},
      {"number", "123", Kind::NotAnObject, "got integer"},
      {"string", "\"hello\"", Kind::NotAnObject, "got string"},
      {"garbage bytes", std::string("\xff\xfe\x00\x01garbage", 11), Kind::Malformed, ""},
      {"invalid utf-8 in string",
       "{\"v\":1,\"type\":\"log\",\"level\":\"info\",\"text\":\"\xc3\x28\"}", Kind::Malformed, ""},
      {"nul inside", std::string("{\"v\":1,\0\"type\":\"done\"}", 22), Kind::Malformed, ""},
      {"two objects", "{}{}", Kind::Malformed, ""},
      {"trailing garbage", R"({"v":1,"type":"done","status":"completed"} x)", Kind::Malformed, ""},
      {"huge number", R"({"v":1,"type":"checkpoint","step":1e999,"path":"p"})", Kind::Malformed,
       "out of range"},
      {"wrong version", R"({"v":2,"type":"done","status":"completed"})", Kind::WrongVersion,
       "unsupported protocol version 2 (this build speaks 1)"},
      {"version zero", R"({"v":0,"type":"done","status":"completed"})", Kind::WrongVersion, ""},
      {"negative version", R"({"v":-1,"type":"done","status":"completed"})", Kind::WrongVersion,
       ""},
      {"huge version", R"({"v":18446744073709551615,"type":"done","status":"completed"})",
       Kind::WrongVersion, "18446744073709551615"},
      {"missing v", R"({"type":"done","status":"completed"})", Kind::MissingField, "\"v\""},
      {"string v", R"({"v":"1","type":"done","status":"completed"})", Kind::WrongFieldType, ""},
      {"float v", R"({"v":1.0,"type":"done","status":"completed"})", Kind::WrongFieldType, ""},
      {"missing type", R"({"v":1,"status":"completed"})", Kind::MissingField, "\"type\""},
      {"numeric type", R"({"v":1,"type":3})", Kind::WrongFieldType, ""},
      {"unknown type", R"({"v":1,"type":"telemetry","step":1})", Kind::UnknownType,
       "unknown event type \"telemetry\""},
      {"type case matters", R"({"v":1,"type":"Done","status":"completed"})", Kind::UnknownType, ""},
      {"missing step", R"({"v":1,"type":"progress","total":10,"it_per_s":1.0,"eta_s":2.0})",
       Kind::MissingField, "missing field \"step\" in progress event"},
      {"missing hint", R"({"v":1,"type":"error","code":"c","message":"m"})", Kind::MissingField,
       "missing field \"hint\" in error event"},
      {"string step", R"({"v":1,"type":"checkpoint","step":"120","path":"p"})",
       Kind::WrongFieldType, "field \"step\" in checkpoint event must be an integer, got string"},
      {"float step", R"({"v":1,"type":"checkpoint","step":120.0,"path":"p"})", Kind::WrongFieldType,
       "got float"},
      {"step over int64", R"({"v":1,"type":"checkpoint","step":9223372036854775808,"path":"p"})",
       Kind::WrongFieldType, "out of range"},
      {"int field over int32",
       R"({"v":1,"type":"hello","trainer_version":"0","torch_version":"0","protocol":1,)"
       R"("world_size":4294967296,"launcher":"single","device":"cpu","blas":"b","threads":1,)"
       R"("interop_threads":1,"run_dir":"r"})",
       Kind::WrongFieldType, "\"world_size\""},
      {"bool as number",
       R"({"v":1,"type":"progress","step":1,"total":2,"it_per_s":true,"eta_s":1})",
       Kind::WrongFieldType, "\"it_per_s\""},
      {"values not object", R"({"v":1,"type":"metric","step":1,"values":[1,2]})",
       Kind::WrongFieldType, "\"values\""},
      {"value not number", R"({"v":1,"type":"metric","step":1,"values":{"loss":"0.5"}})",
       Kind::WrongFieldType, "\"loss\""},
      {"bad log level", R"({"v":1,"type":"log","level":"verbose","text":"t"})",
       Kind::WrongFieldType, "\"verbose\""},
      {"bad done status", R"({"v":1,"type":"done","status":"finished"})", Kind::WrongFieldType,
       "completed|stopped|failed"},
      {"optional step wrong type",
       R"({"v":1,"type":"warning","code":"c","message":"m","step":null})", Kind::WrongFieldType,
       "\"step\""},
      {"null path", R"({"v":1,"type":"sample","step":1,"kind":"k","path":null})",
       Kind::WrongFieldType, "\"path\""},
      {"deep nesting", std::string(10000, '['), Kind::Malformed, "nested deeper than 32"},
      {"deep nesting in unknown field",
       R"({"v":1,"type":"done","status":"completed","x":)" + std::string(40, '[') +
           std::string(40, ']') + "}",
       Kind::Malformed, "nested"},
      {"oversized", hello + std::string(kMaxEventLineBytes, ' '), Kind::Oversized, "limit"},
  };
  ASSERT_GE(cases.size(), 15u);
  for (const BadLine& c : cases) {
    DecodeResult result;
    ASSERT_NO_THROW(result = decodeEventLine(c.line)) << c.name;
    ASSERT_FALSE(result.ok()) << c.name;
    EXPECT_EQ(result.error()->kind, c.kind)
        << c.name << ": got " << protocolErrorKindName(result.error()->kind) << " ("
        << result.error()->message << ")";
    EXPECT_NE(result.error()->message.find(c.messagePart), std::string::npos)
        << c.name << ": message was: " << result.error()->message;
  }
}

TEST(EventProtocolDecode, NestingLimitIsExactAndIgnoresBracketsInStrings) {
  const auto withNesting = [](int depth) {
    // The event object itself is level 1.
    return R"({"v":1,"type":"done","status":"completed","x":)" + std::string(depth - 1, '[') +
           std::string(depth - 1, ']') + "}";
  };
  EXPECT_TRUE(decodeEventLine(withNesting(kMaxEventNestingDepth)).ok());
  EXPECT_EQ(errorKind(decodeEventLine(withNesting(kMaxEventNestingDepth + 1))), Kind::Malformed);

  const std::string text = std::string(5000, '[') + "\\\"" + std::string(5000, '{');
  const DecodeResult inString = decodeEventLine(encodeEvent(LogEvent{"debug", text}));
  ASSERT_TRUE(inString.ok());
  EXPECT_EQ(std::get<LogEvent>(*inString.event()).text, text);

  EXPECT_EQ(jsonNestingDepth("{\"a\":[[1],[2]]}"), 3);
  EXPECT_EQ(jsonNestingDepth("\"[[[[\""), 0);
  EXPECT_EQ(jsonNestingDepth(std::string(100, '['), 10), 11);
}

TEST(EventProtocolDecode, LineOfExactlyTheLimitIsAccepted) {
  const std::string prefix = R"({"v":1,"type":"log","level":"info","text":")";
  const std::string suffix = "\"}";
  const std::string line =
      prefix + std::string(kMaxEventLineBytes - prefix.size() - suffix.size(), 'x') + suffix;
  ASSERT_EQ(line.size(), kMaxEventLineBytes);
  EXPECT_TRUE(decodeEventLine(line).ok());
  EXPECT_EQ(errorKind(decodeEventLine(line + " ")), Kind::Oversized);
}

TEST(EventProtocolDecode, EveryTruncatedGoldenLineIsMalformed) {
  for (const char* file : {"events_v1.ndjson", "events_v1_variants.ndjson"}) {
    for (const std::string& line : readLines(file)) {
      for (std::size_t n = 0; n < line.size(); ++n) {
        const DecodeResult result = decodeEventLine(std::string_view(line).substr(0, n));
        ASSERT_FALSE(result.ok()) << line.substr(0, n);
        EXPECT_EQ(result.error()->kind, Kind::Malformed) << line.substr(0, n);
      }
    }
  }
}

TEST(EventProtocolDecode, MutatedAndRandomLinesNeverThrowAndSuccessesRoundTrip) {
  std::mt19937 rng(1234);
  std::vector<std::string> lines = readLines("events_v1.ndjson");
  const std::vector<std::string> variants = readLines("events_v1_variants.ndjson");
  lines.insert(lines.end(), variants.begin(), variants.end());
  const std::string alphabet = "{}[]\":,0123456789.eE+-nulltrue\\u \xff\x80";
  std::size_t decoded = 0;
  for (int iteration = 0; iteration < 20000; ++iteration) {
    std::string line = lines[rng() % lines.size()];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t pos = rng() % (line.size() + 1);
      switch (rng() % 3) {
        case 0:
          line.insert(pos, 1, alphabet[rng() % alphabet.size()]);
          break;
        case 1:
          if (pos < line.size()) line.erase(pos, 1);
          break;
        default:
          if (pos < line.size()) line[pos] = static_cast<char>(rng() & 0xff);
          break;
      }
    }
    DecodeResult result;
    ASSERT_NO_THROW(result = decodeEventLine(line)) << line;
    if (!result.ok()) {
      EXPECT_FALSE(result.error()->message.empty());
      continue;
    }
    ++decoded;
    const std::string again = encodeEvent(*result.event());
    const DecodeResult second = decodeEventLine(again);
    ASSERT_TRUE(second.ok()) << line << " -> " << again;
    EXPECT_EQ(second.event()->index(), result.event()->index());
    EXPECT_EQ(encodeEvent(*second.event()), again);
  }
  // Some single-byte edits (inside strings, numbers) keep lines valid: the loop exercised both
  // paths.
  EXPECT_GT(decoded, 100u);
}

TEST(EventProtocolDecode, ErrorKindNamesAreDistinct) {
  EXPECT_EQ(protocolErrorKindName(Kind::MissingField), "missing_field");
  EXPECT_EQ(protocolErrorKindName(Kind::Oversized), "oversized");
  EXPECT_NE(protocolErrorKindName(Kind::Malformed), protocolErrorKindName(Kind::NotAnObject));
}

// --- EventLineSplitter ---------------------------------------------------------------------

std::vector<std::string> texts(const std::vector<EventLineSplitter::Line>& lines) {
  std::vector<std::string> out;
  for (const auto& line : lines) out.push_back(line.oversized ? "<oversized>" : line.text);
  return out;
}

TEST(EventProtocolSplitter, EverySplitPositionGivesTheSameLines) {
  const std::vector<std::string> golden = readLines("events_v1.ndjson");
  std::string stream;
  for (const std::string& line : golden) stream += line + "\n";

  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    EventLineSplitter splitter;
    std::vector<std::string> got = texts(splitter.feed(std::string_view(stream).substr(0, cut)));
    const std::vector<std::string> rest =
        texts(splitter.feed(std::string_view(stream).substr(cut)));
    got.insert(got.end(), rest.begin(), rest.end());
    ASSERT_EQ(got, golden) << "cut at " << cut;
    EXPECT_EQ(splitter.bufferedBytes(), 0u);
    EXPECT_FALSE(splitter.flush().has_value());
  }

  EventLineSplitter byteByByte;
  std::vector<std::string> got;
  for (const char c : stream) {
    for (const std::string& line : texts(byteByByte.feed(std::string_view(&c, 1)))) {
      got.push_back(line);
    }
  }
  EXPECT_EQ(got, golden);
}

TEST(EventProtocolSplitter, KeepsThePartialLineUntilCompletedOrFlushed) {
  EventLineSplitter splitter;
  EXPECT_TRUE(splitter.feed("abc").empty());
  EXPECT_EQ(splitter.bufferedBytes(), 3u);
  EXPECT_EQ(texts(splitter.feed("def\r\n\nx")), (std::vector<std::string>{"abcdef\r", ""}));
  EXPECT_EQ(splitter.bufferedBytes(), 1u);
  const auto last = splitter.flush();
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->text, "x");
  EXPECT_FALSE(last->oversized);
  EXPECT_FALSE(splitter.flush().has_value());
  EXPECT_EQ(texts(splitter.feed("y\n")), std::vector<std::string>{"y"});
}

TEST(EventProtocolSplitter, OversizedLineIsReportedOnceAndSplittingResumes) {
  EventLineSplitter splitter(16);
  EXPECT_EQ(texts(splitter.feed("short\n")), std::vector<std::string>{"short"});
  // 40 bytes with no newline, in chunks of 7: reported once, when the cap is crossed.
  const std::string flood(40, 'z');
  std::vector<std::string> got;
  for (std::size_t i = 0; i < flood.size(); i += 7) {
    for (const std::string& line : texts(splitter.feed(flood.substr(i, 7)))) got.push_back(line);
    EXPECT_LE(splitter.bufferedBytes(), 16u);
  }
  EXPECT_EQ(got, std::vector<std::string>{"<oversized>"});
  EXPECT_EQ(splitter.oversizedLines(), 1u);
  EXPECT_EQ(texts(splitter.feed("zzzz tail\nnext\n")), std::vector<std::string>{"next"});

  // Exactly the cap is fine, one byte more is not, also when the '\n' is in the same chunk.
  EXPECT_EQ(texts(splitter.feed(std::string(16, 'a') + "\n" + std::string(17, 'b') + "\nok\n")),
            (std::vector<std::string>{std::string(16, 'a'), "<oversized>", "ok"}));
  EXPECT_EQ(splitter.oversizedLines(), 2u);

  // An oversized partial line is not returned again by flush().
  EXPECT_EQ(texts(splitter.feed(std::string(20, 'c'))), std::vector<std::string>{"<oversized>"});
  EXPECT_FALSE(splitter.flush().has_value());
  EXPECT_EQ(texts(splitter.feed("after\n")), std::vector<std::string>{"after"});
}

TEST(EventProtocolSplitter, OversizedMarkerDecodesAsOversizedAndTheNextEventSurvives) {
  const std::string golden = readLines("events_v1.ndjson").at(4);
  EventLineSplitter splitter;
  std::vector<EventLineSplitter::Line> lines;
  const std::string junk(kMaxEventLineBytes / 4, 'j');
  for (int i = 0; i < 6; ++i) {
    for (auto& line : splitter.feed(junk)) lines.push_back(std::move(line));
  }
  for (auto& line : splitter.feed("\n" + golden + "\n")) lines.push_back(std::move(line));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(errorKind(decodeEventLine(lines[0])), Kind::Oversized);
  const DecodeResult next = decodeEventLine(lines[1]);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(encodeEvent(*next.event()), golden);
}

}  // namespace
}  // namespace tb::core
