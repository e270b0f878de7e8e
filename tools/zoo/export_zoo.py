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
