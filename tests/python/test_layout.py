"""The source tree's layering: components (a .h with its .cpp) form no include cycle, so src/ can be read,
built and tested from the bottom up (Lakos's levelisation; DESIGN.md's rule)."""

import os
import pathlib
import re
from typing import Dict, List, Set

ROOT = pathlib.Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def component_graph(*roots: pathlib.Path) -> Dict[str, Set[str]]:
    """Component -> the components its .h or .cpp includes. A component is a path without its extension,
    relative to its root (src/, bench/src/: one include path); an include resolves against the including
    file's folder, then the roots."""
    files = [(root, pathlib.Path(d) / f) for root in roots for d, _, fs in os.walk(root)
             for f in fs if f.endswith((".h", ".cpp"))]
    headers = {p.relative_to(root).as_posix(): p.relative_to(root).with_suffix("").as_posix()
               for root, p in files if p.suffix == ".h"}
    graph: Dict[str, Set[str]] = {}
    for src, path in files:
        unit = path.relative_to(src).with_suffix("").as_posix()
        here = path.parent.relative_to(src).as_posix()
        for included in INCLUDE.findall(path.read_text(errors="replace")):
            for candidate in (os.path.normpath(os.path.join(here, included)), included):
                if candidate in headers and headers[candidate] != unit:
                    graph.setdefault(unit, set()).add(headers[candidate])
                    break
    return graph


def mutual_dependencies(graph: Dict[str, Set[str]]) -> List[str]:
    """Pairs of components that reach each other through includes."""
    def reach(start: str) -> Set[str]:
        seen, stack = set(), [start]
        while stack:
            for nxt in graph.get(stack.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return seen

    reached = {unit: reach(unit) for unit in graph}
    return sorted({" <-> ".join(sorted((a, b))) for a in reached for b in reached[a]
                   if a != b and a in reached.get(b, ())})


def test_components_form_no_include_cycle():
    cycles = mutual_dependencies(component_graph(SRC, ROOT / "bench" / "src"))
    assert cycles == [], "components that include each other:\n" + "\n".join(cycles)


def test_the_cycle_check_finds_a_cycle(tmp_path):
    (tmp_path / "a.h").write_text('#pragma once\n')
    (tmp_path / "a.cpp").write_text('#include "a.h"\n#include "b.h"\n')
    (tmp_path / "b.h").write_text('#pragma once\n#include "a.h"\n')
    (tmp_path / "c.h").write_text('#include "a.h"\n')
    assert mutual_dependencies(component_graph(tmp_path)) == ["a <-> b"]


def test_the_python_binding_includes_only_the_public_header():
    binding = ROOT / "python" / "src"
    internal = {f"{path.name}: {name}" for path in sorted(binding.glob("*.[ch]*"))
                for name in INCLUDE.findall(path.read_text()) if name.startswith("fastloop/")
                and name != "fastloop/fastloop.h"}
    assert not internal, "the binding reaches past include/fastloop/fastloop.h:\n" + "\n".join(sorted(internal))
