#!/usr/bin/env python3
"""make_tiny.py -- write a random-weight diffusers model directory of a pipeline class the
repository's pipelines do not use, with save_pretrained (nothing is downloaded).

    python make_tiny.py DIR [--class sd3|sdxl] [--size tiny|small]

sd3: StableDiffusion3Pipeline with three text encoders (two CLIPTextModelWithProjection, as
SD3's CLIP-L and CLIP-G, and a T5EncoderModel), an SD3Transformer2DModel and an
AutoencoderKL. sdxl: StableDiffusionXLPipeline (CLIPTextModel,
CLIPTextModelWithProjection, UNet2DConditionModel, AutoencoderKL). The CLIP tokenizers are
transformers' CLIPTokenizer around a byte-level vocabulary written here (no merges), the T5
one pipelines/pixart-sigma/make_tiny.py's.

--size tiny: widths of diffusers' own tests (under a megabyte a model); --size small: each
model tens of MB in bfloat16. Weights from a fixed seed, written in float32; written into
DIR.tmp-PID then renamed; an existing DIR with model_index.json is left as it is.
"""
import argparse
import json
import os
import shutil
import sys

W = {"tiny": dict(clip=32, clip2=32, layers=2, ff=37, heads=4, proj=32, tw=8, th=4, tl=1,
                  unet=(32, 64), vae=(8, 16)),
     "small": dict(clip=384, clip2=512, layers=6, ff=1536, heads=8, proj=256, tw=64, th=8,
                   tl=4, unet=(128, 256), vae=(64, 128))}


def tokenizer(dirname):
    import transformers
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) \
        + list(range(ord("\xae"), ord("\xff") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    chars = [chr(c) for c in cs]
    vocab = {}
    for c in chars:
        vocab[c] = len(vocab)
    for c in chars:
        vocab[c + "</w>"] = len(vocab)
    vocab["<|startoftext|>"] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    os.makedirs(dirname, exist_ok=True)
    with open(os.path.join(dirname, "vocab.json"), "w") as f:
        json.dump(vocab, f)
    with open(os.path.join(dirname, "merges.txt"), "w") as f:
        f.write("#version: 0.2\n")
    tok = transformers.CLIPTokenizer(vocab=os.path.join(dirname, "vocab.json"),
                                     merges=os.path.join(dirname, "merges.txt"),
                                     model_max_length=77)
    return tok, len(vocab)


def clip(width, layers, ff, heads, proj, vocab, projection):
    import transformers
    conf = transformers.CLIPTextConfig(
        hidden_size=width, intermediate_size=ff, num_attention_heads=heads,
        num_hidden_layers=layers, vocab_size=vocab, projection_dim=proj,
        max_position_embeddings=77, bos_token_id=vocab - 2, eos_token_id=vocab - 1,
        pad_token_id=vocab - 1, hidden_act="gelu")
    cls = transformers.CLIPTextModelWithProjection if projection else transformers.CLIPTextModel
    return cls(conf).eval()


def sd3(sh, tok, vocab):
    import diffusers
    te = clip(sh["clip"], sh["layers"], sh["ff"], sh["heads"], sh["proj"], vocab, True)
    te2 = clip(sh["clip2"], sh["layers"], sh["ff"], sh["heads"], sh["proj"], vocab, True)
    joint = sh["clip"] + sh["clip2"]
    transformer = diffusers.SD3Transformer2DModel(
        sample_size=32, patch_size=1, in_channels=4, num_layers=sh["tl"],
        attention_head_dim=sh["tw"], num_attention_heads=sh["th"],
        caption_projection_dim=sh["tw"] * sh["th"], joint_attention_dim=joint,
        pooled_projection_dim=2 * sh["proj"], out_channels=4)
    vae = diffusers.AutoencoderKL(
        sample_size=32, in_channels=3, out_channels=3, block_out_channels=sh["vae"],
        down_block_types=("DownEncoderBlock2D",) * len(sh["vae"]),
        up_block_types=("UpDecoderBlock2D",) * len(sh["vae"]), layers_per_block=1,
        latent_channels=4, norm_num_groups=8, use_quant_conv=False, use_post_quant_conv=False,
        shift_factor=0.0609, scaling_factor=1.5035)
    sched = diffusers.FlowMatchEulerDiscreteScheduler()
    t5tok, t5 = t5_encoder(joint, sh)
    return diffusers.StableDiffusion3Pipeline(
        transformer=transformer, scheduler=sched, vae=vae, text_encoder=te, tokenizer=tok,
        text_encoder_2=te2, tokenizer_2=tok, text_encoder_3=t5, tokenizer_3=t5tok)


def t5_encoder(width, sh):
    """SD3's third text encoder: a T5 encoder as wide as the two CLIPs' joint embedding, with
    the Unigram tokenizer pipelines/pixart-sigma/make_tiny.py writes."""
    import transformers
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "..", "..", "pipelines", "pixart-sigma"))
    import make_tiny as pixart
    tok = pixart.tokenizer()
    conf = transformers.T5Config(
        vocab_size=len(tok), d_model=width, d_kv=sh["tw"], d_ff=sh["ff"],
        num_layers=sh["layers"], num_heads=sh["heads"], relative_attention_num_buckets=8,
        feed_forward_proj="gated-gelu", is_encoder_decoder=False, use_cache=False,
        tie_word_embeddings=False, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    return tok, transformers.T5EncoderModel(conf).eval()


def sdxl(sh, tok, vocab):
    import diffusers
    te = clip(sh["clip"], sh["layers"], sh["ff"], sh["heads"], sh["proj"], vocab, False)
    te2 = clip(sh["clip2"], sh["layers"], sh["ff"], sh["heads"], sh["proj"], vocab, True)
    unet = diffusers.UNet2DConditionModel(
        block_out_channels=sh["unet"], layers_per_block=1, sample_size=32, in_channels=4,
        out_channels=4, down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"), attention_head_dim=(2, 4),
        use_linear_projection=True, addition_embed_type="text_time", addition_time_embed_dim=8,
        transformer_layers_per_block=(1, 1), projection_class_embeddings_input_dim=6 * 8
        + sh["proj"], cross_attention_dim=sh["clip"] + sh["clip2"], norm_num_groups=8)
    vae = diffusers.AutoencoderKL(
        sample_size=32, in_channels=3, out_channels=3, block_out_channels=sh["vae"],
        down_block_types=("DownEncoderBlock2D",) * len(sh["vae"]),
        up_block_types=("UpDecoderBlock2D",) * len(sh["vae"]), layers_per_block=1,
        latent_channels=4, norm_num_groups=8)
    sched = diffusers.EulerDiscreteScheduler(beta_start=0.00085, beta_end=0.012,
                                             beta_schedule="scaled_linear",
                                             timestep_spacing="leading")
    return diffusers.StableDiffusionXLPipeline(
        vae=vae, text_encoder=te, text_encoder_2=te2, tokenizer=tok, tokenizer_2=tok, unet=unet,
        scheduler=sched)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--class", dest="klass", choices=("sd3", "sdxl"), default="sd3")
    ap.add_argument("--size", choices=sorted(W), default="tiny")
    a = ap.parse_args(argv)
    if os.path.exists(os.path.join(a.dir, "model_index.json")):
        return 0
    import torch
    torch.manual_seed(0)
    tmp = "%s.tmp-%d" % (a.dir, os.getpid())
    tok, vocab = tokenizer(os.path.join(tmp, "tok-src"))
    pipe = (sd3 if a.klass == "sd3" else sdxl)(W[a.size], tok, vocab)
    pipe.save_pretrained(tmp)
    shutil.rmtree(os.path.join(tmp, "tok-src"))
    os.makedirs(os.path.dirname(os.path.abspath(a.dir)), exist_ok=True)
    os.rename(tmp, a.dir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
