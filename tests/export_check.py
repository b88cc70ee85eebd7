"""tests/test_export.cpp's Python side: loads a fastloop export where users will (torch.jit.load; ONNX Runtime)
and compares its logits with the ones fastloop's evaluation gave, which the C++ test wrote with the inputs.

Usage: python tests/export_check.py --expected E.safetensors [--torchscript M.pt] [--onnx M.onnx]
E holds "inputs" [N, C, H, W] float32 and "logits" [N, classes]. Prints one JSON object: per file the max
absolute difference, the number of top-1 agreements, its ModelInfo (extra file / metadata_props).
"""
import argparse
import json

import numpy as np
import torch
from safetensors.torch import load_file


def top1_agree(a, b):
    return int((np.argmax(a, 1) == np.argmax(b, 1)).sum())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--expected", required=True)
    p.add_argument("--torchscript")
    p.add_argument("--onnx")
    a = p.parse_args()
    expected = load_file(a.expected)
    x, want = expected["inputs"], expected["logits"].numpy()
    result = {"n": int(x.shape[0])}
    torch.set_num_threads(1)
    if a.torchscript:
        extra = {"fastloop/model_info.json": ""}
        m = torch.jit.load(a.torchscript, map_location="cpu", _extra_files=extra).eval()
        with torch.no_grad():
            got = m(x).numpy()
        result["torchscript"] = {"max_abs": float(np.abs(got - want).max()), "top1_agree": top1_agree(got, want),
                                 "info": json.loads(extra["fastloop/model_info.json"]),
                                 "parameters": len(list(m.parameters()))}
    if a.onnx:
        import onnx
        import onnxruntime as ort
        meta = {p.key: p.value for p in onnx.load(a.onnx).metadata_props}
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        s = ort.InferenceSession(a.onnx, options, providers=["CPUExecutionProvider"])
        got = s.run(["logits"], {"input": x.numpy()})[0]
        result["onnx"] = {"max_abs": float(np.abs(got - want).max()), "top1_agree": top1_agree(got, want),
                          "metadata": meta, "input": s.get_inputs()[0].name, "shape": list(got.shape)}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
