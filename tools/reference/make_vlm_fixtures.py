#!/usr/bin/env python3
"""Tiny random vision-language checkpoints with transformers' reference outputs (issue 18).

llava: LlavaForConditionalGeneration = CLIP vision tower (image 32x32, patch 8: 16 patches +
class token, 3 layers, quick-gelu) + projector (gelu) + Llama language model, with a
WordLevel tokenizer holding <image> and the LlavaProcessor's files. Written to
tests/fixtures/vlm/llava/:

  config.json, model.safetensors, generation_config.json    the checkpoint
  tokenizer.json, tokenizer_config.json, preprocessor_config.json, processor_config.json
  image.png        a 40x48 RGB test image (not square: the resize and crop matter)
  image.jpg, image_gray.png, pixel_values_jpeg.npy, pixel_values_gray.npy   the same image
                   as a JPEG and as a gray PNG, with the image processor's outputs
  prompt.txt       the text the processor receives (one <image> placeholder)
  input_ids.npy, attention_mask.npy, pixel_values.npy   the processor's outputs
  image_features.npy   vision tower hidden_states[vision_feature_layer], CLS dropped
  image_embeds.npy     multi_modal_projector(image_features)
  inputs_embeds.npy    the text embeddings with the image tokens replaced
  last_hidden_state.npy, logits.npy   the language model / full forward on the prompt
  greedy.npy       generate(max_new_tokens=20, greedy): the new tokens only
  greedy_jpeg.npy  the same after the JPEG's pixel values
  reference.json   tool versions, sizes, the greedy top-2 margin

Run with the vision reference venv (Pillow over the reference venv):
  $(tools/reference/setup-vision-venv) tools/reference/make_vlm_fixtures.py
"""
import json
import os

import numpy as np
import torch
import transformers as T
from PIL import Image
from tokenizers import Tokenizer, models, pre_tokenizers, processors

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.path.join(ROOT, "tests", "fixtures", "vlm")
WORDS = ("user assistant what is in this image ? a the cat dog red blue green picture of "
         "and shows small big . , describe it colour there are two one").split()
SPECIAL = ["<unk>", "<pad>", "<s>", "</s>", "<image>"]
NEW_TOKENS = 20


def make_tokenizer(folder):
    """WordLevel over WORDS, BOS prepended, <image> an added special token."""
    vocab = {t: i for i, t in enumerate(SPECIAL + WORDS)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()])
    tok.add_special_tokens(SPECIAL)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", vocab["<s>"])])
    fast = T.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                                     unk_token="<unk>", pad_token="<pad>")
    fast.save_pretrained(folder)
    return fast, vocab


def test_image():
    """40x48 RGB: smooth gradients plus a sharp square, so bicubic resizing is exercised."""
    h, w = 40, 48
    y, x = np.mgrid[0:h, 0:w]
    rgb = np.stack([x * 255 // (w - 1), y * 255 // (h - 1), (x + y) * 255 // (w + h - 2)], -1)
    rgb[10:22, 14:30] = [250, 20, 60]
    return Image.fromarray(rgb.astype(np.uint8), "RGB")


def save(folder, name, t):
    a = t.detach().cpu().numpy() if torch.is_tensor(t) else np.asarray(t)
    if a.dtype == np.float64:
        a = a.astype(np.float32)
    np.save(os.path.join(folder, name + ".npy"), a)


def make_llava():
    folder = os.path.join(OUT, "llava")
    os.makedirs(folder, exist_ok=True)
    torch.manual_seed(18)
    tokenizer, vocab = make_tokenizer(folder)
    vision = T.CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                                num_attention_heads=4, image_size=32, patch_size=8,
                                projection_dim=32, hidden_act="quick_gelu",
                                layer_norm_eps=1e-5, initializer_factor=1.0)
    text = T.LlamaConfig(vocab_size=len(vocab), hidden_size=48, intermediate_size=96,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=128, rms_norm_eps=1e-6, initializer_range=0.2,
                         pad_token_id=vocab["<pad>"], bos_token_id=vocab["<s>"],
                         eos_token_id=vocab["</s>"], tie_word_embeddings=False)
    config = T.LlavaConfig(vision_config=vision, text_config=text,
                           image_token_id=vocab["<image>"], projector_hidden_act="gelu",
                           vision_feature_select_strategy="default", vision_feature_layer=-2,
                           image_seq_length=16, tie_word_embeddings=False)
    config._attn_implementation = "eager"
    model = T.LlavaForConditionalGeneration(config).eval()
    with torch.no_grad():  # spread the vision weights so every layer changes the features
        for n, p in model.named_parameters():
            if "vision_tower" in n and ("weight" in n or "bias" in n) and p.dim() >= 1:
                p.add_(torch.randn_like(p) * (0.3 if p.dim() > 1 else 0.1))
    model.save_pretrained(folder)
    model.generation_config.save_pretrained(folder)

    image_processor = T.CLIPImageProcessor(
        size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}, do_center_crop=True,
        resample=3, do_rescale=True, rescale_factor=1 / 255, do_normalize=True,
        image_mean=[0.48145466, 0.4578275, 0.40821073],
        image_std=[0.26862954, 0.26130258, 0.27577711], do_convert_rgb=True)
    processor = T.LlavaProcessor(image_processor=image_processor, tokenizer=tokenizer,
                                 patch_size=8, vision_feature_select_strategy="default",
                                 num_additional_image_tokens=1, image_token="<image>")
    processor.save_pretrained(folder)
    image_processor.save_pretrained(folder)  # preprocessor_config.json (the image settings alone)

    image = test_image()
    image.save(os.path.join(folder, "image.png"))
    prompt = "user : <image> what is in this image ? assistant :"
    with open(os.path.join(folder, "prompt.txt"), "w") as f:
        f.write(prompt)
    inputs = processor(text=prompt, images=Image.open(os.path.join(folder, "image.png")),
                       return_tensors="pt")
    for k in ("input_ids", "attention_mask", "pixel_values"):
        save(folder, k, inputs[k])

    with torch.no_grad():
        vt = model.model.vision_tower(inputs["pixel_values"], output_hidden_states=True)
        features = vt.hidden_states[config.vision_feature_layer][:, 1:]
        save(folder, "image_features", features)
        embeds_img = model.model.multi_modal_projector(features)
        save(folder, "image_embeds", embeds_img)
        # The model's own path must agree with the pieces above.
        own = model.model.get_image_features(inputs["pixel_values"]).pooler_output
        assert torch.equal(torch.cat(own), embeds_img.reshape(-1, embeds_img.shape[-1]))
        embeds = model.get_input_embeddings()(inputs["input_ids"])
        mask = (inputs["input_ids"] == config.image_token_id).unsqueeze(-1).expand_as(embeds)
        embeds = embeds.masked_scatter(mask, embeds_img.reshape(-1, embeds_img.shape[-1]))
        save(folder, "inputs_embeds", embeds)
        lm = model.model.language_model(inputs_embeds=embeds, attention_mask=inputs["attention_mask"])
        save(folder, "last_hidden_state", lm.last_hidden_state)
        out = model(**inputs)
        save(folder, "logits", out.logits)
        assert torch.allclose(out.logits, model.lm_head(lm.last_hidden_state), atol=1e-6)
        gen = model.generate(**inputs, max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS,
                             do_sample=False, output_scores=True, return_dict_in_generate=True)
    # The same image as a JPEG (libjpeg's decoder, then the same processor), and as a
    # gray PNG (converted to RGB by do_convert_rgb).
    image.save(os.path.join(folder, "image.jpg"), quality=90)
    save(folder, "pixel_values_jpeg",
         image_processor(Image.open(os.path.join(folder, "image.jpg")), return_tensors="pt")["pixel_values"])
    with torch.no_grad():
        jpeg_inputs = dict(inputs, pixel_values=torch.from_numpy(np.load(os.path.join(folder, "pixel_values_jpeg.npy"))))
        jpeg_gen = model.generate(**jpeg_inputs, max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS,
                                  do_sample=False)
    save(folder, "greedy_jpeg", jpeg_gen[:, inputs["input_ids"].shape[1]:])
    image.convert("L").save(os.path.join(folder, "image_gray.png"))
    save(folder, "pixel_values_gray",
         image_processor(Image.open(os.path.join(folder, "image_gray.png")), return_tensors="pt")["pixel_values"])
    n = inputs["input_ids"].shape[1]
    save(folder, "greedy", gen.sequences[:, n:])
    margins = []
    for s in gen.scores:
        top = torch.topk(s[0], 2).values
        margins.append(float(top[0] - top[1]))
    ref = {"torch": torch.__version__, "transformers": T.__version__,
           "pillow": Image.__version__, "script": "tools/reference/make_vlm_fixtures.py",
           "dtype": "float32", "attn_implementation": "eager", "prompt_tokens": n,
           "image_tokens": int((inputs["input_ids"] == config.image_token_id).sum()),
           "max_new_tokens": NEW_TOKENS, "min_top2_margin": min(margins),
           "greedy": gen.sequences[0, n:].tolist()}
    with open(os.path.join(folder, "reference.json"), "w") as f:
        json.dump(ref, f, indent=2)
    print("llava:", ref)


if __name__ == "__main__":
    make_llava()
