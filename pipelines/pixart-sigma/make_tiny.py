#!/usr/bin/env python3
"""make_tiny.py -- write a tiny, random-weight PixArt-Sigma model directory with save_pretrained.

    python make_tiny.py DIR [--size tiny|small]

DIR gets what `PixArtSigmaPipeline.from_pretrained(DIR)` reads: model_index.json, scheduler/,
tokenizer/, text_encoder/, transformer/, vae/. The components are PixArt-Sigma's classes:

- text_encoder: a T5EncoderModel (T5 v1.1 shape: gated-gelu feed-forward, no biases);
- tokenizer: transformers' T5Tokenizer (backed by the `tokenizers` library: no
  sentencepiece) around a Unigram vocabulary made here of the words and characters of a few
  sentences (the usual tiny T5 tokenizer is a hub download): <pad> = 0, </s> = 1, <unk> = 2,
  as T5's;
- transformer: a PixArtTransformer2DModel (ada_norm_single, learned sigma: 8 output
  channels for 4 latent ones) of sample_size 32, so that the pipeline's default resolution
  binning (its 256-pixel bins) applies to a 256 x 256 image;
- vae: an AutoencoderKL of 4 blocks (the image is 8 times the latents, as PixArt's);
- scheduler: DPMSolverMultistepScheduler, as in PixArt's published models.

--size tiny: the sizes of diffusers' own PixArt tests (a 2-layer T5 of width 32, a 2-layer
transformer of width 24, a VAE of base width 8): under a megabyte of weights each.
--size small: a 4-layer T5 of width 1024 (51 M parameters), a 3-layer transformer of width
1024 (61 M) and a VAE of base width 64 (15 M): 103, 121 and 31 MB in bfloat16 (twice that in
float32, as written), so that staging shows in the memory figures.
The weights come from a fixed seed, so two directories written by the same library versions
are identical. Nothing is downloaded.

Written atomically: into DIR.tmp-PID, then renamed, so an interrupted run leaves no half
directory; an existing complete DIR (model_index.json present) is left as it is.
"""
import os
import shutil
import sys

CORPUS = ["A red fox reading a newspaper in a sunlit cafe",
          "A small cactus with a happy face in the Sahara desert",
          "An astronaut riding a green horse, detailed oil painting",
          "a photo of a cat sitting on a wooden table next to a cup of coffee",
          "0123456789 .,:;!?-_()[]{}<>'\""]
SHAPES = {
    "tiny": dict(d_model=32, d_kv=8, d_ff=37, t5_layers=2, t5_heads=4, buckets=8,
                 heads=3, head_dim=8, layers=2, vae=(8, 16, 16, 16), vae_layers=1, groups=8),
    "small": dict(d_model=1024, d_kv=64, d_ff=2816, t5_layers=4, t5_heads=16, buckets=32,
                  heads=16, head_dim=64, layers=3, vae=(64, 128, 256, 256), vae_layers=1,
                  groups=32),
}


def tokenizer():
    """A Unigram tokenizer over CORPUS's words and characters, as transformers' T5Tokenizer.

    The vocabulary is written out, not trained: the `tokenizers` Unigram trainer breaks ties
    differently from run to run, and two prepared models must tokenize a prompt alike. T5's
    layout: <pad> = 0, </s> = 1, <unk> = 2, then the pieces ("\u2581" marks a word's start);
    a whole word scores above its characters, so known words are one token each."""
    import transformers
    words = sorted({w for line in CORPUS for w in line.split()})
    chars = sorted({c for line in CORPUS for c in line if not c.isspace()})
    vocab = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("\u2581", -2.0)]
    vocab += [("\u2581" + w, -3.0) for w in words]
    vocab += [(c, -5.0) for c in chars] + [("\u2581" + c, -5.5) for c in chars]
    pieces = dict(reversed(vocab))  # one entry per piece: the first (a word's score) wins
    vocab = [(p, pieces.pop(p)) for p, _ in vocab if p in pieces]
    return transformers.T5Tokenizer(vocab=vocab, extra_ids=0, model_max_length=512)


def components(size):
    """(text_encoder, transformer, vae) of the given size, random weights from the torch seed."""
    import diffusers
    import transformers
    sh = SHAPES[size]
    tok = tokenizer()
    t5 = transformers.T5Config(
        vocab_size=len(tok), d_model=sh["d_model"], d_kv=sh["d_kv"], d_ff=sh["d_ff"],
        num_layers=sh["t5_layers"], num_heads=sh["t5_heads"],
        relative_attention_num_buckets=sh["buckets"], feed_forward_proj="gated-gelu",
        is_encoder_decoder=False, use_cache=False, tie_word_embeddings=False,
        pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    encoder = transformers.T5EncoderModel(t5).eval()
    width = sh["heads"] * sh["head_dim"]
    transformer = diffusers.PixArtTransformer2DModel(
        sample_size=32, num_layers=sh["layers"], patch_size=2,
        attention_head_dim=sh["head_dim"], num_attention_heads=sh["heads"],
        caption_channels=sh["d_model"], in_channels=4, out_channels=8,
        cross_attention_dim=width, attention_bias=True, activation_fn="gelu-approximate",
        num_embeds_ada_norm=1000, norm_type="ada_norm_single", norm_elementwise_affine=False,
        norm_eps=1e-6)
    blocks = len(sh["vae"])
    vae = diffusers.AutoencoderKL(
        in_channels=3, out_channels=3, latent_channels=4, sample_size=256,
        down_block_types=("DownEncoderBlock2D",) * blocks,
        up_block_types=("UpDecoderBlock2D",) * blocks, block_out_channels=sh["vae"],
        layers_per_block=sh["vae_layers"], norm_num_groups=sh["groups"], scaling_factor=0.13025)
    return tok, encoder, transformer, vae


def write(path, size="tiny"):
    import torch
    import diffusers
    torch.manual_seed(0)
    tok, encoder, transformer, vae = components(size)
    scheduler = diffusers.DPMSolverMultistepScheduler()
    pipe = diffusers.PixArtSigmaPipeline(tokenizer=tok, text_encoder=encoder, vae=vae,
                                         transformer=transformer, scheduler=scheduler)
    pipe.save_pretrained(path)


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(prog="make_tiny.py", description=__doc__.splitlines()[1])
    ap.add_argument("dir")
    ap.add_argument("--size", choices=sorted(SHAPES), default="tiny")
    args = ap.parse_args(argv[1:])
    path = os.path.abspath(args.dir)
    if os.path.exists(os.path.join(path, "model_index.json")):
        return 0
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = "%s.tmp-%d" % (path, os.getpid())
    try:
        write(tmp, args.size)
        os.rename(tmp, path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("[pixart-sigma] wrote a %s model into %s" % (args.size, path), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
