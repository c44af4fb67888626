#!/usr/bin/env python3
"""Times lucidrains' magvit2-pytorch 0.5.1 (the reference) as `tokenbench-trainer bench` times
Tokenbench: the same rows (--what), presets, input shapes, loss weights, warm-up and timed
repetitions, one measurement per process, one JSON line on stdout (the keys ours prints where
they apply). Run it with the interpreter of the virtual environment bench/peer/setup.sh makes:

    bench/peer/.venv/bin/python bench/peer/reference_bench.py --preset bench-small --what gen-step

What each row times, on the reference's own code (VideoTokenizer and its module's functions):
  gen-step-recon  zero the gradients, forward(return_loss=True) without the perceptual loss and
                  without the GAN (MSE reconstruction + LFQ losses), backward
  gen-step        the same with every default loss: the VGG16 perceptual loss on one random frame
                  per clip and the adaptive-weighted hinge GAN term (its two gradient norms at the
                  last decoder weight)
  discr-step      the discriminator part of forward(return_discr_loss=True) on the tokenizer's
                  reconstruction made once beforehand (ours also reuses the generator's
                  reconstruction): one random frame per clip, hinge loss, and the zero-centred
                  gradient penalty on real and fake frames (--no-r1: without it), backward
  encode          tokenize(video) under torch.inference_mode()
  decode          decode_from_code_indices(codes) under torch.inference_mode()
  train-step      VideoTokenizerTrainer.train_step written out for one process (what Accelerate
                  does there on one CPU process is nothing): generator loss and backward per
                  micro-batch, clipping, AdamW step, EMA update (ema-pytorch, as the trainer), the
                  discriminator's forward(return_discr_loss=True) and backward, clipping, and its
                  AdamW step, which the trainer calls twice
"""

import argparse
import contextlib
import importlib.util
import io
import json
import os
import resource
import statistics
import sys
import time
import types

# Tokenbench's presets (`tokenbench-trainer print-config --preset NAME`) as VideoTokenizer keyword
# arguments. Ours and the reference's LFQ differ in two defaults; these are ours (diversity gamma
# 1 instead of 2.5, no soft clamp instead of 10). The counts of parameters are equal:
# bench-small 1,355,795, magvit2-readme 117,770,995 (the reference registers its encoder's final
# LayerNorm whether or not it applies it, see docs/magvit2-pytorch.md). bench-small has
# model.encoder_norm true: ours applies that LayerNorm before quantizing, the reference never does.
COMMON = dict(
    codebook_size=1024,
    lfq_entropy_loss_weight=0.1,
    lfq_commitment_loss_weight=1.0,
    lfq_diversity_gamma=1.0,
    lfq_soft_clamp_input_value=None,
    quantizer_aux_loss_weight=1.0,
    # Flash attention needs torch 2 (and a GPU): the reference asserts on torch 1.13 otherwise.
    # On a CPU it runs the same einsum attention either way.
    flash_attn=False,
)
PRESETS = {
    "bench-small": dict(
        kwargs=dict(
            COMMON,
            image_size=64,
            init_dim=32,
            max_dim=128,
            layers=(
                "residual",
                "compress_space",
                ("consecutive_residual", 1),
                "compress_time",
                "residual",
            ),
        ),
        frames=17,
        batch=2,
        threads=2,
        grad_accum=1,
        lr=2e-5,
        tokenizer_params=1355795,
    ),
    # magvit2-pytorch's README example. Its discriminator is the reference's default (49,079,293
    # parameters, attention after every block); our preset's has 33,388,715 (attention at 16x16).
    "magvit2-readme": dict(
        kwargs=dict(
            COMMON,
            image_size=128,
            init_dim=64,
            max_dim=512,
            layers=(
                "residual",
                "compress_space",
                ("consecutive_residual", 2),
                "compress_space",
                ("consecutive_residual", 2),
                "linear_attend_space",
                "compress_space",
                ("consecutive_residual", 2),
                "attend_space",
                "compress_time",
                ("consecutive_residual", 2),
                "compress_time",
                ("consecutive_residual", 2),
                "attend_time",
            ),
        ),
        frames=17,
        batch=4,
        threads=0,
        grad_accum=8,
        lr=2e-5,
        tokenizer_params=117770995,
    ),
}

# Ours (loss and train sections of both presets): loss.perceptual_weight, adversarial_weight,
# r1_weight and r1_every, train.grad_clip and ema_beta.
PERCEPTUAL_WEIGHT = 0.1
ADVERSARIAL_WEIGHT = 1.0
R1_WEIGHT = 10.0
R1_EVERY = 4
GRAD_CLIP = 1.0
EMA_BETA = 0.995

WHATS = ("gen-step-recon", "gen-step", "discr-step", "encode", "decode", "train-step")


def fail(message, code=2):
    print(f"reference_bench.py: error: {message}", file=sys.stderr)
    sys.exit(code)


def import_reference():
    """magvit2_pytorch's package __init__ also imports its trainer, which needs Accelerate,
    OpenCV, pytorch-custom-utils and more that no row here uses: the package is registered bare,
    so that importing magvit2_pytorch.magvit2_pytorch loads that module (VideoTokenizer and its
    loss functions) and what it imports, unchanged. stdout is for the JSON line: what the import
    prints goes to stderr, but for einx's warning that its functions are off on torch 1.13 (LFQ
    does not use them)."""
    spec = importlib.util.find_spec("magvit2_pytorch")
    if spec is None:
        fail("magvit2_pytorch is not importable: run bench/peer/setup.sh and use "
             "bench/peer/.venv/bin/python")
    package = types.ModuleType("magvit2_pytorch")
    package.__path__ = list(spec.submodule_search_locations)
    sys.modules["magvit2_pytorch"] = package
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            import magvit2_pytorch.magvit2_pytorch as reference
            from magvit2_pytorch.optimizer import get_optimizer
            from magvit2_pytorch.version import __version__
    except ImportError as e:
        fail(f"cannot import magvit2-pytorch ({e}): run bench/peer/setup.sh")
    for line in printed.getvalue().splitlines():
        if not line.startswith("WARNING: einx with PyTorch requires PyTorch version >= 2"):
            print(line, file=sys.stderr)
    if __version__ != "0.5.1":
        fail(f"magvit2-pytorch {__version__} is installed, this bench is for 0.5.1")
    return reference, get_optimizer


def random_vgg16(reference, torchvision):
    """The perceptual network exactly as VideoTokenizer builds it, with random weights instead of
    torchvision's ImageNet download (same cost), handed over through its `vgg` argument."""
    vgg = torchvision.models.vgg16(weights=None)
    vgg.classifier = reference.Sequential(*vgg.classifier[:-2])
    return vgg


def count(parameters):
    return sum(p.numel() for p in parameters)


def measure(body, warmup, steps):
    """As ours: max(warmup, 1) untimed repetitions (ours counts FLOPs in the first), then `steps`
    timed ones."""
    for _ in range(max(warmup, 1)):
        body()
    seconds = []
    for _ in range(steps):
        start = time.perf_counter()
        body()
        seconds.append(time.perf_counter() - start)
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", choices=sorted(PRESETS), default="bench-small")
    parser.add_argument("--what", choices=WHATS)
    parser.add_argument("--batch", type=int, default=0, help="clips per micro-batch (default: the preset's)")
    parser.add_argument("--steps", type=int, default=3, help="timed repetitions (default 3)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed repetitions first (default 1)")
    parser.add_argument("--threads", type=int, default=0,
                        help="intra-op threads (default: the preset's, else all cores)")
    parser.add_argument("--no-r1", action="store_true", help="discr-step without the gradient penalty")
    parser.add_argument("--random-perceptual", action="store_true",
                        help="accepted so that both sides take the same arguments: the VGG16 here is always random")
    parser.add_argument("--check", action="store_true",
                        help="only import the reference, build the preset's tokenizer and say what it is")
    args = parser.parse_args()
    if not args.check and not args.what:
        fail("--what is required (one of " + ", ".join(WHATS) + ")")
    if args.steps < 1:
        fail("--steps must be at least 1")

    preset = PRESETS[args.preset]
    threads = args.threads or preset["threads"] or os.cpu_count()
    batch = args.batch or preset["batch"]

    import torch
    import torchvision

    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)
    reference, get_optimizer = import_reference()
    if args.check:
        torch.manual_seed(0)
        tokenizer = reference.VideoTokenizer(**preset["kwargs"], perceptual_loss_weight=0.0)
        params = count(tokenizer.parameters())
        print(f"magvit2-pytorch 0.5.1 on torch {torch.__version__} ({os.path.dirname(torch.__file__)}): "
              f"{args.preset} tokenizer {params:,} parameters (Tokenbench: {preset['tokenizer_params']:,})")
        sys.exit(0 if params == preset["tokenizer_params"] else 1)

    # Only what a row runs takes part, as ours: the perceptual network for the generator's whole
    # loss, the discriminator for the GAN terms and its own step.
    what = args.what
    every_loss = what in ("gen-step", "train-step")
    gan = every_loss or what == "discr-step"
    kwargs = dict(
        preset["kwargs"],
        perceptual_loss_weight=PERCEPTUAL_WEIGHT if every_loss else 0.0,
        adversarial_loss_weight=ADVERSARIAL_WEIGHT if gan else 0.0,
        grad_penalty_loss_weight=R1_WEIGHT,
    )
    torch.manual_seed(0)
    if every_loss:
        kwargs["vgg"] = random_vgg16(reference, torchvision)
    tokenizer = reference.VideoTokenizer(**kwargs)
    if not gan:
        del tokenizer.discr  # ours builds none for these rows; the reference's copy_for_eval() drops it too
    tokenizer.train()
    tokenizer_params = count(tokenizer.parameters())  # VideoTokenizer.parameters(): no VGG, no discriminator
    if tokenizer_params != preset["tokenizer_params"]:
        print(f"reference_bench.py: warning: {tokenizer_params} tokenizer parameters, "
              f"Tokenbench's {args.preset} has {preset['tokenizer_params']}", file=sys.stderr)

    frames, size = preset["frames"], preset["kwargs"]["image_size"]
    video = torch.rand(batch, 3, frames, size, size) * 2 - 1
    r1_steps = 0
    extra = {}

    if what in ("gen-step-recon", "gen-step"):
        def body():
            # VideoTokenizer.parameters() leaves out the VGG16 and the discriminator: as with the
            # trainer's optimizer.zero_grad(), their gradients add up from step to step.
            tokenizer.zero_grad(set_to_none=True)
            loss, _ = tokenizer(video, return_loss=True)
            loss.backward()

        seconds = measure(body, args.warmup, args.steps)
    elif what == "discr-step":
        with torch.no_grad():
            recon = tokenizer(video)
        r1 = not args.no_r1
        r1_steps = args.steps if r1 else 0
        discr = tokenizer.discr

        def body():
            # VideoTokenizer.forward(return_discr_loss=True) from its frame pick on.
            discr.zero_grad(set_to_none=True)
            frame_indices = torch.randn((batch, frames)).topk(1, dim=-1).indices
            real = reference.pick_video_frame(video, frame_indices)
            fake = reference.pick_video_frame(recon, frame_indices).detach()
            if r1:
                real = real.requires_grad_()
                fake = fake.requires_grad_()
            real_logits = discr(real)
            fake_logits = discr(fake)
            loss = reference.hinge_discr_loss(fake_logits, real_logits)
            if r1:
                penalty = (reference.gradient_penalty(real, real_logits)
                           + reference.gradient_penalty(fake, fake_logits))
                loss = loss + penalty * tokenizer.grad_penalty_loss_weight
            loss.backward()

        seconds = measure(body, args.warmup, args.steps)
    elif what == "encode":
        with torch.inference_mode():
            seconds = measure(lambda: tokenizer.tokenize(video), args.warmup, args.steps)
    elif what == "decode":
        with torch.inference_mode():
            codes = tokenizer.tokenize(video)
            seconds = measure(lambda: tokenizer.decode_from_code_indices(codes), args.warmup, args.steps)
    else:  # train-step
        from ema_pytorch import EMA

        # VideoTokenizerTrainer's optimisers (get_optimizer's defaults, one learning rate), its
        # EMA of the whole model (ema-pytorch deep-copies it, VGG and discriminator included)
        # updated at every step as ours in this row (ema_start_step + k x ema_update_every).
        optimizer = get_optimizer(tokenizer.parameters(), lr=preset["lr"])
        discr_optimizer = get_optimizer(tokenizer.discr_parameters(), lr=preset["lr"])
        ema = EMA(tokenizer, include_online_model=False, beta=EMA_BETA, update_after_step=0, update_every=1)
        micro_batches = preset["grad_accum"]
        extra["micro_batches"] = micro_batches
        step = 0
        timed = 0
        first_timed = max(args.warmup, 1)
        clip = torch.nn.utils.clip_grad_norm_

        def body():
            nonlocal step, timed, r1_steps
            tokenizer.train()
            optimizer.zero_grad()
            for _ in range(micro_batches):
                loss, _ = tokenizer(video, return_loss=True)
                (loss / micro_batches).backward()
            clip(tokenizer.parameters(), GRAD_CLIP)
            optimizer.step()
            ema.update()
            discr_optimizer.zero_grad()
            gradient_penalty = step % R1_EVERY == 0
            for _ in range(micro_batches):
                discr_loss, _ = tokenizer(video, return_discr_loss=True,
                                          apply_gradient_penalty=gradient_penalty)
                (discr_loss / micro_batches).backward()
            clip(tokenizer.discr_parameters(), GRAD_CLIP)
            discr_optimizer.step()
            # The trainer's second call: "with self.discr_warmup.dampening(): self.discr_optimizer.step()".
            discr_optimizer.step()
            if timed >= first_timed and gradient_penalty:
                r1_steps += 1
            timed += 1
            step += 1

        seconds = measure(body, args.warmup, args.steps)

    median = statistics.median(seconds)
    out = dict(
        what=what,
        config=args.preset,
        median_s=median,
        min_s=min(seconds),
        max_s=max(seconds),
        seconds=seconds,
        steps=args.steps,
        warmup=args.warmup,
        threads=torch.get_num_threads(),
        batch=batch,
        input_shape=list(video.shape),
        peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        clips_per_s=batch * extra.get("micro_batches", 1) / median,
        tokenizer_params=tokenizer_params,
        discriminator_params=count(tokenizer.discr_parameters()) if gan else 0,
        perceptual="random" if every_loss else "off",
        gan=gan and what != "gen-step-recon",
        r1_steps=r1_steps,
        precision="fp32",
        **extra,
        torch=torch.__version__,
        implementation="magvit2-pytorch 0.5.1",
    )
    print(json.dumps(out))


if __name__ == "__main__":
    main()
