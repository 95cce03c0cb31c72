"""Write the stand-in's model directory: model_index.json and three tiny components."""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import diffusers  # noqa: E402
import transformers  # noqa: E402


def main(out):
    torch.manual_seed(0)
    parts = {
        "text_encoder": (transformers.Qwen3VLForConditionalGeneration(
            transformers.PretrainedConfig(hidden_size=8)), {"hidden_size": 8}),
        "transformer": (diffusers.QwenImage21Transformer2DModel(8), {"in_channels": 8}),
        "vae": (diffusers.AutoencoderKLQwenImage21(8), {"latent_channels": 8}),
    }
    for name, (model, config) in parts.items():
        os.makedirs(os.path.join(out, name), exist_ok=True)
        torch.save(model.state_dict(), os.path.join(out, name, "weights.pt"))
        with open(os.path.join(out, name, "config.json"), "w") as f:
            json.dump(config, f)
    with open(os.path.join(out, "model_index.json"), "w") as f:
        json.dump({n: ["lib", "cls"] for n in parts}, f)


if __name__ == "__main__":
    main(sys.argv[1])
