"""The generators' last step: write a page, or with ``--check`` say (as a diff) whether the committed one is stale."""
import difflib
import pathlib
import sys


def write_or_check(out: pathlib.Path, page: str, check: bool) -> int:
    """Writes ``page`` to ``out`` (0); with ``check``, compares instead: 0 when equal, else prints the diff and 1."""
    if not check:
        out.write_text(page)
        return 0
    old = out.read_text() if out.exists() else ""
    if old == page:
        return 0
    sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), page.splitlines(True), str(out), "fresh"))
    return 1
