#!/usr/bin/env python3
"""Writes the hand-made GGUF seeds of fuzz/corpus/gguf_header/ (the prefixes of the shipped
model are cut with head -c, see fuzz/README.md). Small, complete files that parse, so that the
fuzzer starts from accepted headers: every metadata type, GGUF v2 and v3, a non-default
alignment, and block-quantized tensors. Run from the repository root."""

import struct

OUT = "fuzz/corpus/gguf_header/"
U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
F32_T, F16_T, Q4_0_T, Q8_0_T = 0, 1, 2, 8  # ggml types: block sizes 1, 1, 32, 32


def string(text):
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def scalar(kind, value):
    fmt = {U8: "B", I8: "b", U16: "H", I16: "h", U32: "I", I32: "i", F32: "f", BOOL: "?",
           U64: "Q", I64: "q", F64: "d"}[kind]
    return struct.pack("<" + fmt, value)


def kv(key, kind, value, element=None):
    out = string(key) + struct.pack("<I", kind)
    if kind == STR:
        return out + string(value)
    if kind == ARR:
        out += struct.pack("<IQ", element, len(value))
        return out + b"".join(string(v) if element == STR else scalar(element, v) for v in value)
    return out + scalar(kind, value)


def gguf(version, metadata, tensors, alignment=32):
    """tensors: (name, dims, ggml type, data bytes); offsets are laid out aligned."""
    infos, data = b"", b""
    for name, dims, ggml_type, payload in tensors:
        data += b"\0" * (-len(data) % alignment)
        infos += string(name) + struct.pack("<I", len(dims)) + struct.pack("<%dQ" % len(dims), *dims)
        infos += struct.pack("<IQ", ggml_type, len(data))
        data += payload
    header = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(metadata))
    header += b"".join(metadata) + infos
    return header + b"\0" * (-len(header) % alignment) + data


llama = [
    kv("general.architecture", STR, "llama"),
    kv("general.name", STR, "tiny-fuzz"),
    kv("llama.context_length", U32, 128),
    kv("llama.embedding_length", U32, 8),
    kv("llama.block_count", U32, 1),
    kv("llama.attention.layer_norm_rms_epsilon", F32, 1e-5),
    kv("tokenizer.ggml.model", STR, "llama"),
    kv("tokenizer.ggml.tokens", ARR, ["<unk>", "<s>", "</s>", "a"], STR),
    kv("tokenizer.ggml.scores", ARR, [0.0, 0.0, 0.0, -1.5], F32),
    kv("tokenizer.ggml.token_type", ARR, [2, 3, 3, 1], I32),
]
tensors = [
    ("token_embd.weight", [8, 4], F32_T, b"\0" * 128),
    ("output_norm.weight", [8], F16_T, b"\0" * 16),
    ("blk.0.attn_q.weight", [32, 2], Q8_0_T, b"\0" * 68),
]
open(OUT + "tiny_llama_v3.gguf", "wb").write(gguf(3, llama, tensors))

every_type = [
    kv("t.u8", U8, 255), kv("t.i8", I8, -128), kv("t.u16", U16, 65535), kv("t.i16", I16, -1),
    kv("t.u32", U32, 7), kv("t.i32", I32, -7), kv("t.f32", F32, 0.5), kv("t.bool", BOOL, True),
    kv("t.str", STR, "UTF-8 ✓"), kv("t.u64", U64, 2**64 - 1), kv("t.i64", I64, -(2**63)),
    kv("t.f64", F64, 3.25), kv("t.arr.u8", ARR, [1, 2, 3], U8), kv("t.arr.f64", ARR, [1.0], F64),
    kv("t.arr.bool", ARR, [True, False], BOOL), kv("t.arr.empty", ARR, [], STR),
    kv("general.alignment", U32, 64),
]
open(OUT + "every_metadata_type_align64_v3.gguf", "wb").write(
    gguf(3, every_type, [("q4", [64, 1, 1, 2], Q4_0_T, b"\0" * 72)], alignment=64))

open(OUT + "no_tensors_v2.gguf", "wb").write(gguf(2, [kv("general.architecture", STR, "gpt2")], []))
