#!/usr/bin/env python3
"""Reference outputs for the torchtune-style modules of src/ingot/tune (seed 000).

torchtune is not a dependency: its reference computations are re-implemented here in
plain torch, following torchtune's modules (MultiHeadAttention with GQA, KVCache,
RotaryPositionalEmbeddings / Llama3ScaledRoPE, the CLIP TilePositionalEmbedding and
TiledTokenPositionalEmbedding and their checkpoint-resizing load hooks). Interpolation
is torch.nn.functional.interpolate(mode="bilinear", align_corners=True) itself, so the
C++ upsample_bilinear2d is checked against PyTorch's kernel. Written to
tests/fixtures/tune/:

  upsample.safetensors             input [2, 3, 4, 5] and F.interpolate outputs
  attention.safetensors            weights, inputs and outputs of every attention scenario
  position_embeddings.safetensors  parameters, inputs, outputs, resized checkpoints
  reference.json                   tool versions and the configuration used

Run with the reference venv:  ~/.cache/ingot/ref-venv/bin/python tools/reference/make_tune_fixtures.py
"""
import json
import math
import os

import torch
import torch.nn.functional as F
from safetensors.torch import save_file

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.path.join(ROOT, "tests", "fixtures", "tune")

# Attention configuration (GQA: 8 query heads over 2 kv heads; llama3-scaled rotary).
EMBED_DIM, NUM_HEADS, NUM_KV_HEADS, HEAD_DIM = 64, 8, 2, 8
BATCH, SEQ, CACHE_LEN, ROPE_MAX_SEQ_LEN = 2, 10, 32, 64
ROPE = dict(base=500_000.0, scale_factor=32.0, low_freq_factor=1.0, high_freq_factor=4.0,
            old_context_len=8192)
RMS_EPS = 1e-6

# Position-embedding configuration.
MAX_NUM_TILES, PE_DIM, TILE_SIZE, PATCH_SIZE = 4, 8, 4, 2  # patch grid 2 -> 5 tokens per tile
ASPECT_RATIOS = [[1, 1], [2, 2], [1, 3], [4, 1], [2, 1]]  # padded to 4 tiles per image


# --- rotary embeddings (torchtune RotaryPositionalEmbeddings + Llama3ScaledRoPE) -------

def llama3_theta(dim, base, scale_factor, low_freq_factor, high_freq_factor, old_context_len):
    freqs = 1.0 / (base ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    new_freqs = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if wavelen < high_freq_wavelen:
            new_freqs.append(freq)
        elif wavelen > low_freq_wavelen:
            new_freqs.append(freq / scale_factor)
        else:
            smooth = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
            new_freqs.append((1 - smooth) * freq / scale_factor + smooth * freq)
    return torch.tensor(new_freqs, dtype=freqs.dtype)


def rope_cache(theta, max_seq_len):
    seq_idx = torch.arange(max_seq_len, dtype=theta.dtype)
    idx_theta = torch.einsum("i, j -> ij", seq_idx, theta).float()
    return torch.stack([torch.cos(idx_theta), torch.sin(idx_theta)], dim=-1)


def apply_rope(cache, x, input_pos=None):
    # x [b, s, n_h, h_d]
    seq_len = x.size(1)
    rc = cache[:seq_len] if input_pos is None else cache[input_pos]
    xshaped = x.float().reshape(*x.shape[:-1], -1, 2)
    rc = rc.view(-1, xshaped.size(1), 1, xshaped.size(3), 2)
    x_out = torch.stack([xshaped[..., 0] * rc[..., 0] - xshaped[..., 1] * rc[..., 1],
                         xshaped[..., 1] * rc[..., 0] + xshaped[..., 0] * rc[..., 1]], -1)
    return x_out.flatten(3).type_as(x)


def rms_norm(x, scale, eps=RMS_EPS):
    x_fp32 = x.float()
    normed = (x_fp32 * torch.rsqrt(x_fp32.pow(2).mean(-1, keepdim=True) + eps)).type_as(x)
    return normed * scale


# --- torchtune KVCache and MultiHeadAttention ----------------------------------------------

class KVCache:
    def __init__(self, batch_size, max_seq_len, num_kv_heads, head_dim, dtype):
        shape = (batch_size, num_kv_heads, max_seq_len, head_dim)
        self.k_cache = torch.zeros(shape, dtype=dtype)
        self.v_cache = torch.zeros(shape, dtype=dtype)
        self.cache_pos = torch.arange(0, max_seq_len)

    def reset(self):
        self.k_cache.zero_()
        self.v_cache.zero_()
        self.cache_pos -= self.cache_pos[0].item()

    def update(self, k_val, v_val):
        bsz, _, seq_len, _ = k_val.shape
        assert bsz <= self.k_cache.shape[0]
        assert (self.cache_pos[0] + seq_len) <= self.k_cache.shape[2]
        self.k_cache[:, :, self.cache_pos[:seq_len]] = k_val
        self.v_cache[:, :, self.cache_pos[:seq_len]] = v_val
        self.cache_pos.add_(seq_len)
        return self.k_cache, self.v_cache


class MultiHeadAttention:
    def __init__(self, w, cache, is_causal=True, qk_norm=None):
        self.w, self.rope, self.is_causal, self.qk_norm = w, cache, is_causal, qk_norm
        self.kv_cache = None

    def setup_cache(self, batch_size, dtype, max_seq_len):
        self.kv_cache = KVCache(batch_size, max_seq_len, NUM_KV_HEADS, HEAD_DIM, dtype)

    def __call__(self, x, y=None, mask=None, input_pos=None):
        b, s_x, _ = x.shape
        q_per_kv = NUM_HEADS // NUM_KV_HEADS
        q = F.linear(x, self.w["q_proj.weight"]).view(b, s_x, NUM_HEADS, HEAD_DIM)
        q = apply_rope(self.rope, q, input_pos).transpose(1, 2)
        if self.qk_norm:
            q = rms_norm(q, self.qk_norm[0])
        if y is None:
            k, v = self.kv_cache.k_cache, self.kv_cache.v_cache
        else:
            s_y = y.shape[1]
            k = F.linear(y, self.w["k_proj.weight"]).view(b, s_y, -1, HEAD_DIM)
            v = F.linear(y, self.w["v_proj.weight"]).view(b, s_y, -1, HEAD_DIM)
            k = apply_rope(self.rope, k, input_pos).transpose(1, 2)
            v = v.transpose(1, 2)
            if self.qk_norm:
                k = rms_norm(k, self.qk_norm[1])
            if self.kv_cache is not None:
                k, v = self.kv_cache.update(k, v)
        if NUM_HEADS != NUM_KV_HEADS:
            expand_shape = (b, NUM_KV_HEADS, q_per_kv, -1, HEAD_DIM)
            k = k.unsqueeze(2).expand(expand_shape).flatten(1, 2)
            v = v.unsqueeze(2).expand(expand_shape).flatten(1, 2)
        if mask is not None:
            mask = mask[:, None, :, :]
        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, dropout_p=0.0,
            is_causal=self.kv_cache is None and mask is None and self.is_causal)
        out = out.transpose(1, 2).contiguous().view(b, s_x, -1)
        return F.linear(out, self.w["output_proj.weight"])


def attention_fixtures():
    g = torch.Generator().manual_seed(0)
    def rand(*shape, scale=1.0):
        return (torch.randn(*shape, generator=g) * scale).float()
    w = {
        "q_proj.weight": rand(NUM_HEADS * HEAD_DIM, EMBED_DIM, scale=EMBED_DIM ** -0.5),
        "k_proj.weight": rand(NUM_KV_HEADS * HEAD_DIM, EMBED_DIM, scale=EMBED_DIM ** -0.5),
        "v_proj.weight": rand(NUM_KV_HEADS * HEAD_DIM, EMBED_DIM, scale=EMBED_DIM ** -0.5),
        "output_proj.weight": rand(EMBED_DIM, NUM_HEADS * HEAD_DIM, scale=EMBED_DIM ** -0.5),
        "q_norm.weight": 1 + rand(HEAD_DIM, scale=0.1),
        "k_norm.weight": 1 + rand(HEAD_DIM, scale=0.1),
    }
    x = rand(BATCH, SEQ, EMBED_DIM)
    x2 = rand(BATCH, SEQ, EMBED_DIM)
    cache = rope_cache(llama3_theta(HEAD_DIM, **ROPE), ROPE_MAX_SEQ_LEN)
    out = dict(w)
    out.update(x=x, x2=x2, rope_cache=cache)

    mha = MultiHeadAttention(w, cache)
    out["out_nocache"] = mha(x, x)
    qk = MultiHeadAttention(w, cache, qk_norm=(w["q_norm.weight"], w["k_norm.weight"]))
    out["out_nocache_qknorm"] = qk(x, x)
    cross = MultiHeadAttention(w, cache, is_causal=False)
    out["out_cross"] = cross(x[:, :6], x2)  # 6 queries over 10 keys, no causal mask

    pos0 = torch.arange(0, SEQ).unsqueeze(0).expand(BATCH, SEQ)
    pos1 = torch.arange(SEQ, 2 * SEQ).unsqueeze(0).expand(BATCH, SEQ)
    causal = torch.tril(torch.ones(CACHE_LEN, CACHE_LEN, dtype=torch.bool))
    mha.setup_cache(BATCH, torch.float32, CACHE_LEN)
    out["out_first"] = mha(x, x, mask=causal[pos0], input_pos=pos0)
    out["out_decode"] = mha(x2, x2, mask=causal[pos1], input_pos=pos1)
    out["k_cache_after_decode"] = mha.kv_cache.k_cache.clone()  # [b, n_kv, max_seq_len, h_d]
    out["v_cache_after_decode"] = mha.kv_cache.v_cache.clone()
    mha.kv_cache.reset()
    mha(x, x, mask=causal[pos0], input_pos=pos0)
    out["out_read"] = mha(x2, None, mask=causal[pos1], input_pos=pos1)  # y = None
    mha.kv_cache.reset()
    out["out_first_nomask"] = mha(x, x, input_pos=pos0)  # cache: no causal mask at all
    return out


# --- CLIP position embeddings (torchtune models/clip/_position_embeddings.py) ----------

def tile_forward(x, aspect_ratio, embedding, gate):
    x = x.clone()
    for i, (h, w) in enumerate(aspect_ratio.tolist()):
        n = h * w
        pos = embedding[:h, :w].reshape(n, 1, embedding.shape[-1])
        x[i, :n] += pos * gate.tanh()
    return x


def tiled_token_forward(x, aspect_ratio, local, glob, gate):
    x = x + local * (1 - gate.tanh())
    for i, (h, w) in enumerate(aspect_ratio.tolist()):
        n = h * w
        pos = glob[:h, :w].reshape(n, glob.shape[2], glob.shape[3])
        x[i, :n] += pos * gate.tanh()
    return x


def resize_tile(embedding, tgt):
    e = embedding.permute(2, 3, 0, 1)
    e = F.interpolate(e, size=(tgt, tgt), mode="bilinear", align_corners=True)
    return e.permute(2, 3, 0, 1).contiguous()


def resize_local(local, tgt_grid):
    g = int(math.sqrt(len(local) - 1))
    cls = local[[0]]
    grid = local[1:].reshape(g, g, -1).permute(2, 0, 1)
    grid = F.interpolate(grid.unsqueeze(0), size=[tgt_grid, tgt_grid], mode="bilinear",
                         align_corners=True).squeeze(0)
    grid = grid.permute(1, 2, 0).reshape(tgt_grid ** 2, -1)
    return torch.cat([cls, grid], dim=0)


def resize_global(glob, tgt_tiles, tgt_grid):
    pos = glob[:, :, 1:, :]
    cls = glob[:, :, [0], :]
    mx, my, n, d = pos.shape
    g = int(math.sqrt(n))
    pos = pos.reshape(mx, my, g, g, d).permute(0, 2, 1, 3, 4).contiguous()
    pos = pos.reshape(mx * g, my * g, d).unsqueeze(0).permute(0, 3, 1, 2)
    size = (tgt_tiles * tgt_grid, tgt_tiles * tgt_grid)
    pos = F.interpolate(pos, size=size, mode="bilinear", align_corners=True)
    pos = pos.permute(0, 2, 3, 1).squeeze(0)
    pos = pos.reshape(tgt_tiles, tgt_grid, tgt_tiles, tgt_grid, d).permute(0, 2, 1, 3, 4)
    pos = pos.contiguous().reshape(tgt_tiles, tgt_tiles, tgt_grid ** 2, d)
    cls = F.interpolate(cls.permute(2, 3, 0, 1), size=(tgt_tiles, tgt_tiles), mode="bilinear",
                        align_corners=True).permute(2, 3, 0, 1)
    return torch.cat([cls, pos], dim=2)


def position_fixtures():
    g = torch.Generator().manual_seed(1)
    def rand(*shape):
        return torch.randn(*shape, generator=g).float()
    n_tok = (TILE_SIZE // PATCH_SIZE) ** 2 + 1
    out = {
        "tile.embedding": rand(MAX_NUM_TILES, MAX_NUM_TILES, 1, PE_DIM),
        "tile.gate": torch.tensor([0.7]),
        "token.local_token_positional_embedding": rand(n_tok, PE_DIM),
        "token.global_token_positional_embedding": rand(MAX_NUM_TILES, MAX_NUM_TILES, n_tok, PE_DIM),
        "token.gate": torch.tensor([0.4]),
        "aspect_ratio": torch.tensor(ASPECT_RATIOS, dtype=torch.int64),
        "x_tile": rand(len(ASPECT_RATIOS), MAX_NUM_TILES, 3, PE_DIM),
        "x_token": rand(len(ASPECT_RATIOS), MAX_NUM_TILES, n_tok, PE_DIM),
    }
    out["tile_out"] = tile_forward(out["x_tile"], out["aspect_ratio"], out["tile.embedding"],
                                   out["tile.gate"])
    out["token_out"] = tiled_token_forward(out["x_token"], out["aspect_ratio"],
                                           out["token.local_token_positional_embedding"],
                                           out["token.global_token_positional_embedding"],
                                           out["token.gate"])
    # Checkpoints of other sizes, and what the load hooks must turn them into.
    out["ckpt_tile_2"] = rand(2, 2, 1, PE_DIM)                  # max_num_tiles 2 -> 4
    out["ckpt_tile_2_resized"] = resize_tile(out["ckpt_tile_2"], MAX_NUM_TILES)
    out["ckpt_tile_4_to_3"] = resize_tile(out["tile.embedding"], 3)  # 4 -> 3
    out["ckpt_local_g3"] = rand(10, PE_DIM)                      # patch grid 3 -> 2
    out["ckpt_local_g3_resized"] = resize_local(out["ckpt_local_g3"], 2)
    out["ckpt_global_t2_g3"] = rand(2, 2, 10, PE_DIM)            # 2 tiles, grid 3 -> 4, grid 2
    out["ckpt_global_t2_g3_resized"] = resize_global(out["ckpt_global_t2_g3"], MAX_NUM_TILES, 2)
    out["ckpt_global_t3_g2"] = rand(3, 3, 5, PE_DIM)             # 3 tiles, grid 2 -> 4, grid 3
    out["ckpt_global_t3_g2_to_t4_g3"] = resize_global(out["ckpt_global_t3_g2"], 4, 3)
    return out


def upsample_fixtures():
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 3, 4, 5, generator=g).float()
    out = {"input": x}
    for align in (True, False):
        for oh, ow in ((7, 9), (3, 2)):
            name = f"out_{oh}x{ow}_{'align' if align else 'noalign'}"
            out[name] = F.interpolate(x, size=(oh, ow), mode="bilinear", align_corners=align)
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, tensors in (("upsample", upsample_fixtures()), ("attention", attention_fixtures()),
                          ("position_embeddings", position_fixtures())):
        save_file({k: v.contiguous() for k, v in tensors.items()},
                  os.path.join(OUT, name + ".safetensors"))
    info = {
        "torch": torch.__version__,
        "made_by": "tools/reference/make_tune_fixtures.py",
        "attention": dict(embed_dim=EMBED_DIM, num_heads=NUM_HEADS, num_kv_heads=NUM_KV_HEADS,
                          head_dim=HEAD_DIM, batch=BATCH, seq=SEQ, cache_len=CACHE_LEN,
                          rope_max_seq_len=ROPE_MAX_SEQ_LEN, rope=ROPE, rms_eps=RMS_EPS),
        "position_embeddings": dict(max_num_tiles=MAX_NUM_TILES, embed_dim=PE_DIM,
                                    tile_size=TILE_SIZE, patch_size=PATCH_SIZE,
                                    aspect_ratios=ASPECT_RATIOS),
    }
    with open(os.path.join(OUT, "reference.json"), "w") as f:
        json.dump(info, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
