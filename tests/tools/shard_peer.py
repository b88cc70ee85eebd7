#!/usr/bin/env python3
"""Python's side of the tar-shard tests (tests/test_tar.cpp, tests/test_shards.cpp): reads shards the way
users' Python code does, and writes them with Python's own tarfile, so fastloop's reader and writer are
checked against the readers and writers people use rather than against themselves.

    tests/tools/shard_peer.py webdataset SHARD...          # one JSON line per sample: key, cls, ext, hex bytes
    tests/tools/shard_peer.py tarfile SHARD                # one JSON line per regular member: name, hex bytes
    tests/tools/shard_peer.py write OUT.tar FORMAT SRC_DIR # tarfile (ustar|gnu|pax) of SRC_DIR's files, sorted
"""
import json
import os
import sys
import tarfile

FORMATS = {"ustar": tarfile.USTAR_FORMAT, "gnu": tarfile.GNU_FORMAT, "pax": tarfile.PAX_FORMAT}
IMAGE_EXTS = ("jpg", "jpeg", "png")


def read_webdataset(paths):
    import webdataset as wds

    for sample in wds.WebDataset(paths, shardshuffle=False):
        ext = next(e for e in IMAGE_EXTS if e in sample)
        print(json.dumps({"key": sample["__key__"], "cls": int(sample["cls"]), "ext": ext,
                          "hex": sample[ext].hex()}))


def read_tarfile(path):
    with tarfile.open(path) as tar:
        for member in tar:
            if member.isreg():
                print(json.dumps({"name": member.name, "hex": tar.extractfile(member).read().hex()}))


def write(out, fmt, src):
    names = sorted(os.path.relpath(os.path.join(d, f), src) for d, _, files in os.walk(src) for f in files)
    with tarfile.open(out, "w", format=FORMATS[fmt]) as tar:
        for name in names:
            tar.add(os.path.join(src, name), arcname=name)


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "webdataset":
        read_webdataset(args)
    elif command == "tarfile":
        read_tarfile(args[0])
    elif command == "write":
        write(*args)
    else:
        sys.exit(f"unknown command {command!r}: webdataset, tarfile or write")
