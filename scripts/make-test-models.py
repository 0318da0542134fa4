#!/usr/bin/env python3
"""Derives tiny test models with real tokenizers and real chat templates.

The shipped stories260K model has neither a chat template nor special tokens, so it cannot
exercise chat formatting, tool calls or reasoning tags. This script writes three small GGUF
models whose vocabulary (tokens, merges, pre-tokenizer, special tokens) and chat template
are those of real model families, with random weights: they load and generate in
milliseconds, and what they generate is noise, but everything around generation (the prompt
the template renders, how it tokenizes, which tokens end a turn) is the real thing.

  llama3-tiny.gguf  llama architecture, Llama 3's BPE vocabulary with the three special
                    tokens Llama 3.1 named (<|finetune_right_pad_id|>, <|eom_id|>,
                    <|python_tag|>), Llama 3.2 Instruct's template
  qwen3-tiny.gguf   qwen3 architecture, Qwen2's BPE vocabulary with the added tokens of
                    Qwen3 at their ids (<tool_call>, <think>, ... each a single token),
                    Qwen3's template
  hermes3-tiny.gguf llama architecture, the Llama 3.1 vocabulary above with <|im_start|> and
                    <|im_end|> in two reserved slots (ids chosen here), Hermes 3's tool-use
                    template; <tool_call>, <tools> and <tool_response> stay text, several
                    tokens each

The inputs (gguf-py, the two vocabulary files, the templates) come from llama.cpp's source
tree; scripts/build-llama.sh installs them into its prefix under share/llama-test-assets/.
The models go into a cache directory keyed by this script and its inputs, reused while it is
complete; the directory is printed on the last line. Deterministic: the same inputs give the
same bytes. Run it through scripts/test-models.sh, or directly:

  /usr/bin/python3 scripts/make-test-models.py --assets PREFIX/share/llama-test-assets
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

# Model shape: small enough to load in milliseconds, large enough to be a real transformer
# (grouped-query attention, several heads, a context long enough for tool-use prompts).
N_EMBD = 64
N_LAYER = 2
N_HEAD = 4
N_HEAD_KV = 2
N_FF = 128
N_CTX = 4096
HEAD_DIM = N_EMBD // N_HEAD

# gguf.TokenType values, spelled out so the key can be computed before gguf is imported.
CONTROL = 3
USER_DEFINED = 4

LLAMA_BPE = "models/ggml-vocab-llama-bpe.gguf"
QWEN2 = "models/ggml-vocab-qwen2.gguf"

# Llama 3.1 named three of Llama 3's reserved special tokens.
LLAMA31_TOKENS = {
    128004: ("<|finetune_right_pad_id|>", CONTROL),
    128008: ("<|eom_id|>", CONTROL),
    128010: ("<|python_tag|>", CONTROL),
}
# Qwen2.5 and Qwen3 fill the padding slots after <|im_end|>; the types are those
# llama.cpp's converter gives them (special or looking special: control; else user-defined).
QWEN3_TOKENS = {
    151646: ("<|object_ref_start|>", CONTROL),
    151647: ("<|object_ref_end|>", CONTROL),
    151648: ("<|box_start|>", CONTROL),
    151649: ("<|box_end|>", CONTROL),
    151650: ("<|quad_start|>", CONTROL),
    151651: ("<|quad_end|>", CONTROL),
    151652: ("<|vision_start|>", CONTROL),
    151653: ("<|vision_end|>", CONTROL),
    151654: ("<|vision_pad|>", CONTROL),
    151655: ("<|image_pad|>", CONTROL),
    151656: ("<|video_pad|>", CONTROL),
    151657: ("<tool_call>", USER_DEFINED),
    151658: ("</tool_call>", USER_DEFINED),
    151659: ("<|fim_prefix|>", CONTROL),
    151660: ("<|fim_middle|>", CONTROL),
    151661: ("<|fim_suffix|>", CONTROL),
    151662: ("<|fim_pad|>", CONTROL),
    151663: ("<|repo_name|>", CONTROL),
    151664: ("<|file_sep|>", CONTROL),
    151665: ("<tool_response>", USER_DEFINED),
    151666: ("</tool_response>", USER_DEFINED),
    151667: ("<think>", USER_DEFINED),
    151668: ("</think>", USER_DEFINED),
}
# Hermes 3 speaks ChatML on a Llama 3.1 vocabulary, which has no ChatML tokens: they take
# the first two reserved slots here (the ids are ours, not necessarily Nous Research's).
HERMES_TOKENS = {
    **LLAMA31_TOKENS,
    128002: ("<|im_start|>", CONTROL),
    128003: ("<|im_end|>", CONTROL),
}


@dataclass
class ModelSpec:
    file: str
    arch: str
    vocab: str
    template: str
    renamed: dict[int, tuple[str, int]]
    bos: int
    eos: int
    add_bos: bool
    rope_freq_base: float
    seed: int
    pad: int | None = None
    notes: list[str] = field(default_factory=list)


MODELS = [
    ModelSpec(
        file="llama3-tiny.gguf", arch="llama", vocab=LLAMA_BPE,
        template="models/templates/meta-llama-Llama-3.2-3B-Instruct.jinja",
        renamed=LLAMA31_TOKENS, bos=128000, eos=128009, add_bos=True,
        rope_freq_base=500000.0, seed=1,
        notes=["Llama 3.x tool calls are JSON after the assistant header; "
               "<|python_tag|> and <|eom_id|> are single control tokens"]),
    ModelSpec(
        file="qwen3-tiny.gguf", arch="qwen3", vocab=QWEN2,
        template="models/templates/Qwen-Qwen3-0.6B.jinja",
        renamed=QWEN3_TOKENS, bos=151643, eos=151645, pad=151643, add_bos=False,
        rope_freq_base=1000000.0, seed=2,
        notes=["<tool_call>, </tool_call>, <tool_response>, </tool_response>, <think> and "
               "</think> are single user-defined tokens, as in Qwen3; <tools> is text"]),
    ModelSpec(
        file="hermes3-tiny.gguf", arch="llama", vocab=LLAMA_BPE,
        template="models/templates/NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja",
        renamed=HERMES_TOKENS, bos=128000, eos=128003, add_bos=True,
        rope_freq_base=500000.0, seed=3,
        notes=["<|im_start|> (128002) and <|im_end|> (128003, end of turn) are control "
               "tokens in slots chosen here; <tool_call>, <tools> and <tool_response> are "
               "text, several tokens each"]),
]


def log(message: str) -> None:
    print(f"make-test-models: {message}", file=sys.stderr)


def cache_key(assets: Path) -> str:
    """What the models are made of: this script, the inputs it reads, and gguf-py."""
    digest = hashlib.sha256()
    inputs = [Path(__file__)]
    inputs += sorted({assets / path for spec in MODELS for path in (spec.vocab, spec.template)})
    inputs += sorted((assets / "gguf-py" / "gguf").rglob("*.py"))
    for path in inputs:
        digest.update(str(path.relative_to(assets) if path.is_relative_to(assets)
                          else path.name).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def template_tokens(template: str) -> tuple[set[str], set[str]]:
    """The <|...|> tokens a template writes, and its XML-like tags (<tool_call>, </tools>)."""
    specials = set(re.findall(r"<\|[a-z_]+\|>", template))
    tags = set(re.findall(r"</?[a-z_]+>", template)) - {"<br>"}
    return specials, tags


@functools.cache
def read_vocabulary(path: Path) -> dict:
    """The tokenizer fields of a vocabulary file (read once: gguf-py takes seconds)."""
    import gguf

    fields = gguf.GGUFReader(path).fields
    return {key: fields[f"tokenizer.ggml.{key}"].contents()
            for key in ("tokens", "token_type", "merges", "model", "pre")}


def write_model(spec: ModelSpec, assets: Path, out: Path) -> dict:
    import numpy as np
    import gguf

    vocabulary = read_vocabulary(assets / spec.vocab)
    tokens = list(vocabulary["tokens"])
    types = list(vocabulary["token_type"])
    merges = vocabulary["merges"]
    tokenizer_model = vocabulary["model"]
    tokenizer_pre = vocabulary["pre"]

    for token_id, (text, token_type) in spec.renamed.items():
        if text in tokens:
            raise SystemExit(f"{spec.file}: {text} is already token {tokens.index(text)}")
        tokens[token_id] = text
        types[token_id] = token_type
    index = {text: token_id for token_id, text in enumerate(tokens)}

    template = (assets / spec.template).read_text()
    specials, tags = template_tokens(template)
    missing = sorted(t for t in specials if t not in index or types[index[t]] != CONTROL)
    if missing:
        raise SystemExit(f"{spec.file}: the template writes {missing}, "
                         "which are not control tokens of the vocabulary")
    single_tags = sorted(t for t in tags if t in index)
    text_tags = sorted(t for t in tags if t not in index)

    writer = gguf.GGUFWriter(out / spec.file, spec.arch)
    writer.add_name(f"tandem-test-{spec.file.removesuffix('.gguf')}")
    writer.add_description("random weights; tokenizer and chat template of a real model "
                           "(scripts/make-test-models.py)")
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    writer.add_vocab_size(len(tokens))
    writer.add_context_length(N_CTX)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(N_LAYER)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD_KV)
    writer.add_key_length(HEAD_DIM)
    writer.add_value_length(HEAD_DIM)
    writer.add_rope_dimension_count(HEAD_DIM)
    writer.add_rope_freq_base(spec.rope_freq_base)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_tokenizer_model(tokenizer_model)
    writer.add_tokenizer_pre(tokenizer_pre)
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    writer.add_bos_token_id(spec.bos)
    writer.add_eos_token_id(spec.eos)
    if spec.pad is not None:
        writer.add_pad_token_id(spec.pad)
    writer.add_add_bos_token(spec.add_bos)
    writer.add_chat_template(template)

    # Matrices f16, norms f32 (ones). numpy shapes are ggml's dimensions reversed. The output
    # projection is tied to the token embedding, as in Llama 3.2 and Qwen3's small models.
    rng = np.random.default_rng(spec.seed)

    def matrix(rows: int, cols: int) -> np.ndarray:
        return (rng.standard_normal((rows, cols), dtype=np.float32) * 0.02).astype(np.float16)

    def ones(n: int) -> np.ndarray:
        return np.ones(n, dtype=np.float32)

    names = gguf.TENSOR_NAMES
    tensor = gguf.MODEL_TENSOR
    writer.add_tensor(f"{names[tensor.TOKEN_EMBD]}.weight", matrix(len(tokens), N_EMBD))
    writer.add_tensor(f"{names[tensor.OUTPUT_NORM]}.weight", ones(N_EMBD))
    n_kv = N_HEAD_KV * HEAD_DIM
    for layer in range(N_LAYER):
        def name(kind: gguf.MODEL_TENSOR) -> str:
            return f"{names[kind].format(bid=layer)}.weight"
        writer.add_tensor(name(tensor.ATTN_NORM), ones(N_EMBD))
        writer.add_tensor(name(tensor.ATTN_Q), matrix(N_HEAD * HEAD_DIM, N_EMBD))
        writer.add_tensor(name(tensor.ATTN_K), matrix(n_kv, N_EMBD))
        writer.add_tensor(name(tensor.ATTN_V), matrix(n_kv, N_EMBD))
        writer.add_tensor(name(tensor.ATTN_OUT), matrix(N_EMBD, N_HEAD * HEAD_DIM))
        if spec.arch == "qwen3":
            writer.add_tensor(name(tensor.ATTN_Q_NORM), ones(HEAD_DIM))
            writer.add_tensor(name(tensor.ATTN_K_NORM), ones(HEAD_DIM))
        writer.add_tensor(name(tensor.FFN_NORM), ones(N_EMBD))
        writer.add_tensor(name(tensor.FFN_GATE), matrix(N_FF, N_EMBD))
        writer.add_tensor(name(tensor.FFN_DOWN), matrix(N_EMBD, N_FF))
        writer.add_tensor(name(tensor.FFN_UP), matrix(N_FF, N_EMBD))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()

    return {
        "file": spec.file,
        "architecture": spec.arch,
        "vocabulary": Path(spec.vocab).name,
        "chat_template": Path(spec.template).name,
        "n_vocab": len(tokens),
        "bos": {"id": spec.bos, "text": tokens[spec.bos]},
        "eos": {"id": spec.eos, "text": tokens[spec.eos]},
        "renamed_tokens": {str(k): v[0] for k, v in sorted(spec.renamed.items())},
        "template_special_tokens": sorted(specials),
        "template_tags_single_token": single_tags,
        "template_tags_as_text": text_tags,
        "notes": spec.notes,
        "sha256": hashlib.sha256((out / spec.file).read_bytes()).hexdigest(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assets", type=Path, required=True,
                        help="llama.cpp's test assets: PREFIX/share/llama-test-assets")
    default_cache = Path(os.environ.get("TANDEM_CACHE_DIR") or Path(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tandem")
    parser.add_argument("--cache-dir", type=Path, default=default_cache,
                        help="cache root (default: %(default)s)")
    args = parser.parse_args()

    assets = args.assets.resolve()
    if not (assets / "gguf-py" / "gguf").is_dir():
        log(f"{assets} holds no gguf-py: rerun scripts/build-llama.sh, which installs it")
        return 1
    final = args.cache_dir / f"test-models-{cache_key(assets)}"
    if (final / ".complete").is_file():
        print(final)
        return 0

    try:
        import numpy  # noqa: F401  (gguf-py needs it)
    except ImportError:
        log(f"{sys.executable} has no numpy: install python3-numpy (scripts/install-deps.sh)")
        return 1
    sys.path.insert(0, str(assets / "gguf-py"))
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"{final.name}.", dir=args.cache_dir))
    try:
        manifest = []
        for spec in MODELS:
            log(f"writing {spec.file}")
            manifest.append(write_model(spec, assets, work))
        (work / "models.json").write_text(json.dumps(manifest, indent=2) + "\n")
        (work / ".complete").write_text("\n")
        work.chmod(0o755)
        # Only complete directories are renamed into place; a racing run that got there first
        # made the same bytes.
        try:
            work.rename(final)
        except OSError:
            if not (final / ".complete").is_file():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    log(f"wrote {final}")
    print(final)
    return 0


if __name__ == "__main__":
    sys.exit(main())
