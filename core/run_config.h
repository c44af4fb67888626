#pragma once
// The run configuration: every key, its default and its documentation, in one place.
// config.json in a run directory is this structure written by toJson (config_io.h).

#include "core/config_choices.h"
#include "core/config_schema.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tb::core {

/// One entry of a MAGVIT-v2 layer list, written as magvit2-pytorch users write it:
/// `"residual"` or `["consecutive_residual", 2]` / `["compress_space", 256]`.
struct LayerSpec {
  std::string name;
  std::optional<int> arg;  ///< repeat count (consecutive_residual) or dim_out (compress_*)

  bool operator==(const LayerSpec& o) const { return name == o.name && arg == o.arg; }
};

/// Names accepted in `model.layers`.
const std::vector<std::string>& magvitLayerVocabulary();
/// Names accepted in `distributed.zero3_units`: the MAGVIT-v2 layer names, the discriminators'
/// "discr_block" and "discr_attention", and "all".
const std::vector<std::string>& zero3UnitVocabulary();
/// True for layer names whose argument is required ("consecutive_residual").
bool layerRequiresArgument(const std::string& name);
/// True for layer names that accept an optional argument ("compress_space", "compress_time").
bool layerAcceptsArgument(const std::string& name);

/// The conditions of keys that only matter for some values of others (FieldSpec::appliesWhen).
namespace when {
AppliesWhen folderData();      ///< data.type is not synthetic
AppliesWhen syntheticData();   ///< data.type is synthetic
AppliesWhen heldOutShare();    ///< data.type is synthetic or data.valid_path is empty
AppliesWhen patchGan();        ///< model.discriminator.type is patchgan
AppliesWhen fsq();             ///< model.quantizer.type is fsq
AppliesWhen vq();              ///< model.quantizer.type is vq
AppliesWhen perceptual();      ///< loss.perceptual_weight > 0
AppliesWhen gan();             ///< loss.adversarial_weight > 0
AppliesWhen adaptiveWeight();  ///< the GAN and loss.adaptive_weight on
AppliesWhen r1();              ///< the GAN on and loss.r1_weight > 0
AppliesWhen lecam();           ///< the GAN on and loss.lecam_weight > 0
AppliesWhen cosine();          ///< train.schedule cosine or cosine_budget
AppliesWhen ema();             ///< train.ema on
}  // namespace when

struct DataConfig {
  DataType type = DataType::Synthetic;
  std::string path;
  std::string valid_path;
  int image_size = 64;
  int num_frames = 17;
  int frame_stride = 1;
  ClipStart clip_start = ClipStart::Random;
  CropMode crop = CropMode::Random;
  bool hflip = true;
  double valid_fraction = 0.1;
  int synthetic_clips = 2048;
  int train_crop = 0;
  int train_frames = 0;
  int workers = 2;
  int prefetch = 4;

  template <class V>
  void describe(V& v) {
    v.field("type", type,
            FieldSpec("Dataset kind: folders of video files, folders of images, "
                      "built-in procedural clips of moving shapes and textures, or clip "
                      "shards written by tokenbench-trainer pack (read without decoding)")
                .group("Source"));
    v.field("path", path,
            FieldSpec("Folder scanned recursively for videos or images, or the shard "
                      "folder (required unless type is synthetic)")
                .group("Source")
                .appliesWhen(when::folderData()));
    v.field("valid_path", valid_path,
            FieldSpec("Folder of validation videos, images or shards, e.g. other sources than "
                      "data.path's, so validation measures held-out footage; empty: a "
                      "data.valid_fraction share of data.path's files")
                .group("Source")
                .appliesWhen(when::folderData()));
    v.field("image_size", image_size,
            FieldSpec("Side of the square frames fed to the model")
                .group("Clips")
                .unit("pixels")
                .min(8)
                .max(4096));
    v.field("num_frames", num_frames,
            FieldSpec("Frames per clip; 1 + k * 2^(compress_time layers). Images use 1")
                .group("Clips")
                .unit("frames")
                .min(1)
                .max(1024));
    v.field(
        "frame_stride", frame_stride,
        FieldSpec("Take every n-th decoded frame").group("Clips").unit("frames").min(1).max(64));
    v.field("clip_start", clip_start,
            FieldSpec("Where clips start in a video: a random "
                      "position each time, or the first frame")
                .group("Clips"));
    v.field("crop", crop,
            FieldSpec("Square crop after resizing the short side to image_size").group("Clips"));
    v.field("hflip", hflip,
            FieldSpec("Flip clips horizontally at random (training split only)").group("Clips"));
    v.field(
        "train_crop", train_crop,
        FieldSpec("Side of the square training crops, taken at random from the frames resized to "
                  "image_size (the tokenizer is convolutional: smaller crops, many more clips per "
                  "second); 0: image_size. Validation, compare and tokenize see whole frames")
            .unit("pixels")
            .min(0)
            .max(4096));
    v.field("train_frames", train_frames,
            FieldSpec(
                "Frames of each training clip (a random window of the video, its first frame coded "
                "alone as a clip's first frame is); 0: num_frames. Validation uses num_frames")
                .unit("frames")
                .min(0)
                .max(1024));
    v.field("valid_fraction", valid_fraction,
            FieldSpec("Share of data.path's files (seeded split) held out for validation when "
                      "data.valid_path is empty")
                .group("Source")
                .appliesWhen(when::heldOutShare())
                .min(0)
                .max(0.9));
    v.field("synthetic_clips", synthetic_clips,
            FieldSpec("Number of distinct procedural clips (type synthetic)")
                .group("Source")
                .appliesWhen(when::syntheticData())
                .unit("clips")
                .min(2)
                .max(10000000));
    v.field(
        "workers", workers,
        FieldSpec("Data loader threads per rank").group("Loading").unit("threads").min(0).max(64));
    v.field("prefetch", prefetch,
            FieldSpec("Batches decoded ahead of the training step")
                .group("Loading")
                .unit("batches")
                .min(1)
                .max(256));
  }
};

struct QuantizerConfig {
  QuantizerType type = QuantizerType::Lfq;
  int codebook_size = 1024;
  int num_codebooks = 1;
  double entropy_loss_weight = 0.1;
  double commitment_loss_weight = 0.25;
  double diversity_gamma = 1.0;
  double soft_clamp = 0.0;
  bool spherical = false;
  EntropyEstimate entropy_estimate = EntropyEstimate::Auto;
  std::vector<int> fsq_levels = {8, 5, 5, 5};
  int codebook_dim = 8;
  double vq_beta = 0.25;
  bool vq_l2_normalize = false;
  bool vq_ema = false;
  double vq_ema_decay = 0.99;
  int vq_dead_code_threshold = 2;
  bool data_init = false;

  template <class V>
  void describe(V& v) {
    v.field("type", type,
            FieldSpec("lfq: lookup-free (MAGVIT-v2); fsq: finite scalar; vq: codebook "
                      "lookup (VQGAN)")
                .group("Quantizer"));
    v.field(
        "codebook_size", codebook_size,
        FieldSpec("Codes per codebook; a power of two for lfq (2^K, K bits per token), the product "
                  "of fsq_levels for fsq")
            .group("Quantizer")
            .unit("codes")
            .min(2)
            .max(1 << 24));
    v.field("num_codebooks", num_codebooks,
            FieldSpec("Codebooks per token (lfq)").group("Quantizer").min(1).max(16));
    v.field("entropy_loss_weight", entropy_loss_weight,
            FieldSpec("Weight of the entropy loss: lfq, per-sample entropy minus diversity_gamma x "
                      "codebook entropy; fsq, 1 minus how evenly each dimension uses its levels "
                      "over the batch (train/quantizer/level_entropy, 1 at best)")
                .group("Quantizer")
                .min(0)
                .max(1e4));
    v.field("commitment_loss_weight", commitment_loss_weight,
            FieldSpec("Weight of the commitment loss (lfq, fsq). On fsq it pulls values into "
                      "tanh's flat ends, where the extreme levels stop learning: fsq presets use 0")
                .group("Quantizer")
                .min(0)
                .max(1e4));
    v.field("diversity_gamma", diversity_gamma,
            FieldSpec("Weight of the codebook-entropy term inside the LFQ entropy loss")
                .group("Quantizer")
                .min(0)
                .max(1e4));
    v.field("soft_clamp", soft_clamp,
            FieldSpec("Soft clamp of LFQ inputs to +-value via tanh; 0 turns it off")
                .group("Quantizer")
                .min(0)
                .max(1e4));
    v.field("spherical", spherical,
            FieldSpec("Binary spherical quantization (BSQ): l2-normalise LFQ inputs and codes")
                .group("Quantizer"));
    v.field("entropy_estimate", entropy_estimate,
            FieldSpec("Codebook entropy: exact [tokens x 2^K] softmax, factorised per-bit-group "
                      "estimate, or auto (exact up to K = 12)")
                .group("Quantizer"));
    v.field("fsq_levels", fsq_levels,
            FieldSpec("Levels per FSQ dimension")
                .group("Quantizer")
                .appliesWhen(when::fsq())
                .min(2)
                .max(256));
    v.field("codebook_dim", codebook_dim,
            FieldSpec("Dimension of each VQ code (the latent channels for VQGAN)")
                .group("Quantizer")
                .min(1)
                .max(4096));
    v.field("vq_beta", vq_beta,
            FieldSpec("VQ commitment weight beta")
                .group("Quantizer")
                .appliesWhen(when::vq())
                .min(0)
                .max(10000));
    v.field("vq_l2_normalize", vq_l2_normalize,
            FieldSpec("Look up l2-normalised codes with l2-normalised latents (cosine distance)")
                .group("Quantizer")
                .appliesWhen(when::vq()));
    v.field("vq_ema", vq_ema,
            FieldSpec("Update VQ codes by exponential moving averages instead of "
                      "the codebook loss")
                .group("Quantizer")
                .appliesWhen(when::vq()));
    v.field("vq_ema_decay", vq_ema_decay,
            FieldSpec("Decay of the VQ EMA updates")
                .group("Quantizer")
                .appliesWhen(when::vq())
                .min(0)
                .max(1));
    v.field("vq_dead_code_threshold", vq_dead_code_threshold,
            FieldSpec("Codes used fewer times than this over a window are restarted from recent "
                      "encoder outputs; 0 turns restarts off")
                .group("Quantizer")
                .appliesWhen(when::vq())
                .unit("uses")
                .min(0));
    v.field(
        "data_init", data_init,
        FieldSpec("Data-dependent initialisation: before the first step of a new run, scale and "
                  "shift the quantizer's input projection so that each code dimension has zero "
                  "mean and unit variance on the first training batch (lfq, fsq and vq with a "
                  "projection)")
            .group("Quantizer"));
  }
};

struct VqganConfig {
  int base_channels = 128;
  std::vector<int> channel_mult = {1, 1, 2, 2, 4};
  int num_res_blocks = 2;
  std::vector<int> attn_resolutions = {16};
  int resolution = 0;
  int z_channels = 256;

  template <class V>
  void describe(V& v) {
    v.field("base_channels", base_channels,
            FieldSpec("Channels of the first VQGAN level")
                .group("VQGAN architecture")
                .unit("channels")
                .min(8)
                .max(1024));
    v.field("channel_mult", channel_mult,
            FieldSpec("Channel multiplier per level; len - 1 halvings of the resolution")
                .group("VQGAN architecture")
                .min(1)
                .max(16));
    v.field("num_res_blocks", num_res_blocks,
            FieldSpec("Residual blocks per level").group("VQGAN architecture").min(1).max(8));
    v.field("attn_resolutions", attn_resolutions,
            FieldSpec("Feature-map sides at which attention blocks are inserted, counted from "
                      "an image of side resolution")
                .group("VQGAN architecture")
                .unit("pixels")
                .min(1));
    v.field("resolution", resolution,
            FieldSpec("Image side that places the attention blocks (taming's "
                      "ddconfig.resolution): the level whose side, halved once per level from "
                      "this, is in attn_resolutions gets attention, whatever size the images "
                      "are; 0: data.image_size")
                .group("VQGAN architecture")
                .unit("pixels")
                .min(0)
                .max(16384));
    v.field("z_channels", z_channels,
            FieldSpec("Channels at the bottleneck before the quantizer projection")
                .group("VQGAN architecture")
                .min(1)
                .max(4096));
  }
};

struct DiscriminatorConfig {
  DiscriminatorType type = DiscriminatorType::Frame;
  int dim = 0;
  int max_dim = 512;
  std::vector<int> attn_resolutions = {16};
  int patchgan_layers = 3;

  template <class V>
  void describe(V& v) {
    v.field("type", type,
            FieldSpec("frame: MAGVIT-v2's per-frame discriminator; patchgan: "
                      "taming's PatchGAN; video: 3-D discriminator over clips")
                .group("Discriminator"));
    v.field("dim", dim,
            FieldSpec("Base channels; 0 means model.init_dim")
                .group("Discriminator")
                .unit("channels")
                .min(0)
                .max(1024));
    v.field("max_dim", max_dim,
            FieldSpec("Channel cap").group("Discriminator").unit("channels").min(8).max(4096));
    v.field("attn_resolutions", attn_resolutions,
            FieldSpec("Feature-map sides with attention (frame discriminator)")
                .group("Discriminator")
                .unit("pixels")
                .min(1));
    v.field("patchgan_layers", patchgan_layers,
            FieldSpec("Strided layers of the PatchGAN")
                .group("Discriminator")
                .appliesWhen(when::patchGan())
                .min(1)
                .max(8));
  }
};

struct ModelConfig {
  ModelKind kind = ModelKind::Magvit2;
  int channels = 3;
  int init_dim = 32;
  int max_dim = 128;
  std::vector<LayerSpec> layers = {{"residual", {}},
                                   {"compress_space", {}},
                                   {"consecutive_residual", 1},
                                   {"compress_time", {}},
                                   {"residual", {}}};
  std::vector<int> input_conv_kernel = {7, 7, 7};
  std::vector<int> output_conv_kernel = {3, 3, 3};
  int residual_conv_kernel = 3;
  double residual_gate_bias = -10.0;
  bool separate_first_frame_encoding = false;
  TimePadding time_padding = TimePadding::Zeros;
  TimeAlignment time_alignment = TimeAlignment::Lagged;
  PixelRange pixel_range = PixelRange::MinusOneOne;
  bool encoder_norm = true;
  int attn_dim_head = 32;
  int attn_heads = 8;
  int attn_num_mem_kv = 4;
  int linear_attn_dim_head = 8;
  int linear_attn_heads = 16;
  int ff_mult = 4;
  int dim_cond = 0;
  QuantizerConfig quantizer;
  VqganConfig vqgan;
  DiscriminatorConfig discriminator;

  template <class V>
  void describe(V& v) {
    v.field("kind", kind,
            FieldSpec("magvit2: causal 3-D video tokenizer; vqgan: taming-style 2-D "
                      "image tokenizer applied frame by frame")
                .group("Tokenizer"));
    v.field("channels", channels,
            FieldSpec("Colour channels of the input").group("Tokenizer").min(1).max(4));
    v.field("init_dim", init_dim,
            FieldSpec("Channels after the input convolution (MAGVIT-v2)")
                .group("MAGVIT-v2 architecture")
                .unit("channels")
                .min(1)
                .max(4096));
    v.field("max_dim", max_dim,
            FieldSpec("Cap on channels as compress_space doubles them")
                .group("MAGVIT-v2 architecture")
                .unit("channels")
                .min(1)
                .max(8192));
    v.field("layers", layers,
            FieldSpec("Encoder layer list, as in magvit2-pytorch; the decoder mirrors it")
                .group("MAGVIT-v2 architecture"));
    v.field("input_conv_kernel", input_conv_kernel,
            FieldSpec("Input convolution kernel [t, h, w]")
                .group("MAGVIT-v2 architecture")
                .length(3)
                .min(1)
                .max(15));
    v.field("output_conv_kernel", output_conv_kernel,
            FieldSpec("Output convolution kernel [t, h, w]")
                .group("MAGVIT-v2 architecture")
                .length(3)
                .min(1)
                .max(15));
    v.field("residual_conv_kernel", residual_conv_kernel,
            FieldSpec("Kernel of the causal convolutions in residual blocks")
                .group("MAGVIT-v2 architecture")
                .min(1)
                .max(15));
    v.field(
        "residual_gate_bias", residual_gate_bias,
        FieldSpec("Initial bias of the residual units' squeeze-excite gates (a sigmoid). "
                  "magvit2-pytorch's -10 shuts them: every residual unit starts as the identity "
                  "and opens by about train.lr per step, so for thousands of steps the tokenizer "
                  "is nearly linear; 0 starts them half open")
            .group("MAGVIT-v2 architecture")
            .min(-20)
            .max(20));
    v.field("separate_first_frame_encoding", separate_first_frame_encoding,
            FieldSpec("Encode the first frame with its own convolutions (image + video tokenizer)")
                .group("MAGVIT-v2 architecture"));
    v.field(
        "time_padding", time_padding,
        FieldSpec("What the causal convolutions see before the first frame: zero frames "
                  "(magvit2-pytorch) or copies of the first frame (it is then coded like a still "
                  "scene, not a cut from black, and learns as fast as the other frames)")
            .group("MAGVIT-v2 architecture"));
    v.field("time_alignment", time_alignment,
            FieldSpec("Which frames a time-compressed token holds: lagged (magvit2-pytorch: up to "
                      "the frame before the last one it decodes, so every second frame is "
                      "predicted, never coded) or blocks (every frame it decodes, as the "
                      "MAGVIT-v2 paper groups them; still causal from token to token)")
                .group("MAGVIT-v2 architecture"));
    v.field(
        "pixel_range", pixel_range,
        FieldSpec("Pixel range the tokenizer's weights take and give: minus_one_one ([-1, 1], "
                  "Tokenbench's own models) or zero_one ([0, 1], what magvit2-pytorch's trainer "
                  "feeds; set by import-magvit2). Frames stay in [-1, 1] everywhere else: the "
                  "tokenizer and the discriminator map them at their input and output")
            .group("MAGVIT-v2 architecture"));
    v.field("encoder_norm", encoder_norm,
            FieldSpec("Apply the encoder's last LayerNorm before the quantizer (MAGVIT-v2). "
                      "magvit2-pytorch registers this norm but its encode() never applies it (its "
                      "layer loop stops one layer short), so its checkpoints import with false; "
                      "only a model trained with false exports to it")
                .group("MAGVIT-v2 architecture"));
    v.field("attn_dim_head", attn_dim_head,
            FieldSpec("Attention head width").group("MAGVIT-v2 architecture").min(1).max(1024));
    v.field("attn_heads", attn_heads,
            FieldSpec("Attention heads").group("MAGVIT-v2 architecture").min(1).max(128));
    v.field("attn_num_mem_kv", attn_num_mem_kv,
            FieldSpec("Learned memory key/values per attention layer")
                .group("MAGVIT-v2 architecture")
                .min(0)
                .max(256));
    v.field("linear_attn_dim_head", linear_attn_dim_head,
            FieldSpec("Linear (Taylor) attention head width")
                .group("MAGVIT-v2 architecture")
                .min(1)
                .max(256));
    v.field("linear_attn_heads", linear_attn_heads,
            FieldSpec("Linear attention heads").group("MAGVIT-v2 architecture").min(1).max(128));
    v.field("ff_mult", ff_mult,
            FieldSpec("Feed-forward width multiplier (GEGLU inner width is "
                      "int(dim x ff_mult x 2/3))")
                .group("MAGVIT-v2 architecture")
                .min(1)
                .max(16));
    v.field("dim_cond", dim_cond,
            FieldSpec("Width of the conditioning vector of cond_* layers; 0 without")
                .group("MAGVIT-v2 architecture")
                .min(0)
                .max(4096));
    v.section("quantizer", quantizer);
    v.section("vqgan", vqgan);
    v.section("discriminator", discriminator);
  }
};

struct LossConfig {
  ReconLoss recon = ReconLoss::L1;
  double recon_weight = 1.0;
  double quantizer_weight = 1.0;
  double perceptual_weight = 0.1;
  LpipsNet perceptual_net = LpipsNet::Vgg;
  std::string lpips_backbone;
  std::string lpips_lin;
  int perceptual_frames = 1;
  double adversarial_weight = 0.1;
  bool adaptive_weight = true;
  double adaptive_weight_max = 1e4;
  int discr_start_step = 0;
  double r1_weight = 10.0;
  int r1_every = 4;
  double lecam_weight = 0.0;
  double lecam_decay = 0.999;

  template <class V>
  void describe(V& v) {
    v.field("recon", recon, FieldSpec("Pixel reconstruction loss").group("Loss"));
    v.field("recon_weight", recon_weight,
            FieldSpec("Weight of the reconstruction loss").group("Loss").min(0).max(1e4));
    v.field("quantizer_weight", quantizer_weight,
            FieldSpec("Multiplier on the quantizer's own losses").group("Loss").min(0).max(1e4));
    v.field("perceptual_weight", perceptual_weight,
            FieldSpec("Weight of the LPIPS perceptual loss; 0 turns it off")
                .group("Loss")
                .min(0)
                .max(1e4));
    v.field("perceptual_net", perceptual_net,
            FieldSpec("LPIPS backbone").group("Loss").appliesWhen(when::perceptual()));
    v.field(
        "lpips_backbone", lpips_backbone,
        FieldSpec("torch.save'd plain dict of the torchvision backbone (features.N.weight/bias); "
                  "required when perceptual_weight > 0")
            .group("Loss")
            .appliesWhen(when::perceptual()));
    v.field("lpips_lin", lpips_lin,
            FieldSpec("torch.save'd plain dict of the LPIPS linear layers (linN.model.1.weight)")
                .group("Loss")
                .appliesWhen(when::perceptual()));
    v.field("perceptual_frames", perceptual_frames,
            FieldSpec("Frames per clip, chosen at random, that the perceptual loss sees")
                .group("Loss")
                .appliesWhen(when::perceptual())
                .unit("frames")
                .min(1));
    v.field("adversarial_weight", adversarial_weight,
            FieldSpec("Weight of the generator's hinge GAN loss; 0 turns the GAN off")
                .group("Loss")
                .min(0)
                .max(1e4));
    v.field(
        "adaptive_weight", adaptive_weight,
        FieldSpec("Scale the GAN loss by VQGAN's adaptive weight (ratio of gradient norms at the "
                  "last decoder layer)")
            .group("Loss")
            .appliesWhen(when::gan()));
    v.field("adaptive_weight_max", adaptive_weight_max,
            FieldSpec("Clamp of the adaptive weight")
                .group("Loss")
                .appliesWhen(when::adaptiveWeight())
                .above(0)
                .max(1e6));
    v.field("discr_start_step", discr_start_step,
            FieldSpec("Step from which the discriminator trains and the GAN loss applies")
                .group("Loss")
                .appliesWhen(when::gan())
                .unit("steps")
                .min(0));
    v.field("r1_weight", r1_weight,
            FieldSpec("Weight of the R1 gradient penalty")
                .group("Loss")
                .appliesWhen(when::gan())
                .min(0)
                .max(1e4));
    v.field("r1_every", r1_every,
            FieldSpec("Apply the R1 penalty every n discriminator steps")
                .group("Loss")
                .appliesWhen(when::r1())
                .unit("steps")
                .min(1));
    v.field("lecam_weight", lecam_weight,
            FieldSpec("Weight of LeCAM regularisation; 0 turns it off")
                .group("Loss")
                .appliesWhen(when::gan())
                .min(0)
                .max(1e4));
    v.field("lecam_decay", lecam_decay,
            FieldSpec("EMA decay of LeCAM's logit anchors")
                .group("Loss")
                .appliesWhen(when::lecam())
                .min(0)
                .max(1));
  }
};

struct TrainConfig {
  int seed = 0;
  int batch_size = 2;
  int grad_accum = 1;
  double lr = 1e-4;
  double discr_lr = 1e-4;
  int warmup_steps = 100;
  int max_steps = 10000;
  Schedule schedule = Schedule::Constant;
  double min_lr_ratio = 0.1;
  double weight_decay = 0.0;
  double adam_beta1 = 0.9;
  double adam_beta2 = 0.99;
  double grad_clip = 1.0;
  Precision precision = Precision::Fp32;
  std::string device = "auto";
  LossScaling loss_scaling = LossScaling::Auto;
  double loss_scale_init = 65536.0;
  int loss_scale_growth_interval = 2000;
  int threads = 0;
  bool ema = true;
  double ema_beta = 0.995;
  int ema_update_every = 10;
  int ema_start_step = 100;
  int log_every = 10;
  int valid_every = 500;
  int valid_clips = 8;
  bool reference_codec = false;
  int sample_every = 500;
  int checkpoint_every = 1000;
  int checkpoint_total_limit = 3;
  std::vector<int> checkpoint_keep;
  int nan_max_consecutive = 5;
  double nan_lr_scale = 0.5;
  int nan_max_rollbacks = 3;
  std::vector<std::string> activation_checkpointing;
  double time_budget_s = 0;
  std::string init_checkpoint;

  template <class V>
  void describe(V& v) {
    v.field("seed", seed,
            FieldSpec("Seed of initialisation, data order and augmentation")
                .group("Optimisation")
                .min(0));
    v.field("batch_size", batch_size,
            FieldSpec("Clips per micro-step on each rank")
                .group("Optimisation")
                .unit("clips")
                .min(1)
                .max(4096));
    v.field("grad_accum", grad_accum,
            FieldSpec("Micro-steps accumulated per optimiser step")
                .group("Optimisation")
                .unit("micro-steps")
                .min(1)
                .max(4096));
    v.field("lr", lr,
            FieldSpec("Peak learning rate of the tokenizer (AdamW)")
                .group("Optimisation")
                .above(0)
                .max(1));
    v.field("discr_lr", discr_lr,
            FieldSpec("Peak learning rate of the discriminator")
                .group("Optimisation")
                .appliesWhen(when::gan())
                .above(0)
                .max(1));
    v.field("warmup_steps", warmup_steps,
            FieldSpec("Linear warmup; the rate reaches lr exactly at this step")
                .group("Schedule")
                .unit("steps")
                .min(0));
    v.field("max_steps", max_steps,
            FieldSpec("Optimiser steps to train").group("Schedule").unit("steps").min(1));
    v.field(
        "schedule", schedule,
        FieldSpec("Rate after warmup: constant; cosine down to the floor at max_steps; "
                  "cosine_budget: the same, but with a time budget the cosine ends where the "
                  "budget is estimated to run out (fixed once from the speed of 100 steps timed "
                  "from the end of warmup, logged, and kept in checkpoints)")
            .group("Schedule"));
    v.field("min_lr_ratio", min_lr_ratio,
            FieldSpec("Cosine schedule floor as a fraction of lr")
                .group("Schedule")
                .appliesWhen(when::cosine())
                .min(0)
                .max(1));
    v.field("weight_decay", weight_decay,
            FieldSpec("AdamW decoupled weight decay (applied to weights with >= 2 dimensions only)")
                .group("Optimisation")
                .min(0)
                .max(10));
    v.field("adam_beta1", adam_beta1,
            FieldSpec("AdamW beta1").group("Optimisation").min(0).max(0.999999));
    v.field("adam_beta2", adam_beta2,
            FieldSpec("AdamW beta2").group("Optimisation").min(0).max(0.999999));
    v.field("grad_clip", grad_clip,
            FieldSpec("Clip the global gradient norm; 0 turns clipping off")
                .group("Optimisation")
                .min(0)
                .max(1e6));
    v.field("precision", precision,
            FieldSpec("fp32; bf16 autocast (CPU or CUDA); fp16 autocast with dynamic loss scaling "
                      "(CUDA only); auto: bf16 where the hardware computes it (a CPU with AMX-BF16 "
                      "or AVX512-BF16, a GPU of compute capability 8.0 or newer) and every "
                      "convolution of the model passes a bf16 check against fp32 at start, else "
                      "fp32 (the choice is in hello and the log). Losses, the quantizer, norms "
                      "and the optimizer stay fp32")
                .group("Precision and memory"));
    v.field(
        "device", device,
        FieldSpec(
            "auto: CUDA when this build has it and a GPU is visible, else the CPU; cpu; cuda "
            "(the first GPU, or one per local rank); cuda:N. With several local ranks each rank "
            "takes cuda:<distributed.gpu_ids[local rank]> (or cuda:<local rank>)"));
    v.field(
        "loss_scaling", loss_scaling,
        FieldSpec("Dynamic loss scaling: auto (on with fp16, off otherwise), on, off. Steps whose "
                  "gradients overflow are skipped and the scale lowered"));
    v.field("loss_scale_init", loss_scale_init,
            FieldSpec("Initial loss scale of dynamic loss scaling").above(0).max(1e12));
    v.field("loss_scale_growth_interval", loss_scale_growth_interval,
            FieldSpec("Clean steps after which the loss scale doubles").unit("steps").min(1));
    v.field("threads", threads,
            FieldSpec("Intra-op threads per rank; 0 means cores / local ranks")
                .group("Precision and memory")
                .unit("threads")
                .min(0)
                .max(1024));
    v.field("ema", ema,
            FieldSpec("Keep an exponential moving average of the tokenizer for "
                      "validation and samples")
                .group("EMA"));
    v.field("ema_beta", ema_beta,
            FieldSpec("EMA decay").group("EMA").appliesWhen(when::ema()).min(0).max(1));
    v.field("ema_update_every", ema_update_every,
            FieldSpec("Steps between EMA updates")
                .group("EMA")
                .appliesWhen(when::ema())
                .unit("steps")
                .min(1));
    v.field("ema_start_step", ema_start_step,
            FieldSpec("Step at which the EMA copies the weights and starts averaging")
                .group("EMA")
                .appliesWhen(when::ema())
                .unit("steps")
                .min(0));
    v.field("log_every", log_every,
            FieldSpec("Steps between metric rows")
                .group("Logging, validation and checkpoints")
                .unit("steps")
                .min(1));
    v.field("valid_every", valid_every,
            FieldSpec("Steps between validations; 0 never")
                .group("Logging, validation and checkpoints")
                .unit("steps")
                .min(0));
    v.field("valid_clips", valid_clips,
            FieldSpec("Held-out clips per validation, spread evenly over the held-out clips (files "
                      "in name order)")
                .group("Logging, validation and checkpoints")
                .unit("clips")
                .min(1));
    v.field(
        "reference_codec", reference_codec,
        FieldSpec(
            "Before the first step, fit the classic VQ reference codec (k-means of pixel blocks at "
            "this tokenizer's token grid and bits) on the training data into <run>/reference, "
            "scored on the validation clips: the window draws its PSNR beside valid/psnr"));
    v.field("sample_every", sample_every,
            FieldSpec("Steps between sample GIFs; 0 never")
                .group("Logging, validation and checkpoints")
                .unit("steps")
                .min(0));
    v.field("checkpoint_every", checkpoint_every,
            FieldSpec("Steps between checkpoints; 0 only at the end")
                .group("Logging, validation and checkpoints")
                .unit("steps")
                .min(0));
    v.field(
        "checkpoint_total_limit", checkpoint_total_limit,
        FieldSpec("Checkpoints kept (oldest deleted first, checkpoint_keep excepted); 0 keeps all")
            .group("Logging, validation and checkpoints")
            .min(0));
    v.field("checkpoint_keep", checkpoint_keep,
            FieldSpec("Steps whose checkpoints are never deleted")
                .group("Logging, validation and checkpoints")
                .unit("steps")
                .min(1));
    v.field("nan_max_consecutive", nan_max_consecutive,
            FieldSpec("Non-finite steps in a row before rolling back to the last checkpoint")
                .group("Recovery")
                .min(1));
    v.field("nan_max_rollbacks", nan_max_rollbacks,
            FieldSpec("Rollbacks in a row without a new checkpoint before the run ends as diverged")
                .group("Recovery")
                .min(0));
    v.field("nan_lr_scale", nan_lr_scale,
            FieldSpec("Learning-rate factor applied after a rollback")
                .group("Recovery")
                .above(0)
                .max(1));
    v.field("activation_checkpointing", activation_checkpointing,
            FieldSpec("Layer types whose activations are recomputed in backward, or [\"all\"]")
                .group("Precision and memory"));
    v.field("time_budget_s", time_budget_s,
            FieldSpec("Stop cleanly after this much wall-clock training, the run's sessions "
                      "together; 0 means no limit. train.schedule cosine_budget decays over it")
                .group("Schedule")
                .unit("s")
                .min(0)
                .max(1e9));
    v.field(
        "init_checkpoint", init_checkpoint,
        FieldSpec("Checkpoint folder (or run directory: its newest checkpoint) whose weights a new "
                  "run starts from: model.safetensors, and discriminator.safetensors when the GAN "
                  "is on and the folder has one; empty: random initialisation. Ignored when "
                  "resuming (--resume)"));
  }
};

struct EvalConfig {
  int every_steps = 0;
  int clips = 256;
  std::string fid_weights;
  std::string fvd_weights;

  template <class V>
  void describe(V& v) {
    v.field(
        "every_steps", every_steps,
        FieldSpec("Steps between rFID / rFVD evaluations of the tokenizer (its EMA weights when "
                  "there are any) on a fixed held-out subset; 0 never. The reals' statistics "
                  "are computed once per run (<run>/eval/). valid/rfid, valid/rfvd")
            .group("rFID and rFVD")
            .unit("steps")
            .min(0));
    v.field("clips", clips,
            FieldSpec(
                "Held-out clips of each evaluation, spread evenly over the validation "
                "clips and the same every time; fewer when there are fewer. rFID takes every frame "
                "of them, rFVD each clip. Papers use 50,000 images and whole test splits: "
                "a small N is biased upward and compares only with itself")
                .group("rFID and rFVD")
                .unit("clips")
                .min(2)
                .max(1000000));
    v.field("fid_weights", fid_weights,
            FieldSpec("pt_inception-2015-12-05-6726825d.pth, pytorch-fid's InceptionV3: logs "
                      "valid/rfid; empty: no rFID")
                .group("rFID and rFVD"));
    v.field("fvd_weights", fvd_weights,
            FieldSpec("i3d_pretrained_400.pt, the I3D of VideoGPT / SEED-Voken (clips of at "
                      "least 9 frames): logs valid/rfvd; empty: no rFVD")
                .group("rFID and rFVD"));
  }
};

struct DistributedConfig {
  Strategy strategy = Strategy::None;
  Backend backend = Backend::Auto;
  int nproc_per_node = 1;
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::vector<int> gpu_ids;
  int timeout_s = 60;
  double bucket_mb = 25;
  std::vector<std::string> zero3_units = {"all"};

  template <class V>
  void describe(V& v) {
    v.field(
        "strategy", strategy,
        FieldSpec("none: one process; ddp: replicated model, bucketed gradient all-reduce; zero1: "
                  "ddp with optimizer state sharded across ranks; zero2: zero1 with gradients "
                  "sharded too; zero3: zero2 with parameters sharded too, each layer gathered "
                  "only while it runs")
            .group("Processes"));
    v.field(
        "backend", backend,
        FieldSpec("c10d backend: auto (nccl when training on CUDA, else gloo), gloo (CPU or CUDA "
                  "tensors), nccl (CUDA builds, one GPU per rank)")
            .group("Processes"));
    v.field("nproc_per_node", nproc_per_node,
            FieldSpec("Rank processes the trainer starts on this node")
                .group("Processes")
                .unit("processes")
                .min(1)
                .max(1024));
    v.field("nnodes", nnodes,
            FieldSpec("Nodes taking part").group("Processes").unit("nodes").min(1).max(65536));
    v.field("node_rank", node_rank, FieldSpec("Index of this node").group("Processes").min(0));
    v.field("master_addr", master_addr,
            FieldSpec("Host of rank 0's c10d store").group("Rendezvous"));
    v.field("master_port", master_port,
            FieldSpec("TCP port of the c10d store").group("Rendezvous").min(1).max(65535));
    v.field("gpu_ids", gpu_ids,
            FieldSpec("CUDA devices for the local ranks; empty means LOCAL_RANK")
                .group("Processes")
                .min(0));
    v.field("timeout_s", timeout_s,
            FieldSpec("A collective or peer silent this long ends every rank with an error")
                .group("Rendezvous")
                .unit("s")
                .min(1));
    v.field("bucket_mb", bucket_mb,
            FieldSpec("Gradient bucket size (ddp, zero1: all-reduce; zero2: reduce-scatter)")
                .group("Gradient exchange")
                .unit("MiB")
                .above(0)
                .max(4096));
    v.field(
        "zero3_units", zero3_units,
        FieldSpec(
            "zero3: layer types (MAGVIT-v2 layer names, the discriminators' \"discr_block\" "
            "and \"discr_attention\", or [\"all\"]) whose layers are units of their own, gathered "
            "one at a time; the other parameters form one unit gathered for the whole "
            "forward and backward"));
  }
};

/// The whole configuration of a run (config.json). Defaults make a small MAGVIT-v2 tokenizer on
/// procedural data that trains on one CPU process.
struct RunConfig {
  int version = 1;
  DataConfig data;
  ModelConfig model;
  LossConfig loss;
  TrainConfig train;
  EvalConfig eval;
  DistributedConfig distributed;

  template <class V>
  void describe(V& v) {
    v.field("version", version, FieldSpec("Schema version of this file").min(1).max(1));
    v.section("data", data);
    v.section("model", model);
    v.section("loss", loss);
    v.section("train", train);
    v.section("eval", eval);
    v.section("distributed", distributed);
  }
};

/// A train.device value.
struct DeviceSpec {
  std::string kind;  ///< "auto", "cpu" or "cuda"
  int index = -1;    ///< the N of "cuda:N"; -1 when none was given
};

/// Parses "auto", "cpu", "cuda" and "cuda:N" (N a decimal 0..1023); nullopt for anything else.
std::optional<DeviceSpec> parseDeviceSpec(const std::string& text);

/// Number of `compress_space` / `compress_time` layers in a MAGVIT-v2 layer list.
int countLayers(const std::vector<LayerSpec>& layers, const std::string& name);

}  // namespace tb::core
