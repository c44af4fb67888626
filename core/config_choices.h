#pragma once
// The configuration's choice keys: one enum per key and its one string table. config.json holds
// the names; reading a configuration parses them once (config_io.h) and every other piece of
// code compares enum values. The reader, the writer, validation, the generated configuration
// reference and the window's drop-downs all take the names from the tables below, so a new value
// is an enumerator and its row here (and the code in trainer/ that gives it meaning).

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace tb::core {

enum class DataType { Synthetic, Videos, Images, Shards };  ///< data.type
enum class ClipStart { Random, First };                     ///< data.clip_start
enum class CropMode { Random, Center };                     ///< data.crop
enum class ModelKind { Magvit2, Vqgan };                    ///< model.kind
enum class TimePadding { Zeros, Replicate };                ///< model.time_padding
enum class TimeAlignment { Lagged, Blocks };                ///< model.time_alignment
enum class PixelRange { MinusOneOne, ZeroOne };             ///< model.pixel_range
enum class QuantizerType { Lfq, Fsq, Vq };                  ///< model.quantizer.type
enum class EntropyEstimate { Auto, Exact, Factorized };     ///< model.quantizer.entropy_estimate
enum class DiscriminatorType { Frame, PatchGan, Video };    ///< model.discriminator.type
enum class ReconLoss { L1, Mse };                           ///< loss.recon
enum class LpipsNet { Alex, Vgg };                          ///< loss.perceptual_net
enum class Schedule { Constant, Cosine, CosineBudget };     ///< train.schedule
enum class Precision { Fp32, Bf16, Fp16, Auto };            ///< train.precision
enum class LossScaling { Auto, On, Off };                   ///< train.loss_scaling
enum class Strategy { None, Ddp, Zero1, Zero2, Zero3 };     ///< distributed.strategy
enum class Backend { Auto, Gloo, Nccl };                    ///< distributed.backend

template <class E>
struct ChoiceRow {
  E value;
  const char* name;
};

/// The names of an enum's values, in the order documents and drop-downs list them.
template <class E>
struct ChoiceTable;

template <>
struct ChoiceTable<DataType> {
  static constexpr ChoiceRow<DataType> rows[] = {{DataType::Synthetic, "synthetic"},
                                                 {DataType::Videos, "videos"},
                                                 {DataType::Images, "images"},
                                                 {DataType::Shards, "shards"}};
};
template <>
struct ChoiceTable<ClipStart> {
  static constexpr ChoiceRow<ClipStart> rows[] = {{ClipStart::Random, "random"},
                                                  {ClipStart::First, "first"}};
};
template <>
struct ChoiceTable<CropMode> {
  static constexpr ChoiceRow<CropMode> rows[] = {{CropMode::Random, "random"},
                                                 {CropMode::Center, "center"}};
};
template <>
struct ChoiceTable<ModelKind> {
  static constexpr ChoiceRow<ModelKind> rows[] = {{ModelKind::Magvit2, "magvit2"},
                                                  {ModelKind::Vqgan, "vqgan"}};
};
template <>
struct ChoiceTable<TimePadding> {
  static constexpr ChoiceRow<TimePadding> rows[] = {{TimePadding::Zeros, "zeros"},
                                                    {TimePadding::Replicate, "replicate"}};
};
template <>
struct ChoiceTable<TimeAlignment> {
  static constexpr ChoiceRow<TimeAlignment> rows[] = {{TimeAlignment::Lagged, "lagged"},
                                                      {TimeAlignment::Blocks, "blocks"}};
};
template <>
struct ChoiceTable<PixelRange> {
  static constexpr ChoiceRow<PixelRange> rows[] = {{PixelRange::MinusOneOne, "minus_one_one"},
                                                   {PixelRange::ZeroOne, "zero_one"}};
};
template <>
struct ChoiceTable<QuantizerType> {
  static constexpr ChoiceRow<QuantizerType> rows[] = {
      {QuantizerType::Lfq, "lfq"}, {QuantizerType::Fsq, "fsq"}, {QuantizerType::Vq, "vq"}};
};
template <>
struct ChoiceTable<EntropyEstimate> {
  static constexpr ChoiceRow<EntropyEstimate> rows[] = {
      {EntropyEstimate::Auto, "auto"},
      {EntropyEstimate::Exact, "exact"},
      {EntropyEstimate::Factorized, "factorized"}};
};
template <>
struct ChoiceTable<DiscriminatorType> {
  static constexpr ChoiceRow<DiscriminatorType> rows[] = {{DiscriminatorType::Frame, "frame"},
                                                          {DiscriminatorType::PatchGan, "patchgan"},
                                                          {DiscriminatorType::Video, "video"}};
};
template <>
struct ChoiceTable<ReconLoss> {
  static constexpr ChoiceRow<ReconLoss> rows[] = {{ReconLoss::L1, "l1"}, {ReconLoss::Mse, "mse"}};
};
template <>
struct ChoiceTable<LpipsNet> {
  static constexpr ChoiceRow<LpipsNet> rows[] = {{LpipsNet::Alex, "alex"}, {LpipsNet::Vgg, "vgg"}};
};
template <>
struct ChoiceTable<Schedule> {
  static constexpr ChoiceRow<Schedule> rows[] = {{Schedule::Constant, "constant"},
                                                 {Schedule::Cosine, "cosine"},
                                                 {Schedule::CosineBudget, "cosine_budget"}};
};
template <>
struct ChoiceTable<Precision> {
  static constexpr ChoiceRow<Precision> rows[] = {{Precision::Fp32, "fp32"},
                                                  {Precision::Bf16, "bf16"},
                                                  {Precision::Fp16, "fp16"},
                                                  {Precision::Auto, "auto"}};
};
template <>
struct ChoiceTable<LossScaling> {
  static constexpr ChoiceRow<LossScaling> rows[] = {
      {LossScaling::Auto, "auto"}, {LossScaling::On, "on"}, {LossScaling::Off, "off"}};
};
template <>
struct ChoiceTable<Strategy> {
  static constexpr ChoiceRow<Strategy> rows[] = {{Strategy::None, "none"},
                                                 {Strategy::Ddp, "ddp"},
                                                 {Strategy::Zero1, "zero1"},
                                                 {Strategy::Zero2, "zero2"},
                                                 {Strategy::Zero3, "zero3"}};
};
template <>
struct ChoiceTable<Backend> {
  static constexpr ChoiceRow<Backend> rows[] = {
      {Backend::Auto, "auto"}, {Backend::Gloo, "gloo"}, {Backend::Nccl, "nccl"}};
};

/// True for the enums above (those with a ChoiceTable).
template <class E, class = void>
struct IsChoice : std::false_type {};
template <class E>
struct IsChoice<E, std::void_t<decltype(ChoiceTable<E>::rows)>> : std::true_type {};

/// The name of `value` as config.json writes it ("cosine_budget").
template <class E>
const char* choiceName(E value) {
  for (const auto& row : ChoiceTable<E>::rows)
    if (row.value == value) return row.name;
  return "?";
}

/// The value named `text`; nullopt when no value has that name.
template <class E>
std::optional<E> parseChoice(std::string_view text) {
  for (const auto& row : ChoiceTable<E>::rows)
    if (text == row.name) return row.value;
  return std::nullopt;
}

/// Every name, in table order.
template <class E>
std::vector<std::string> choiceNames() {
  std::vector<std::string> out;
  for (const auto& row : ChoiceTable<E>::rows) out.emplace_back(row.name);
  return out;
}

/// `must be one of "a", "b", got "x"`, with a suggestion when `value` is a near miss: the one
/// wording of an unknown choice (configuration keys and command-line options alike).
std::string notOneOfMessage(const std::vector<std::string>& allowed, const std::string& value);

/// The value named `text`; throws std::invalid_argument "<what>: must be one of ..." otherwise
/// (for names given on a command line, `what` being the option).
template <class E>
E parseChoiceOrThrow(const std::string& what, const std::string& text) {
  if (auto value = parseChoice<E>(text)) return *value;
  throw std::invalid_argument(what + ": " + notOneOfMessage(choiceNames<E>(), text));
}

}  // namespace tb::core
