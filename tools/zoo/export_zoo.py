#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Exports the model zoo: real architectures (torchvision's and small hand-written
# ones) as ONNX with random, seeded weights -- nothing is downloaded -- plus one
# random input .npy per model input and OUT_DIR/manifest.json describing them.
# ort_run.js then writes ONNX Runtime's outputs and run_zoo.py runs vkpipe.
# Needs Debian's python3-torch and python3-torchvision (torch 1.13).
#
#   /usr/bin/python3 tools/zoo/export_zoo.py OUT_DIR [--only NAME,...] [--small]
#
#   --only NAME,...  export only these models; the entries of the others in an
#                    existing OUT_DIR/manifest.json are kept
#   --small          smaller inputs (images about half the side, shorter
#                    sequences and signals) for quick runs; the manifest says so
#   --list           print the model names and families and exit
#
# Per model: OUT_DIR/NAME/model.onnx and OUT_DIR/NAME/input_<input>.npy. A model
# whose construction or export fails is listed with "status": "export_failed"
# and the reason; the script goes on with the next one. manifest.json:
# {"schema": "vkpipe-zoo/1", "created", "torch", "torchvision", "small",
#  "models": [{"name", "family", "dir", "file", "status" ("ok", or
#  "export_failed" and "reason"), "opset" (the highest of 17..11 that exported;
#  "higher_opsets_failed" says why the others did not), "inputs": [{"name",
#  "dtype", "shape", "file"}], "outputs": [names], "dynamic" (and then
#  "dynamic_axes" and "dynamic_dims", the sizes the saved inputs have),
#  "gflops", "parameters", "bytes", "ops": {ONNX op type: node count}}]}.
#
# Weights come from each module's default initialisation after
# torch.manual_seed(crc32(NAME)), then are conditioned so that a comparison can
# see every layer: left as initialised, deep networks lose the input's signal
# (SSD-lite's features shrink to 1e-13, and outputs become input-independent
# constants) and an error in an early layer would not show at the output. So
# batch-norm running statistics are measured on a random calibration batch of 8
# (each layer normalises what it actually receives, as after training), every
# normalisation layer gets random affine parameters (the identity defaults would
# hide a backend that applies them wrongly), and ConvNeXt's 1e-6 layer scales
# become 0.1..0.5. Inputs are drawn from numpy's default_rng(crc32(NAME) + 1):
# normal floats, token ids uniform in [0, vocab), attention masks of ones with
# padding zeros at the end. GFLOP estimates count the multiply-adds (as 2 FLOPs)
# of convolutions, matrix products and recurrent cells of one forward pass
# (torch.profiler, plus forward hooks for the layers it does not count).
import argparse
import datetime
import json
import math
import os
import sys
import traceback
import warnings
import zlib

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

OPSETS = (17, 16, 15, 14, 13, 12, 11)  # tried in this order; 17 is torch 1.13's highest


class Export:
    """What one model builder returns: the module, its named inputs (numpy,
    in the order of the module's forward arguments), the output names, and the
    dynamic axes passed to torch.onnx.export (None for static shapes)."""

    def __init__(self, module, inputs, outputs, dynamic_axes=None):
        self.module = module
        self.inputs = inputs
        self.outputs = outputs
        self.dynamic_axes = dynamic_axes


# ---------------------------------------------------------------- inputs


def normal(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def token_ids(rng, vocab, *shape):
    return rng.integers(0, vocab, size=shape, dtype=np.int64)


def padding_mask(rng, batch, seq):
    """int64 ones with 1..seq/4 padding zeros at the end of each row."""
    mask = np.ones((batch, seq), dtype=np.int64)
    for row in mask:
        row[seq - int(rng.integers(1, seq // 4 + 1)):] = 0
    return mask


# ----------------------------------------------------- torchvision models


def classifier(ctor, side, **kwargs):
    """A torchvision classifier on a 1x3xSxS image, S = side(small)."""
    def build(rng, small):
        s = side(small)
        model = ctor(weights=None, **kwargs)
        return Export(model, {"input": normal(rng, 1, 3, s, s)}, ["logits"])
    return build


def image_side(small):
    return 112 if small else 224


def build_vit(rng, small):
    s = image_side(small)  # ViT's position embeddings are sized for one image side
    model = torchvision.models.vit_b_16(weights=None, image_size=s)
    # torchvision zero-initialises the classifier (to fine-tune it), which would
    # make every logit 0 whatever the input.
    nn.init.normal_(model.heads.head.weight, std=0.02)
    return Export(model, {"input": normal(rng, 1, 3, s, s)}, ["logits"])


class FirstOutput(nn.Module):
    """Segmentation models return {'out': ..., 'aux': ...}; export 'out'."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def segmentation(ctor):
    def build(rng, small):
        model = ctor(weights=None, weights_backbone=None, num_classes=21)
        s = image_side(small)
        return Export(FirstOutput(model), {"input": normal(rng, 1, 3, s, s)}, ["out"])
    return build


class FirstImageDetections(nn.Module):
    """torchvision detectors take a list of images and return a list of dicts;
    export the first image's boxes, scores and labels (post-processing included)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, images):
        det = self.model(list(images))[0]
        return det["boxes"], det["scores"], det["labels"]


def build_ssdlite(rng, small):
    # 20 detections, not 300: with random weights the 300th score is within
    # float rounding of its neighbours, and which box wins such a tie is not
    # something two implementations can be expected to agree on.
    model = torchvision.models.detection.ssdlite320_mobilenet_v3_large(
        weights=None, weights_backbone=None, num_classes=91, detections_per_img=20)
    s = 160 if small else 320  # the model's transform resizes to 320 either way
    return Export(FirstImageDetections(model), {"images": normal(rng, 1, 3, s, s)},
                  ["boxes", "scores", "labels"])


# ---------------------------------------------------- hand-written models


class GPT2Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(dim)
        self.c_attn = nn.Linear(dim, 3 * dim)
        self.attn_proj = nn.Linear(dim, dim)
        self.ln_2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * dim, dim))

    def forward(self, x, causal):
        b, t, c = x.shape
        hd = c // self.heads
        q, k, v = self.c_attn(self.ln_1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, hd).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
        att = att.masked_fill(causal, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, c)
        x = x + self.attn_proj(y)
        return x + self.mlp(self.ln_2(x))


class GPT2(nn.Module):
    """GPT-2-style decoder: learned positions, pre-norm blocks, causal mask
    from torch.triu + masked_fill, tanh GELU, LM head tied to the embedding."""

    def __init__(self, vocab, context, dim, heads, layers):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.wpe = nn.Embedding(context, dim)
        self.blocks = nn.ModuleList(GPT2Block(dim, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(dim)

    def forward(self, input_ids):
        t = input_ids.shape[1]
        pos = torch.arange(t, device=input_ids.device)
        causal = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        x = self.wte(input_ids) + self.wpe(pos)
        for block in self.blocks:
            x = block(x, causal)
        return F.linear(self.ln_f(x), self.wte.weight)


def build_gpt2(rng, small):
    vocab, seq = 2048, 16 if small else 64
    model = GPT2(vocab, context=128, dim=128, heads=4, layers=2)
    return Export(model, {"input_ids": token_ids(rng, vocab, 1, seq)}, ["logits"])


class BertLayer(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.query = nn.Linear(dim, dim)
        self.key = nn.Linear(dim, dim)
        self.value = nn.Linear(dim, dim)
        self.attn_out = nn.Linear(dim, dim)
        self.ln_attn = nn.LayerNorm(dim, eps=1e-12)
        self.ffn = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.ln_ffn = nn.LayerNorm(dim, eps=1e-12)

    def split_heads(self, x):
        b, t, c = x.shape
        return x.view(b, t, self.heads, c // self.heads).permute(0, 2, 1, 3)

    def forward(self, x, mask_bias):
        q, k, v = (self.split_heads(f(x)) for f in (self.query, self.key, self.value))
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]) + mask_bias
        ctx = (scores.softmax(dim=-1) @ v).permute(0, 2, 1, 3).flatten(2)
        x = self.ln_attn(x + self.attn_out(ctx))
        return self.ln_ffn(x + self.ffn(x))


class Bert(nn.Module):
    """BERT-style encoder: word + position + token-type embeddings, post-norm
    layers, the additive mask (1 - mask) * -10000 and a tanh pooler."""

    def __init__(self, vocab, context, dim, heads, layers):
        super().__init__()
        self.word = nn.Embedding(vocab, dim)
        self.position = nn.Embedding(context, dim)
        self.token_type = nn.Embedding(2, dim)
        self.ln = nn.LayerNorm(dim, eps=1e-12)
        self.layers = nn.ModuleList(BertLayer(dim, heads) for _ in range(layers))
        self.pooler = nn.Linear(dim, dim)

    def forward(self, input_ids, attention_mask):
        pos = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = self.word(input_ids) + self.position(pos) + self.token_type(
            torch.zeros_like(input_ids))
        x = self.ln(x)
        mask_bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask_bias)
        return x, torch.tanh(self.pooler(x[:, 0]))


def build_gpt2_small(rng, small):
    # GPT-2 small's shape (issue 14's benchmark): 12 layers of 768, 12 heads,
    # the 50257-token vocabulary, sequence 128.
    seq = 32 if small else 128
    model = GPT2(50257, context=1024, dim=768, heads=12, layers=12)
    return Export(model, {"input_ids": token_ids(rng, 50257, 1, seq)}, ["logits"])


def build_bert_base(rng, small):
    # BERT-base's shape: 12 layers of 768, 12 heads, 30522 tokens, sequence 128.
    seq = 32 if small else 128
    model = Bert(30522, context=512, dim=768, heads=12, layers=12)
    return Export(model, {"input_ids": token_ids(rng, 30522, 1, seq),
                          "attention_mask": padding_mask(rng, 1, seq)},
                  ["last_hidden_state", "pooler_output"])


def build_bert(rng, small):
    vocab, seq = 2048, 16 if small else 64
    model = Bert(vocab, context=128, dim=128, heads=4, layers=2)
    return Export(model, {"input_ids": token_ids(rng, vocab, 1, seq),
                          "attention_mask": padding_mask(rng, 1, seq)},
                  ["last_hidden_state", "pooler_output"])


class MHABlock(nn.Module):
    """A transformer encoder block around torch's own nn.MultiheadAttention."""

    def __init__(self, dim, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ln_1 = nn.LayerNorm(dim)
        self.ffn = nn.Sequential(nn.Linear(dim, 2 * dim), nn.ReLU(), nn.Linear(2 * dim, dim))
        self.ln_2 = nn.LayerNorm(dim)

    def forward(self, x):
        x = self.ln_1(x + self.attn(x, x, x, need_weights=False)[0])
        return self.ln_2(x + self.ffn(x))


def build_mha(rng, small):
    return Export(MHABlock(128, 4), {"input": normal(rng, 1, 16 if small else 32, 128)},
                  ["output"])


class LSTMClassifier(nn.Module):
    """Two stacked LSTM layers over feature frames, logits from the last step."""

    def __init__(self, features, hidden, classes):
        super().__init__()
        self.lstm = nn.LSTM(features, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.head(y[:, -1])


def lstm_builder(dynamic):
    def build(rng, small):
        x = normal(rng, 1, 25 if small else 100, 40)
        axes = {"input": {0: "batch"}, "logits": {0: "batch"}} if dynamic else None
        return Export(LSTMClassifier(40, 128, 10), {"input": x}, ["logits"], axes)
    return build


class GRUTagger(nn.Module):
    """A bidirectional GRU with a per-step classifier (sequence tagging)."""

    def __init__(self, features, hidden, tags):
        super().__init__()
        self.gru = nn.GRU(features, hidden, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden, tags)

    def forward(self, x):
        y, _ = self.gru(x)
        return self.head(y)


def build_gru(rng, small):
    return Export(GRUTagger(40, 64, 20), {"input": normal(rng, 1, 25 if small else 100, 40)},
                  ["logits"])


class AudioConvNet(nn.Module):
    """M5-style raw-waveform classifier: Conv1d/BatchNorm1d/MaxPool1d stacks,
    a mean over time, LogSoftmax."""

    def __init__(self, classes=35):
        super().__init__()
        layers, cin = [], 1
        for cout, k, stride in ((32, 80, 4), (32, 3, 1), (64, 3, 1), (64, 3, 1)):
            layers += [nn.Conv1d(cin, cout, k, stride=stride), nn.BatchNorm1d(cout),
                       nn.ReLU(), nn.MaxPool1d(4)]
            cin = cout
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(cin, classes)

    def forward(self, x):
        return F.log_softmax(self.head(self.features(x).mean(dim=-1)), dim=-1)


def audio_builder(dynamic):
    def build(rng, small):
        x = normal(rng, 1, 1, 8000 if small else 16000)
        axes = {"input": {0: "batch"}, "log_probs": {0: "batch"}} if dynamic else None
        return Export(AudioConvNet(), {"input": x}, ["log_probs"], axes)
    return build


def conv_bn_relu(cin, cout, stride=1):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


def double_conv(cin, cout):
    return nn.Sequential(conv_bn_relu(cin, cout), conv_bn_relu(cout, cout))


class UNet(nn.Module):
    """A small U-Net: one decoder step upsamples with ConvTranspose2d, the
    other with bilinear F.interpolate; skips are concatenated."""

    def __init__(self, classes=2):
        super().__init__()
        self.enc1, self.enc2 = double_conv(3, 16), double_conv(16, 32)
        self.bottleneck = double_conv(32, 64)
        self.up2 = nn.ConvTranspose2d(64, 32, 2, stride=2)
        self.dec2 = double_conv(64, 32)
        self.reduce1 = nn.Conv2d(32, 16, 1)
        self.dec1 = double_conv(32, 16)
        self.head = nn.Conv2d(16, classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        b = self.bottleneck(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([self.up2(b), e2], dim=1))
        up1 = F.interpolate(self.reduce1(d2), scale_factor=2, mode="bilinear",
                            align_corners=False)
        return self.head(self.dec1(torch.cat([up1, e1], dim=1)))


def build_unet(rng, small):
    s = 64 if small else 128
    return Export(UNet(), {"input": normal(rng, 1, 3, s, s)}, ["logits"])


class FPN(nn.Module):
    """A feature pyramid: strided backbone, 1x1 laterals, a top-down path with
    nearest upsampling (by scale factor and to a tensor's size), 3x3 outputs."""

    def __init__(self, width=64):
        super().__init__()
        chans = (3, 32, 64, 128, 256)
        self.stages = nn.ModuleList(
            nn.Sequential(conv_bn_relu(chans[i], chans[i + 1], stride=2),
                          conv_bn_relu(chans[i + 1], chans[i + 1]))
            for i in range(4))
        self.lateral = nn.ModuleList(nn.Conv2d(c, width, 1) for c in chans[2:])
        self.smooth = nn.ModuleList(nn.Conv2d(width, width, 3, padding=1) for _ in range(3))

    def forward(self, x):
        feats = []
        for stage in self.stages:
            x = stage(x)
            feats.append(x)
        c2, c3, c4 = (lat(f) for lat, f in zip(self.lateral, feats[1:]))
        p4 = c4
        p3 = c3 + F.interpolate(p4, scale_factor=2, mode="nearest")
        p2 = c2 + F.interpolate(p3, size=c2.shape[-2:], mode="nearest")
        return tuple(s(p) for s, p in zip(self.smooth, (p2, p3, p4)))


def build_fpn(rng, small):
    s = 112 if small else 224
    return Export(FPN(), {"input": normal(rng, 1, 3, s, s)}, ["p2", "p3", "p4"])


def reflect_conv(cin, cout, k, stride=1):
    return nn.Sequential(nn.ReflectionPad2d(k // 2), nn.Conv2d(cin, cout, k, stride=stride))


class StyleResidual(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.body = nn.Sequential(reflect_conv(ch, ch, 3), nn.InstanceNorm2d(ch, affine=True),
                                  nn.ReLU(), reflect_conv(ch, ch, 3),
                                  nn.InstanceNorm2d(ch, affine=True))

    def forward(self, x):
        return x + self.body(x)


class StyleTransfer(nn.Module):
    """Johnson et al.'s fast style-transfer network: ReflectionPad2d + Conv +
    InstanceNorm2d, five residual blocks, nearest Upsample + Conv."""

    def __init__(self):
        super().__init__()

        def block(cin, cout, k, stride=1):
            return [reflect_conv(cin, cout, k, stride), nn.InstanceNorm2d(cout, affine=True),
                    nn.ReLU()]

        def up_block(cin, cout):
            return [nn.Upsample(scale_factor=2, mode="nearest")] + block(cin, cout, 3)

        self.net = nn.Sequential(
            *block(3, 32, 9), *block(32, 64, 3, 2), *block(64, 128, 3, 2),
            *(StyleResidual(128) for _ in range(5)),
            *up_block(128, 64), *up_block(64, 32), reflect_conv(32, 3, 9))

    def forward(self, x):
        return self.net(x)


def build_style(rng, small):
    s = 64 if small else 128
    return Export(StyleTransfer(), {"input": normal(rng, 1, 3, s, s)}, ["output"])


class ESPCN(nn.Module):
    """ESPCN super-resolution (x3) on the luma channel: tanh convs, PixelShuffle."""

    def __init__(self, scale=3):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(1, 64, 5, padding=2), nn.Tanh(),
                                  nn.Conv2d(64, 32, 3, padding=1), nn.Tanh(),
                                  nn.Conv2d(32, scale * scale, 3, padding=1),
                                  nn.PixelShuffle(scale))

    def forward(self, x):
        return self.body(x)


def build_espcn(rng, small):
    s = 32 if small else 64
    return Export(ESPCN(), {"input": normal(rng, 1, 1, s, s)}, ["output"])


class VAEResBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.body = nn.Sequential(nn.GroupNorm(32, cin), nn.SiLU(),
                                  nn.Conv2d(cin, cout, 3, padding=1),
                                  nn.GroupNorm(32, cout), nn.SiLU(),
                                  nn.Conv2d(cout, cout, 3, padding=1))
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        return self.skip(x) + self.body(x)


class VAEAttention(nn.Module):
    """Single-head self-attention over pixels, as in Stable Diffusion's VAE."""

    def __init__(self, ch):
        super().__init__()
        self.norm = nn.GroupNorm(32, ch)
        self.qkv = nn.Conv2d(ch, 3 * ch, 1)
        self.proj = nn.Conv2d(ch, ch, 1)

    def forward(self, x):
        b, c, h, w = x.shape
        q, k, v = self.qkv(self.norm(x)).reshape(b, 3, c, h * w).unbind(1)
        att = (q.transpose(1, 2) @ k / math.sqrt(c)).softmax(dim=-1)
        return x + self.proj((v @ att.transpose(1, 2)).reshape(b, c, h, w))


class VAEDecoder(nn.Module):
    """A VAE decoder in the style of Stable Diffusion's, scaled down:
    GroupNorm + SiLU residual blocks, a mid attention block, nearest upsampling."""

    def __init__(self, latent=4, chans=(128, 64, 32)):
        super().__init__()
        layers = [nn.Conv2d(latent, chans[0], 3, padding=1), VAEResBlock(chans[0], chans[0]),
                  VAEAttention(chans[0]), VAEResBlock(chans[0], chans[0])]
        for cin, cout in zip(chans, chans[1:]):
            layers += [VAEResBlock(cin, cout), nn.Upsample(scale_factor=2, mode="nearest"),
                       nn.Conv2d(cout, cout, 3, padding=1)]
        layers += [nn.GroupNorm(32, chans[-1]), nn.SiLU(), nn.Conv2d(chans[-1], 3, 3, padding=1)]
        self.net = nn.Sequential(*layers)

    def forward(self, z):
        return self.net(z)


def build_vae(rng, small):
    s = 16 if small else 32
    return Export(VAEDecoder(), {"latent": normal(rng, 1, 4, s, s)}, ["image"])


def build_resnet18_dynbatch(rng, small):
    s = image_side(small)
    return Export(torchvision.models.resnet18(weights=None), {"input": normal(rng, 1, 3, s, s)},
                  ["logits"], {"input": {0: "batch"}, "logits": {0: "batch"}})


# ------------------------------------------- second wave: more real exports


def video_classifier(ctor):
    """A torchvision video classifier on a 1x3xTxSxS clip (3-D convolutions)."""
    def build(rng, small):
        t, s = (4, 56) if small else (8, 112)
        return Export(ctor(weights=None), {"input": normal(rng, 1, 3, t, s, s)}, ["logits"])
    return build


def detector(ctor, **kwargs):
    """A torchvision detector at a 320-pixel side with 20 detections per image
    (see build_ssdlite for why not more), boxes/scores/labels of one image."""
    def build(rng, small):
        model = ctor(weights=None, weights_backbone=None, num_classes=91, **kwargs)
        s = 160 if small else 320
        return Export(FirstImageDetections(model), {"images": normal(rng, 1, 3, s, s)},
                      ["boxes", "scores", "labels"])
    return build


class Seq2SeqTransformer(nn.Module):
    """torch's own nn.Transformer (encoder-decoder, post-norm, ReLU FFN) with
    token embeddings, sinusoidal positions and a causal target mask."""

    def __init__(self, vocab=1000, dim=128, heads=4, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.core = nn.Transformer(dim, heads, layers, layers, 4 * dim, dropout=0.0,
                                   batch_first=True)
        self.head = nn.Linear(dim, vocab)
        pos = torch.arange(256)[:, None] / torch.pow(10000.0, torch.arange(0, dim, 2) / dim)
        pe = torch.zeros(256, dim)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(pos), torch.cos(pos)
        self.register_buffer("pe", pe)

    def forward(self, src, tgt):
        s = self.embed(src) + self.pe[:src.shape[1]]
        t = self.embed(tgt) + self.pe[:tgt.shape[1]]
        mask = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1])
        return self.head(self.core(s, t, tgt_mask=mask))


def build_seq2seq(rng, small):
    n = 8 if small else 24
    return Export(Seq2SeqTransformer(), {"src": token_ids(rng, 1000, 1, n),
                                         "tgt": token_ids(rng, 1000, 1, n - 4)}, ["logits"])


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class LlamaBlock(nn.Module):
    """A Llama-style decoder block: RMSNorm, rotary position embeddings,
    grouped-query attention (heads share K/V), causal mask, SwiGLU FFN."""

    def __init__(self, dim, heads, kv_heads, hidden):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, dim // heads
        self.norm_1, self.norm_2 = RMSNorm(dim), RMSNorm(dim)
        self.q = nn.Linear(dim, dim, bias=False)
        self.k = nn.Linear(dim, kv_heads * self.hd, bias=False)
        self.v = nn.Linear(dim, kv_heads * self.hd, bias=False)
        self.o = nn.Linear(dim, dim, bias=False)
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x, cos, sin, causal):
        b, t, c = x.shape
        h = self.norm_1(x)
        q = self.q(h).view(b, t, self.heads, self.hd).transpose(1, 2)
        k = self.k(h).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
        v = self.v(h).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        rep = self.heads // self.kv_heads
        # As Hugging Face's repeat_kv does it (torch 1.13 exports repeat_interleave
        # on dim 1 of a 4-D tensor as a Reshape that ONNX Runtime refuses too).
        k, v = (z[:, :, None].expand(b, self.kv_heads, rep, t, self.hd)
                .reshape(b, self.heads, t, self.hd) for z in (k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(self.hd) + causal
        y = (att.softmax(-1) @ v).transpose(1, 2).reshape(b, t, c)
        x = x + self.o(y)
        h = self.norm_2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Llama(nn.Module):
    def __init__(self, vocab=2048, dim=128, heads=8, kv_heads=2, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(LlamaBlock(dim, heads, kv_heads, 344) for _ in range(layers))
        self.norm = RMSNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.hd = dim // heads

    def forward(self, input_ids):
        t = input_ids.shape[1]
        inv = 1.0 / (10000.0 ** (torch.arange(0, self.hd, 2).float() / self.hd))
        freqs = torch.outer(torch.arange(t).float(), inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]
        causal = torch.full((t, t), float("-inf")).triu(1)
        x = self.embed(input_ids)
        for block in self.blocks:
            x = block(x, cos, sin, causal)
        return self.head(self.norm(x))


def build_llama(rng, small):
    return Export(Llama(), {"input_ids": token_ids(rng, 2048, 1, 16 if small else 48)},
                  ["logits"])


class ConformerBlock(nn.Module):
    """A Conformer block (speech): half-step FFNs with SiLU, self-attention,
    a convolution module with GLU, depthwise Conv1d and BatchNorm1d."""

    def __init__(self, dim=96, heads=4, kernel=15):
        super().__init__()
        def ffn():
            return nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, 4 * dim), nn.SiLU(),
                                 nn.Linear(4 * dim, dim))
        self.ff_1, self.ff_2 = ffn(), ffn()
        self.ln_att = nn.LayerNorm(dim)
        self.att = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ln_conv = nn.LayerNorm(dim)
        self.pw_1 = nn.Conv1d(dim, 2 * dim, 1)
        self.dw = nn.Conv1d(dim, dim, kernel, padding=kernel // 2, groups=dim)
        self.bn = nn.BatchNorm1d(dim)
        self.pw_2 = nn.Conv1d(dim, dim, 1)
        self.ln_out = nn.LayerNorm(dim)

    def forward(self, x):
        x = x + 0.5 * self.ff_1(x)
        h = self.ln_att(x)
        x = x + self.att(h, h, h, need_weights=False)[0]
        h = F.glu(self.pw_1(self.ln_conv(x).transpose(1, 2)), dim=1)
        x = x + self.pw_2(F.silu(self.bn(self.dw(h)))).transpose(1, 2)
        return self.ln_out(x + 0.5 * self.ff_2(x))


class Conformer(nn.Module):
    def __init__(self, mels=80, dim=96, classes=32):
        super().__init__()
        self.subsample = nn.Sequential(nn.Conv2d(1, dim, 3, stride=2), nn.ReLU(),
                                       nn.Conv2d(dim, dim, 3, stride=2), nn.ReLU())
        self.proj = nn.Linear(dim * (((mels - 1) // 2 - 1) // 2), dim)
        self.blocks = nn.Sequential(ConformerBlock(dim), ConformerBlock(dim))
        self.head = nn.Linear(dim, classes)

    def forward(self, feats):
        x = self.subsample(feats[:, None])  # [b, dim, t', mels']
        b, c, t, f = x.shape
        x = self.proj(x.permute(0, 2, 1, 3).reshape(b, t, c * f))
        return self.head(self.blocks(x)).log_softmax(-1)


def build_conformer(rng, small):
    return Export(Conformer(), {"features": normal(rng, 1, 50 if small else 200, 80)},
                  ["log_probs"])


class CRNN(nn.Module):
    """Text-line recognition: a conv stack, the height folded into channels, a
    bidirectional LSTM over the width, per-step log-probabilities (CTC)."""

    def __init__(self, classes=40):
        super().__init__()
        self.conv = nn.Sequential(conv_bn_relu(1, 32), nn.MaxPool2d(2),
                                  conv_bn_relu(32, 64), nn.MaxPool2d(2),
                                  conv_bn_relu(64, 96), nn.MaxPool2d((2, 1)))
        self.rnn = nn.LSTM(96 * 4, 96, bidirectional=True, batch_first=True)
        self.head = nn.Linear(192, classes)

    def forward(self, x):
        f = self.conv(x)  # [b, 96, 4, w/4]
        b, c, h, w = f.shape
        y, _ = self.rnn(f.permute(0, 3, 1, 2).reshape(b, w, c * h))
        return self.head(y).log_softmax(-1)


def build_crnn(rng, small):
    return Export(CRNN(), {"image": normal(rng, 1, 1, 32, 64 if small else 128)},
                  ["log_probs"])


def build_bert_dynseq(rng, small):
    vocab, seq = 2048, 16 if small else 64
    model = Bert(vocab, context=128, dim=128, heads=4, layers=2)
    axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
            "last_hidden_state": {0: "batch", 1: "seq"}, "pooler_output": {0: "batch"}}
    return Export(model, {"input_ids": token_ids(rng, vocab, 1, seq),
                          "attention_mask": padding_mask(rng, 1, seq)},
                  ["last_hidden_state", "pooler_output"], axes)


# ------------------------------------------------- third wave: more real exports


class GPT2Step(nn.Module):
    """One decoding step of a GPT-2-style model with a key/value cache: the
    new token attends to the cached keys and values plus its own, and the
    updated caches are outputs (the layout Hugging Face's past_key_values use)."""

    def __init__(self, vocab=2048, context=256, dim=128, heads=4, layers=2):
        super().__init__()
        self.heads, self.hd = heads, dim // heads
        self.wte, self.wpe = nn.Embedding(vocab, dim), nn.Embedding(context, dim)
        self.ln_1 = nn.ModuleList(nn.LayerNorm(dim) for _ in range(layers))
        self.qkv = nn.ModuleList(nn.Linear(dim, 3 * dim) for _ in range(layers))
        self.proj = nn.ModuleList(nn.Linear(dim, dim) for _ in range(layers))
        self.ln_2 = nn.ModuleList(nn.LayerNorm(dim) for _ in range(layers))
        self.mlp = nn.ModuleList(nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(approximate="tanh"),
                                               nn.Linear(4 * dim, dim)) for _ in range(layers))
        self.ln_f = nn.LayerNorm(dim)

    def forward(self, input_ids, past_k, past_v):
        b, t = input_ids.shape
        past = past_k.shape[3]
        pos = torch.arange(past, past + t)
        x = self.wte(input_ids) + self.wpe(pos)
        new_k, new_v = [], []
        for i in range(len(self.qkv)):
            q, k, v = self.qkv[i](self.ln_1[i](x)).split(x.shape[-1], dim=2)
            q, k, v = (z.view(b, t, self.heads, self.hd).transpose(1, 2) for z in (q, k, v))
            k = torch.cat((past_k[i], k), dim=2)
            v = torch.cat((past_v[i], v), dim=2)
            new_k.append(k)
            new_v.append(v)
            att = (q @ k.transpose(-2, -1) / math.sqrt(self.hd)).softmax(-1)
            x = x + self.proj[i]((att @ v).transpose(1, 2).reshape(b, t, -1))
            x = x + self.mlp[i](self.ln_2[i](x))
        return F.linear(self.ln_f(x), self.wte.weight), torch.stack(new_k), torch.stack(new_v)


def build_gpt2_kvcache(rng, small):
    past = 8 if small else 40
    axes = {"past_k": {3: "past"}, "past_v": {3: "past"}, "present_k": {3: "past1"},
            "present_v": {3: "past1"}}
    return Export(GPT2Step(), {"input_ids": token_ids(rng, 2048, 1, 1),
                               "past_k": normal(rng, 2, 1, 4, past, 32),
                               "past_v": normal(rng, 2, 1, 4, past, 32)},
                  ["logits", "present_k", "present_v"], axes)


class TimeResBlock(nn.Module):
    def __init__(self, cin, cout, tdim):
        super().__init__()
        self.n1, self.c1 = nn.GroupNorm(8, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.t = nn.Linear(tdim, cout)
        self.n2, self.c2 = nn.GroupNorm(8, cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, temb):
        h = self.c1(F.silu(self.n1(x))) + self.t(temb)[:, :, None, None]
        return self.skip(x) + self.c2(F.silu(self.n2(h)))


class TinyDiffusionUNet(nn.Module):
    """A denoising U-Net as diffusion models use it: sinusoidal embedding of a
    run-time timestep, GroupNorm + SiLU residual blocks, self-attention at the
    lowest resolution, nearest upsampling and skip concatenation."""

    def __init__(self, ch=32, tdim=64):
        super().__init__()
        self.tdim = tdim
        self.tmlp = nn.Sequential(nn.Linear(tdim, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.inp = nn.Conv2d(3, ch, 3, padding=1)
        self.d1, self.down = TimeResBlock(ch, ch, tdim), nn.Conv2d(ch, ch, 3, stride=2, padding=1)
        self.d2 = TimeResBlock(ch, 2 * ch, tdim)
        self.mid_norm = nn.GroupNorm(8, 2 * ch)
        self.attn = nn.MultiheadAttention(2 * ch, 4, batch_first=True)
        self.u1 = TimeResBlock(4 * ch, ch, tdim)
        self.u2 = TimeResBlock(2 * ch, ch, tdim)
        self.out = nn.Sequential(nn.GroupNorm(8, ch), nn.SiLU(), nn.Conv2d(ch, 3, 3, padding=1))

    def forward(self, x, t):
        half = self.tdim // 2
        freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
        args = t[:, None] * freqs[None]
        temb = self.tmlp(torch.cat((args.sin(), args.cos()), dim=-1))
        h0 = self.inp(x)
        h1 = self.d1(h0, temb)
        h2 = self.d2(self.down(h1), temb)
        b, c, hh, ww = h2.shape
        s = self.mid_norm(h2).flatten(2).transpose(1, 2)
        h2 = h2 + self.attn(s, s, s, need_weights=False)[0].transpose(1, 2).reshape(b, c, hh, ww)
        u = self.u1(torch.cat((h2, self.d2(self.down(h1), temb)), 1), temb)
        u = F.interpolate(u, scale_factor=2.0, mode="nearest")
        u = self.u2(torch.cat((u, h1), 1), temb)
        return self.out(u)


def build_diffusion_unet(rng, small):
    s = 16 if small else 32
    return Export(TinyDiffusionUNet(), {"sample": normal(rng, 1, 3, s, s),
                                        "timestep": np.array([417.0], np.float32)},
                  ["noise_pred"])


class PointNet(nn.Module):
    """PointNet classification: an input transform net (3x3 matrix from a
    max-pooled shared MLP, plus identity), shared 1x1 Conv1d MLPs, global max pool."""

    def __init__(self, classes=16):
        super().__init__()
        def mlp(*ch):
            layers = []
            for a, b in zip(ch, ch[1:]):
                layers += [nn.Conv1d(a, b, 1), nn.BatchNorm1d(b), nn.ReLU()]
            return nn.Sequential(*layers)
        self.tnet = mlp(3, 32, 64, 256)
        self.tfc = nn.Sequential(nn.Linear(256, 64), nn.ReLU(), nn.Linear(64, 9))
        self.feat = mlp(3, 64, 128, 512)
        self.head = nn.Sequential(nn.Linear(512, 128), nn.ReLU(), nn.Linear(128, classes))

    def forward(self, points):  # [b, 3, n]
        m = self.tfc(self.tnet(points).amax(dim=2)).view(-1, 3, 3) + torch.eye(3)
        x = torch.bmm(points.transpose(1, 2), m).transpose(1, 2)
        return self.head(self.feat(x).max(dim=2)[0]).log_softmax(-1)


def build_pointnet(rng, small):
    return Export(PointNet(), {"points": normal(rng, 1, 3, 256 if small else 1024)},
                  ["log_probs"])


class GCN(nn.Module):
    """Two graph-convolution layers over a run-time edge list, as PyTorch
    Geometric computes them without its extension: gather the source nodes'
    features, scatter-add (ScatterElements, reduction add) into the targets,
    normalise by degree."""

    def __init__(self, fin=16, hidden=32, classes=7):
        super().__init__()
        self.l1, self.l2 = nn.Linear(fin, hidden), nn.Linear(hidden, classes)

    @staticmethod
    def propagate(x, edge_index):
        src, dst = edge_index[0], edge_index[1]
        deg = torch.zeros(x.shape[0]).scatter_add(0, dst, torch.ones(dst.shape[0])) + 1.0
        norm = (deg[src] * deg[dst]).rsqrt()[:, None]
        index = dst[:, None].expand(-1, x.shape[1])
        agg = torch.zeros_like(x).scatter_add(0, index, x[src] * norm)
        return agg + x / deg[:, None]

    def forward(self, x, edge_index):
        h = F.relu(self.propagate(self.l1(x), edge_index))
        return self.propagate(self.l2(h), edge_index).log_softmax(-1)


def build_gcn(rng, small):
    n, e = (40, 160) if small else (200, 1000)
    edges = rng.integers(0, n, size=(2, e)).astype(np.int64)
    return Export(GCN(), {"x": normal(rng, n, 16), "edge_index": edges}, ["log_probs"])


class MoE(nn.Module):
    """A top-2 mixture-of-experts feed-forward layer (Switch/Mixtral style,
    dense dispatch): router softmax, TopK, gates scattered into a [tokens,
    experts] matrix, every expert applied, outputs weighted by einsum."""

    def __init__(self, dim=64, hidden=128, experts=4):
        super().__init__()
        self.router = nn.Linear(dim, experts, bias=False)
        self.w1 = nn.Parameter(torch.randn(experts, dim, hidden) * dim ** -0.5)
        self.w2 = nn.Parameter(torch.randn(experts, hidden, dim) * hidden ** -0.5)
        self.ln = nn.LayerNorm(dim)

    def forward(self, x):  # [tokens, dim]
        probs = self.router(x).softmax(-1)
        top, idx = probs.topk(2, dim=-1)
        gates = torch.zeros_like(probs).scatter(1, idx, top / top.sum(-1, keepdim=True))
        h = F.gelu(torch.einsum("td,edh->teh", x, self.w1))
        y = torch.einsum("teh,ehd->ted", h, self.w2)
        return self.ln(x + torch.einsum("te,ted->td", gates, y))


def build_moe(rng, small):
    return Export(MoE(), {"tokens": normal(rng, 16 if small else 64, 64)}, ["out"])


class T5Attention(nn.Module):
    """T5's encoder self-attention with the relative position bias computed
    in the graph: bucketed |i - j| (exact below 8, logarithmic up to 128),
    bidirectional, a learned bias per bucket and head, no scaling."""

    def __init__(self, dim=128, heads=4, buckets=32, max_distance=128):
        super().__init__()
        self.heads, self.buckets, self.max_distance = heads, buckets, max_distance
        self.qkv, self.o = nn.Linear(dim, 3 * dim, bias=False), nn.Linear(dim, dim, bias=False)
        self.rel = nn.Embedding(buckets, heads)
        self.norm = RMSNorm(dim)

    def bucket(self, rel):
        n = self.buckets // 2
        ret = (rel > 0).long() * n
        rel = rel.abs()
        exact = n // 2
        large = exact + (torch.log(rel.float() / exact) / math.log(self.max_distance / exact)
                         * (n - exact)).long()
        large = torch.min(large, torch.full_like(large, n - 1))
        return ret + torch.where(rel < exact, rel, large)

    def forward(self, x):
        b, t, c = x.shape
        pos = torch.arange(t)
        bias = self.rel(self.bucket(pos[None, :] - pos[:, None])).permute(2, 0, 1)[None]
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2)
                   for z in self.qkv(self.norm(x)).split(c, -1))
        att = (q @ k.transpose(-1, -2) + bias).softmax(-1)
        return x + self.o((att @ v).transpose(1, 2).reshape(b, t, c))


def build_t5_attention(rng, small):
    return Export(T5Attention(), {"hidden": normal(rng, 1, 16 if small else 96, 128)},
                  ["out"])


def conv_silu(cin, cout, k=1, s=1):
    return nn.Sequential(nn.Conv2d(cin, cout, k, s, k // 2, bias=False), nn.BatchNorm2d(cout),
                         nn.SiLU())


class C3(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        h = cout // 2
        self.a, self.b = conv_silu(cin, h), conv_silu(cin, h)
        self.m = nn.Sequential(conv_silu(h, h), conv_silu(h, h, 3))
        self.out = conv_silu(2 * h, cout)

    def forward(self, x):
        a = self.a(x)
        return self.out(torch.cat((a + self.m(a), self.b(x)), 1))


class TinyYOLO(nn.Module):
    """A YOLOv5-style detector, scaled down: Focus space-to-depth by strided
    slicing, C3 blocks, SPPF (chained 5x5 max pools), a top-down path with
    nearest upsampling, and the detection head's decode (sigmoid, grid offsets,
    anchor scaling) into [boxes, 5 + classes]."""

    def __init__(self, classes=8):
        super().__init__()
        self.no = 5 + classes
        self.focus = conv_silu(12, 16, 3)
        self.s1 = nn.Sequential(conv_silu(16, 32, 3, 2), C3(32, 32))
        self.s2 = nn.Sequential(conv_silu(32, 64, 3, 2), C3(64, 64))
        self.s3 = nn.Sequential(conv_silu(64, 128, 3, 2), C3(128, 128))
        self.sppf_in, self.sppf_out = conv_silu(128, 64), conv_silu(256, 128)
        self.lat = conv_silu(128, 64)
        self.fuse = C3(128, 64)
        self.heads = nn.ModuleList([nn.Conv2d(64, 3 * self.no, 1), nn.Conv2d(128, 3 * self.no, 1)])
        self.register_buffer("anchors", torch.tensor([[[10., 13.], [16., 30.], [33., 23.]],
                                                      [[30., 61.], [62., 45.], [59., 119.]]]))

    def decode(self, p, i, stride):
        b, _, h, w = p.shape
        p = p.view(b, 3, self.no, h, w).permute(0, 1, 3, 4, 2).sigmoid()
        ys, xs = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
        grid = torch.stack((xs, ys), -1).float()[None, None]
        xy = (p[..., :2] * 2 - 0.5 + grid) * stride
        wh = (p[..., 2:4] * 2) ** 2 * self.anchors[i][None, :, None, None]
        return torch.cat((xy, wh, p[..., 4:]), -1).view(b, -1, self.no)

    def forward(self, x):
        x = torch.cat((x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2],
                       x[..., 1::2, 1::2]), 1)
        p3 = self.s2(self.s1(self.focus(x)))
        y = self.sppf_in(self.s3(p3))
        y1 = F.max_pool2d(y, 5, 1, 2)
        y2 = F.max_pool2d(y1, 5, 1, 2)
        p5 = self.sppf_out(torch.cat((y, y1, y2, F.max_pool2d(y2, 5, 1, 2)), 1))
        up = F.interpolate(self.lat(p5), scale_factor=2.0, mode="nearest")
        p4 = self.fuse(torch.cat((up, p3), 1))
        return torch.cat((self.decode(self.heads[0](p4), 0, 16),
                          self.decode(self.heads[1](p5), 1, 32)), 1)


def build_yolo(rng, small):
    s = 128 if small else 320
    return Export(TinyYOLO(), {"images": normal(rng, 1, 3, s, s)}, ["predictions"])


class TinyCLIP(nn.Module):
    """CLIP's two towers, scaled down: a ViT image encoder (class token) and a
    causal text transformer whose sentence feature is taken at the end-of-text
    token (argmax of the ids, a run-time gather); L2-normalised features and a
    learned logit scale."""

    def __init__(self, vocab=1000, dim=128, ctx=16):
        super().__init__()
        self.patch = nn.Conv2d(3, dim, 16, 16)
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.ipos = nn.Parameter(torch.randn(1, 17, dim) * 0.02)
        layer = lambda: nn.TransformerEncoderLayer(dim, 4, 2 * dim, dropout=0.0,
                                                   activation="gelu", batch_first=True,
                                                   norm_first=True)
        self.ienc = nn.TransformerEncoder(layer(), 2)
        self.tok, self.tpos = nn.Embedding(vocab, dim), nn.Parameter(torch.randn(ctx, dim) * 0.01)
        self.tenc = nn.TransformerEncoder(layer(), 2)
        self.iproj, self.tproj = nn.Linear(dim, 64, bias=False), nn.Linear(dim, 64, bias=False)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    def forward(self, image, text):
        x = self.patch(image).flatten(2).transpose(1, 2)
        x = torch.cat((self.cls.expand(x.shape[0], -1, -1), x), 1) + self.ipos
        img = self.iproj(self.ienc(x)[:, 0])
        t = text.shape[1]
        mask = torch.full((t, t), float("-inf")).triu(1)
        h = self.tenc(self.tok(text) + self.tpos[:t], mask=mask)
        txt = self.tproj(h[torch.arange(h.shape[0]), text.argmax(-1)])
        img, txt = F.normalize(img, dim=-1), F.normalize(txt, dim=-1)
        return self.logit_scale.exp() * img @ txt.t()


def build_clip(rng, small):
    return Export(TinyCLIP(), {"image": normal(rng, 1, 3, 64, 64),
                               "text": token_ids(rng, 1000, 3, 16)}, ["logits_per_image"])


class RobertaEmbed(nn.Module):
    """RoBERTa's input side: position ids made in the graph from the padding
    (cumsum of the non-pad mask, offset by the pad index), word + position
    embeddings, LayerNorm, one encoder layer and a masked mean pool."""

    def __init__(self, vocab=2048, dim=128, pad=1):
        super().__init__()
        self.pad = pad
        self.word, self.pos = nn.Embedding(vocab, dim, padding_idx=pad), nn.Embedding(130, dim)
        self.ln = nn.LayerNorm(dim)
        self.layer = BertLayer(dim, 4)

    def forward(self, input_ids):
        mask = input_ids.ne(self.pad).int()
        pos = (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + self.pad
        x = self.ln(self.word(input_ids) + self.pos(pos))
        bias = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
        x = self.layer(x, bias)
        m = mask[..., None].float()
        return (x * m).sum(1) / m.sum(1).clamp(min=1e-9)


def build_roberta(rng, small):
    seq = 16 if small else 64
    ids = token_ids(rng, 2048, 2, seq)
    ids[ids == 1] = 5
    ids[0, seq - seq // 4:] = 1  # padding at the end of the first row
    return Export(RobertaEmbed(), {"input_ids": ids}, ["sentence_embedding"])


class MelFrontEnd(nn.Module):
    """A log-mel spectrogram computed in the model, then a small 2-D conv
    classifier: how speech models often ship their front end. torch 1.13 has
    no ONNX export for torch.stft, so the STFT is a strided Conv1d whose
    kernels are the Hann-windowed cosine and sine rows of the DFT (the
    "conv STFT" export-friendly models use), then power, a mel filter bank as
    a matrix product, and log."""

    def __init__(self, n_fft=256, hop=128, mels=40, classes=10):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        k = torch.arange(n_fft // 2 + 1, dtype=torch.float64)[:, None]
        t = torch.arange(n_fft, dtype=torch.float64)[None]
        win = torch.hann_window(n_fft, dtype=torch.float64)
        ang = 2 * math.pi * k * t / n_fft
        basis = torch.cat(((ang.cos() * win), (-ang.sin() * win)), 0).float()[:, None]
        self.register_buffer("basis", basis)  # [2 * bins, 1, n_fft]
        fb = torch.rand(n_fft // 2 + 1, mels)
        self.register_buffer("fbank", fb / fb.sum(0, keepdim=True))
        self.net = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                 nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
                                 nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, classes))

    def forward(self, wave):  # [b, samples]
        spec = F.conv1d(wave[:, None], self.basis, stride=self.hop)  # [b, 2 * bins, frames]
        re, im = spec.chunk(2, dim=1)
        power = re * re + im * im  # [b, bins, frames]
        mel = torch.log(power.transpose(1, 2) @ self.fbank + 1e-6)
        return self.net(mel[:, None])


def build_mel(rng, small):
    return Export(MelFrontEnd(), {"wave": normal(rng, 1, 4096 if small else 16000)},
                  ["logits"])


class DLRMLite(nn.Module):
    """A recommendation model: bags of sparse ids reduced by nn.EmbeddingBag
    (sum, with offsets), a dense MLP, pairwise dot-product interactions."""

    def __init__(self, rows=1000, dim=16, tables=3):
        super().__init__()
        self.bags = nn.ModuleList(nn.EmbeddingBag(rows, dim, mode="sum") for _ in range(tables))
        self.bottom = nn.Sequential(nn.Linear(13, 32), nn.ReLU(), nn.Linear(32, dim))
        n = tables + 1
        li, lj = np.tril_indices(n, -1)  # torch.tril_indices has no ONNX export
        self.register_buffer("li", torch.from_numpy(li))
        self.register_buffer("lj", torch.from_numpy(lj))
        self.top = nn.Sequential(nn.Linear(dim + n * (n - 1) // 2, 32), nn.ReLU(),
                                 nn.Linear(32, 1))

    def forward(self, dense, ids, offsets):
        feats = [self.bottom(dense)] + [bag(ids[i], offsets[i]) for i, bag in enumerate(self.bags)]
        z = torch.stack(feats, 1)
        inter = z @ z.transpose(1, 2)
        return torch.sigmoid(self.top(torch.cat((feats[0], inter[:, self.li, self.lj]), 1)))


def build_dlrm(rng, small):
    batch, per_bag = 4, 5
    ids = rng.integers(0, 1000, size=(3, batch * per_bag)).astype(np.int64)
    offsets = np.tile(np.arange(0, batch * per_bag, per_bag, dtype=np.int64), (3, 1))
    return Export(DLRMLite(), {"dense": normal(rng, batch, 13), "ids": ids, "offsets": offsets},
                  ["click_probability"])


def build_raft(rng, small):
    class Flow(nn.Module):
        def __init__(self):
            super().__init__()
            self.raft = torchvision.models.optical_flow.raft_small(weights=None)

        def forward(self, image1, image2):
            return self.raft(image1, image2, num_flow_updates=3)[-1]
    s = 64 if small else 128
    return Export(Flow(), {"image1": normal(rng, 1, 3, s, s), "image2": normal(rng, 1, 3, s, s)},
                  ["flow"])


def build_vit_interp(rng, small):
    """A ViT whose learned position embeddings (made for a 14x14 grid) are
    resized bicubically to the input's grid, as DINO/timm models do."""
    class ViTInterp(nn.Module):
        def __init__(self, dim=96):
            super().__init__()
            self.patch = nn.Conv2d(3, dim, 16, 16)
            self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
            self.pos = nn.Parameter(torch.randn(1, 1 + 14 * 14, dim) * 0.02)
            self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(
                dim, 4, 2 * dim, dropout=0.0, activation="gelu", batch_first=True,
                norm_first=True), 2)
            self.head = nn.Linear(dim, 10)

        def forward(self, x):
            x = self.patch(x)
            b, c, h, w = x.shape
            grid = self.pos[:, 1:].reshape(1, 14, 14, c).permute(0, 3, 1, 2)
            grid = F.interpolate(grid, size=(h, w), mode="bicubic", align_corners=False)
            pos = torch.cat((self.pos[:, :1], grid.flatten(2).transpose(1, 2)), 1)
            x = torch.cat((self.cls.expand(b, -1, -1), x.flatten(2).transpose(1, 2)), 1) + pos
            return self.head(self.enc(x)[:, 0])
    s = 96 if small else 160
    return Export(ViTInterp(), {"image": normal(rng, 1, 3, s, s)}, ["logits"])


# ---------------------------------- fourth wave: sequence, audio and text models


def sinusoids(length, channels, max_timescale=10000.0):
    """Whisper's fixed positions: sin over the first half of the channels,
    cos over the second, geometric timescales."""
    step = math.log(max_timescale) / (channels // 2 - 1)
    inv = torch.exp(-step * torch.arange(channels // 2, dtype=torch.float32))
    t = torch.arange(length, dtype=torch.float32)[:, None] * inv[None]
    return torch.cat((t.sin(), t.cos()), 1)


class SelfAttention(nn.Module):
    """Multi-head attention written out (q, k, v and output projections), as
    Hugging Face and OpenAI code write it; an additive mask if one is given."""

    def __init__(self, dim, heads, key_bias=True):
        super().__init__()
        self.heads = heads
        self.q, self.k = nn.Linear(dim, dim), nn.Linear(dim, dim, bias=key_bias)
        self.v, self.o = nn.Linear(dim, dim), nn.Linear(dim, dim)

    def forward(self, x, kv=None, bias=None):
        kv = x if kv is None else kv
        b, t, c = x.shape
        s = kv.shape[1]
        q = self.q(x).view(b, t, self.heads, -1).transpose(1, 2)
        k = self.k(kv).view(b, s, self.heads, -1).transpose(1, 2)
        v = self.v(kv).view(b, s, self.heads, -1).transpose(1, 2)
        scale = q.shape[-1] ** -0.25  # Whisper scales q and k by d^-1/4 each
        att = (q * scale) @ (k * scale).transpose(-1, -2)
        if bias is not None:
            att = att + bias
        return self.o((att.softmax(-1) @ v).transpose(1, 2).reshape(b, t, c))


class WhisperEncoder(nn.Module):
    """Whisper's audio encoder, scaled down: two Conv1d + GELU over log-mel
    frames (the second with stride 2), sinusoidal positions, pre-norm blocks
    (key projection without bias), a final LayerNorm."""

    def __init__(self, mels=40, dim=128, heads=4, layers=2, frames=200):
        super().__init__()
        self.conv1 = nn.Conv1d(mels, dim, 3, padding=1)
        self.conv2 = nn.Conv1d(dim, dim, 3, stride=2, padding=1)
        self.register_buffer("positions", sinusoids(frames // 2, dim))
        self.ln_att = nn.ModuleList(nn.LayerNorm(dim) for _ in range(layers))
        self.att = nn.ModuleList(SelfAttention(dim, heads, key_bias=False) for _ in range(layers))
        self.ln_mlp = nn.ModuleList(nn.LayerNorm(dim) for _ in range(layers))
        self.mlp = nn.ModuleList(nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(),
                                               nn.Linear(4 * dim, dim)) for _ in range(layers))
        self.ln_post = nn.LayerNorm(dim)

    def forward(self, mel):
        x = F.gelu(self.conv2(F.gelu(self.conv1(mel)))).permute(0, 2, 1)
        x = x + self.positions[:x.shape[1]]
        for ln_att, att, ln_mlp, mlp in zip(self.ln_att, self.att, self.ln_mlp, self.mlp):
            x = x + att(ln_att(x))
            x = x + mlp(ln_mlp(x))
        return self.ln_post(x)


def build_whisper(rng, small):
    frames = 100 if small else 200
    return Export(WhisperEncoder(frames=frames), {"mel": normal(rng, 1, 40, frames)},
                  ["encoder_out"])


class Wav2Vec2(nn.Module):
    """wav2vec 2.0 (base layout), scaled down: a conv feature extractor on the
    raw waveform (GroupNorm with one group per channel after the first conv,
    GELU, no biases), LayerNorm + feature projection, a grouped positional
    Conv1d with weight normalisation (even kernel, last frame dropped), then
    post-norm transformer layers and a CTC head."""

    def __init__(self, conv_dim=64, dim=96, heads=4, layers=2, vocab=32):
        super().__init__()
        convs = []
        for i, (k, s) in enumerate(((10, 5), (3, 2), (3, 2), (3, 2), (2, 2))):
            convs.append(nn.Conv1d(1 if i == 0 else conv_dim, conv_dim, k, stride=s, bias=False))
            if i == 0:
                convs.append(nn.GroupNorm(conv_dim, conv_dim))
            convs.append(nn.GELU())
        self.features = nn.Sequential(*convs)
        self.ln_feat = nn.LayerNorm(conv_dim)
        self.proj = nn.Linear(conv_dim, dim)
        self.pos_conv = nn.utils.weight_norm(
            nn.Conv1d(dim, dim, 16, padding=8, groups=8), name="weight", dim=2)
        self.ln = nn.LayerNorm(dim)
        self.att = nn.ModuleList(SelfAttention(dim, heads) for _ in range(layers))
        self.ln_att = nn.ModuleList(nn.LayerNorm(dim) for _ in range(layers))
        self.ffn = nn.ModuleList(nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(),
                                               nn.Linear(2 * dim, dim)) for _ in range(layers))
        self.ln_ffn = nn.ModuleList(nn.LayerNorm(dim) for _ in range(layers))
        self.head = nn.Linear(dim, vocab)

    def forward(self, waveform):  # [b, samples]
        x = self.features(waveform[:, None]).transpose(1, 2)
        x = self.proj(self.ln_feat(x))
        pos = F.gelu(self.pos_conv(x.transpose(1, 2))[:, :, :-1]).transpose(1, 2)
        x = self.ln(x + pos)
        for att, ln_att, ffn, ln_ffn in zip(self.att, self.ln_att, self.ffn, self.ln_ffn):
            x = ln_att(x + att(x))
            x = ln_ffn(x + ffn(x))
        return self.head(x).log_softmax(-1)


def build_wav2vec2(rng, small):
    return Export(Wav2Vec2(), {"waveform": normal(rng, 1, 2000 if small else 4000)},
                  ["log_probs"])


class TemporalBlock(nn.Module):
    """A TCN residual block: two weight-normalised dilated causal Conv1d
    (padding on the left only), ReLU, a 1x1 downsample on the skip if needed."""

    def __init__(self, cin, cout, kernel, dilation):
        super().__init__()
        self.pad = (kernel - 1) * dilation
        self.c1 = nn.utils.weight_norm(nn.Conv1d(cin, cout, kernel, dilation=dilation))
        self.c2 = nn.utils.weight_norm(nn.Conv1d(cout, cout, kernel, dilation=dilation))
        self.skip = nn.Conv1d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        h = F.relu(self.c1(F.pad(x, (self.pad, 0))))
        h = F.relu(self.c2(F.pad(h, (self.pad, 0))))
        return F.relu(h + self.skip(x))


class TCN(nn.Module):
    """Bai et al.'s temporal convolutional network: dilations 1, 2, 4, 8,
    a classifier on the last time step."""

    def __init__(self, features=8, channels=32, classes=10):
        super().__init__()
        self.blocks = nn.Sequential(*(TemporalBlock(features if i == 0 else channels, channels,
                                                    3, 2 ** i) for i in range(4)))
        self.head = nn.Linear(channels, classes)

    def forward(self, x):  # [b, features, time]
        return self.head(self.blocks(x)[:, :, -1])


def build_tcn(rng, small):
    axes = {"series": {0: "batch", 2: "time"}, "logits": {0: "batch"}}
    return Export(TCN(), {"series": normal(rng, 2, 8, 64 if small else 200)}, ["logits"], axes)


class WaveNet(nn.Module):
    """WaveNet's residual stack, scaled down: a causal input conv, gated
    units tanh(filter) * sigmoid(gate) over dilated causal convs (two cycles of
    dilations 1..16) with a global conditioning vector added to both, 1x1
    residual and skip convs, summed skips, ReLU, 1x1, ReLU, 1x1, log-softmax
    over 64 quantisation levels."""

    def __init__(self, res=32, skip=64, cond=16, levels=64, dilations=(1, 2, 4, 8, 16) * 2):
        super().__init__()
        self.dilations = dilations
        self.inp = nn.Conv1d(1, res, 2)
        self.filt = nn.ModuleList(nn.Conv1d(res, res, 2, dilation=d) for d in dilations)
        self.gate = nn.ModuleList(nn.Conv1d(res, res, 2, dilation=d) for d in dilations)
        self.cond_f = nn.ModuleList(nn.Linear(cond, res, bias=False) for _ in dilations)
        self.cond_g = nn.ModuleList(nn.Linear(cond, res, bias=False) for _ in dilations)
        self.res = nn.ModuleList(nn.Conv1d(res, res, 1) for _ in dilations)
        self.skip = nn.ModuleList(nn.Conv1d(res, skip, 1) for _ in dilations)
        self.out = nn.Sequential(nn.ReLU(), nn.Conv1d(skip, skip, 1), nn.ReLU(),
                                 nn.Conv1d(skip, levels, 1))

    def forward(self, audio, speaker):  # [b, 1, t], [b, cond]
        x = self.inp(F.pad(audio, (1, 0)))
        skips = 0
        for i, d in enumerate(self.dilations):
            h = F.pad(x, (d, 0))
            f = self.filt[i](h) + self.cond_f[i](speaker)[:, :, None]
            g = self.gate[i](h) + self.cond_g[i](speaker)[:, :, None]
            z = torch.tanh(f) * torch.sigmoid(g)
            skips = skips + self.skip[i](z)
            x = (x + self.res[i](z)) * math.sqrt(0.5)
        return self.out(skips).log_softmax(1)


def build_wavenet(rng, small):
    return Export(WaveNet(), {"audio": normal(rng, 1, 1, 256 if small else 1000),
                              "speaker": normal(rng, 1, 16)}, ["log_probs"])


class DecoderLM(nn.Module):
    """torch's nn.TransformerDecoder over token ids attending to an encoder's
    memory: a float causal mask from generate_square_subsequent_mask, a bool
    target key-padding mask from the pad id, a bool memory key-padding mask
    from an int64 0/1 mask."""

    def __init__(self, vocab=1000, dim=128, heads=4, layers=2, pad=0):
        super().__init__()
        self.pad = pad
        self.embed, self.pos = nn.Embedding(vocab, dim), nn.Embedding(64, dim)
        layer = nn.TransformerDecoderLayer(dim, heads, 2 * dim, dropout=0.0, batch_first=True)
        self.dec = nn.TransformerDecoder(layer, layers, norm=nn.LayerNorm(dim))
        self.head = nn.Linear(dim, vocab)

    def forward(self, tgt_ids, memory, memory_mask):
        t = tgt_ids.shape[1]
        x = self.embed(tgt_ids) + self.pos(torch.arange(t))
        causal = nn.Transformer.generate_square_subsequent_mask(t)
        y = self.dec(x, memory, tgt_mask=causal, tgt_key_padding_mask=tgt_ids.eq(self.pad),
                     memory_key_padding_mask=memory_mask.eq(0))
        return self.head(y)


def build_transformer_decoder(rng, small):
    t, s = (8, 12) if small else (16, 32)
    ids = token_ids(rng, 1000, 2, t)
    ids[ids == 0] = 7
    ids[1, t - 3:] = 0  # the second sequence is padded
    return Export(DecoderLM(), {"tgt_ids": ids, "memory": normal(rng, 2, s, 128),
                                "memory_mask": padding_mask(rng, 2, s)}, ["logits"])


class PackedLSTM(nn.Module):
    """A padded batch of variable-length sequences through a bidirectional
    LSTM with pack_padded_sequence / pad_packed_sequence (lengths unsorted),
    then a masked mean over the valid steps and a classifier."""

    def __init__(self, vocab=500, dim=32, hidden=48, classes=5):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, hidden, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden, classes)

    def forward(self, ids, lengths):
        packed = nn.utils.rnn.pack_padded_sequence(self.embed(ids), lengths, batch_first=True,
                                                   enforce_sorted=False)
        y, _ = self.lstm(packed)
        y, _ = nn.utils.rnn.pad_packed_sequence(y, batch_first=True, total_length=ids.shape[1])
        mean = y.sum(1) / lengths[:, None].float()
        return self.head(mean)


def build_packed_lstm(rng, small):
    t = 12 if small else 30
    lengths = np.array([t - 5, t, t - 2], dtype=np.int64)
    ids = token_ids(rng, 500, 3, t)
    return Export(PackedLSTM(), {"ids": ids, "lengths": lengths}, ["logits"])


class DistilBertLayer(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)
        self.sa_norm = nn.LayerNorm(dim, eps=1e-12)
        self.ffn = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.out_norm = nn.LayerNorm(dim, eps=1e-12)

    def forward(self, x, attention_mask):
        b, t, c = x.shape

        def shape(z):
            return z.view(b, -1, self.heads, c // self.heads).transpose(1, 2)
        q = shape(self.q(x)) / math.sqrt(c // self.heads)
        scores = q @ shape(self.k(x)).transpose(2, 3)
        mask = (attention_mask == 0).view(b, 1, 1, t).expand_as(scores)
        scores = scores.masked_fill(mask, float("-inf"))
        ctx = (scores.softmax(-1) @ shape(self.v(x))).transpose(1, 2).reshape(b, -1, c)
        x = self.sa_norm(x + self.out(ctx))
        return self.out_norm(x + self.ffn(x))


class DistilBert(nn.Module):
    """DistilBERT, scaled down: word + position embeddings (no token types),
    the attention mask turned into -inf by masked_fill on the scores (a Where
    on run-time booleans), post-norm layers, dynamic batch and sequence."""

    def __init__(self, vocab=2048, dim=128, heads=4, layers=2):
        super().__init__()
        self.word, self.pos = nn.Embedding(vocab, dim), nn.Embedding(128, dim)
        self.ln = nn.LayerNorm(dim, eps=1e-12)
        self.layers = nn.ModuleList(DistilBertLayer(dim, heads) for _ in range(layers))

    def forward(self, input_ids, attention_mask):
        x = self.ln(self.word(input_ids) + self.pos(torch.arange(input_ids.shape[1])))
        for layer in self.layers:
            x = layer(x, attention_mask)
        return x


def build_distilbert(rng, small):
    seq = 16 if small else 48
    axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
            "last_hidden_state": {0: "batch", 1: "seq"}}
    return Export(DistilBert(), {"input_ids": token_ids(rng, 2048, 2, seq),
                                 "attention_mask": padding_mask(rng, 2, seq)},
                  ["last_hidden_state"], axes)


class SentenceEncoder(nn.Module):
    """A sentence-transformers model (MiniLM-like): the BERT encoder, then
    mean pooling over the tokens the attention mask keeps and L2
    normalisation, as SentenceTransformer's Pooling + Normalize modules do."""

    def __init__(self):
        super().__init__()
        self.bert = Bert(2048, context=128, dim=96, heads=4, layers=2)

    def forward(self, input_ids, attention_mask):
        x, _ = self.bert(input_ids, attention_mask)
        m = attention_mask[..., None].expand(x.shape).float()
        mean = (x * m).sum(1) / torch.clamp(m.sum(1), min=1e-9)
        return F.normalize(mean, p=2, dim=1)


def build_sentence(rng, small):
    seq = 16 if small else 48
    axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
            "sentence_embedding": {0: "batch"}}
    return Export(SentenceEncoder(), {"input_ids": token_ids(rng, 2048, 2, seq),
                                      "attention_mask": padding_mask(rng, 2, seq)},
                  ["sentence_embedding"], axes)


class Albert(nn.Module):
    """ALBERT, scaled down: factorised embeddings (vocabulary to 32, a linear
    map to the hidden size) and one encoder layer whose weights all four
    layers share; the additive -10000 mask and a tanh pooler."""

    def __init__(self, vocab=2048, emb=32, dim=128, heads=4, layers=4):
        super().__init__()
        self.layers = layers
        self.word, self.pos = nn.Embedding(vocab, emb), nn.Embedding(128, emb)
        self.token_type = nn.Embedding(2, emb)
        self.ln = nn.LayerNorm(emb, eps=1e-12)
        self.map = nn.Linear(emb, dim)
        self.shared = BertLayer(dim, heads)
        self.pooler = nn.Linear(dim, dim)

    def forward(self, input_ids, token_type_ids, attention_mask):
        pos = torch.arange(input_ids.shape[1])
        x = self.ln(self.word(input_ids) + self.pos(pos) + self.token_type(token_type_ids))
        x = self.map(x)
        bias = (1.0 - attention_mask[:, None, None, :].float()) * -10000.0
        for _ in range(self.layers):
            x = self.shared(x, bias)
        return x, torch.tanh(self.pooler(x[:, 0]))


def build_albert(rng, small):
    seq = 16 if small else 48
    types = np.zeros((1, seq), np.int64)
    types[:, seq // 2:] = 1  # a sentence pair
    axes = {n: {1: "seq"} for n in ("input_ids", "token_type_ids", "attention_mask",
                                     "last_hidden_state")}
    return Export(Albert(), {"input_ids": token_ids(rng, 2048, 1, seq), "token_type_ids": types,
                             "attention_mask": padding_mask(rng, 1, seq)},
                  ["last_hidden_state", "pooler_output"], axes)


class NeoXBlock(nn.Module):
    """A GPT-NeoX block: fused QKV laid out per head, rotary embeddings on the
    first quarter of each head's channels only (rotary_pct 0.25), the causal
    mask applied by torch.where with the dtype's minimum, parallel residual
    (attention and MLP both read the block's input)."""

    def __init__(self, dim, heads, rot):
        super().__init__()
        self.heads, self.hd, self.rot = heads, dim // heads, rot
        self.ln_1, self.ln_2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.dense = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x, cos, sin, causal):
        b, t, c = x.shape
        qkv = self.qkv(self.ln_1(x)).view(b, t, self.heads, 3 * self.hd).permute(0, 2, 1, 3)
        q, k, v = qkv[..., :self.hd], qkv[..., self.hd:2 * self.hd], qkv[..., 2 * self.hd:]

        def rope(z):
            zr, zp = z[..., :self.rot], z[..., self.rot:]
            return torch.cat((zr * cos + rotate_half(zr) * sin, zp), -1)
        q, k = rope(q), rope(k)
        att = q @ k.transpose(-1, -2) / math.sqrt(self.hd)
        att = torch.where(causal, att, torch.tensor(torch.finfo(att.dtype).min))
        y = (att.softmax(-1) @ v).transpose(1, 2).reshape(b, t, c)
        return x + self.dense(y) + self.mlp(self.ln_2(x))


class GPTNeoX(nn.Module):
    def __init__(self, vocab=2048, dim=128, heads=4, layers=2, context=64):
        super().__init__()
        self.rot = (dim // heads) // 4
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(NeoXBlock(dim, heads, self.rot) for _ in range(layers))
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.register_buffer("causal", torch.tril(torch.ones(context, context, dtype=torch.bool)))

    def forward(self, input_ids):
        t = input_ids.shape[1]
        inv = 1.0 / (10000.0 ** (torch.arange(0, self.rot, 2).float() / self.rot))
        freqs = torch.outer(torch.arange(t).float(), inv)
        emb = torch.cat((freqs, freqs), -1)
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]
        causal = self.causal[:t, :t][None, None]
        x = self.embed(input_ids)
        for block in self.blocks:
            x = block(x, cos, sin, causal)
        return self.head(self.ln_f(x))


def build_neox(rng, small):
    return Export(GPTNeoX(), {"input_ids": token_ids(rng, 2048, 1, 12 if small else 32)},
                  ["logits"])


class T5Decoder(nn.Module):
    """A T5 v1.1-style decoder over the encoder's output: RMSNorm, causal
    self-attention with the unidirectional bucketed relative-position bias,
    cross-attention masked by the encoder's padding, gated-GELU FFN, no
    scaling of the scores, a tied LM head scaled by dim^-1/2."""

    def __init__(self, vocab=1000, dim=128, heads=4, layers=2, buckets=32, max_distance=128):
        super().__init__()
        self.heads, self.buckets, self.max_distance, self.dim = heads, buckets, max_distance, dim
        self.embed = nn.Embedding(vocab, dim)
        self.rel = nn.Embedding(buckets, heads)
        self.n_self = nn.ModuleList(RMSNorm(dim) for _ in range(layers))
        self.self_qkv = nn.ModuleList(nn.Linear(dim, 3 * dim, bias=False) for _ in range(layers))
        self.self_o = nn.ModuleList(nn.Linear(dim, dim, bias=False) for _ in range(layers))
        self.n_cross = nn.ModuleList(RMSNorm(dim) for _ in range(layers))
        self.cross_q = nn.ModuleList(nn.Linear(dim, dim, bias=False) for _ in range(layers))
        self.cross_kv = nn.ModuleList(nn.Linear(dim, 2 * dim, bias=False) for _ in range(layers))
        self.cross_o = nn.ModuleList(nn.Linear(dim, dim, bias=False) for _ in range(layers))
        self.n_ff = nn.ModuleList(RMSNorm(dim) for _ in range(layers))
        self.wi_0 = nn.ModuleList(nn.Linear(dim, 2 * dim, bias=False) for _ in range(layers))
        self.wi_1 = nn.ModuleList(nn.Linear(dim, 2 * dim, bias=False) for _ in range(layers))
        self.wo = nn.ModuleList(nn.Linear(2 * dim, dim, bias=False) for _ in range(layers))
        self.n_final = RMSNorm(dim)

    def bucket(self, rel):
        # Unidirectional: only keys at or before the query count.
        rel = -torch.min(rel, torch.zeros_like(rel))
        exact = self.buckets // 2
        large = exact + (torch.log(rel.float() / exact) / math.log(self.max_distance / exact)
                         * (self.buckets - exact)).long()
        large = torch.min(large, torch.full_like(large, self.buckets - 1))
        return torch.where(rel < exact, rel, large)

    def heads_of(self, z):
        b, t, _ = z.shape
        return z.view(b, t, self.heads, -1).transpose(1, 2)

    def attend(self, q, k, v, bias):
        b, _, t, _ = q.shape
        att = (q @ k.transpose(-1, -2) + bias).softmax(-1)
        return (att @ v).transpose(1, 2).reshape(b, t, self.dim)

    def forward(self, decoder_input_ids, encoder_hidden_states, encoder_attention_mask):
        t = decoder_input_ids.shape[1]
        pos = torch.arange(t)
        rel = pos[None, :] - pos[:, None]
        causal = torch.full((t, t), torch.finfo(torch.float32).min).triu(1)
        self_bias = self.rel(self.bucket(rel)).permute(2, 0, 1)[None] + causal
        cross_bias = ((1.0 - encoder_attention_mask[:, None, None, :].float())
                      * torch.finfo(torch.float32).min)
        x = self.embed(decoder_input_ids)
        for i in range(len(self.self_o)):
            h = self.n_self[i](x)
            q, k, v = (self.heads_of(z) for z in self.self_qkv[i](h).split(self.dim, -1))
            x = x + self.self_o[i](self.attend(q, k, v, self_bias))
            h = self.n_cross[i](x)
            k, v = (self.heads_of(z) for z in self.cross_kv[i](encoder_hidden_states)
                    .split(self.dim, -1))
            x = x + self.cross_o[i](self.attend(self.heads_of(self.cross_q[i](h)), k, v,
                                                cross_bias))
            h = self.n_ff[i](x)
            x = x + self.wo[i](F.gelu(self.wi_0[i](h), approximate="tanh") * self.wi_1[i](h))
        return F.linear(self.n_final(x) * self.dim ** -0.5, self.embed.weight)


def build_t5_decoder(rng, small):
    t, s = (6, 12) if small else (12, 40)
    return Export(T5Decoder(), {"decoder_input_ids": token_ids(rng, 1000, 1, t),
                                "encoder_hidden_states": normal(rng, 1, s, 128),
                                "encoder_attention_mask": padding_mask(rng, 1, s)}, ["logits"])


class BagClassifier(nn.Module):
    """A fastText-style classifier over bags of token ids given as one flat id
    list with bag offsets: nn.EmbeddingBag with mode='mean' and with
    mode='max', concatenated, a linear layer."""

    def __init__(self, rows=1000, dim=32, classes=4):
        super().__init__()
        self.mean = nn.EmbeddingBag(rows, dim, mode="mean")
        self.max = nn.EmbeddingBag(rows, dim, mode="max")
        self.head = nn.Linear(2 * dim, classes)

    def forward(self, ids, offsets):
        return self.head(torch.cat((self.mean(ids, offsets), self.max(ids, offsets)), 1))


def build_embedding_bag(rng, small):
    ids = rng.integers(0, 1000, size=23).astype(np.int64)
    offsets = np.array([0, 4, 11, 12, 18], np.int64)  # bags of 4, 7, 1, 6 and 5 ids
    return Export(BagClassifier(), {"ids": ids, "offsets": offsets}, ["logits"])


class TacotronAttentionStep(nn.Module):
    """One decoder step of Tacotron 2: prenet, the attention LSTMCell, the
    location-sensitive attention (a Conv1d over the previous and cumulative
    attention weights, tanh energies, masked by the encoder lengths), the
    context by bmm, the decoder LSTMCell, mel frame and stop token."""

    def __init__(self, mels=40, enc=64, rnn=96, att=48, filters=16, kernel=15):
        super().__init__()
        self.prenet = nn.Sequential(nn.Linear(mels, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.att_rnn = nn.LSTMCell(64 + enc, rnn)
        self.query = nn.Linear(rnn, att, bias=False)
        self.memory_proj = nn.Linear(enc, att, bias=False)
        self.loc_conv = nn.Conv1d(2, filters, kernel, padding=kernel // 2, bias=False)
        self.loc_dense = nn.Linear(filters, att, bias=False)
        self.v = nn.Linear(att, 1, bias=True)
        self.dec_rnn = nn.LSTMCell(rnn + enc, rnn)
        self.frame = nn.Linear(rnn + enc, mels)
        self.stop = nn.Linear(rnn + enc, 1)

    def forward(self, frame, memory, memory_lengths, att_h, att_c, dec_h, dec_c, weights,
                cum_weights, context):
        att_h, att_c = self.att_rnn(torch.cat((self.prenet(frame), context), -1), (att_h, att_c))
        loc = self.loc_dense(self.loc_conv(torch.stack((weights, cum_weights), 1)).transpose(1, 2))
        energies = self.v(torch.tanh(self.query(att_h)[:, None] + loc
                                     + self.memory_proj(memory))).squeeze(-1)
        pad = torch.arange(memory.shape[1])[None] >= memory_lengths[:, None]
        weights = energies.masked_fill(pad, float("-inf")).softmax(-1)
        context = torch.bmm(weights[:, None], memory).squeeze(1)
        dec_h, dec_c = self.dec_rnn(torch.cat((att_h, context), -1), (dec_h, dec_c))
        out = torch.cat((dec_h, context), -1)
        return (self.frame(out), torch.sigmoid(self.stop(out)), weights, cum_weights + weights,
                att_h, att_c, dec_h, dec_c, context)


def build_tacotron(rng, small):
    b, t = 2, 24 if small else 60
    w = np.abs(normal(rng, b, t))
    w /= w.sum(1, keepdims=True)
    return Export(TacotronAttentionStep(), {
        "frame": normal(rng, b, 40), "memory": normal(rng, b, t, 64),
        "memory_lengths": np.array([t, t - 7], np.int64),
        "att_h": normal(rng, b, 96), "att_c": normal(rng, b, 96),
        "dec_h": normal(rng, b, 96), "dec_c": normal(rng, b, 96),
        "weights": w, "cum_weights": (w * 3).astype(np.float32),
        "context": normal(rng, b, 64)},
        ["mel_frame", "stop", "weights_out", "cum_weights_out", "att_h_out", "att_c_out",
         "dec_h_out", "dec_c_out", "context_out"])


class SSDMixer(nn.Module):
    """A Mamba-2-style mixer: input projection into x, z, B, C and dt; a
    depthwise causal Conv1d with SiLU; the selective state-space recurrence
    evaluated in its quadratic 'state-space dual' form, written with cumsum
    and exp (decays exp(segsum(dt * A)) masked to the lower triangle,
    (C B^T) * decay * dt applied to x); a D skip, the SiLU(z) gate, RMSNorm,
    the output projection."""

    def __init__(self, dim=64, heads=4, head_dim=32, state=16, kernel=4):
        super().__init__()
        self.heads, self.hp, self.n = heads, head_dim, state
        inner = heads * head_dim
        self.inner = inner
        self.in_proj = nn.Linear(dim, 2 * inner + 2 * state + heads, bias=False)
        self.conv = nn.Conv1d(inner + 2 * state, inner + 2 * state, kernel, groups=inner + 2 * state,
                              padding=kernel - 1)
        self.dt_bias = nn.Parameter(torch.rand(heads) - 2.0)
        self.A_log = nn.Parameter(torch.log(torch.linspace(1.0, 8.0, heads)))
        self.D = nn.Parameter(torch.ones(heads) + 0.1 * torch.randn(heads))
        self.norm = RMSNorm(inner)
        self.out_proj = nn.Linear(inner, dim, bias=False)

    def forward(self, x):  # [b, t, dim]
        b, t, _ = x.shape
        z, xbc, dt = self.in_proj(x).split([self.inner, self.inner + 2 * self.n, self.heads], -1)
        xbc = F.silu(self.conv(xbc.transpose(1, 2))[:, :, :t].transpose(1, 2))
        xs, B, C = xbc.split([self.inner, self.n, self.n], -1)
        dt = F.softplus(dt + self.dt_bias)                      # [b, t, h]
        dA = (dt * -torch.exp(self.A_log)).transpose(1, 2)      # [b, h, t]
        cs = torch.cumsum(dA, -1)
        seg = cs[..., :, None] - cs[..., None, :]              # [b, h, t, s]
        lower = torch.tril(torch.ones(t, t, dtype=torch.bool))
        decay = torch.exp(torch.where(lower, seg, torch.tensor(float("-inf"))))
        scores = (C @ B.transpose(1, 2))[:, None] * decay * dt.transpose(1, 2)[:, :, None, :]
        xh = xs.view(b, t, self.heads, self.hp).transpose(1, 2)  # [b, h, t, p]
        y = scores @ xh + xh * self.D[None, :, None, None]
        y = y.transpose(1, 2).reshape(b, t, self.inner) * F.silu(z)
        return self.out_proj(self.norm(y))


class MambaLM(nn.Module):
    def __init__(self, vocab=1000, dim=64, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.norms = nn.ModuleList(RMSNorm(dim) for _ in range(layers))
        self.mixers = nn.ModuleList(SSDMixer(dim) for _ in range(layers))
        self.norm_f = RMSNorm(dim)

    def forward(self, input_ids):
        x = self.embed(input_ids)
        for norm, mixer in zip(self.norms, self.mixers):
            x = x + mixer(norm(x))
        return F.linear(self.norm_f(x), self.embed.weight)


def build_mamba(rng, small):
    return Export(MambaLM(), {"input_ids": token_ids(rng, 1000, 1, 16 if small else 48)},
                  ["logits"])


class TextCNN(nn.Module):
    """Kim's sentence classifier: embeddings, Conv1d of widths 3, 4 and 5,
    ReLU, max over time, concatenation, linear; dynamic sequence length."""

    def __init__(self, vocab=2000, dim=64, filters=32, classes=6):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.convs = nn.ModuleList(nn.Conv1d(dim, filters, k) for k in (3, 4, 5))
        self.head = nn.Linear(3 * filters, classes)

    def forward(self, ids):
        x = self.embed(ids).transpose(1, 2)
        return self.head(torch.cat([F.relu(c(x)).amax(-1) for c in self.convs], 1))


def build_textcnn(rng, small):
    axes = {"ids": {0: "batch", 1: "words"}, "logits": {0: "batch"}}
    return Export(TextCNN(), {"ids": token_ids(rng, 2000, 2, 20 if small else 50)},
                  ["logits"], axes)


class RWKVBlock(nn.Module):
    """An RWKV-4 block: token shift by nn.ZeroPad2d((0, 0, 1, -1)) (a Pad with
    a negative end), time-mixing with the WKV recurrence unrolled over the
    sequence in its numerically stable form (running maximum of exponents),
    channel-mixing with squared ReLU and a sigmoid receptance."""

    def __init__(self, dim):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.shift = nn.ZeroPad2d((0, 0, 1, -1))
        self.mix_k, self.mix_v, self.mix_r = (nn.Parameter(torch.rand(dim)) for _ in range(3))
        self.decay = nn.Parameter(-torch.rand(dim) * 2)
        self.first = nn.Parameter(torch.randn(dim) * 0.5)
        self.key, self.value = nn.Linear(dim, dim, bias=False), nn.Linear(dim, dim, bias=False)
        self.recept, self.out = nn.Linear(dim, dim, bias=False), nn.Linear(dim, dim, bias=False)
        self.cmix_k, self.cmix_r = nn.Parameter(torch.rand(dim)), nn.Parameter(torch.rand(dim))
        self.ck, self.cv = nn.Linear(dim, 2 * dim, bias=False), nn.Linear(2 * dim, dim, bias=False)
        self.cr = nn.Linear(dim, dim, bias=False)

    def wkv(self, k, v):
        w, u = -torch.exp(self.decay), self.first
        num = torch.zeros_like(k[:, 0])
        den = torch.zeros_like(k[:, 0])
        big = torch.full_like(k[:, 0], -1e38)
        outs = []
        for t in range(k.shape[1]):
            kt, vt = k[:, t], v[:, t]
            q = torch.maximum(big, u + kt)
            a, b = torch.exp(big - q), torch.exp(u + kt - q)
            outs.append((a * num + b * vt) / (a * den + b))
            q = torch.maximum(big + w, kt)
            a, b = torch.exp(big + w - q), torch.exp(kt - q)
            num, den, big = a * num + b * vt, a * den + b, q
        return torch.stack(outs, 1)

    def forward(self, x):
        h = self.ln_1(x)
        prev = self.shift(h)
        k = self.key(h * self.mix_k + prev * (1 - self.mix_k))
        v = self.value(h * self.mix_v + prev * (1 - self.mix_v))
        r = torch.sigmoid(self.recept(h * self.mix_r + prev * (1 - self.mix_r)))
        x = x + self.out(r * self.wkv(k, v))
        h = self.ln_2(x)
        prev = self.shift(h)
        k = torch.square(torch.relu(self.ck(h * self.cmix_k + prev * (1 - self.cmix_k))))
        r = torch.sigmoid(self.cr(h * self.cmix_r + prev * (1 - self.cmix_r)))
        return x + r * self.cv(k)


class RWKV(nn.Module):
    def __init__(self, vocab=1000, dim=64, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.ln_0 = nn.LayerNorm(dim)
        self.blocks = nn.Sequential(*(RWKVBlock(dim) for _ in range(layers)))
        self.ln_out, self.head = nn.LayerNorm(dim), nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids):
        return self.head(self.ln_out(self.blocks(self.ln_0(self.embed(input_ids)))))


def build_rwkv(rng, small):
    return Export(RWKV(), {"input_ids": token_ids(rng, 1000, 1, 8 if small else 16)}, ["logits"])


class TransformerXLAttention(nn.Module):
    """Transformer-XL's relative multi-head attention: sinusoidal relative
    position embeddings projected per layer, the content and position
    biases u and v, the 'relative shift' done with a zero column pad, a
    reshape and a slice, and a causal mask; memory of the previous segment
    concatenated in front of the keys."""

    def __init__(self, dim=96, heads=4):
        super().__init__()
        self.heads, self.hd = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.r_net = nn.Linear(dim, dim, bias=False)
        self.u = nn.Parameter(torch.randn(heads, self.hd) * 0.1)
        self.v = nn.Parameter(torch.randn(heads, self.hd) * 0.1)
        self.o = nn.Linear(dim, dim, bias=False)
        self.ln = nn.LayerNorm(dim)
        self.dim = dim

    @staticmethod
    def rel_shift(x):  # [b, h, q, k]
        b, h, q, k = x.shape
        x = F.pad(x, (1, 0))
        return x.view(b, h, k + 1, q)[:, :, 1:].reshape(b, h, q, k)

    def forward(self, x, mem):
        b, q, _ = x.shape
        cat = torch.cat((mem, x), 1)
        k_len = cat.shape[1]
        pos = torch.arange(k_len - 1, -1, -1.0)
        inv = 1.0 / (10000 ** (torch.arange(0, self.dim, 2.0) / self.dim))
        ang = pos[:, None] * inv[None]
        r = self.r_net(torch.cat((ang.sin(), ang.cos()), -1)).view(k_len, self.heads, self.hd)
        qh, kh, vh = self.qkv(cat).split(self.dim, -1)
        qh = qh[:, -q:].view(b, q, self.heads, self.hd)
        kh, vh = kh.view(b, k_len, self.heads, self.hd), vh.view(b, k_len, self.heads, self.hd)
        ac = torch.einsum("bihd,bjhd->bhij", qh + self.u, kh)
        bd = self.rel_shift(torch.einsum("bihd,jhd->bhij", qh + self.v, r))
        att = (ac + bd) / math.sqrt(self.hd)
        mask = torch.triu(torch.ones(q, k_len, dtype=torch.bool), diagonal=1 + k_len - q)
        att = att.masked_fill(mask, float("-inf")).softmax(-1)
        y = torch.einsum("bhij,bjhd->bihd", att, vh).reshape(b, q, self.dim)
        return self.ln(x + self.o(y))


def build_transformer_xl(rng, small):
    q, m = (8, 8) if small else (16, 24)
    return Export(TransformerXLAttention(), {"segment": normal(rng, 1, q, 96),
                                             "memory": normal(rng, 1, m, 96)}, ["out"])


class GlobalLayerNorm(nn.Module):
    """Conv-TasNet's gLN: statistics over channels and time together."""

    def __init__(self, ch):
        super().__init__()
        self.gamma, self.beta = nn.Parameter(torch.ones(1, ch, 1)), nn.Parameter(torch.zeros(1, ch, 1))

    def forward(self, x):
        mean = x.mean(dim=(1, 2), keepdim=True)
        var = ((x - mean) ** 2).mean(dim=(1, 2), keepdim=True)
        return self.gamma * (x - mean) / torch.sqrt(var + 1e-8) + self.beta


class TasNetBlock(nn.Module):
    def __init__(self, ch, hidden, dilation):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv1d(ch, hidden, 1), nn.PReLU(), GlobalLayerNorm(hidden),
            nn.Conv1d(hidden, hidden, 3, padding=dilation, dilation=dilation, groups=hidden),
            nn.PReLU(), GlobalLayerNorm(hidden), nn.Conv1d(hidden, ch, 1))

    def forward(self, x):
        return x + self.body(x)


class ConvTasNet(nn.Module):
    """Conv-TasNet speech separation, scaled down: a strided Conv1d encoder
    with ReLU, a separator of dilated depthwise blocks with PReLU and
    global layer norm, sigmoid masks for two speakers, a ConvTranspose1d
    decoder with overlap-add."""

    def __init__(self, filters=64, kernel=16, ch=32, hidden=64, speakers=2):
        super().__init__()
        self.speakers, self.filters = speakers, filters
        self.encoder = nn.Conv1d(1, filters, kernel, stride=kernel // 2, bias=False)
        self.bottleneck = nn.Sequential(GlobalLayerNorm(filters), nn.Conv1d(filters, ch, 1))
        self.blocks = nn.Sequential(*(TasNetBlock(ch, hidden, 2 ** i) for i in range(4)))
        self.mask = nn.Sequential(nn.PReLU(), nn.Conv1d(ch, speakers * filters, 1))
        self.decoder = nn.ConvTranspose1d(filters, 1, kernel, stride=kernel // 2, bias=False)

    def forward(self, mixture):  # [b, samples]
        w = F.relu(self.encoder(mixture[:, None]))
        m = torch.sigmoid(self.mask(self.blocks(self.bottleneck(w))))
        m = m.view(w.shape[0], self.speakers, self.filters, -1)
        masked = (w[:, None] * m).view(-1, self.filters, w.shape[-1])
        return self.decoder(masked).view(w.shape[0], self.speakers, -1)


def build_conv_tasnet(rng, small):
    return Export(ConvTasNet(), {"mixture": normal(rng, 1, 2000 if small else 8000)}, ["sources"])


class PerformerCausal(nn.Module):
    """Causal linear attention (Katharopoulos et al.; Performer's causal
    mode with the elu + 1 feature map): prefix sums over time of the
    per-step outer products phi(k) v^T (einsum to a rank-5 tensor and
    CumSum), read out with phi(q), normalised by the prefix sums of phi(k)."""

    def __init__(self, dim=64, heads=4, layers=2, vocab=1000):
        super().__init__()
        self.heads = heads
        self.embed = nn.Embedding(vocab, dim)
        self.ln = nn.ModuleList(nn.LayerNorm(dim) for _ in range(layers))
        self.qkv = nn.ModuleList(nn.Linear(dim, 3 * dim) for _ in range(layers))
        self.o = nn.ModuleList(nn.Linear(dim, dim) for _ in range(layers))
        self.head = nn.Linear(dim, vocab)

    def forward(self, input_ids):
        x = self.embed(input_ids)
        b, t, c = x.shape
        for ln, qkv, o in zip(self.ln, self.qkv, self.o):
            q, k, v = (z.view(b, t, self.heads, -1) for z in qkv(ln(x)).split(c, -1))
            q, k = F.elu(q) + 1, F.elu(k) + 1
            kv = torch.cumsum(torch.einsum("bthd,bthe->bthde", k, v), dim=1)
            num = torch.einsum("bthd,bthde->bthe", q, kv)
            den = torch.einsum("bthd,bthd->bth", q, torch.cumsum(k, dim=1))[..., None]
            x = x + o((num / den).reshape(b, t, c))
        return self.head(x)


def build_performer(rng, small):
    return Export(PerformerCausal(), {"input_ids": token_ids(rng, 1000, 1, 12 if small else 32)},
                  ["logits"])


class LengthRegulator(nn.Module):
    """FastSpeech's length regulator: a duration predictor (Conv1d + ReLU +
    LayerNorm, exp of log durations rounded to integer frame counts), then
    each phoneme's hidden state repeated that many times (repeat_interleave
    with run-time repeats: the output length is data-dependent), and a
    Conv1d mel head over the frames."""

    def __init__(self, vocab=64, dim=64, mels=40):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.dur = nn.Sequential(nn.Conv1d(dim, dim, 3, padding=1), nn.ReLU())
        self.dur_ln = nn.LayerNorm(dim)
        self.dur_out = nn.Linear(dim, 1)
        self.mel = nn.Conv1d(dim, mels, 3, padding=1)

    def forward(self, phonemes):  # [1, n]
        h = self.embed(phonemes)
        d = self.dur_out(self.dur_ln(self.dur(h.transpose(1, 2)).transpose(1, 2))).squeeze(-1)
        frames = torch.clamp(torch.round(torch.exp(d)), min=1).long()[0]
        expanded = torch.repeat_interleave(h[0], frames, dim=0)
        return self.mel(expanded.T[None]), frames


def build_length_regulator(rng, small):
    return Export(LengthRegulator(), {"phonemes": token_ids(rng, 64, 1, 10 if small else 24)},
                  ["mel", "durations"])


class BloomBlock(nn.Module):
    """A BLOOM block: ALiBi (per-head slopes times key position, no
    position embeddings) added through torch.baddbmm with beta and alpha,
    the causal mask by masked_fill with the dtype's minimum, fused QKV
    laid out per head, tanh-GELU MLP."""

    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.hd = heads, dim // heads
        self.ln_1, self.ln_2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.dense = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * dim, dim))

    def forward(self, x, alibi, causal):
        b, t, c = x.shape
        qkv = self.qkv(self.ln_1(x)).view(b, t, self.heads, 3, self.hd)
        q = qkv[..., 0, :].transpose(1, 2).reshape(b * self.heads, t, self.hd)
        k = qkv[..., 1, :].permute(0, 2, 3, 1).reshape(b * self.heads, self.hd, t)
        v = qkv[..., 2, :].transpose(1, 2).reshape(b * self.heads, t, self.hd)
        scores = torch.baddbmm(alibi, q, k, beta=1.0, alpha=1.0 / math.sqrt(self.hd))
        scores = scores.view(b, self.heads, t, t).masked_fill(causal, torch.finfo(torch.float32).min)
        y = (scores.softmax(-1).view(b * self.heads, t, t) @ v)
        y = y.view(b, self.heads, t, self.hd).transpose(1, 2).reshape(b, t, c)
        x = x + self.dense(y)
        return x + self.mlp(self.ln_2(x))


class Bloom(nn.Module):
    def __init__(self, vocab=2048, dim=128, heads=4, layers=2):
        super().__init__()
        self.heads = heads
        self.embed = nn.Embedding(vocab, dim)
        self.ln_emb = nn.LayerNorm(dim)
        self.blocks = nn.ModuleList(BloomBlock(dim, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(dim)
        slopes = torch.tensor([2 ** (-8 * (i + 1) / heads) for i in range(heads)])
        self.register_buffer("slopes", slopes)

    def forward(self, input_ids, attention_mask):
        b, t = input_ids.shape
        # BLOOM's ALiBi: slope x (cumulative count of attended positions - 1).
        pos = ((attention_mask.cumsum(-1) - 1) * attention_mask)[:, None, :].float()
        alibi = (self.slopes[None, :, None] * pos).reshape(b * self.heads, 1, t)
        causal = torch.triu(torch.ones(t, t, dtype=torch.bool), 1)[None, None] | \
            (attention_mask[:, None, None, :] == 0)
        x = self.ln_emb(self.embed(input_ids))
        for block in self.blocks:
            x = block(x, alibi, causal)
        return F.linear(self.ln_f(x), self.embed.weight)


def build_bloom(rng, small):
    seq = 12 if small else 32
    return Export(Bloom(), {"input_ids": token_ids(rng, 2048, 2, seq),
                            "attention_mask": padding_mask(rng, 2, seq)}, ["logits"])


class RNNTJoint(nn.Module):
    """An RNN-T's prediction network and joiner: an embedding + LSTM over the
    label history, the encoder frames [b, T, 1, d] plus the prediction
    [b, 1, U, d] broadcast into the [b, T, U, d] lattice, tanh, a linear
    layer to the vocabulary plus blank, log-softmax."""

    def __init__(self, vocab=64, enc=96, dim=96):
        super().__init__()
        self.embed = nn.Embedding(vocab + 1, dim)
        self.pred = nn.LSTM(dim, dim, batch_first=True)
        self.enc_proj, self.pred_proj = nn.Linear(enc, dim), nn.Linear(dim, dim)
        self.out = nn.Linear(dim, vocab + 1)

    def forward(self, encoder_out, labels):
        p, _ = self.pred(self.embed(labels))
        lattice = self.enc_proj(encoder_out)[:, :, None] + self.pred_proj(p)[:, None]
        return self.out(torch.tanh(lattice)).log_softmax(-1)


def build_rnnt_joint(rng, small):
    t, u = (10, 4) if small else (40, 12)
    return Export(RNNTJoint(), {"encoder_out": normal(rng, 1, t, 96),
                                "labels": token_ids(rng, 64, 1, u)}, ["log_probs"])


class BahdanauGreedy(nn.Module):
    """An RNN encoder-decoder with additive (Bahdanau) attention decoding
    greedily for a fixed number of steps, unrolled: a bidirectional GRU
    encoder, a GRUCell decoder fed the embedding of its own previous
    argmax (a run-time token id each step), tanh energies over the encoder
    states; the chosen ids and their log-probabilities are the outputs."""

    def __init__(self, vocab=200, dim=64, steps=6, bos=1):
        super().__init__()
        self.steps, self.bos = steps, bos
        self.src_embed, self.tgt_embed = nn.Embedding(vocab, dim), nn.Embedding(vocab, dim)
        self.encoder = nn.GRU(dim, dim, batch_first=True, bidirectional=True)
        self.bridge = nn.Linear(2 * dim, dim)
        self.w_enc, self.w_dec = nn.Linear(2 * dim, dim, bias=False), nn.Linear(dim, dim)
        self.v = nn.Linear(dim, 1, bias=False)
        self.cell = nn.GRUCell(dim + 2 * dim, dim)
        self.out = nn.Linear(dim + 2 * dim, vocab)

    def forward(self, src_ids):
        enc, _ = self.encoder(self.src_embed(src_ids))        # [b, s, 2d]
        h = torch.tanh(self.bridge(enc.mean(1)))
        keys = self.w_enc(enc)
        token = torch.full((src_ids.shape[0],), self.bos, dtype=torch.long)
        ids, scores = [], []
        for _ in range(self.steps):
            e = self.v(torch.tanh(keys + self.w_dec(h)[:, None])).squeeze(-1)
            ctx = torch.bmm(e.softmax(-1)[:, None], enc).squeeze(1)
            h = self.cell(torch.cat((self.tgt_embed(token), ctx), -1), h)
            logp = self.out(torch.cat((h, ctx), -1)).log_softmax(-1)
            best, token = logp.max(-1)
            ids.append(token)
            scores.append(best)
        return torch.stack(ids, 1), torch.stack(scores, 1)


def build_bahdanau(rng, small):
    return Export(BahdanauGreedy(), {"src_ids": token_ids(rng, 200, 2, 10 if small else 20)},
                  ["token_ids", "log_probs"])


class PaddedEncoder(nn.Module):
    """nn.TransformerEncoder with a bool src_key_padding_mask made from
    run-time lengths, then a nn.MultiheadAttention pooling query that also
    returns its head-averaged attention weights (need_weights=True)."""

    def __init__(self, dim=96, heads=4):
        super().__init__()
        layer = nn.TransformerEncoderLayer(dim, heads, 2 * dim, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.query = nn.Parameter(torch.randn(1, 1, dim))
        self.pool = nn.MultiheadAttention(dim, heads, batch_first=True)

    def forward(self, x, lengths):
        pad = torch.arange(x.shape[1])[None] >= lengths[:, None]
        h = self.enc(x, src_key_padding_mask=pad)
        q = self.query.expand(x.shape[0], -1, -1)
        pooled, weights = self.pool(q, h, h, key_padding_mask=pad, need_weights=True)
        return pooled.squeeze(1), weights.squeeze(1)


def build_padded_encoder(rng, small):
    t = 12 if small else 40
    return Export(PaddedEncoder(), {"x": normal(rng, 3, t, 96),
                                    "lengths": np.array([t, t - 5, 3], np.int64)},
                  ["pooled", "weights"])


def build_gpt2_left_padded(rng, small):
    """GPT-2 fed a left-padded batch as generation code feeds it: position
    ids from the attention mask (cumsum - 1, padding set to 1 by
    masked_fill), the causal mask combined with the padding mask, the
    logits of the last position only."""
    class LeftPadded(nn.Module):
        def __init__(self):
            super().__init__()
            self.gpt = GPT2(2048, context=128, dim=128, heads=4, layers=2)

        def forward(self, input_ids, attention_mask):
            g = self.gpt
            t = input_ids.shape[1]
            pos = (attention_mask.cumsum(-1) - 1).masked_fill(attention_mask == 0, 1)
            causal = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)[None, None]
            mask = causal | (attention_mask[:, None, None, :] == 0)
            x = g.wte(input_ids) + g.wpe(pos)
            for block in g.blocks:
                x = block(x, mask)
            return F.linear(g.ln_f(x[:, -1]), g.wte.weight)
    seq = 12 if small else 32
    ids = token_ids(rng, 2048, 2, seq)
    mask = np.ones((2, seq), np.int64)
    mask[1, :seq // 3] = 0  # the second prompt is shorter: padded on the left
    return Export(LeftPadded(), {"input_ids": ids, "attention_mask": mask}, ["next_logits"])


class LocalAttention(nn.Module):
    """Chunked local attention (Longformer / local-attention style): keys and
    values cut into overlapping windows with Tensor.unfold, each query block
    attending to its own window and the one before (with a look-back mask
    so the first block sees no past), then a feed-forward layer."""

    def __init__(self, dim=64, heads=4, window=8):
        super().__init__()
        self.heads, self.w, self.hd = heads, window, dim // heads
        self.qkv, self.o = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.ln = nn.LayerNorm(dim)
        self.ffn = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        b, t, c = x.shape
        w = self.w
        q, k, v = (z.view(b, t, self.heads, self.hd).transpose(1, 2)
                   for z in self.qkv(self.ln(x)).split(c, -1))
        # One block of look-back in front (torch.cat, not F.pad: torch 1.13
        # cannot export unfold of a Pad's output, whose size it does not infer).
        kp, vp = (torch.cat((torch.zeros(b, self.heads, w, self.hd), z), 2) for z in (k, v))
        kw = kp.unfold(2, 2 * w, w).transpose(-1, -2)               # [b, h, n, 2w, d]
        vw = vp.unfold(2, 2 * w, w).transpose(-1, -2)
        qb = q.reshape(b, self.heads, t // w, w, self.hd)
        att = qb @ kw.transpose(-1, -2) / math.sqrt(self.hd)       # [b, h, n, w, 2w]
        first = torch.zeros(t // w, 1, 2 * w, dtype=torch.bool)
        first[0, :, :w] = True                                      # padding before the start
        att = att.masked_fill(first, float("-inf")).softmax(-1)
        y = (att @ vw).reshape(b, self.heads, t, self.hd).transpose(1, 2).reshape(b, t, c)
        x = x + self.o(y)
        return x + self.ffn(x)


def build_local_attention(rng, small):
    return Export(LocalAttention(), {"x": normal(rng, 1, 32 if small else 64, 64)}, ["out"])


class QuartzNet(nn.Module):
    """QuartzNet-style ASR (5x1, scaled down): time-channel separable Conv1d
    (depthwise then pointwise) + BatchNorm1d + ReLU blocks with 1x1 residuals,
    a strided first conv, a dilated last one, per-frame CTC log-probabilities."""

    def __init__(self, mels=40, ch=64, vocab=29):
        super().__init__()
        def sep(cin, cout, k, stride=1, dilation=1):
            return nn.Sequential(
                nn.Conv1d(cin, cin, k, stride=stride, padding=dilation * (k // 2),
                          dilation=dilation, groups=cin, bias=False),
                nn.Conv1d(cin, cout, 1, bias=False), nn.BatchNorm1d(cout))
        self.first = nn.Sequential(sep(mels, ch, 11, stride=2), nn.ReLU())
        self.blocks = nn.ModuleList(nn.ModuleList([sep(ch, ch, k), sep(ch, ch, k)])
                                    for k in (13, 15, 17))
        self.res = nn.ModuleList(nn.Sequential(nn.Conv1d(ch, ch, 1, bias=False),
                                               nn.BatchNorm1d(ch)) for _ in range(3))
        self.last = nn.Sequential(sep(ch, 2 * ch, 29, dilation=2), nn.ReLU(),
                                  nn.Conv1d(2 * ch, 2 * ch, 1), nn.ReLU(),
                                  nn.Conv1d(2 * ch, vocab, 1))

    def forward(self, mel):
        x = self.first(mel)
        for (a, b), res in zip(self.blocks, self.res):
            x = F.relu(b(F.relu(a(x))) + res(x))
        return self.last(x).transpose(1, 2).log_softmax(-1)


def build_quartznet(rng, small):
    return Export(QuartzNet(), {"mel": normal(rng, 1, 40, 100 if small else 400)}, ["log_probs"])


class GPTJBlock(nn.Module):
    """A GPT-J block: rotary embeddings on the first 16 channels of each
    head in the interleaved layout (rotate_every_two: even and odd channels
    by strided slices, stacked and flattened back), sin/cos repeated per
    pair, parallel residual with one LayerNorm, causal mask by torch.where."""

    def __init__(self, dim=128, heads=4, rot=16):
        super().__init__()
        self.heads, self.hd, self.rot = heads, dim // heads, rot
        self.ln = nn.LayerNorm(dim)
        self.q, self.k = nn.Linear(dim, dim, bias=False), nn.Linear(dim, dim, bias=False)
        self.v, self.o = nn.Linear(dim, dim, bias=False), nn.Linear(dim, dim, bias=False)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * dim, dim))

    @staticmethod
    def rotate_every_two(x):
        return torch.stack((-x[..., 1::2], x[..., ::2]), dim=-1).flatten(-2)

    def rope(self, x, sin, cos):
        xr, xp = x[..., :self.rot], x[..., self.rot:]
        return torch.cat((xr * cos + self.rotate_every_two(xr) * sin, xp), -1)

    def forward(self, x, sin, cos, causal):
        b, t, c = x.shape
        h = self.ln(x)
        q, k, v = (f(h).view(b, t, self.heads, self.hd) for f in (self.q, self.k, self.v))
        q, k = self.rope(q, sin, cos).transpose(1, 2), self.rope(k, sin, cos).transpose(1, 2)
        att = q @ k.transpose(-1, -2) / math.sqrt(self.hd)
        att = torch.where(causal, att, torch.tensor(-1e9))
        y = (att.softmax(-1) @ v.transpose(1, 2)).transpose(1, 2).reshape(b, t, c)
        return x + self.o(y) + self.mlp(h)


class GPTJ(nn.Module):
    def __init__(self, vocab=2048, dim=128, layers=2, rot=16):
        super().__init__()
        self.rot = rot
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(GPTJBlock(dim, rot=rot) for _ in range(layers))
        self.ln_f, self.head = nn.LayerNorm(dim), nn.Linear(dim, vocab)

    def forward(self, input_ids):
        t = input_ids.shape[1]
        inv = 1.0 / (10000 ** (torch.arange(0, self.rot, 2).float() / self.rot))
        ang = torch.arange(t).float()[:, None] * inv[None]          # [t, rot/2]
        # Each angle twice, for the pair it rotates (repeat_interleave, which
        # GPT-J's code uses, exports wrongly in torch 1.13: see LlamaBlock).
        sin = torch.stack((ang.sin(), ang.sin()), -1).reshape(t, self.rot)[None, :, None]
        cos = torch.stack((ang.cos(), ang.cos()), -1).reshape(t, self.rot)[None, :, None]
        causal = torch.tril(torch.ones(t, t, dtype=torch.bool))
        x = self.embed(input_ids)
        for block in self.blocks:
            x = block(x, sin, cos, causal)
        return self.head(self.ln_f(x))


def build_gptj(rng, small):
    return Export(GPTJ(), {"input_ids": token_ids(rng, 2048, 1, 12 if small else 32)},
                  ["logits"])


class DebertaAttention(nn.Module):
    """DeBERTa's disentangled attention, one layer: content-to-content plus
    content-to-position and position-to-content scores, the relative
    positions clamped to a span and looked up with torch.gather on the
    score matrices (GatherElements with expanded index tensors), scaled by
    1/sqrt(3d), an additive padding mask."""

    def __init__(self, dim=96, heads=4, span=8):
        super().__init__()
        self.heads, self.hd, self.span = heads, dim // heads, span
        self.qkv = nn.Linear(dim, 3 * dim)
        self.rel = nn.Embedding(2 * span, dim)
        self.pos_k, self.pos_q = nn.Linear(dim, dim), nn.Linear(dim, dim, bias=False)
        self.o, self.ln = nn.Linear(dim, dim), nn.LayerNorm(dim)

    def forward(self, x, attention_mask):
        b, t, c = x.shape
        h, d = self.heads, self.hd
        q, k, v = (z.view(b, t, h, d).transpose(1, 2) for z in self.qkv(x).split(c, -1))
        pos = torch.arange(t)
        rel = torch.clamp(pos[:, None] - pos[None, :] + self.span, 0, 2 * self.span - 1)
        r = self.rel.weight                                         # [2s, c]
        pk = self.pos_k(r).view(2 * self.span, h, d).transpose(0, 1)  # [h, 2s, d]
        pq = self.pos_q(r).view(2 * self.span, h, d).transpose(0, 1)
        c2c = q @ k.transpose(-1, -2)
        c2p = torch.gather(q @ pk.transpose(-1, -2), -1, rel.expand(b, h, t, t))
        p2c = torch.gather(k @ pq.transpose(-1, -2), -1,
                           (2 * self.span - 1 - rel).expand(b, h, t, t)).transpose(-1, -2)
        bias = (1.0 - attention_mask[:, None, None, :].float()) * -1e4
        att = ((c2c + c2p + p2c) / math.sqrt(3 * d) + bias).softmax(-1)
        return self.ln(x + self.o((att @ v).transpose(1, 2).reshape(b, t, c)))


def build_deberta(rng, small):
    seq = 12 if small else 32
    return Export(DebertaAttention(), {"hidden": normal(rng, 2, seq, 96),
                                       "attention_mask": padding_mask(rng, 2, seq)}, ["out"])


class FunnelPool(nn.Module):
    """Funnel-Transformer-style sequence pooling: encoder blocks between
    strided mean pools over the sequence (AvgPool1d, ceil_mode, over a
    transposed [b, d, t]), the padding mask pooled by max, a query-only
    pooled attention (pooled queries attend to the full sequence)."""

    def __init__(self, dim=64, heads=4):
        super().__init__()
        self.pool = nn.AvgPool1d(2, 2, ceil_mode=True)
        self.mask_pool = nn.MaxPool1d(2, 2, ceil_mode=True)
        self.att = nn.ModuleList(SelfAttention(dim, heads) for _ in range(2))
        self.ln = nn.ModuleList(nn.LayerNorm(dim) for _ in range(2))

    def forward(self, x, attention_mask):
        m = attention_mask.float()
        for att, ln in zip(self.att, self.ln):
            q = self.pool(x.transpose(1, 2)).transpose(1, 2)
            bias = (1.0 - m[:, None, None, :]) * -1e4
            x = ln(q + att(q, x, bias))
            m = self.mask_pool(m[:, None]).squeeze(1)
        return x


def build_funnel(rng, small):
    seq = 15 if small else 45  # odd: ceil_mode's short last window
    return Export(FunnelPool(), {"hidden": normal(rng, 2, seq, 64),
                                 "attention_mask": padding_mask(rng, 2, seq)}, ["pooled"])
# ------------------------------------------- fourth wave: more real exports


def rcnn_detector(ctor, extra_outputs, side, **kwargs):
    """A torchvision two-stage detector whose heads add per-detection outputs
    (Mask R-CNN's masks, Keypoint R-CNN's keypoints) after boxes/scores/labels;
    the transform resizes to side(small). Builders pass 100 proposals, not
    1000 (the box head's cost is per proposal), and Mask R-CNN a score
    threshold of 0.02: with random weights no box reaches the default 0.05."""
    class Detections(nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, images):
            det = self.model(list(images))[0]
            return (det["boxes"], det["scores"], det["labels"]) + tuple(
                det[k] for k in extra_outputs)

    def build(rng, small):
        s = side(small)
        model = ctor(weights=None, weights_backbone=None, min_size=s, max_size=s, **kwargs)
        return Export(Detections(model), {"images": normal(rng, 1, 3, s, s)},
                      ["boxes", "scores", "labels"] + list(extra_outputs))
    return build


def build_ssd300(rng, small):
    # SSD300's extra layers need the 300-pixel side (3x3 valid convolutions
    # down to a 1x1 map), so --small does not shrink it.
    model = torchvision.models.detection.ssd300_vgg16(
        weights=None, weights_backbone=None, num_classes=91, detections_per_img=20)
    # VGG has no batch norm: with random weights its fc7 features reach a std
    # of 17, every class logit saturates the softmax and the top scores all
    # read 1.0 (a tie no two implementations break alike). Each level's class
    # convolution is scaled by 1 / the std of what it receives on a
    # calibration image, as training would have balanced them.
    model.eval()
    spread = []
    hooks = [conv.register_forward_pre_hook(lambda m, args: spread.append(args[0].std()))
             for conv in model.head.classification_head.module_list]
    with torch.no_grad():
        model([torch.from_numpy(normal(rng, 3, 300, 300))])
        for conv, std in zip(model.head.classification_head.module_list, spread):
            conv.weight /= std
    for h in hooks:
        h.remove()
    return Export(FirstImageDetections(model), {"images": normal(rng, 1, 3, 300, 300)},
                  ["boxes", "scores", "labels"])


def build_deeplabv3_resnet50(rng, small):
    # Output stride 8 makes the dilated ResNet-50 heavy: a 128-pixel side.
    model = seg.deeplabv3_resnet50(weights=None, weights_backbone=None, num_classes=21,
                                   aux_loss=False)
    s = 96 if small else 128
    return Export(FirstOutput(model), {"input": normal(rng, 1, 3, s, s)}, ["out"])


def quantized_classifier(ctor):
    """A torchvision.models.quantization network converted to int8 with eager
    post-training quantization (qnnpack, the engine
    Debian's torch has): batch-norm statistics conditioned in
    float, modules fused, observers calibrated on 4 random images, converted.
    torch exports the quantized ops as QuantizeLinear/DequantizeLinear around
    float Conv/Gemm (QDQ)."""
    def build(rng, small):
        s = image_side(small)
        model = ctor(weights=None, quantize=False)
        model.eval()
        condition_weights(model, {"input": normal(rng, 1, 3, s, s)}, rng,
                          torch.Generator().manual_seed(int(rng.integers(1 << 31))))
        model.fuse_model(is_qat=False)
        model.qconfig = torch.ao.quantization.get_default_qconfig("qnnpack")
        torch.backends.quantized.engine = "qnnpack"
        torch.ao.quantization.prepare(model, inplace=True)
        with torch.no_grad():
            model(torch.from_numpy(normal(rng, 4, 3, s, s)))
        torch.ao.quantization.convert(model, inplace=True)
        return Export(model, {"input": normal(rng, 1, 3, s, s)}, ["logits"])
    return build


class PSPNetLite(nn.Module):
    """PSPNet's pyramid pooling head on a small strided backbone: adaptive
    average pooling to 1, 2, 3 and 6 bins, 1x1 convs, bilinear upsampling back,
    concatenation, and a bilinear upsample of the logits to the input size."""

    def __init__(self, classes=21, bins=(1, 2, 3, 6)):
        super().__init__()
        self.backbone = nn.Sequential(conv_bn_relu(3, 32, 2), conv_bn_relu(32, 64, 2),
                                      conv_bn_relu(64, 128, 2), conv_bn_relu(128, 128))
        self.stages = nn.ModuleList(
            nn.Sequential(nn.AdaptiveAvgPool2d(b), nn.Conv2d(128, 32, 1, bias=False),
                          nn.BatchNorm2d(32), nn.ReLU()) for b in bins)
        self.head = nn.Sequential(conv_bn_relu(128 + 32 * len(bins), 64),
                                  nn.Conv2d(64, classes, 1))

    def forward(self, x):
        f = self.backbone(x)
        size = f.shape[-2:]
        pyramid = [f] + [F.interpolate(s(f), size=size, mode="bilinear", align_corners=True)
                         for s in self.stages]
        out = self.head(torch.cat(pyramid, 1))
        return F.interpolate(out, size=x.shape[-2:], mode="bilinear", align_corners=False)


def build_pspnet(rng, small):
    s = 96 if small else 192  # a multiple of 48: the 6-bin pooling divides the map evenly
    return Export(PSPNetLite(), {"input": normal(rng, 1, 3, s, s)}, ["out"])


class CycleGANGenerator(nn.Module):
    """CycleGAN's ResNet generator (6 blocks): reflection padding, InstanceNorm
    without affine parameters, stride-2 convs down, ConvTranspose up, tanh."""

    def __init__(self, ngf=16, blocks=6):
        super().__init__()

        def norm(c):
            return nn.InstanceNorm2d(c, affine=False)

        class Block(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.body = nn.Sequential(nn.ReflectionPad2d(1), nn.Conv2d(c, c, 3), norm(c),
                                          nn.ReLU(True), nn.ReflectionPad2d(1),
                                          nn.Conv2d(c, c, 3), norm(c))

            def forward(self, x):
                return x + self.body(x)

        layers = [nn.ReflectionPad2d(3), nn.Conv2d(3, ngf, 7), norm(ngf), nn.ReLU(True)]
        for m in (1, 2):
            layers += [nn.Conv2d(ngf * m, ngf * m * 2, 3, stride=2, padding=1),
                       norm(ngf * m * 2), nn.ReLU(True)]
        layers += [Block(ngf * 4) for _ in range(blocks)]
        for m in (4, 2):
            layers += [nn.ConvTranspose2d(ngf * m, ngf * m // 2, 3, stride=2, padding=1,
                                          output_padding=1), norm(ngf * m // 2), nn.ReLU(True)]
        layers += [nn.ReflectionPad2d(3), nn.Conv2d(ngf, 3, 7), nn.Tanh()]
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def build_cyclegan(rng, small):
    s = 64 if small else 96
    return Export(CycleGANGenerator(), {"input": normal(rng, 1, 3, s, s)}, ["output"])


class DCGANGenerator(nn.Module):
    """DCGAN's generator: a latent vector through ConvTranspose2d (4x4, stride
    2) + BatchNorm + ReLU up to a 64x64 tanh image."""

    def __init__(self, nz=100, ngf=32):
        super().__init__()
        layers = [nn.ConvTranspose2d(nz, ngf * 8, 4, 1, 0, bias=False),
                  nn.BatchNorm2d(ngf * 8), nn.ReLU(True)]
        for m in (8, 4, 2):
            layers += [nn.ConvTranspose2d(ngf * m, ngf * m // 2, 4, 2, 1, bias=False),
                       nn.BatchNorm2d(ngf * m // 2), nn.ReLU(True)]
        layers += [nn.ConvTranspose2d(ngf, 3, 4, 2, 1, bias=False), nn.Tanh()]
        self.net = nn.Sequential(*layers)

    def forward(self, z):
        return self.net(z)


def build_dcgan(rng, small):
    return Export(DCGANGenerator(), {"latent": normal(rng, 2 if small else 4, 100, 1, 1)},
                  ["image"])


class RRDBLite(nn.Module):
    """ESRGAN with two residual-in-residual dense blocks: dense 3x3 convs with
    LeakyReLU(0.2), 0.2-scaled residuals, x4 upsampling by two PixelShuffles."""

    class Dense(nn.Module):
        def __init__(self, nf, gc):
            super().__init__()
            self.convs = nn.ModuleList(nn.Conv2d(nf + i * gc, gc if i < 4 else nf, 3, padding=1)
                                       for i in range(5))

        def forward(self, x):
            feats = [x]
            for i, conv in enumerate(self.convs):
                y = conv(torch.cat(feats, 1))
                if i < 4:
                    feats.append(F.leaky_relu(y, 0.2))
            return x + 0.2 * y

    def __init__(self, nf=32, gc=16, blocks=2):
        super().__init__()
        self.first = nn.Conv2d(3, nf, 3, padding=1)
        self.rrdbs = nn.ModuleList(nn.Sequential(*(RRDBLite.Dense(nf, gc) for _ in range(3)))
                                   for _ in range(blocks))
        self.trunk = nn.Conv2d(nf, nf, 3, padding=1)
        self.up = nn.Sequential(nn.Conv2d(nf, nf * 4, 3, padding=1), nn.PixelShuffle(2),
                                nn.LeakyReLU(0.2), nn.Conv2d(nf, nf * 4, 3, padding=1),
                                nn.PixelShuffle(2), nn.LeakyReLU(0.2))
        self.last = nn.Conv2d(nf, 3, 3, padding=1)

    def forward(self, x):
        f = self.first(x)
        t = f
        for rrdb in self.rrdbs:
            t = t + 0.2 * rrdb(t)
        return self.last(self.up(f + self.trunk(t)))


def build_esrgan(rng, small):
    s = 16 if small else 24
    return Export(RRDBLite(), {"input": normal(rng, 1, 3, s, s)}, ["output"])


class DETRLite(nn.Module):
    """DETR's structure at a small size: a ResNet-18 trunk, a 1x1 projection,
    sine positions added to the flattened features, torch's nn.Transformer
    (encoder + decoder) over 20 learned object queries, class and box heads."""

    def __init__(self, dim=128, queries=20, classes=92):
        super().__init__()
        trunk = torchvision.models.resnet18(weights=None)
        self.backbone = nn.Sequential(*list(trunk.children())[:-2])
        self.proj = nn.Conv2d(512, dim, 1)
        self.transformer = nn.Transformer(dim, 4, 2, 2, 2 * dim, dropout=0.0,
                                          batch_first=True)
        self.query = nn.Parameter(torch.randn(1, queries, dim))
        self.cls = nn.Linear(dim, classes)
        self.box = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, 4))
        self.dim = dim

    def positions(self, h, w):
        half = self.dim // 2
        freq = torch.pow(10000.0, torch.arange(0, half, 2, dtype=torch.float32) / half)
        ys = torch.arange(h, dtype=torch.float32)[:, None, None] / freq
        xs = torch.arange(w, dtype=torch.float32)[None, :, None] / freq
        ys = torch.cat((ys.sin(), ys.cos()), -1).expand(h, w, half)
        xs = torch.cat((xs.sin(), xs.cos()), -1).expand(h, w, half)
        return torch.cat((ys, xs), -1).reshape(1, h * w, self.dim)

    def forward(self, x):
        f = self.proj(self.backbone(x))
        b, c, h, w = f.shape
        src = f.flatten(2).transpose(1, 2) + self.positions(h, w)
        hs = self.transformer(src, self.query.expand(b, -1, -1))
        return self.cls(hs).softmax(-1), self.box(hs).sigmoid()


def build_detr(rng, small):
    s = 96 if small else 128
    return Export(DETRLite(), {"input": normal(rng, 1, 3, s, s)}, ["class_probs", "boxes"])


class MobileViTBlock(nn.Module):
    """MobileViT's block: local 3x3 + 1x1 convs, the map unfolded into 2x2
    patches by reshape/transpose, a transformer over the patches at each
    in-patch position, folded back, fused with the input by a 3x3 conv."""

    def __init__(self, cin, dim, depth=2, patch=2):
        super().__init__()
        self.patch = patch
        self.local = nn.Sequential(conv_bn_relu(cin, cin), nn.Conv2d(cin, dim, 1, bias=False))
        self.transformer = nn.TransformerEncoder(nn.TransformerEncoderLayer(
            dim, 4, 2 * dim, dropout=0.0, activation="gelu", batch_first=True,
            norm_first=True), depth)
        self.project = conv_bn_relu(dim, cin)
        self.fuse = conv_bn_relu(2 * cin, cin)

    def forward(self, x):
        y = self.local(x)
        b, d, h, w = y.shape
        p = self.patch
        # [b, d, h/p, p, w/p, p] -> [b * p * p, (h/p) * (w/p), d]
        y = y.reshape(b, d, h // p, p, w // p, p).permute(0, 3, 5, 2, 4, 1)
        y = self.transformer(y.reshape(b * p * p, (h // p) * (w // p), d))
        y = y.reshape(b, p, p, h // p, w // p, d).permute(0, 5, 3, 1, 4, 2)
        y = self.project(y.reshape(b, d, h, w))
        return self.fuse(torch.cat((x, y), 1))


class MobileViTLite(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        mv2 = torchvision.models.mobilenetv2.InvertedResidual
        self.net = nn.Sequential(
            conv_bn_relu(3, 16, 2), mv2(16, 24, 2, 2), mv2(24, 48, 2, 2),
            MobileViTBlock(48, 64), mv2(48, 64, 2, 2), MobileViTBlock(64, 80),
            nn.Conv2d(64, 128, 1), nn.SiLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
            nn.Linear(128, classes))

    def forward(self, x):
        return self.net(x)


def build_mobilevit(rng, small):
    s = 64 if small else 128
    return Export(MobileViTLite(), {"input": normal(rng, 1, 3, s, s)}, ["logits"])


class HRNetLite(nn.Module):
    """HRNet's multi-resolution fuse with three branches (1, 1/2, 1/4):
    parallel residual convs per branch, then each output sums every branch,
    brought down by stride-2 convs or up by 1x1 conv + nearest upsampling;
    a heatmap head on the high-resolution branch (pose estimation)."""

    def __init__(self, chans=(32, 64, 128), joints=17):
        super().__init__()
        self.stem = nn.Sequential(conv_bn_relu(3, 32, 2), conv_bn_relu(32, 32, 2))
        self.to_branch = nn.ModuleList([
            nn.Identity(), conv_bn_relu(32, chans[1], 2),
            nn.Sequential(conv_bn_relu(32, chans[1], 2), conv_bn_relu(chans[1], chans[2], 2))])
        self.branches = nn.ModuleList(nn.Sequential(conv_bn_relu(c, c), conv_bn_relu(c, c))
                                      for c in chans)
        fuse = []
        for i, ci in enumerate(chans):
            row = []
            for j, cj in enumerate(chans):
                if j == i:
                    row.append(nn.Identity())
                elif j > i:  # lower resolution: 1x1 conv, then upsample in forward
                    row.append(nn.Sequential(nn.Conv2d(cj, ci, 1, bias=False),
                                             nn.BatchNorm2d(ci)))
                else:  # higher resolution: stride-2 3x3 convs
                    steps = [conv_bn_relu(cj, cj, 2) for _ in range(i - j - 1)]
                    steps.append(nn.Sequential(nn.Conv2d(cj, ci, 3, 2, 1, bias=False),
                                               nn.BatchNorm2d(ci)))
                    row.append(nn.Sequential(*steps))
            fuse.append(nn.ModuleList(row))
        self.fuse = nn.ModuleList(fuse)
        self.head = nn.Conv2d(chans[0], joints, 1)

    def forward(self, x):
        x = self.stem(x)
        feats = [self.branches[0](x)]
        feats.append(self.branches[1](self.to_branch[1](x)))
        feats.append(self.branches[2](self.to_branch[2](x)))
        outs = []
        for i, row in enumerate(self.fuse):
            acc = feats[i]
            for j, layer in enumerate(row):
                if j == i:
                    continue
                y = layer(feats[j])
                if j > i:
                    y = F.interpolate(y, scale_factor=2 ** (j - i), mode="nearest")
                acc = acc + y
            outs.append(F.relu(acc))
        return self.head(outs[0])


def build_hrnet(rng, small):
    s = 64 if small else 128
    return Export(HRNetLite(), {"input": normal(rng, 1, 3, s, s)}, ["heatmaps"])


class SpatialTransformer(nn.Module):
    """A spatial transformer network: a small localisation net regresses a
    2x3 affine matrix per image (initialised near the identity), then the
    sampling grid (affine_grid's, written out) + F.grid_sample (bilinear, zero
    padding) warp the input
    before a small classifier."""

    def __init__(self, classes=10):
        super().__init__()
        self.loc = nn.Sequential(nn.Conv2d(1, 8, 7), nn.MaxPool2d(2), nn.ReLU(),
                                 nn.Conv2d(8, 10, 5), nn.MaxPool2d(2), nn.ReLU(),
                                 nn.AdaptiveAvgPool2d(3), nn.Flatten(), nn.Linear(90, 32),
                                 nn.ReLU(), nn.Linear(32, 6))
        with torch.no_grad():
            self.loc[-1].weight.mul_(0.1)
            self.loc[-1].bias.copy_(torch.tensor([1.0, 0.0, 0.0, 0.0, 1.0, 0.0]))
        self.cls = nn.Sequential(nn.Conv2d(1, 16, 5), nn.MaxPool2d(2), nn.ReLU(),
                                 nn.Conv2d(16, 32, 5), nn.MaxPool2d(2), nn.ReLU(),
                                 nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, classes))

    def forward(self, x):
        theta = self.loc(x).view(-1, 2, 3)
        # F.affine_grid has no ONNX export in torch 1.13: its base grid of
        # pixel centres in [-1, 1] (align_corners=False) times theta.
        b, _, h, w = x.shape
        ys = (torch.arange(h, dtype=torch.float32) * 2 + 1) / h - 1
        xs = (torch.arange(w, dtype=torch.float32) * 2 + 1) / w - 1
        base = torch.stack((xs.expand(h, w), ys[:, None].expand(h, w), torch.ones(h, w)), -1)
        grid = (base.reshape(1, h * w, 3) @ theta.transpose(1, 2)).reshape(b, h, w, 2)
        return self.cls(F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros",
                                      align_corners=False))


def build_stn(rng, small):
    s = 28 if small else 52  # the localisation net's map must be a multiple of 3
    return Export(SpatialTransformer(), {"input": normal(rng, 2, 1, s, s)}, ["logits"])


class ModulatedConv(nn.Module):
    """StyleGAN2's modulated convolution: the style scales the weight's input
    channels per sample, the weight is demodulated, and the batch runs as one
    grouped convolution whose weights are computed at run time."""

    def __init__(self, cin, cout, wdim, k=3):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(cout, cin, k, k))
        self.affine = nn.Linear(wdim, cin)
        self.pad = k // 2

    def forward(self, x, w):
        b, cin, h, wd = x.shape
        style = self.affine(w) + 1.0                                   # [b, cin]
        weight = self.weight[None] * style[:, None, :, None, None]     # [b, cout, cin, k, k]
        weight = weight * torch.rsqrt(weight.pow(2).sum((2, 3, 4), keepdim=True) + 1e-8)
        weight = weight.reshape(-1, cin, *self.weight.shape[2:])
        y = F.conv2d(x.reshape(1, b * cin, h, wd), weight, padding=self.pad, groups=b)
        return y.reshape(b, -1, h, wd)


class StyleGANLite(nn.Module):
    """A StyleGAN2-style synthesis network at 32x32: a mapping MLP, a learned
    constant, modulated convolutions with noise inputs and bilinear
    upsampling, toRGB skips."""

    def __init__(self, zdim=64, ch=32):
        super().__init__()
        self.mapping = nn.Sequential(*(m for _ in range(4) for m in
                                       (nn.Linear(zdim, zdim), nn.LeakyReLU(0.2))))
        self.const = nn.Parameter(torch.randn(1, ch, 4, 4))
        self.convs = nn.ModuleList(ModulatedConv(ch, ch, zdim) for _ in range(7))
        self.to_rgb = nn.ModuleList(ModulatedConv(ch, 3, zdim, k=1) for _ in range(4))
        self.noise_strength = nn.Parameter(torch.full((7,), 0.1))

    def forward(self, z, noise):
        w = self.mapping(z / z.pow(2).mean(1, keepdim=True).add(1e-8).sqrt())
        x = self.const.expand(z.shape[0], -1, -1, -1)
        x = F.leaky_relu(self.convs[0](x, w), 0.2)
        rgb = self.to_rgb[0](x, w)
        for level in range(1, 4):
            x = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
            for j in (2 * level - 1, 2 * level):
                n = noise[:, :, :x.shape[2], :x.shape[3]] * self.noise_strength[j]
                x = F.leaky_relu(self.convs[j](x, w) + n, 0.2)
            rgb = F.interpolate(rgb, scale_factor=2, mode="bilinear", align_corners=False)
            rgb = rgb + self.to_rgb[level](x, w)
        return torch.tanh(rgb)


def build_stylegan(rng, small):
    b = 2
    return Export(StyleGANLite(), {"z": normal(rng, b, 64), "noise": normal(rng, b, 1, 32, 32)},
                  ["image"])


# ------------------------------------------------------------- the zoo

tv = torchvision.models
seg = torchvision.models.segmentation
# (name, family, builder); the order is the report's order.

# ------------------------------------------- fifth wave (2026-11-28)
# Exports no issue names: a separable 3-D video network, a tanh RNN,
# bicubic upsampling, image restoration gates, point-cloud k-nearest
# neighbours, big depthwise kernels, pooling token mixers, efficient
# attention with spatial reduction, a speech front end with hard tanh, graph
# attention and involution (unfold).
def build_s3d(rng, small):
    # S3D's head pools (2, 7, 7): 16 frames of 224 x 224 at the least.
    return Export(torchvision.models.video.s3d(weights=None, num_classes=400),
                  {"input": normal(rng, 1, 3, 16, 224, 224)}, ["logits"])


class TanhRNN(nn.Module):
    """Two bidirectional Elman (tanh) layers over feature frames, a per-step
    classifier: ONNX RNN."""

    def __init__(self, features=40, hidden=64, classes=12):
        super().__init__()
        self.rnn = nn.RNN(features, hidden, num_layers=2, bidirectional=True,
                          nonlinearity="tanh", batch_first=True)
        self.out = nn.Linear(2 * hidden, classes)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.out(y).log_softmax(-1)


def build_rnn_tanh(rng, small):
    return Export(TanhRNN(), {"frames": normal(rng, 1, 20 if small else 50, 40)},
                  ["log_probs"])


class VDSR(nn.Module):
    """VDSR: bicubic upsampling, then a plain conv stack that predicts the
    residual (ONNX Resize, cubic)."""

    def __init__(self, depth=8, width=32):
        super().__init__()
        layers = [nn.Conv2d(1, width, 3, padding=1), nn.ReLU()]
        for _ in range(depth - 2):
            layers += [nn.Conv2d(width, width, 3, padding=1), nn.ReLU()]
        layers += [nn.Conv2d(width, 1, 3, padding=1)]
        self.body = nn.Sequential(*layers)

    def forward(self, y):
        up = F.interpolate(y, scale_factor=2, mode="bicubic", align_corners=False)
        return up + self.body(up)


def build_vdsr(rng, small):
    s = 24 if small else 48
    return Export(VDSR(), {"luma": normal(rng, 1, 1, s, s)}, ["upscaled"])


class LayerNorm2d(nn.Module):
    def __init__(self, c, eps=1e-6):
        super().__init__()
        self.weight, self.bias, self.eps = nn.Parameter(torch.ones(c)), nn.Parameter(torch.zeros(c)), eps

    def forward(self, x):
        mu = x.mean(1, keepdim=True)
        var = (x - mu).pow(2).mean(1, keepdim=True)
        return (x - mu) / (var + self.eps).sqrt() * self.weight[:, None, None] + self.bias[:, None, None]


class NAFBlock(nn.Module):
    """NAFNet's block: LayerNorm over channels, depthwise conv, SimpleGate
    (halves multiplied), simplified channel attention, two learned residual
    scales."""

    def __init__(self, c):
        super().__init__()
        self.norm1, self.norm2 = LayerNorm2d(c), LayerNorm2d(c)
        self.conv1, self.conv2 = nn.Conv2d(c, 2 * c, 1), nn.Conv2d(2 * c, 2 * c, 3, padding=1, groups=2 * c)
        self.sca = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(c, c, 1))
        self.conv3 = nn.Conv2d(c, c, 1)
        self.ffn1, self.ffn2 = nn.Conv2d(c, 2 * c, 1), nn.Conv2d(c, c, 1)
        self.beta = nn.Parameter(torch.randn(1, c, 1, 1) * 0.1)
        self.gamma = nn.Parameter(torch.randn(1, c, 1, 1) * 0.1)

    @staticmethod
    def gate(x):
        a, b = x.chunk(2, dim=1)
        return a * b

    def forward(self, x):
        y = self.gate(self.conv2(self.conv1(self.norm1(x))))
        y = self.conv3(y * self.sca(y))
        x = x + y * self.beta
        return x + self.ffn2(self.gate(self.ffn1(self.norm2(x)))) * self.gamma


class NAFNetLite(nn.Module):
    """A two-level NAFNet (image restoration): strided-conv downsampling,
    1x1 conv + PixelShuffle upsampling, skip additions, a global residual."""

    def __init__(self, width=16):
        super().__init__()
        self.intro, self.ending = nn.Conv2d(3, width, 3, padding=1), nn.Conv2d(width, 3, 3, padding=1)
        self.enc1, self.down1 = NAFBlock(width), nn.Conv2d(width, 2 * width, 2, 2)
        self.enc2, self.down2 = NAFBlock(2 * width), nn.Conv2d(2 * width, 4 * width, 2, 2)
        self.mid = nn.Sequential(NAFBlock(4 * width), NAFBlock(4 * width))
        self.up2 = nn.Sequential(nn.Conv2d(4 * width, 8 * width, 1, bias=False), nn.PixelShuffle(2))
        self.dec2 = NAFBlock(2 * width)
        self.up1 = nn.Sequential(nn.Conv2d(2 * width, 4 * width, 1, bias=False), nn.PixelShuffle(2))
        self.dec1 = NAFBlock(width)

    def forward(self, img):
        x1 = self.enc1(self.intro(img))
        x2 = self.enc2(self.down1(x1))
        x = self.mid(self.down2(x2))
        x = self.dec2(self.up2(x) + x2)
        x = self.dec1(self.up1(x) + x1)
        return self.ending(x) + img


def build_nafnet(rng, small):
    s = 32 if small else 64
    return Export(NAFNetLite(), {"image": normal(rng, 1, 3, s, s)}, ["restored"])


class DGCNNLite(nn.Module):
    """DGCNN: EdgeConv layers over each point's k nearest neighbours in
    feature space (pairwise distances, TopK, gathered neighbours, max over
    k), then a global max pool and a classifier."""

    def __init__(self, k=8, classes=10):
        super().__init__()
        self.k = k
        self.e1 = nn.Sequential(nn.Conv2d(6, 32, 1, bias=False), nn.BatchNorm2d(32), nn.LeakyReLU(0.2))
        self.e2 = nn.Sequential(nn.Conv2d(64, 64, 1, bias=False), nn.BatchNorm2d(64), nn.LeakyReLU(0.2))
        self.conv = nn.Sequential(nn.Conv1d(96, 128, 1, bias=False), nn.BatchNorm1d(128), nn.LeakyReLU(0.2))
        self.head = nn.Linear(128, classes)

    def edge(self, x, mlp):  # x [b, c, n]
        b, c, n = x.shape
        inner = -2 * torch.matmul(x.transpose(2, 1), x)
        sq = (x * x).sum(dim=1, keepdim=True)
        idx = (-sq - inner - sq.transpose(2, 1)).topk(self.k, dim=-1)[1]  # [b, n, k]
        base = torch.arange(b).view(-1, 1, 1) * n
        flat = (idx + base).view(-1)
        pts = x.transpose(2, 1).reshape(b * n, c)[flat].view(b, n, self.k, c)
        centre = x.transpose(2, 1).view(b, n, 1, c).expand(-1, -1, self.k, -1)
        feat = torch.cat((pts - centre, centre), dim=3).permute(0, 3, 1, 2)
        return mlp(feat).max(dim=-1)[0]

    def forward(self, points):
        x1 = self.edge(points, self.e1)
        x2 = self.edge(x1, self.e2)
        return self.head(self.conv(torch.cat((x1, x2), dim=1)).amax(dim=2)).log_softmax(-1)


def build_dgcnn(rng, small):
    return Export(DGCNNLite(), {"points": normal(rng, 1, 3, 128 if small else 512)},
                  ["log_probs"])


class ConvMixer(nn.Module):
    """ConvMixer: a patch-embedding conv, then blocks of a 9x9 depthwise conv
    (residual) and a pointwise conv, each with GELU and batch norm."""

    def __init__(self, dim=64, depth=4, kernel=9, patch=4, classes=10):
        super().__init__()
        def act(c):
            return [nn.GELU(), nn.BatchNorm2d(c)]
        self.stem = nn.Sequential(nn.Conv2d(3, dim, patch, stride=patch), *act(dim))
        self.blocks = nn.ModuleList()
        for _ in range(depth):
            self.blocks.append(nn.ModuleDict({
                "dw": nn.Sequential(nn.Conv2d(dim, dim, kernel, groups=dim, padding=kernel // 2), *act(dim)),
                "pw": nn.Sequential(nn.Conv2d(dim, dim, 1), *act(dim))}))
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.stem(x)
        for blk in self.blocks:
            x = blk["pw"](x + blk["dw"](x))
        return self.head(x.mean(dim=(2, 3)))


def build_convmixer(rng, small):
    s = 32 if small else 64
    return Export(ConvMixer(), {"image": normal(rng, 1, 3, s, s)}, ["logits"])


class PoolFormerBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm1, self.norm2 = nn.GroupNorm(1, dim), nn.GroupNorm(1, dim)
        self.pool = nn.AvgPool2d(3, 1, 1, count_include_pad=False)
        self.mlp = nn.Sequential(nn.Conv2d(dim, 4 * dim, 1), nn.GELU(), nn.Conv2d(4 * dim, dim, 1))
        self.s1 = nn.Parameter(torch.full((dim, 1, 1), 0.5))
        self.s2 = nn.Parameter(torch.full((dim, 1, 1), 0.5))

    def forward(self, x):
        y = self.norm1(x)
        x = x + self.s1 * (self.pool(y) - y)
        return x + self.s2 * self.mlp(self.norm2(x))


class PoolFormerLite(nn.Module):
    """PoolFormer: average pooling as the token mixer (GroupNorm with one
    group, pool minus identity, layer scale), strided patch embeddings."""

    def __init__(self, dims=(32, 64, 128), classes=10):
        super().__init__()
        stages, cin = [], 3
        for i, d in enumerate(dims):
            embed = nn.Conv2d(cin, d, 7, 4, 2) if i == 0 else nn.Conv2d(cin, d, 3, 2, 1)
            stages += [embed, PoolFormerBlock(d), PoolFormerBlock(d)]
            cin = d
        self.body = nn.Sequential(*stages)
        self.norm, self.head = nn.GroupNorm(1, cin), nn.Linear(cin, classes)

    def forward(self, x):
        return self.head(self.norm(self.body(x)).mean(dim=(2, 3)))


def build_poolformer(rng, small):
    s = 64 if small else 128
    return Export(PoolFormerLite(), {"image": normal(rng, 1, 3, s, s)}, ["logits"])


class EfficientAttention(nn.Module):
    """SegFormer's self-attention: keys and values from a map reduced by a
    strided conv (sr x sr) and LayerNorm."""

    def __init__(self, dim, heads, sr):
        super().__init__()
        self.heads, self.sr = heads, sr
        self.q, self.kv, self.proj = nn.Linear(dim, dim), nn.Linear(dim, 2 * dim), nn.Linear(dim, dim)
        if sr > 1:
            self.reduce, self.norm = nn.Conv2d(dim, dim, sr, sr), nn.LayerNorm(dim)

    def forward(self, x, h, w):
        b, n, c = x.shape
        d = c // self.heads
        q = self.q(x).view(b, n, self.heads, d).transpose(1, 2)
        if self.sr > 1:
            y = self.reduce(x.transpose(1, 2).reshape(b, c, h, w)).flatten(2).transpose(1, 2)
            y = self.norm(y)
        else:
            y = x
        k, v = self.kv(y).view(b, -1, 2, self.heads, d).permute(2, 0, 3, 1, 4)
        a = (q @ k.transpose(-2, -1) * d ** -0.5).softmax(-1)
        return self.proj((a @ v).transpose(1, 2).reshape(b, n, c))


class MixFFN(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)
        self.dw = nn.Conv2d(4 * dim, 4 * dim, 3, padding=1, groups=4 * dim)

    def forward(self, x, h, w):
        b, n, _ = x.shape
        y = self.fc1(x).transpose(1, 2).reshape(b, -1, h, w)
        return self.fc2(F.gelu(self.dw(y)).flatten(2).transpose(1, 2))


class SegFormerLite(nn.Module):
    """SegFormer (MiT encoder, all-MLP decoder): overlapping patch embeddings,
    efficient attention, Mix-FFN with a depthwise conv; the decoder projects
    each stage, upsamples bilinearly to 1/4, fuses and classifies."""

    def __init__(self, dims=(32, 64, 128), heads=(1, 2, 4), srs=(4, 2, 1), classes=6):
        super().__init__()
        self.embeds, self.attn, self.ffn, self.n1, self.n2, self.norms = (nn.ModuleList() for _ in range(6))
        cin = 3
        for i, d in enumerate(dims):
            k, st = (7, 4) if i == 0 else (3, 2)
            self.embeds.append(nn.Conv2d(cin, d, k, st, k // 2))
            self.n1.append(nn.LayerNorm(d))
            self.attn.append(EfficientAttention(d, heads[i], srs[i]))
            self.n2.append(nn.LayerNorm(d))
            self.ffn.append(MixFFN(d))
            self.norms.append(nn.LayerNorm(d))
            cin = d
        self.proj = nn.ModuleList(nn.Linear(d, 64) for d in dims)
        self.fuse = nn.Sequential(nn.Conv2d(64 * len(dims), 64, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU())
        self.cls = nn.Conv2d(64, classes, 1)

    def forward(self, img):
        feats, x = [], img
        for i in range(len(self.embeds)):
            x = self.embeds[i](x)
            b, c, h, w = x.shape
            t = x.flatten(2).transpose(1, 2)
            t = t + self.attn[i](self.n1[i](t), h, w)
            t = t + self.ffn[i](self.n2[i](t), h, w)
            x = self.norms[i](t).transpose(1, 2).reshape(b, c, h, w)
            feats.append(x)
        size = feats[0].shape[2:]
        ups = []
        for f, proj in zip(feats, self.proj):
            b, c, h, w = f.shape
            y = proj(f.flatten(2).transpose(1, 2)).transpose(1, 2).reshape(b, -1, h, w)
            ups.append(F.interpolate(y, size=size, mode="bilinear", align_corners=False))
        return self.cls(self.fuse(torch.cat(ups[::-1], dim=1)))


def build_segformer(rng, small):
    s = 64 if small else 128
    return Export(SegFormerLite(), {"image": normal(rng, 1, 3, s, s)}, ["logits"])


class DeepSpeech2Lite(nn.Module):
    """DeepSpeech 2: two strided 2-D convs over the spectrogram with batch
    norm and hard tanh (0, 20), bidirectional GRUs, a per-step classifier."""

    def __init__(self, mels=64, hidden=96, classes=29):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, 16, (11, 11), stride=(2, 2), padding=(5, 5)), nn.BatchNorm2d(16),
            nn.Hardtanh(0, 20),
            nn.Conv2d(16, 16, (11, 5), stride=(2, 1), padding=(5, 2)), nn.BatchNorm2d(16),
            nn.Hardtanh(0, 20))
        self.gru = nn.GRU(16 * (mels // 4), hidden, num_layers=2, bidirectional=True,
                          batch_first=True)
        self.out = nn.Linear(2 * hidden, classes)

    def forward(self, spec):  # [b, 1, mels, t]
        x = self.conv(spec)
        b, c, f, t = x.shape
        y, _ = self.gru(x.permute(0, 3, 1, 2).reshape(b, t, c * f))
        return self.out(y).log_softmax(-1)


def build_deepspeech2(rng, small):
    return Export(DeepSpeech2Lite(), {"spectrogram": normal(rng, 1, 1, 64, 40 if small else 100)},
                  ["log_probs"])


class GATLite(nn.Module):
    """Graph attention (GAT): per head, scores from the two ends of each edge
    (LeakyReLU), softmax over each node's neighbours given by a 0/1
    adjacency input (the others masked out), ELU, a one-head output layer."""

    def __init__(self, fin=16, hidden=8, heads=4, classes=5):
        super().__init__()
        self.w1 = nn.Linear(fin, hidden * heads, bias=False)
        self.a1 = nn.Parameter(torch.randn(2, heads, hidden) * 0.3)
        self.w2 = nn.Linear(hidden * heads, classes, bias=False)
        self.a2 = nn.Parameter(torch.randn(2, 1, classes) * 0.3)
        self.heads, self.hidden = heads, hidden

    @staticmethod
    def attend(h, a, adj):  # h [n, heads, d]
        src = (h * a[0]).sum(-1)  # [n, heads]
        dst = (h * a[1]).sum(-1)
        e = F.leaky_relu(src.t()[:, :, None] + dst.t()[:, None, :], 0.2)  # [heads, n, n]
        e = e.masked_fill(adj[None] == 0, float("-inf")).softmax(-1)
        return torch.einsum("hij,jhd->ihd", e, h)

    def forward(self, x, adj):
        n = x.shape[0]
        h = F.elu(self.attend(self.w1(x).view(n, self.heads, self.hidden), self.a1, adj))
        out = self.attend(self.w2(h.reshape(n, -1)).view(n, 1, -1), self.a2, adj)
        return out.squeeze(1).log_softmax(-1)


def build_gat(rng, small):
    n = 24 if small else 64
    adj = (rng.random((n, n)) < 0.15).astype(np.float32)
    adj = np.maximum(adj, adj.T)
    np.fill_diagonal(adj, 1.0)
    return Export(GATLite(), {"features": normal(rng, n, 16), "adjacency": adj}, ["log_probs"])


class Involution(nn.Module):
    """Involution (RedNet): a k x k kernel per pixel and group, generated
    from the pixel by a reduce/span pair of 1x1 convs, applied to the
    unfolded neighbourhood (Im2Col)."""

    def __init__(self, c, k=3, groups=4, reduction=4):
        super().__init__()
        self.k, self.g = k, groups
        self.reduce = nn.Sequential(nn.Conv2d(c, c // reduction, 1), nn.BatchNorm2d(c // reduction), nn.ReLU())
        self.span = nn.Conv2d(c // reduction, k * k * groups, 1)

    def forward(self, x):
        b, c, h, w = x.shape
        kern = self.span(self.reduce(x)).view(b, self.g, 1, self.k * self.k, h, w)
        cols = F.unfold(x, self.k, padding=self.k // 2).view(b, self.g, c // self.g, self.k * self.k, h, w)
        return (kern * cols).sum(dim=3).view(b, c, h, w)


class RedNetLite(nn.Module):
    def __init__(self, c=32, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, c, 3, 2, 1), nn.BatchNorm2d(c), nn.ReLU())
        self.blocks = nn.ModuleList(Involution(c) for _ in range(3))
        self.head = nn.Linear(c, classes)

    def forward(self, x):
        x = self.stem(x)
        for blk in self.blocks:
            x = F.relu(x + blk(x))
        return self.head(x.mean(dim=(2, 3)))


def build_rednet(rng, small):
    s = 32 if small else 64
    return Export(RedNetLite(), {"image": normal(rng, 1, 3, s, s)}, ["logits"])

ZOO = [
    ("resnet18", "classification", classifier(tv.resnet18, image_side)),
    ("mobilenet_v2", "classification", classifier(tv.mobilenet_v2, image_side)),
    ("mobilenet_v3_small", "classification", classifier(tv.mobilenet_v3_small, image_side)),
    ("mobilenet_v3_large", "classification", classifier(tv.mobilenet_v3_large, image_side)),
    ("squeezenet1_1", "classification", classifier(tv.squeezenet1_1, image_side)),
    ("densenet121", "classification", classifier(tv.densenet121, image_side)),
    ("inception_v3", "classification",
     classifier(tv.inception_v3, lambda small: 160 if small else 299,
                aux_logits=False, init_weights=True)),
    ("googlenet", "classification",
     classifier(tv.googlenet, image_side, aux_logits=False, init_weights=True)),
    ("shufflenet_v2_x1_0", "classification", classifier(tv.shufflenet_v2_x1_0, image_side)),
    ("mnasnet0_5", "classification", classifier(tv.mnasnet0_5, image_side)),
    ("efficientnet_b0", "classification", classifier(tv.efficientnet_b0, image_side)),
    ("regnet_y_400mf", "classification", classifier(tv.regnet_y_400mf, image_side)),
    ("convnext_tiny", "classification", classifier(tv.convnext_tiny, image_side)),
    ("vit_b_16", "classification", build_vit),
    ("swin_t", "classification", classifier(tv.swin_t, image_side)),
    ("alexnet", "classification", classifier(tv.alexnet, image_side)),
    ("vgg11", "classification", classifier(tv.vgg11, image_side)),
    ("fcn_resnet50", "segmentation", segmentation(seg.fcn_resnet50)),
    ("deeplabv3_mobilenet_v3_large", "segmentation",
     segmentation(seg.deeplabv3_mobilenet_v3_large)),
    ("lraspp_mobilenet_v3_large", "segmentation", segmentation(seg.lraspp_mobilenet_v3_large)),
    ("ssdlite320_mobilenet_v3_large", "detection", build_ssdlite),
    ("gpt2_tiny", "language", build_gpt2),
    ("bert_tiny", "language", build_bert),
    ("mha_block", "language", build_mha),
    ("lstm_classifier", "sequence", lstm_builder(dynamic=False)),
    ("gru_tagger", "sequence", build_gru),
    ("audio_convnet", "audio", audio_builder(dynamic=False)),
    ("unet_small", "dense", build_unet),
    ("fpn_small", "dense", build_fpn),
    ("style_transfer", "dense", build_style),
    ("espcn_x3", "dense", build_espcn),
    ("vae_decoder", "generative", build_vae),
    ("resnet18_dynbatch", "classification", build_resnet18_dynbatch),
    ("audio_convnet_dynbatch", "audio", audio_builder(dynamic=True)),
    ("lstm_dynbatch", "sequence", lstm_builder(dynamic=True)),
    # Second wave (2026-11-26): exports no issue names, to find what users hit.
    ("resnet50", "classification", classifier(tv.resnet50, image_side)),
    ("resnext50_32x4d", "classification", classifier(tv.resnext50_32x4d, image_side)),
    ("regnet_x_400mf", "classification", classifier(tv.regnet_x_400mf, image_side)),
    ("efficientnet_v2_s", "classification", classifier(tv.efficientnet_v2_s, image_side)),
    ("swin_v2_t", "classification", classifier(tv.swin_v2_t, image_side)),
    ("maxvit_t", "classification", classifier(tv.maxvit_t, image_side)),
    ("r3d_18", "video", video_classifier(torchvision.models.video.r3d_18)),
    ("r2plus1d_18", "video", video_classifier(torchvision.models.video.r2plus1d_18)),
    ("fasterrcnn_mobilenet_v3_large_320_fpn", "detection",
     detector(torchvision.models.detection.fasterrcnn_mobilenet_v3_large_320_fpn,
              box_detections_per_img=20)),
    ("retinanet_resnet50_fpn", "detection",
     detector(torchvision.models.detection.retinanet_resnet50_fpn, min_size=320,
              max_size=320, detections_per_img=20)),
    ("seq2seq_transformer", "language", build_seq2seq),
    ("llama_tiny", "language", build_llama),
    ("conformer", "audio", build_conformer),
    ("crnn", "sequence", build_crnn),
    ("bert_tiny_dynseq", "language", build_bert_dynseq),
    # Third wave (2026-11-26, evening): more exports no issue names.
    ("gpt2_kvcache", "language", build_gpt2_kvcache),
    ("diffusion_unet", "generative", build_diffusion_unet),
    ("pointnet", "point cloud", build_pointnet),
    ("gcn", "graph", build_gcn),
    ("moe_top2", "language", build_moe),
    ("t5_attention", "language", build_t5_attention),
    ("yolo_tiny", "detection", build_yolo),
    ("clip_tiny", "multimodal", build_clip),
    ("roberta_posids", "language", build_roberta),
    ("mel_frontend", "audio", build_mel),
    ("dlrm_lite", "recommendation", build_dlrm),
    ("raft_small", "optical flow", build_raft),
    ("vit_interp_pos", "classification", build_vit_interp),
    ("vgg16_bn", "classification", classifier(tv.vgg16_bn, image_side)),
    ("mc3_18", "video", video_classifier(torchvision.models.video.mc3_18)),
    # Fourth wave (2026-11-26, night): sequence, audio and text models.
    ("whisper_encoder", "audio", build_whisper),
    ("wav2vec2", "audio", build_wav2vec2),
    ("tcn", "sequence", build_tcn),
    ("wavenet", "audio", build_wavenet),
    ("transformer_decoder", "language", build_transformer_decoder),
    ("lstm_packed", "sequence", build_packed_lstm),
    ("distilbert", "language", build_distilbert),
    ("sentence_minilm", "language", build_sentence),
    ("albert", "language", build_albert),
    ("gpt_neox", "language", build_neox),
    ("t5_decoder", "language", build_t5_decoder),
    ("embedding_bag", "text", build_embedding_bag),
    ("tacotron_attention", "audio", build_tacotron),
    ("mamba_ssd", "language", build_mamba),
    ("textcnn", "text", build_textcnn),
    ("rwkv", "language", build_rwkv),
    ("transformer_xl", "language", build_transformer_xl),
    ("conv_tasnet", "audio", build_conv_tasnet),
    ("performer_causal", "language", build_performer),
    ("length_regulator", "audio", build_length_regulator),
    ("bloom_alibi", "language", build_bloom),
    ("rnnt_joint", "audio", build_rnnt_joint),
    ("bahdanau_greedy", "language", build_bahdanau),
    ("padded_encoder", "language", build_padded_encoder),
    ("gpt2_left_padded", "language", build_gpt2_left_padded),
    ("local_attention", "language", build_local_attention),
    ("quartznet", "audio", build_quartznet),
    ("gptj_rotary", "language", build_gptj),
    ("deberta_attention", "language", build_deberta),
    ("funnel_pool", "language", build_funnel),
    # Fourth wave (2026-11-26, night): vision and generative exports no issue names.
    ("maskrcnn_resnet50_fpn", "detection",
     rcnn_detector(torchvision.models.detection.maskrcnn_resnet50_fpn, ["masks"],
                   lambda small: 128 if small else 224, num_classes=91,
                   box_detections_per_img=10, box_score_thresh=0.02,
                   rpn_pre_nms_top_n_test=300,
                   rpn_post_nms_top_n_test=100)),
    ("keypointrcnn_resnet50_fpn", "detection",
     rcnn_detector(torchvision.models.detection.keypointrcnn_resnet50_fpn,
                   ["keypoints", "keypoints_scores"], lambda small: 128 if small else 224,
                   box_detections_per_img=10, rpn_pre_nms_top_n_test=300,
                   rpn_post_nms_top_n_test=100)),
    ("fcos_resnet50_fpn", "detection",
     detector(torchvision.models.detection.fcos_resnet50_fpn, min_size=256, max_size=256,
              detections_per_img=20, score_thresh=0.1)),
    ("ssd300_vgg16", "detection", build_ssd300),
    ("deeplabv3_resnet50", "segmentation", build_deeplabv3_resnet50),
    ("resnet18_int8", "quantized", quantized_classifier(tv.quantization.resnet18)),
    ("mobilenet_v2_int8", "quantized", quantized_classifier(tv.quantization.mobilenet_v2)),
    ("pspnet_lite", "segmentation", build_pspnet),
    ("cyclegan_generator", "generative", build_cyclegan),
    ("dcgan_generator", "generative", build_dcgan),
    ("esrgan_rrdb", "dense", build_esrgan),
    ("detr_lite", "detection", build_detr),
    ("mobilevit_lite", "classification", build_mobilevit),
    ("hrnet_lite", "pose", build_hrnet),
    ("stn", "classification", build_stn),
    ("stylegan2_lite", "generative", build_stylegan),
    # Fifth wave (2026-11-28): exports no issue names.
    ("s3d", "video", build_s3d),
    ("rnn_tanh", "sequence", build_rnn_tanh),
    ("vdsr_bicubic", "super-resolution", build_vdsr),
    ("nafnet_lite", "restoration", build_nafnet),
    ("dgcnn_lite", "point-cloud", build_dgcnn),
    ("convmixer", "classification", build_convmixer),
    ("poolformer_lite", "classification", build_poolformer),
    ("segformer_lite", "segmentation", build_segformer),
    ("deepspeech2_lite", "speech", build_deepspeech2),
    ("gat_lite", "graph", build_gat),
    ("rednet_involution", "classification", build_rednet),
]
# Full-size models for benchmarks (hundreds of MB): exported only when named
# with --only, never by default.
BENCH_ZOO = [
    ("gpt2_small", "language", build_gpt2_small),
    ("bert_base", "language", build_bert_base),
]


# ----------------------------------------------------------- exporting


def seed_of(name):
    return zlib.crc32(name.encode())


def condition_weights(module, inputs, rng, gen):
    """Makes random weights behave like trained ones where it matters for a
    numerical comparison (see the top of the file): batch-norm statistics
    measured on a calibration batch, random affine parameters on every
    normalisation layer, ConvNeXt's layer scales raised."""
    # The affine parameters first: statistics measured before them would not
    # be what each layer receives once they are in place, and the difference
    # compounds with depth (EfficientNetV2's activations reached 1e4 after 40
    # blocks that way, and float32 rounding then moved its logits by 6%).
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, (nn.modules.batchnorm._BatchNorm, nn.modules.instancenorm._InstanceNorm,
                              nn.GroupNorm, nn.LayerNorm)) and m.weight is not None:
                m.weight.uniform_(0.8, 1.2, generator=gen)
                m.bias.normal_(0.0, 0.1, generator=gen)
        for name, p in module.named_parameters():
            if name.endswith("layer_scale"):
                p.uniform_(0.1, 0.5, generator=gen)
    norms = [m for m in module.modules()
             if isinstance(m, nn.modules.batchnorm._BatchNorm) and m.track_running_stats]
    if norms:
        def measure(m, args):
            x = args[0]
            dims = [d for d in range(x.dim()) if d != 1]
            m.running_mean.copy_(x.mean(dims))
            m.running_var.copy_(x.var(dims, unbiased=False))

        batch = tuple(torch.from_numpy(normal(rng, 8, *a.shape[1:])) for a in inputs.values())
        hooks = [m.register_forward_pre_hook(measure) for m in norms]
        try:
            with torch.no_grad():
                module(*batch)
        finally:
            for h in hooks:
                h.remove()


def estimate_gflops(module, args):
    """Multiply-adds x 2 of one forward pass; see the top of the file."""
    from torch.profiler import ProfilerActivity, profile

    extra = []

    quantized = torch.ao.nn.quantized

    def conv_hook(m, inputs, output):
        if isinstance(m, quantized.Linear):
            extra.append(2 * output.numel() * m.in_features)
        elif isinstance(m, (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)):
            per_input = m.out_channels // m.groups * math.prod(m.kernel_size)
            extra.append(2 * inputs[0].numel() * per_input)
        else:
            per_output = m.in_channels // m.groups * math.prod(m.kernel_size)
            extra.append(2 * output.numel() * per_output)

    # The profiler counts conv2d, mm, addmm, bmm, mul and add, not these
    # (nor the int8 kernels of quantized modules).
    hooks = [m.register_forward_hook(conv_hook) for m in module.modules()
             if isinstance(m, (nn.Conv1d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d,
                               nn.ConvTranspose3d, quantized.Conv2d, quantized.Linear))]
    try:
        with torch.no_grad(), profile(activities=[ProfilerActivity.CPU], with_flops=True) as prof:
            module(*args)
    finally:
        for h in hooks:
            h.remove()
    counted = sum(e.flops for e in prof.key_averages() if e.flops)
    return (counted + sum(extra)) / 1e9


def _varint(buf, pos):
    value = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _fields(buf):
    """(field number, value) of each field of one protobuf message: a
    memoryview for length-delimited fields, None for the others."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        wire = key & 7
        value = None
        if wire == 0:
            _, pos = _varint(buf, pos)
        elif wire == 1:
            pos += 8
        elif wire == 2:
            size, pos = _varint(buf, pos)
            value, pos = buf[pos:pos + size], pos + size
        elif wire == 5:
            pos += 4
        else:
            raise ValueError(f"protobuf wire type {wire}")
        yield key >> 3, value


def onnx_op_counts(path):
    """{op type: count} of the main graph's nodes (ModelProto.graph = 7,
    GraphProto.node = 1, NodeProto.op_type = 4 and .domain = 7), read with
    this small protobuf walker so that only torch and numpy are needed."""
    with open(path, "rb") as f:
        model = memoryview(f.read())
    counts = {}
    for field, graph in _fields(model):
        if field != 7:
            continue
        for graph_field, node in _fields(graph):
            if graph_field != 1:
                continue
            attrs = dict((n, bytes(v).decode()) for n, v in _fields(node) if n in (4, 7))
            op, domain = attrs.get(4, ""), attrs.get(7, "")
            key = op if domain in ("", "ai.onnx") else f"{domain}:{op}"
            counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def first_line(exc):
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".strip()


def build_model(name, build, small):
    """Builds the named model with its seeded weights, conditioned, in eval
    mode, and its seeded inputs."""
    torch.manual_seed(seed_of(name))
    spec = build(np.random.default_rng(seed_of(name) + 1), small)
    spec.module.eval()
    condition_weights(spec.module, spec.inputs, np.random.default_rng(seed_of(name) + 2),
                      torch.Generator().manual_seed(seed_of(name) + 3))
    return spec


def export_one(name, family, build, out_dir, small):
    """Exports one model; returns its manifest entry (never raises)."""
    entry = {"name": name, "family": family, "dir": name, "file": f"{name}/model.onnx"}
    model_dir = os.path.join(out_dir, name)
    os.makedirs(model_dir, exist_ok=True)
    try:
        spec = build_model(name, build, small)
        module = spec.module
    except Exception as exc:  # a model that cannot even be built is reported, not fatal
        traceback.print_exc(limit=2)
        entry.update(status="export_failed", reason="build: " + first_line(exc))
        return entry

    entry["inputs"] = []
    for input_name, array in spec.inputs.items():
        path = f"{name}/input_{input_name}.npy"
        np.save(os.path.join(out_dir, path), array)
        entry["inputs"].append({"name": input_name, "dtype": str(array.dtype),
                                "shape": list(array.shape), "file": path})
    entry["outputs"] = spec.outputs
    entry["dynamic"] = spec.dynamic_axes is not None
    if spec.dynamic_axes:
        # Axis names and the sizes the saved inputs and references use.
        entry["dynamic_axes"] = {
            tensor: {str(axis): dim for axis, dim in axes.items()}
            for tensor, axes in spec.dynamic_axes.items()}
        entry["dynamic_dims"] = {
            dim: int(spec.inputs[tensor].shape[axis])
            for tensor, axes in spec.dynamic_axes.items() if tensor in spec.inputs
            for axis, dim in axes.items()}
    args = tuple(torch.from_numpy(a) for a in spec.inputs.values())
    try:
        entry["gflops"] = round(estimate_gflops(module, args), 4)
    except Exception as exc:  # the estimate is optional
        entry["gflops"] = None
        entry["gflops_error"] = first_line(exc)
    entry["parameters"] = sum(p.numel() for p in module.parameters())

    path = os.path.join(out_dir, entry["file"])
    errors = []
    for opset in OPSETS:
        try:
            # Not under torch.no_grad(): without autograd nn.MultiheadAttention
            # takes a fused fast path that has no ONNX export.
            torch.onnx.export(module, args, path, opset_version=opset,
                              input_names=list(spec.inputs), output_names=spec.outputs,
                              dynamic_axes=spec.dynamic_axes, do_constant_folding=True)
        except Exception as exc:  # try the next lower opset, keep the reason
            errors.append(f"opset {opset}: {first_line(exc)}")
            continue
        entry.update(status="ok", opset=opset, bytes=os.path.getsize(path),
                     ops=onnx_op_counts(path))
        if errors:
            entry["higher_opsets_failed"] = errors
        return entry
    entry.update(status="export_failed", reason=errors[0], reasons=errors)
    return entry


def main():
    parser = argparse.ArgumentParser(
        description="Export the vkpipe model zoo (see the top of this file).")
    parser.add_argument("out_dir")
    parser.add_argument("--only", default="", help="comma-separated model names")
    parser.add_argument("--small", action="store_true", help="smaller inputs")
    parser.add_argument("--list", action="store_true", help="list the models and exit")
    args = parser.parse_args()
    if args.list:
        for name, family, _ in ZOO:
            print(f"{name:32} {family}")
        for name, family, _ in BENCH_ZOO:
            print(f"{name:32} {family} (benchmark only: --only {name})")
        return 0
    names = [n for n in args.only.split(",") if n]
    known = {name for name, _, _ in ZOO + BENCH_ZOO}
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f"unknown model(s): {', '.join(unknown)} (see --list)")

    os.makedirs(args.out_dir, exist_ok=True)
    manifest_path = os.path.join(args.out_dir, "manifest.json")
    previous = {}
    if names and os.path.exists(manifest_path):
        with open(manifest_path) as f:
            old = json.load(f)
        if old.get("small") != args.small:
            parser.error("--small differs from the existing manifest's; use another OUT_DIR")
        previous = {m["name"]: m for m in old["models"]}

    warnings.filterwarnings("ignore")  # torch.onnx's tracer warnings are about Python control flow
    models = []
    bench_only = {name for name, _, _ in BENCH_ZOO}
    for name, family, build in ZOO + BENCH_ZOO:
        if (names and name not in names) or (not names and name in bench_only):
            if name in previous:
                models.append(previous[name])
            continue
        entry = export_one(name, family, build, args.out_dir, args.small)
        models.append(entry)
        if entry["status"] == "ok":
            gflops = f"{entry['gflops']:.2f} GFLOP" if entry["gflops"] is not None else "? GFLOP"
            print(f"{name}: opset {entry['opset']}, {entry['bytes'] / 1e6:.1f} MB, {gflops}",
                  flush=True)
        else:
            print(f"{name}: export failed: {entry['reason']}", flush=True)

    manifest = {
        "schema": "vkpipe-zoo/1",
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "torch": torch.__version__, "torchvision": torchvision.__version__,
        "small": args.small, "models": models,
    }
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    failed = sum(m["status"] != "ok" for m in models)
    print(f"{len(models) - failed} of {len(models)} models exported to {args.out_dir}"
          + (f"; {failed} failed" if failed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
