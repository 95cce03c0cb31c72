#!/usr/bin/env python3
"""make_tiny.py -- write a tiny, random-weight Qwen-Image model directory with save_pretrained.

    python make_tiny.py DIR [--class QwenImage21Pipeline|QwenImagePipeline] [--size tiny|small]

DIR gets what `QwenImage21Pipeline.from_pretrained(DIR)` reads (model_index.json, scheduler/,
text_encoder/, processor/, transformer/, vae/), or what `QwenImagePipeline.from_pretrained(DIR)`
reads (tokenizer/ instead of processor/, Qwen2.5-VL text encoder) with --class QwenImagePipeline
or when the installed diffusers has no QwenImage21Pipeline. The sizes are those of diffusers' own tests: a 2-layer transformer, a VAE
of base width 16, a 2-layer Qwen3-VL (or Qwen2.5-VL) text encoder of width 32; --size small
widens the text encoder (4 layers of width 1024) and the transformer (4 layers, 8 heads of 128)
to about 250 and 220 MB, so that staging shows in the memory figures. The tokenizer is
a byte-level BPE trained here on a few sentences (the usual tiny tokenizer is a hub download),
with the special tokens the pipeline's templates use. The weights come from a fixed seed, so two
directories written by the same library versions are identical. Nothing is downloaded.

Written atomically: into DIR.tmp-PID, then renamed, so an interrupted run leaves no half
directory; an existing complete DIR (model_index.json present) is left as it is.
"""
import os
import shutil
import sys

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
           "<|image_pad|>", "<|video_pad|>", "<|vision_pad|>"]
CORPUS = ["A red fox reading a newspaper in a sunlit cafe",
          "Comprehend and analyze the provided prompt.",
          "Describe the image by detailing the color, shape, size, texture, quantity, text, "
          "spatial relationships of the objects and background:",
          "system user assistant picture image", "0123456789 .,:;!?-_()[]{}<>"]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}"
    "{% for c in m['content'] %}{% if c['type'] == 'text' %}{{ c['text'] }}"
    "{% elif c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
# the two sizes: tiny (diffusers' own test configs, under 1 MB of weights) and small (about
# 250 MB of text encoder and 220 MB of transformer in float32: big enough for staging to show)
SHAPES = {
    "tiny": dict(width=32, inter=64, layers=2, heads=2, kv=1, head_dim=16, mrope=[2, 3, 3],
                 t_layers=2, t_heads=2, t_head_dim=16, t_mlp=2, rope21=(4, 6, 6), rope1=(8, 4, 4)),
    "small": dict(width=1024, inter=4096, layers=4, heads=8, kv=2, head_dim=128,
                  mrope=[16, 24, 24], t_layers=4, t_heads=8, t_head_dim=128, t_mlp=3,
                  rope21=(16, 56, 56), rope1=(16, 56, 56)),
}
VISION_WIDTH = 32


def tokenizer():
    """A byte-level BPE with Qwen's special tokens, as a transformers fast tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    import transformers
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIAL, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS, trainer)
    cls = getattr(transformers, "Qwen2TokenizerFast", None) or transformers.Qwen2Tokenizer
    return cls(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
               unk_token=None, bos_token=None)


def text_config(tok, version, sh):
    """A tiny Qwen3-VL (2.1) or Qwen2.5-VL (Qwen-Image) config."""
    import transformers
    ids = {name: tok.convert_tokens_to_ids(t) for name, t in
           [("image_token_id", "<|image_pad|>"), ("video_token_id", "<|video_pad|>"),
            ("vision_start_token_id", "<|vision_start|>"),
            ("vision_end_token_id", "<|vision_end|>")]}
    text = dict(vocab_size=len(tok), hidden_size=sh["width"], intermediate_size=sh["inter"],
                num_hidden_layers=sh["layers"], num_attention_heads=sh["heads"],
                num_key_value_heads=sh["kv"], head_dim=sh["head_dim"],
                max_position_embeddings=1024, rope_scaling={"rope_type": "default",
                                                            "mrope_section": sh["mrope"]},
                rope_theta=10000.0, bos_token_id=None,
                eos_token_id=tok.convert_tokens_to_ids("<|im_end|>"))
    vision = dict(depth=1, hidden_size=VISION_WIDTH, intermediate_size=64, num_heads=2,
                  patch_size=14, spatial_merge_size=2, temporal_patch_size=2, in_channels=3,
                  out_hidden_size=sh["width"])
    if version == "2.1":
        vision.update(num_position_embeddings=64, deepstack_visual_indexes=[0])
        return transformers.Qwen3VLConfig(text_config=text, vision_config=vision, **ids)
    text.pop("head_dim")
    vision.update(fullatt_block_indexes=[0], window_size=112, embed_dim=VISION_WIDTH)
    return transformers.Qwen2_5_VLConfig(text_config=text, vision_config=vision, **ids)


def write(path, version, size="tiny"):
    import torch
    import diffusers
    import transformers
    torch.manual_seed(0)
    tok = tokenizer()
    sh = SHAPES[size]
    cfg = text_config(tok, version, sh)
    scheduler = diffusers.FlowMatchEulerDiscreteScheduler(shift=1.0, use_dynamic_shifting=False)
    if version == "2.1":
        encoder = transformers.Qwen3VLForConditionalGeneration(cfg).eval()
        image_proc = transformers.Qwen2VLImageProcessor(patch_size=14, merge_size=2)
        video_proc = transformers.Qwen3VLVideoProcessor(patch_size=14, merge_size=2)
        processor = transformers.Qwen3VLProcessor(image_processor=image_proc, tokenizer=tok,
                                                  video_processor=video_proc,
                                                  chat_template=CHAT_TEMPLATE)
        transformer = diffusers.QwenImage21Transformer2DModel(
            patch_size=1, in_channels=16, out_channels=16, num_layers=sh["t_layers"],
            attention_head_dim=sh["t_head_dim"], num_attention_heads=sh["t_heads"],
            context_in_dim=sh["width"], mlp_ratio=sh["t_mlp"], axes_dims_rope=sh["rope21"])
        vae = diffusers.AutoencoderKLQwenImage21(
            base_dim=16, decoder_base_dim=16, z_dim=16, dim_mult=[1, 2, 4, 4, 4],
            num_res_blocks=1, temperal_downsample=[False, True, True, True],
            latents_mean=[0.0] * 16, latents_std=[1.0] * 16)
        pipe = diffusers.QwenImage21Pipeline(scheduler=scheduler, vae=vae, text_encoder=encoder,
                                             processor=processor, transformer=transformer)
    else:
        tok.chat_template = CHAT_TEMPLATE
        encoder = transformers.Qwen2_5_VLForConditionalGeneration(cfg).eval()
        transformer = diffusers.QwenImageTransformer2DModel(
            patch_size=2, in_channels=16, out_channels=4, num_layers=sh["t_layers"],
            attention_head_dim=sh["t_head_dim"], num_attention_heads=sh["t_heads"],
            joint_attention_dim=sh["width"], guidance_embeds=False, axes_dims_rope=sh["rope1"])
        vae = diffusers.AutoencoderKLQwenImage(
            base_dim=4 * 6, z_dim=4, dim_mult=[1, 2, 4], num_res_blocks=1,
            temperal_downsample=[False, True], latents_mean=[0.0] * 4, latents_std=[1.0] * 4)
        pipe = diffusers.QwenImagePipeline(scheduler=scheduler, vae=vae, text_encoder=encoder,
                                           tokenizer=tok, transformer=transformer)
    pipe.save_pretrained(path)


def pipeline_version(cls=None):
    if cls is None:
        import diffusers
        cls = "QwenImage21Pipeline" if hasattr(diffusers, "QwenImage21Pipeline") else None
    return "2.1" if cls == "QwenImage21Pipeline" else "1"


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(prog="make_tiny.py", description=__doc__.splitlines()[1])
    ap.add_argument("dir")
    ap.add_argument("--class", dest="cls", choices=("QwenImage21Pipeline", "QwenImagePipeline"))
    ap.add_argument("--size", choices=sorted(SHAPES), default="tiny")
    args = ap.parse_args(argv[1:])
    path = os.path.abspath(args.dir)
    if os.path.exists(os.path.join(path, "model_index.json")):
        return 0
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = "%s.tmp-%d" % (path, os.getpid())
    try:
        write(tmp, pipeline_version(args.cls), args.size)
        os.rename(tmp, path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("[qwen-image] wrote a tiny model into %s" % path, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
