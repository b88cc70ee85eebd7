"""Writes the parity goldens the test binary compares with into the build folder (tests/CMakeLists.txt runs
this at build time with FASTLOOP_PYTHON, the project venv): make_golden.py's models.json and parity_*.json,
and make_torchscript_golden.py's scripted models and their steps.

Why at build time: a CPU's kernels round differently from another's. The same torch 2.14.1 wheel gave
gradients 1e-5 to 1e-4 apart (relative) on an AMD EPYC and on an Intel Xeon, so files made on one failed
the 1e-5 parity tests on the other, PyTorch against PyTorch. Parity is a claim about fastloop against
PyTorch on the machine at hand, so the reference is made there. A Python without torch or torchvision
(a bare GPU machine) gets the committed files of tests/golden instead, and this says so.

    .venv/bin/python tests/tools/make_test_goldens.py OUT_DIR
"""
import pathlib
import shutil
import subprocess
import sys

TOOLS = pathlib.Path(__file__).resolve().parent
COMMITTED = TOOLS.parent / "golden"  # tests/golden


def main() -> None:
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError as missing:
        print(f"make_test_goldens: {missing}; the tests use the committed goldens of {COMMITTED}")
        for name in ["models.json", *[p.name for p in COMMITTED.glob("parity_*.json")]]:
            shutil.copy(COMMITTED / name, out / name)
        shutil.copytree(COMMITTED / "torchscript", out / "torchscript", dirs_exist_ok=True)
        return
    quiet = {"stdout": subprocess.DEVNULL}
    subprocess.run([sys.executable, str(TOOLS / "make_golden.py"), "--out", str(out)], check=True, **quiet)
    subprocess.run([sys.executable, "-W", "ignore", str(TOOLS / "make_torchscript_golden.py"), "--out",
                    str(out / "torchscript")], check=True, **quiet)


if __name__ == "__main__":
    main()
