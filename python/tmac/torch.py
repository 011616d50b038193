"""Registering a tmac Kernel as a torch.library custom operator, so it
works under torch.compile, in CUDA graphs and with torch's fake tensors.

    import tmac, tmac.torch
    gemm = tmac.load("gemm.tmab")
    mm = tmac.torch.register(gemm, "mylib::gemm")      # functional: mm(a, b) -> c
    c = mm(a, b)

The functional form takes the entry's inputs (the arguments without
{tmac.output}) and returns newly allocated outputs; its fake
implementation derives their shapes and dtypes from the memref types
(out_shapes= supplies the dynamic ones). With inplace=True the operator
takes every argument, writes the outputs it is given and returns nothing.

The custom operator adds torch's dispatcher to every call (tens of
microseconds); call the Kernel directly where torch.compile and
functionalization are not needed.
"""

import torch

from ._errors import ArgumentError

# memref element types and the torch dtypes their tensors have.
_DTYPES = {
    "f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
    "tf32": torch.float32, "f64": torch.float64, "i1": torch.bool,
    "i8": torch.int8, "i16": torch.int16, "i32": torch.int32,
    "i64": torch.int64, "index": torch.int64,
    "f8E4M3FN": getattr(torch, "float8_e4m3fn", None),
    "f8E5M2": getattr(torch, "float8_e5m2", None),
}


def _torch_dtype(arg):
    dt = _DTYPES.get(arg.elem)
    if dt is None:
        raise ArgumentError("argument %s: torch has no dtype for %s" % (arg.name, arg.type))
    return dt


def _scalar_schema(arg):
    if arg.elem in ("f16", "bf16", "f32", "tf32", "f64"):
        return "float"
    if arg.elem == "i1":
        return "bool"
    return "int"


def register(kernel, name, out_shapes=None, inplace=False):
    """Register kernel (a tmac.Kernel) as the custom operator name
    ("namespace::op") and return it (torch.ops.namespace.op).

    out_shapes(*inputs) returns the shape of each output (a list of
    shapes, or one shape when there is one output); it is required when
    an output memref has dynamic sizes and ignored with inplace=True."""
    entry = kernel._entry
    args = entry.args
    outputs = [i for i, a in enumerate(args) if a.output]
    if not outputs and not inplace:
        raise ArgumentError("%s has no {tmac.output} argument: register it with inplace=True" % kernel.name)
    if not inplace and out_shapes is None:
        for i in outputs:
            if any(d < 0 for d in args[i].shape):
                raise ArgumentError("output %s has dynamic sizes (%s): pass out_shapes=" % (args[i].name, args[i].type))

    def schema_of(i, a, alias):
        if a.kind != "memref":
            return "%s %s" % (_scalar_schema(a), a.name)
        return "Tensor%s %s" % (alias, a.name)

    if inplace:
        params = [schema_of(i, a, "(a%d!)" % i if a.output else "") for i, a in enumerate(args)]
        schema = "(%s) -> ()" % ", ".join(params)
        mutated = tuple(args[i].name for i in outputs)

        def impl(*xs):
            kernel(*xs)

        op = torch.library.custom_op(name, impl, mutates_args=mutated, device_types="cuda", schema=schema)
        op.register_fake(lambda *xs: None)
        return op

    inputs = [i for i in range(len(args)) if i not in outputs]
    params = [schema_of(i, args[i], "") for i in inputs]
    ret = "Tensor" if len(outputs) == 1 else "(%s)" % ", ".join(["Tensor"] * len(outputs))
    schema = "(%s) -> %s" % (", ".join(params), ret)

    def shapes(xs):
        if out_shapes is None:
            return [tuple(args[i].shape) for i in outputs]
        s = out_shapes(*xs)
        if len(outputs) == 1 and s and isinstance(s[0], int):
            s = [s]
        if len(s) != len(outputs):
            raise ArgumentError("out_shapes returned %d shapes for %d outputs" % (len(s), len(outputs)))
        return [tuple(x) for x in s]

    def device_of(xs):
        for x in xs:
            if isinstance(x, torch.Tensor):
                return x.device
        return torch.device("cuda", torch.cuda.current_device())

    def empty_outputs(xs):
        dev = device_of(xs)
        outs = []
        for i, shape in zip(outputs, shapes(xs)):
            a = args[i]
            dt = _torch_dtype(a)
            if all(s >= 0 for s in a.strides) and len(a.strides) == len(shape):
                outs.append(torch.empty_strided(shape, tuple(a.strides), dtype=dt, device=dev))
            else:
                outs.append(torch.empty(shape, dtype=dt, device=dev))
        return outs

    def impl(*xs):
        outs = empty_outputs(xs)
        full = [None] * len(args)
        for i, x in zip(inputs, xs):
            full[i] = x
        for i, o in zip(outputs, outs):
            full[i] = o
        kernel(*full)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def fake(*xs):
        outs = empty_outputs(xs)
        return outs[0] if len(outs) == 1 else tuple(outs)

    op = torch.library.custom_op(name, impl, mutates_args=(), device_types="cuda", schema=schema)
    op.register_fake(fake)
    return op
