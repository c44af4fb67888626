#include "trainer/cli/trainer_cli.h"

#include "core/config_choices.h"
#include "core/config_io.h"
#include "core/trainer_command.h"
#include "core/version.h"
#include "trainer/cli/baseline_command.h"
#include "trainer/cli/bench_command.h"
#include "trainer/cli/compare_command.h"
#include "trainer/cli/config_commands.h"
#include "trainer/cli/data_commands.h"
#include "trainer/cli/evaluate_command.h"
#include "trainer/cli/import_command.h"
#include "trainer/cli/magvit2_commands.h"
#include "trainer/cli/metrics_commands.h"
#include "trainer/cli/model_commands.h"
#include "trainer/cli/pack_command.h"
#include "trainer/cli/token_commands.h"
#include "trainer/cli/train_command.h"
#include "trainer/runtime_info.h"
#include "trainer/torch_compat.h"
#include "trainer/training_device.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <sstream>

namespace tb::trainer {
namespace {

std::string versionText() {
  const RuntimeInfo rt = queryRuntime();
  std::ostringstream s;
  s << "tokenbench-trainer " << core::versionString() << "\n"
    << "protocol " << core::kProtocolVersion << ", config schema " << core::kConfigSchemaVersion
    << "\n"
    << "LibTorch " << rt.torch_version << ", BLAS " << rt.blas << ", " << rt.threads << " threads\n"
    << "CPU " << (rt.device_name.empty() ? "unknown" : rt.device_name) << ": " << rt.cpu << "\n"
    << "train.precision \"auto\" on the CPU: "
    << describePrecision(core::Precision::Auto, torch::kCPU) << "\n"
    << "CUDA " << (TB_WITH_CUDA ? "yes" : "no");
  if (const std::string cuda = compat::cudaRuntimeVersion(); !cuda.empty()) {
    const std::string cudnn = compat::cudnnVersion();
    s << " (runtime " << cuda << ", cuDNN " << (cudnn.empty() ? "none" : cudnn) << ", "
      << compat::cudaDeviceCount() << " GPU(s) visible)";
  }
  s << ", FFmpeg " << (TB_WITH_FFMPEG ? "yes" : "no") << ", OpenCV "
    << (TB_WITH_OPENCV ? "yes" : "no");
  return s.str();
}

}  // namespace

int runTrainerCli(int argc, char** argv) {
  CLI::App app{"tokenbench-trainer: the Tokenbench training backend (LibTorch)",
               "tokenbench-trainer"};
  app.require_subcommand(1);
  app.fallthrough(false);
  bool show_version = false;
  app.add_flag("--version", show_version, "Print versions and build options, then exit");

  auto* presets =
      app.add_subcommand("presets", "List the named presets, one per line (name first)");

  std::string preset;
  auto* print = app.add_subcommand("print-config",
                                   "Print a complete configuration, every default spelled out");
  print->add_option("--preset", preset, "Start from this preset instead of the defaults");

  std::string source;
  auto* validate = app.add_subcommand("validate-config",
                                      "Check a configuration; every error on stderr, one per line, "
                                      "starting with its JSON path (exit 2)");
  validate->add_option("file", source, "Configuration file, or - for standard input")->required();
  auto* reference = app.add_subcommand("config-reference",
                                       "Print the configuration reference (Markdown: "
                                       "every key, type, default, range, unit)");

  core::TrainCommand train_args;
  auto* train = app.add_subcommand(
      "train", "Train a tokenizer into a run directory (events on stdout, log on stderr)");
  train->add_option("--config", train_args.config_file,
                    "Configuration file, or - for standard input");
  train->add_option("--preset", train_args.preset, "Start from this preset instead of a file");
  train->add_option("--run-dir", train_args.run_dir, "Run directory (created when missing)")
      ->required();
  train->add_flag("--resume", train_args.resume, "Continue from the newest complete checkpoint");
  train->add_option("--set", train_args.sets, "Override a key: --set train.lr=1e-4 (repeatable)");
  train->add_flag("--control-stdin", train_args.control_stdin,
                  "Read control lines on stdin ({\"type\":\"stop\"}, {\"type\":\"checkpoint\"}); "
                  "its end stops the run");
  train->add_option("--time-budget", train_args.time_budget,
                    "Stop cleanly after this long: 20m, 90s, 1h");

  std::string model_config, model_preset, init_out;
  auto* model_info =
      app.add_subcommand("model-info",
                         "Print parameter counts, token grid, compression, FLOPs and "
                         "memory estimates of a configuration as one JSON object");
  model_info->add_option("--config", model_config, "Configuration file, or - for standard input");
  model_info->add_option("--preset", model_preset, "Use this preset instead of a file");
  auto* init = app.add_subcommand(
      "init", "Write an initialised checkpoint folder (model.safetensors, config.json)");
  init->add_option("--config", model_config, "Configuration file, or - for standard input");
  init->add_option("--preset", model_preset, "Use this preset instead of a file");
  init->add_option("--out", init_out, "Checkpoint folder to create (must not exist)")->required();

  cli::TokenizeArgs tok;
  auto* tokenize =
      app.add_subcommand("tokenize",
                         "Write the tokens of every video (whole) or image of a file or folder as "
                         "OUT/<name>.safetensors (int32 [t, h, w])");
  tokenize
      ->add_option("--checkpoint", tok.checkpoint,
                   "Checkpoint folder, or a run directory (its newest checkpoint)")
      ->required();
  tokenize->add_option("--input", tok.input, "Video or image file, or a folder scanned recursively")
      ->required();
  tokenize->add_option("--out", tok.out, "Folder for the token files and manifest.json (created)")
      ->required();
  tokenize
      ->add_option("--clip-frames", tok.clip_frames,
                   "Cut each video into consecutive clips of this many frames (default: code "
                   "each video whole)")
      ->check(CLI::NonNegativeNumber);
  tokenize
      ->add_option("--max-clips", tok.max_clips_per_file,
                   "With --clip-frames: at most this many clips per video (0: all)")
      ->check(CLI::NonNegativeNumber);
  tokenize
      ->add_option("--max-frames", tok.max_frames,
                   "Whole videos: code at most this many frames of each (0: all)")
      ->check(CLI::NonNegativeNumber);
  tokenize
      ->add_option("--chunk", tok.chunk,
                   "Latent frames coded at a time, the causal state carried across (memory "
                   "follows the chunk; 0: one pass); default 8")
      ->check(CLI::NonNegativeNumber);
  tokenize->add_flag("--raw-weights", tok.raw_weights,
                     "Use model.safetensors even when EMA weights exist");
  tokenize->add_option("--device", tok.device,
                       "auto (default: CUDA when available), cpu, cuda or cuda:N");
  tokenize->add_option("--precision", tok.precision,
                       "fp32 (default), bf16 (the encoder under bf16 autocast: faster on AMX or "
                       "AVX512-BF16, a few codes may differ), auto (bf16 where the hardware "
                       "computes it)");
  cli::DetokenizeArgs detok;
  auto* detokenize =
      app.add_subcommand("detokenize", "Decode a token file written by tokenize into a video");
  detokenize->add_option("--checkpoint", detok.checkpoint, "Checkpoint folder, or a run directory")
      ->required();
  detokenize
      ->add_option("--tokens", detok.tokens, "Token file (.safetensors with a \"tokens\" tensor)")
      ->required();
  detokenize->add_option("--out", detok.out, "Video to write: .gif, .mp4, .mkv, .webm, .avi")
      ->required();
  detokenize->add_option("--fps", detok.fps, "Frame rate (default: the source's, else 8)")
      ->check(CLI::PositiveNumber);
  detokenize
      ->add_option("--chunk", detok.chunk,
                   "Latent frames decoded at a time (0: one pass); default 8")
      ->check(CLI::NonNegativeNumber);
  detokenize->add_flag("--raw-weights", detok.raw_weights,
                       "Use model.safetensors even when EMA weights exist");
  detokenize->add_option("--device", detok.device,
                         "auto (default: CUDA when available), cpu, cuda or cuda:N");
  cli::MetricsArgs met;
  core::CompareCommand cmp;
  std::vector<std::string> cmp_checkpoints;  // NAME=PATH words, parsed into cmp.entries
  auto* compare =
      app.add_subcommand("compare",
                         "Reconstruct the same clips with several tokenizers; write metrics "
                         "(JSON, CSV), side-by-side GIFs and a PNG grid");
  compare
      ->add_option("--checkpoint", cmp_checkpoints,
                   "NAME=PATH: a checkpoint folder or run directory (repeat)")
      ->required();
  compare->add_option("--data", cmp.data_dir,
                      "Folder of videos or images (default: procedural clips)");
  compare->add_option("--data-type", cmp.data_type, "videos (default) or images")
      ->check(CLI::IsMember(core::compareDataTypes()));
  compare->add_option("--out", cmp.out_dir, "Folder for the review (created)")->required();
  compare->add_option("--clips", cmp.clips, "Number of clips (default 4)")
      ->check(CLI::Range(1, 1000));
  compare->add_flag("--whole-videos", cmp.whole_videos,
                    "Score each video whole (the longest prefix every tokenizer codes, in causal "
                    "chunks) instead of its first clip");
  compare
      ->add_option("--max-frames", cmp.max_frames,
                   "With --whole-videos: at most this many frames of each video (0: all)")
      ->check(CLI::NonNegativeNumber);
  compare->add_option("--lpips-net", cmp.lpips_net, "LPIPS backbone: alex (default) or vgg")
      ->check(CLI::IsMember(core::choiceNames<core::LpipsNet>()));
  compare->add_option("--lpips-backbone", cmp.lpips_backbone,
                      "torch.save dict of the backbone's features.* tensors");
  compare->add_option("--lpips-lin", cmp.lpips_lin,
                      "torch.save dict of the LPIPS lin<k>.model.1.weight tensors");
  compare->add_option("--fid-weights", cmp.fid_weights,
                      "pt_inception-2015-12-05-6726825d.pth: adds rFID over every compared frame");
  compare->add_option("--fvd-weights", cmp.fvd_weights,
                      "i3d_pretrained_400.pt: adds rFVD over the compared clips (>= 9 frames)");
  compare->add_flag("--raw-weights", cmp.raw_weights,
                    "Use model.safetensors even when EMA weights exist");
  compare->add_option("--device", cmp.device,
                      "auto (default: CUDA when available), cpu, cuda or cuda:N");
  auto* metrics =
      app.add_subcommand("metrics",
                         "Print {\"psnr\",\"ssim\",\"lpips\"} of image/video B against A as "
                         "one JSON line (means over frames)");
  metrics->add_option("a", met.a, "Reference image or video, or a folder of them")->required();
  metrics
      ->add_option("b", met.b,
                   "Image or video to compare, same size and frame count; or a folder of "
                   "files of the same names")
      ->required();
  metrics->add_option("--lpips-net", met.lpips_net, "LPIPS backbone: alex (default) or vgg")
      ->check(CLI::IsMember(core::choiceNames<core::LpipsNet>()));
  metrics->add_option(
      "--lpips-backbone", met.lpips_backbone,
      "torch.save dict of the backbone's features.* tensors (with --lpips-lin: adds \"lpips\")");
  metrics->add_option("--lpips-lin", met.lpips_lin,
                      "torch.save dict of the LPIPS lin<k>.model.1.weight tensors");
  metrics->add_option("--fid-weights", met.fid_weights,
                      "pt_inception-2015-12-05-6726825d.pth (pytorch-fid's InceptionV3): with two "
                      "image folders, adds \"rfid\"");
  metrics->add_option("--fvd-weights", met.fvd_weights,
                      "i3d_pretrained_400.pt (the I3D of VideoGPT / SEED-Voken): with two video "
                      "folders, adds \"rfvd\"");

  cli::EvaluateArgs eva;
  auto* evaluate = app.add_subcommand(
      "evaluate",
      "Score tokenizers as papers do over a folder of images (rFID) or videos (rFVD), with "
      "PSNR/SSIM/LPIPS; write metrics.json and an evaluation card (card.md, card.json)");
  evaluate
      ->add_option("--checkpoint", eva.checkpoints,
                   "NAME=PATH: a checkpoint folder or run directory (repeat)")
      ->required();
  evaluate->add_option("--data", eva.data, "Folder of images or videos, e.g. ImageNet val")
      ->required();
  evaluate
      ->add_option("--data-type", eva.data_type,
                   "images or videos (default: images when "
                   "the folder has any)")
      ->check(CLI::IsMember(core::compareDataTypes()));
  evaluate->add_option("--out", eva.out, "Folder for metrics.json, card.md, card.json")->required();
  evaluate->add_option("--split", eva.split, "The data's name in the card (default: the folder's)");
  evaluate->add_option("--fid-weights", eva.fid_weights,
                       "pt_inception-2015-12-05-6726825d.pth (pytorch-fid's InceptionV3): rFID");
  evaluate->add_option("--fvd-weights", eva.fvd_weights,
                       "i3d_pretrained_400.pt (the I3D of VideoGPT / SEED-Voken): rFVD");
  evaluate->add_option("--lpips-net", eva.lpips_net, "LPIPS backbone: alex (default) or vgg")
      ->check(CLI::IsMember(core::choiceNames<core::LpipsNet>()));
  evaluate->add_option("--lpips-backbone", eva.lpips_backbone,
                       "torch.save dict of the backbone's features.* tensors");
  evaluate->add_option("--lpips-lin", eva.lpips_lin,
                       "torch.save dict of the LPIPS lin<k>.model.1.weight tensors");
  evaluate->add_option("--num", eva.num, "Files to evaluate (default: every usable one)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{100000000}));
  evaluate
      ->add_option("--image-size", eva.image_size,
                   "Side after resize and centre crop (default: the first checkpoint's)")
      ->check(CLI::Range(8, 4096));
  evaluate
      ->add_option("--frames", eva.frames,
                   "Frames per video clip (default: the first checkpoint's data.num_frames)")
      ->check(CLI::Range(1, 1024));
  evaluate
      ->add_option("--batch", eva.batch,
                   "Clips per feature-network batch (default 16 images or 4 videos)")
      ->check(CLI::Range(1, 4096));
  evaluate->add_option(
      "--cache", eva.cache,
      "Folder of cached reals' statistics (default: ~/.cache/tokenbench/evaluation)");
  evaluate->add_flag("--raw-weights", eva.raw_weights,
                     "Use model.safetensors even when EMA weights exist");
  evaluate->add_option("--device", eva.device,
                       "auto (default: CUDA when available), cpu, cuda or cuda:N");

  cli::DataInfoArgs data_info_args;
  auto* data_info =
      app.add_subcommand("data-info",
                         "Describe a configuration's dataset as one JSON object: files, "
                         "clips, resolutions, skipped files; preview strips");
  data_info->add_option("--config", data_info_args.config,
                        "Configuration file, or - for standard input");
  data_info->add_option("--preset", data_info_args.preset, "Use this preset instead of a file");
  data_info->add_option("--preview", data_info_args.preview,
                        "Folder for preview_<k>.png frame strips (created)");
  data_info
      ->add_option("--preview-clips", data_info_args.preview_clips,
                   "Preview strips to write (default 4)")
      ->check(CLI::Range(1, 64));
  data_info->add_flag(
      "--verify", data_info_args.verify,
      "Shards: check every shard against its manifest content hash (reads every byte)");

  cli::PackArgs pack_args;
  auto* pack = app.add_subcommand(
      "pack",
      "Decode a configuration's dataset once into clip shards (uint8 safetensors) "
      "for data.type shards; one JSON summary on stdout");
  pack->add_option("--config", pack_args.config, "Configuration file, or - for standard input");
  pack->add_option("--preset", pack_args.preset, "Use this preset instead of a file");
  pack->add_option("--out", pack_args.out, "Shard folder to create (missing or empty)")->required();
  pack->add_option("--shard-mb", pack_args.shard_mb, "Pixels per shard in MiB (default 256)")
      ->check(CLI::PositiveNumber);
  pack->add_option("--threads", pack_args.threads, "Decoding threads (default: data.workers)")
      ->check(CLI::PositiveNumber);

  cli::BenchArgs bench_args;
  auto* bench =
      app.add_subcommand("bench",
                         "Time one piece of a training step with the training code; one JSON "
                         "object on stdout (median/min/max seconds, peak RSS, GFLOP/s)");
  bench->add_option("--config", bench_args.config, "Configuration file, or - for standard input");
  bench->add_option("--preset", bench_args.preset, "Use this preset instead of a file");
  bench
      ->add_option("--what", bench_args.what,
                   "gen-step-recon, gen-step, discr-step, encode, decode, train-step; or "
                   "conv-check (each convolution at --precision against fp32)")
      ->required();
  bench
      ->add_option("--batch", bench_args.batch, "Clips per micro-batch (default: train.batch_size)")
      ->check(CLI::PositiveNumber);
  bench->add_option("--steps", bench_args.steps, "Timed repetitions (default 3)")
      ->check(CLI::PositiveNumber);
  bench->add_option("--warmup", bench_args.warmup, "Untimed repetitions first (default 1)")
      ->check(CLI::NonNegativeNumber);
  bench
      ->add_option("--threads", bench_args.threads,
                   "Intra-op threads (default: train.threads, else all cores)")
      ->check(CLI::PositiveNumber);
  bench->add_flag(
      "--random-perceptual", bench_args.random_perceptual,
      "Random LPIPS weights when loss.lpips_backbone / lpips_lin are not set (same cost)");
  bench->add_flag("--no-r1", bench_args.no_r1, "discr-step without the R1 gradient penalty");
  bench->add_flag("--profile", bench_args.profile,
                  "Print on stderr the time per op and per op and tensor shapes of one extra "
                  "repetition, and the oneDNN kernels (kind, implementation) of another");
  bench->add_option("--device", bench_args.device,
                    "auto, cpu, cuda or cuda:N (default: train.device)");
  bench
      ->add_option("--precision", bench_args.precision,
                   "fp32, bf16 or fp16 (default: train.precision)")
      ->check(CLI::IsMember(core::choiceNames<core::Precision>()));

  cli::BaselineArgs base;
  std::uint64_t base_seed = 0;
  auto* baseline =
      app.add_subcommand("baseline",
                         "Fit the classic VQ reference codec (k-means of pixel blocks) at a "
                         "configuration's token grid and bits on its training data");
  baseline->add_option("--config", base.config, "Configuration file, or - for standard input");
  baseline->add_option("--preset", base.preset, "Use this preset instead of a file");
  baseline
      ->add_option("--out", base.out,
                   "Codec folder to write (config.json, codec.safetensors, reference.json)")
      ->required();
  auto* base_seed_option =
      baseline->add_option("--seed", base_seed, "k-means seed (default: train.seed)");
  baseline->add_option("--blocks", base.blocks, "Blocks per codebook at most (default 1048576)")
      ->check(CLI::PositiveNumber);
  baseline
      ->add_option("--iterations", base.iterations, "Lloyd iterations per codebook (default 15)")
      ->check(CLI::NonNegativeNumber);
  cli::ImportArgs import_args;
  auto* import_command = app.add_subcommand(
      "import",
      "Turn another project's tokenizer checkpoint (magvit2-pytorch, taming-transformers VQGAN, "
      "LlamaGen VQ) into a Tokenbench checkpoint folder");
  import_command->alias("import-magvit2");
  import_command
      ->add_option("--format", import_args.format,
                   "magvit2 (VideoTokenizer .pt or .safetensors), taming (Lightning .ckpt + its "
                   "YAML), llamagen (vq_ds16_c2i.pt ...); default magvit2")
      ->default_val("magvit2");
  import_command->add_option("--weights", import_args.weights, "The checkpoint file")->required();
  import_command->add_option(
      "--config", import_args.config,
      "magvit2: KWARGS.json (default: the .pt file's own); taming: configs/model.yaml; "
      "llamagen: ModelArgs JSON");
  import_command->add_option("--model", import_args.model,
                             "llamagen without --config: VQ-16 or VQ-8");
  import_command->add_option(
      "--name", import_args.name,
      "What reports call it (default: the format and the file's name, e.g. \"taming "
      "vqgan_imagenet_f16_16384\")");
  import_command
      ->add_option("--out", import_args.out, "Checkpoint folder to create (must not exist)")
      ->required();
  cli::ExportMagvit2Args export_args;
  auto* export_magvit2 = app.add_subcommand(
      "export-magvit2",
      "Write a checkpoint's tokenizer as magvit2-pytorch VideoTokenizer weights (safetensors)");
  export_magvit2
      ->add_option("--checkpoint", export_args.checkpoint, "Checkpoint folder, or a run directory")
      ->required();
  export_magvit2->add_option("--out", export_args.out, "safetensors file to write")->required();
  export_magvit2->add_option("--config-out", export_args.config_out,
                             "Also write the VideoTokenizer keyword arguments to this JSON file");
  export_magvit2->add_flag("--raw-weights", export_args.raw_weights,
                           "Use model.safetensors even when EMA weights exist");

  std::string summary_dir;
  auto* summary =
      app.add_subcommand("summary", "Summarise a run directory as JSON (step, losses, validation)");
  summary->add_option("--run-dir", summary_dir, "Run directory")->required();

  // --version alone needs no subcommand.
  if (argc == 2 && std::string(argv[1]) == "--version") {
    std::cout << versionText() << "\n";
    return 0;
  }
  // CLI11 reports an unknown word as "A subcommand is required"; name it instead.
  if (argc >= 2 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const auto* sub : app.get_subcommands({})) {
      names.push_back(sub->get_name());
      for (const auto& alias : sub->get_aliases()) names.push_back(alias);
    }
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      std::cerr << "tokenbench-trainer: unknown subcommand \"" << argv[1] << "\"";
      if (auto guess = core::closestMatch(argv[1], names))
        std::cerr << " (did you mean \"" << *guess << "\"?)";
      std::cerr << "\n\n" << app.help();
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::ParseError& e) {
    std::cerr << "tokenbench-trainer: " << e.what() << "\n\n" << app.help();
    return 2;
  }
  if (show_version) {
    std::cout << versionText() << "\n";
    return 0;
  }
  if (*presets) return cli::listPresets();
  if (*print) return cli::printConfig(preset);
  if (*validate) return cli::validateConfig(source);
  if (*reference) return cli::printConfigReference();
  if (*train) return cli::train(train_args);
  if (*summary) return cli::summarizeRun(summary_dir);
  if (*bench) return cli::bench(bench_args);
  if (*model_info) return cli::modelInfo(model_config, model_preset);
  if (*data_info) return cli::dataInfo(data_info_args);
  if (*pack) return cli::pack(pack_args);
  if (*tokenize) return cli::tokenize(tok);
  if (*detokenize) return cli::detokenize(detok);
  if (*metrics) return cli::computeMetrics(met);
  if (*compare) {
    for (const std::string& word : cmp_checkpoints) {
      try {
        cmp.entries.push_back(core::parseCompareEntry(word));
      } catch (const std::invalid_argument& e) {
        std::cerr << "tokenbench-trainer compare: " << e.what() << "\n";
        return 2;
      }
    }
    return cli::compare(cmp);
  }
  if (*evaluate) return cli::evaluate(eva);
  if (*init) return cli::initCheckpoint(model_config, model_preset, init_out);
  if (*baseline) {
    if (*base_seed_option) base.seed = base_seed;
    return cli::baseline(base);
  }
  if (*import_command) return cli::importCheckpoint(import_args);
  if (*export_magvit2) return cli::exportMagvit2(export_args);
  std::cerr << app.help();
  return 2;
}

}  // namespace tb::trainer
