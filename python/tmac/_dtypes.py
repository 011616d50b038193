"""Element types: memref element type names (as the manifest's "elem"
spells them) and the DLPack (type code, bits) pairs accepted for each.

DLPack codes (dlpack.h v1.1): kDLInt 0, kDLUInt 1, kDLFloat 2,
kDLBfloat 4, kDLBool 6, kDLFloat8_e4m3fn 10, kDLFloat8_e5m2 12.
"""

INT, UINT, FLOAT, BFLOAT, BOOL, F8E4M3FN, F8E5M2 = 0, 1, 2, 4, 6, 10, 12

# Human-readable name of a DLPack (code, bits) pair, torch's spelling
# where torch has the type.
_NAMES = {
    (FLOAT, 16): "float16", (FLOAT, 32): "float32", (FLOAT, 64): "float64",
    (BFLOAT, 16): "bfloat16", (F8E4M3FN, 8): "float8_e4m3fn",
    (F8E5M2, 8): "float8_e5m2", (BOOL, 8): "bool",
    (INT, 8): "int8", (INT, 16): "int16", (INT, 32): "int32",
    (INT, 64): "int64", (UINT, 8): "uint8", (UINT, 16): "uint16",
    (UINT, 32): "uint32", (UINT, 64): "uint64",
}


def accepted(elem):
    """The DLPack (code, bits) pairs a memref of element type elem
    (e.g. "f16", "i32", "index") binds to; an empty tuple for element
    types no array can hold."""
    fixed = {
        "f16": ((FLOAT, 16),), "bf16": ((BFLOAT, 16),),
        "f32": ((FLOAT, 32),), "tf32": ((FLOAT, 32),),
        "f64": ((FLOAT, 64),), "f8E4M3FN": ((F8E4M3FN, 8),),
        "f8E5M2": ((F8E5M2, 8),), "index": ((INT, 64), (UINT, 64)),
        "i1": ((BOOL, 8), (INT, 8), (UINT, 8)),
    }
    if elem in fixed:
        return fixed[elem]
    if elem.startswith("i") and elem[1:].isdigit() and int(elem[1:]) in (8, 16, 32, 64):
        bits = int(elem[1:])
        return ((INT, bits), (UINT, bits))
    return ()


def name(dtype):
    """The readable name of a (code, bits) pair: "float16", or
    "dlpack(code=7, bits=8)" for types tmac does not know."""
    return _NAMES.get(tuple(dtype), "dlpack(code=%d, bits=%d)" % tuple(dtype))


def known(dtype):
    """Whether some memref element type takes the (code, bits) pair."""
    return tuple(dtype) in _NAMES


def expected_name(elem):
    """The readable name of what a memref element type expects
    ("float16", "int32 or uint32")."""
    return " or ".join(name(d) for d in accepted(elem)) or elem


# torch dtype names (str(torch.float16) without "torch.") to DLPack pairs,
# for the fast path that reads torch tensors without DLPack.
TORCH = {
    "float16": (FLOAT, 16), "half": (FLOAT, 16), "bfloat16": (BFLOAT, 16),
    "float32": (FLOAT, 32), "float": (FLOAT, 32), "float64": (FLOAT, 64),
    "double": (FLOAT, 64), "float8_e4m3fn": (F8E4M3FN, 8),
    "float8_e5m2": (F8E5M2, 8), "bool": (BOOL, 8), "int8": (INT, 8),
    "int16": (INT, 16), "int32": (INT, 32), "int64": (INT, 64),
    "uint8": (UINT, 8), "uint16": (UINT, 16), "uint32": (UINT, 32),
    "uint64": (UINT, 64),
}
