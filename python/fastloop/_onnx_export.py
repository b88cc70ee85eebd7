"""`fastloop export --format onnx`'s converter: a TorchScript export of fastloop's (torch.jit.load) through
torch.onnx's TorchScript-based exporter (dynamo=False: the torch.export route cannot take a ScriptModule),
then its ModelInfo (extra file fastloop/model_info.json) written into the ONNX file's metadata_props.

Usage: python -m fastloop._onnx_export --torchscript MODEL.pt --out MODEL.onnx [--opset 17]
Prints one JSON line on success; on failure one line "onnx_export: <reason>" on stderr, exit 2.
The fastloop library embeds this file (cmake/onnx_export_script.h.in) and runs it with `python -c`.
"""
import argparse
import json
import os
import sys
import warnings

EXTRA_FILE = "fastloop/model_info.json"  # kModelInfoExtraFile in src/fastloop/models/model_info.h
METADATA_KEY = "fastloop.model_info"    # kModelInfoMetadataKey


def fail(reason):
    print(f"onnx_export: {reason}", file=sys.stderr)
    sys.exit(2)


def readable_metadata(info):
    """The ModelInfo as a few keys a deployment can read without parsing JSON."""
    return {
        METADATA_KEY: json.dumps(info),
        "classes": json.dumps(info["classes"]),
        "image_size": f"{info['height']}x{info['width']}",
        "channels": str(info["channels"]),
        "resize": str(info["resize"]),
        "mean": ",".join(repr(float(m)) for m in info["mean"]),
        "std": ",".join(repr(float(s)) for s in info["std"]),
        "layout": "NCHW",  # the graph's input; channels_last was a speed setting, not a different model
        "input_scale": "x = (pixel / 255 - mean) / std, RGB channel order",
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torchscript", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--opset", type=int, default=17)
    args = parser.parse_args()
    warnings.simplefilter("ignore", FutureWarning)  # torch.jit's "deprecated, switch to torch.export" notices
    try:
        import onnx
        import torch
    except ImportError as e:
        fail(f"this python ({sys.executable}) lacks {e.name}: pip install torch onnx (or set FASTLOOP_PYTHON)")

    extra = {EXTRA_FILE: ""}
    try:
        module = torch.jit.load(args.torchscript, map_location="cpu", _extra_files=extra)
    except Exception as e:  # noqa: BLE001 - any load failure is the input's
        fail(f"{args.torchscript} is not a TorchScript file ({str(e).splitlines()[0][:200]})")
    if not extra[EXTRA_FILE]:
        fail(f"{args.torchscript} has no {EXTRA_FILE}: export it with fastloop export --format torchscript")
    info = json.loads(extra[EXTRA_FILE])
    module.eval()
    example = torch.zeros(1, info["channels"], info["height"], info["width"])
    tmp = f"{args.out}.tmp.{os.getpid()}"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the legacy exporter's deprecation notices, once per run
            torch.onnx.export(module, (example,), tmp, dynamo=False, opset_version=args.opset,
                              input_names=["input"], output_names=["logits"], do_constant_folding=True,
                              dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
        model = onnx.load(tmp)
        for key, value in readable_metadata(info).items():
            entry = model.metadata_props.add()
            entry.key, entry.value = key, value
        model.producer_name = "fastloop"
        onnx.checker.check_model(model)
        onnx.save(model, tmp)
    except Exception as e:  # noqa: BLE001 - reported as the model's, with the exporter's words
        if os.path.exists(tmp):
            os.unlink(tmp)
        first = str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__
        fail(f"torch {torch.__version__} could not convert {args.torchscript} to ONNX ({first})")
    try:
        os.replace(tmp, args.out)
    except OSError as e:
        os.unlink(tmp)
        fail(f"cannot write {args.out}: {e.strerror}")
    print(json.dumps({"out": args.out, "opset": args.opset, "torch": torch.__version__, "onnx": onnx.__version__,
                      "nodes": len(model.graph.node)}))


if __name__ == "__main__":
    main()
