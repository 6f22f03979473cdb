#!/usr/bin/env python3
"""Tiny random Qwen2-VL checkpoint with transformers' reference outputs (issue 18).

Qwen2VLForConditionalGeneration: vision transformer (patch 4, temporal patch 2, merge 2,
2 blocks, embed 32, 2-D rotary, quick-gelu) + patch merger -> Qwen2 language model
(hidden 64, M-RoPE sections [2, 3, 3]); a WordLevel tokenizer with Qwen's special tokens
and Qwen2VLProcessor's files (the PIL image processor: bicubic). Written to
tests/fixtures/vlm/qwen2_vl/:

  config.json, model.safetensors, generation_config.json    the checkpoint
  tokenizer.json, tokenizer_config.json, preprocessor_config.json, processor_config.json
  image.png          a 37x50 RGB image: smart_resize rounds it to 40x48 (grid 1x10x12)
  image_big.png      70x90: over max_pixels, resized to 56x72 (grid 1x14x18)
  image_small.png    12x10: under min_pixels, resized to 24x16 (grid 1x6x4)
  image.jpg          image.png as a JPEG
  pixel_values*.npy, image_grid_thw*.npy   the image processor's outputs for each image
                     (none: image.png, _big, _small, _jpeg)
  prompt.txt         the text the processor receives (one <|image_pad|> placeholder)
  input_ids.npy, attention_mask.npy, mm_token_type_ids.npy   the processor's outputs
  vision_position_ids.npy   the (h, w) rotary positions of each patch
  vision_hidden.npy  the vision blocks' output (before the merger) [patches, 32]
  image_embeds.npy   visual(pixel_values, grid_thw).pooler_output [patches / 4, 64]
  position_ids.npy, rope_deltas.npy   get_rope_index: [3, 1, tokens] and [1, 1]
  inputs_embeds.npy  the text embeddings with the image tokens replaced
  last_hidden_state.npy, logits.npy   the language model / full forward on the prompt
  greedy.npy         generate: 20 argmax steps (no end token), the new tokens only
  prompt_two.txt, input_ids_two.npy, pixel_values_two.npy, image_grid_thw_two.npy,
  greedy_two.npy     the same with two images (image.png, image_big.png)
  reference.json     tool versions, sizes, the greedy top-2 margins

Run with the vision reference venv (Pillow over the reference venv):
  $(tools/reference/setup-vision-venv) tools/reference/make_qwen2vl_fixtures.py
"""
import copy
import json
import os

import numpy as np
import torch
import transformers as T
from PIL import Image
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.path.join(ROOT, "tests", "fixtures", "vlm", "qwen2_vl")
WORDS = ("user assistant what is in this image ? a the cat dog red blue green picture of "
         "and shows small big . , describe it colour there are two one").split()
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
           "<|image_pad|>", "<|video_pad|>"]
NEW_TOKENS = 20


def make_tokenizer(folder):
    """WordLevel over WORDS, no BOS (as Qwen's), the special tokens added."""
    vocab = {t: i for i, t in enumerate(SPECIAL + WORDS)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<|endoftext|>"))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()])
    tok.add_special_tokens(SPECIAL)
    fast = T.PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>",
                                     pad_token="<|endoftext|>", unk_token="<|endoftext|>")
    fast.save_pretrained(folder)
    return fast, vocab


def gradient_image(h, w, square):
    """Smooth gradients plus a sharp rectangle, so bicubic resizing is exercised."""
    y, x = np.mgrid[0:h, 0:w]
    rgb = np.stack([x * 255 // (w - 1), y * 255 // (h - 1), (x + y) * 255 // (w + h - 2)], -1)
    t, b, l, r = square
    rgb[t:b, l:r] = [250, 20, 60]
    return Image.fromarray(rgb.astype(np.uint8), "RGB")


def save(folder, name, t):
    a = t.detach().cpu().numpy() if torch.is_tensor(t) else np.asarray(t)
    if a.dtype == np.float64:
        a = a.astype(np.float32)
    np.save(os.path.join(folder, name + ".npy"), a)


def plain_greedy(model):
    """NEW_TOKENS argmax steps with no end token (min_new_tokens would instead mask the end
    token's logit, which changes the argmax where it is the best)."""
    config = copy.deepcopy(model.generation_config)
    config.eos_token_id = []
    config.max_new_tokens = NEW_TOKENS
    config.do_sample = False
    return config


def margins_of(gen):
    out = []
    for s in gen.scores:
        top = torch.topk(s[0], 2).values
        out.append(float(top[0] - top[1]))
    return out


def main():
    folder = OUT
    os.makedirs(folder, exist_ok=True)
    torch.manual_seed(18)
    tokenizer, vocab = make_tokenizer(folder)
    vision = T.Qwen2VLVisionConfig(depth=2, embed_dim=32, hidden_size=64, hidden_act="quick_gelu",
                                   mlp_ratio=2, num_heads=4, in_channels=3, patch_size=4,
                                   spatial_merge_size=2, temporal_patch_size=2,
                                   initializer_range=0.2)
    text = T.Qwen2VLTextConfig(vocab_size=len(vocab), hidden_size=64, intermediate_size=128,
                               num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                               max_position_embeddings=256, rms_norm_eps=1e-6,
                               initializer_range=0.2,
                               rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                "mrope_section": [2, 3, 3]},
                               bos_token_id=None, eos_token_id=vocab["<|im_end|>"],
                               pad_token_id=vocab["<|endoftext|>"])
    config = T.Qwen2VLConfig(vision_config=vision.to_dict(), text_config=text.to_dict(),
                             image_token_id=vocab["<|image_pad|>"],
                             video_token_id=vocab["<|video_pad|>"],
                             vision_start_token_id=vocab["<|vision_start|>"],
                             vision_end_token_id=vocab["<|vision_end|>"],
                             tie_word_embeddings=False)
    config._attn_implementation = "eager"
    config.vision_config._attn_implementation = "eager"
    config.text_config._attn_implementation = "eager"
    model = T.Qwen2VLForConditionalGeneration(config).eval()
    with torch.no_grad():  # spread the vision weights so every block changes the features
        for n, p in model.named_parameters():
            if ".visual." in "." + n and p.dim() >= 1:
                p.add_(torch.randn_like(p) * (0.3 if p.dim() > 1 else 0.1))
    model.save_pretrained(folder)
    model.generation_config.save_pretrained(folder)

    # 8x8 (one merged 2x2 block of patches) .. 64x64 pixels: image_big is over the limit.
    image_processor = Qwen2VLImageProcessorPil(
        size={"shortest_edge": 256, "longest_edge": 4096}, patch_size=4, temporal_patch_size=2,
        merge_size=2, resample=3, do_rescale=True, rescale_factor=1 / 255, do_normalize=True,
        image_mean=[0.48145466, 0.4578275, 0.40821073],
        image_std=[0.26862954, 0.26130258, 0.27577711], do_convert_rgb=True)
    # Without torchvision, transformers' class check trips over the (unused) video processor
    # mapping; the processor is built without a video processor and the check skipped.
    T.ProcessorMixin.check_argument_for_proper_class = lambda self, name, arg: None
    processor = T.Qwen2VLProcessor(image_processor=image_processor, tokenizer=tokenizer)
    # save_pretrained needs the video processor; the processor's own file holds only its
    # class (the placeholder is the default <|image_pad|>, merge_size is the image processor's).
    with open(os.path.join(folder, "processor_config.json"), "w") as f:
        json.dump({"processor_class": "Qwen2VLProcessor"}, f, indent=2)
    image_processor.save_pretrained(folder)  # preprocessor_config.json

    images = {"": gradient_image(37, 50, (10, 22, 14, 30)),
              "_big": gradient_image(70, 90, (20, 45, 10, 60)),
              "_small": gradient_image(12, 10, (3, 8, 2, 6))}
    for suffix, image in images.items():
        image.save(os.path.join(folder, "image" + suffix + ".png"))
    images[""].save(os.path.join(folder, "image.jpg"), quality=90)
    for suffix, file in (("", "image.png"), ("_big", "image_big.png"),
                         ("_small", "image_small.png"), ("_jpeg", "image.jpg")):
        out = image_processor(Image.open(os.path.join(folder, file)), return_tensors="pt")
        save(folder, "pixel_values" + suffix, out["pixel_values"])
        save(folder, "image_grid_thw" + suffix, out["image_grid_thw"])

    prompt = ("<|im_start|> user <|vision_start|><|image_pad|><|vision_end|> what is in this "
              "image ? <|im_end|> <|im_start|> assistant")
    with open(os.path.join(folder, "prompt.txt"), "w") as f:
        f.write(prompt)
    inputs = processor(text=prompt, images=Image.open(os.path.join(folder, "image.png")),
                       return_tensors="pt")
    for k in ("input_ids", "attention_mask", "mm_token_type_ids", "pixel_values",
              "image_grid_thw"):
        save(folder, k, inputs[k])
    assert torch.equal(inputs["pixel_values"],
                       torch.from_numpy(np.load(os.path.join(folder, "pixel_values.npy"))))

    from transformers.vision_utils import get_vision_position_ids
    with torch.no_grad():
        grid = inputs["image_grid_thw"]
        save(folder, "vision_position_ids", get_vision_position_ids(grid, 2))
        vis = model.model.visual(inputs["pixel_values"], grid_thw=grid)
        save(folder, "vision_hidden", vis.last_hidden_state)
        image_embeds = vis.pooler_output
        save(folder, "image_embeds", image_embeds)
        position_ids, deltas = model.model.get_rope_index(
            inputs["input_ids"], inputs["mm_token_type_ids"], image_grid_thw=grid)
        save(folder, "position_ids", position_ids)
        save(folder, "rope_deltas", deltas)
        embeds = model.get_input_embeddings()(inputs["input_ids"])
        mask = (inputs["input_ids"] == config.image_token_id).unsqueeze(-1).expand_as(embeds)
        embeds = embeds.masked_scatter(mask, image_embeds)
        save(folder, "inputs_embeds", embeds)
        lm = model.model.language_model(inputs_embeds=embeds, position_ids=position_ids)
        save(folder, "last_hidden_state", lm.last_hidden_state)
        model.model.rope_deltas = None
        out = model(**inputs)
        save(folder, "logits", out.logits)
        assert torch.allclose(out.logits, model.lm_head(lm.last_hidden_state), atol=1e-5)
        model.model.rope_deltas = None
        gen = model.generate(**inputs, generation_config=plain_greedy(model), output_scores=True,
                             return_dict_in_generate=True)
    n = inputs["input_ids"].shape[1]
    save(folder, "greedy", gen.sequences[:, n:])

    prompt_two = ("<|im_start|> user <|vision_start|><|image_pad|><|vision_end|> and "
                  "<|vision_start|><|image_pad|><|vision_end|> describe it <|im_end|> "
                  "<|im_start|> assistant")
    with open(os.path.join(folder, "prompt_two.txt"), "w") as f:
        f.write(prompt_two)
    two = processor(text=prompt_two, images=[Image.open(os.path.join(folder, "image.png")),
                                             Image.open(os.path.join(folder, "image_big.png"))],
                    return_tensors="pt")
    for k in ("input_ids", "pixel_values", "image_grid_thw"):
        save(folder, k + "_two", two[k])
    with torch.no_grad():
        model.model.rope_deltas = None
        gen_two = model.generate(**two, generation_config=plain_greedy(model),
                                 output_scores=True, return_dict_in_generate=True)
    n2 = two["input_ids"].shape[1]
    save(folder, "greedy_two", gen_two.sequences[:, n2:])

    ref = {"torch": torch.__version__, "transformers": T.__version__,
           "pillow": Image.__version__, "script": "tools/reference/make_qwen2vl_fixtures.py",
           "dtype": "float32", "attn_implementation": "eager", "prompt_tokens": n,
           "image_tokens": int((inputs["input_ids"] == config.image_token_id).sum()),
           "rope_deltas": int(deltas[0, 0]), "max_new_tokens": NEW_TOKENS,
           "min_top2_margin": min(margins_of(gen)), "greedy": gen.sequences[0, n:].tolist(),
           "prompt_tokens_two": n2, "min_top2_margin_two": min(margins_of(gen_two)),
           "greedy_two": gen_two.sequences[0, n2:].tolist()}
    with open(os.path.join(folder, "reference.json"), "w") as f:
        json.dump(ref, f, indent=2)
    print("qwen2_vl:", ref)


if __name__ == "__main__":
    main()
