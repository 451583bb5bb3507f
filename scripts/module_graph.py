"""The project's module graph as it stands: files and lines per folder, import floors, imports that
run against the floors, circles, and file names used more than once.

Reads every ``.py`` file of ``strongtree_core/``, ``strongtree_studio/`` and ``app.py`` with
``ast`` (nothing is imported or run) and draws an arrow A -> B for every import of a project module
B in A that runs (at the top, under a condition, or inside a function); imports made for type
checkers alone (under ``if TYPE_CHECKING:``) are counted but draw no arrow.  Two granularities:

``files``
    one node per file;
``rooms``
    one node per top-level module of a package, one per sub-folder (``strongtree_core/tree/``,
    ``strongtree_studio/page/``, ...), as the house's walls are drawn.

A floor is 1 for a node that imports nothing of the project, else one more than the highest floor
it imports; the nodes of a circle (nodes that import each other in a loop) share one floor, and
an arrow between two of them runs "back up".  ``python scripts/module_graph.py`` prints all of it;
``--rooms`` and ``--files`` print one granularity.
"""

from __future__ import annotations

import argparse
import ast
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("strongtree_core", "strongtree_studio")


def modules() -> dict[str, Path]:
    """Dotted module name -> file, for every project file (``app.py`` as ``app``)."""
    found = {"app": ROOT / "app.py"}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: set[str]) -> list[tuple[str, str]]:
    """(imported project module, kind) for every import in ``path``; kinds: ``top`` (runs when the
    module is imported), ``conditional`` (at the top, under an ``if`` or ``try``), ``lazy`` (inside a
    function or class, runs when that is called) and ``types`` (under ``if TYPE_CHECKING:``, never
    runs)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    kind_of: dict[int, str] = {}
    for top in tree.body:
        if isinstance(top, (ast.Import, ast.ImportFrom)):
            kind_of[id(top)] = "top"
            continue
        checking = isinstance(top, ast.If) and "TYPE_CHECKING" in ast.unparse(top.test)
        inside = "types" if checking else "conditional" if isinstance(top, (ast.If, ast.Try)) else "lazy"
        for node in ast.walk(top):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and inside == "conditional":
                for deep in ast.walk(node):
                    kind_of.setdefault(id(deep), "lazy")
            kind_of.setdefault(id(node), inside)
    found = []
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.append((target, kind_of.get(id(node), "lazy")))
                break
    return sorted(set(found))


def room(name: str) -> str:
    """The room of a module: a package's top-level module, or a package's sub-folder."""
    parts = name.split(".")
    if parts[0] not in PACKAGES or len(parts) <= 2 and not (ROOT / Path(*parts)).is_dir():
        return name
    return ".".join(parts[:2]) + "/"


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def floors(graph: dict[str, set[str]]) -> dict[str, int]:
    """Each node's floor (see the module's description)."""
    together = {member: tuple(c) for c in circles(graph) for member in c}
    floor: dict[str, int] = {}

    def of(node: str, seen: frozenset = frozenset()) -> int:
        if node in floor:
            return floor[node]
        group = together.get(node, (node,))
        below = {t for member in group for t in graph.get(member, ()) if t not in group}
        value = 1 + max((of(t, seen | set(group)) for t in below if t not in seen), default=0)
        for member in group:
            floor[member] = value
        return value

    for node in graph:
        of(node)
    return floor


def report(granularity: str, found: dict[str, Path], arrows: dict[str, list[tuple[str, bool]]]) -> None:
    key = (lambda n: n) if granularity == "files" else room
    graph: dict[str, set[str]] = defaultdict(set)
    lines: Counter = Counter()
    for name, path in found.items():
        graph[key(name)]
        lines[key(name)] += len(path.read_text(encoding="utf-8").splitlines())
        for target, kind in arrows[name]:
            if key(target) != key(name) and kind != "types":
                graph[key(name)].add(key(target))
    level = floors(graph)
    loops = circles(graph)
    looped = {m: i for i, c in enumerate(loops) for m in c}
    back = [(a, b) for a in graph for b in graph[a] if a in looped and looped.get(b) == looped[a]]
    print(f"## {granularity}: {len(graph)} nodes, {sum(len(v) for v in graph.values())} arrows, "
          f"{max(level.values())} floors, {len(loops)} circles, {len(back)} arrows inside circles")
    for i, loop in enumerate(loops, start=1):
        print(f"circle {i}: {', '.join(loop)}")
        for a, b in sorted(back):
            if a in loop:
                print(f"    {a} -> {b}")
    if granularity == "rooms":
        for node in sorted(graph, key=lambda n: (-level[n], n)):
            print(f"floor {level[node]:>2}  {node:<42} {lines[node]:>6} lines  imports {len(graph[node])}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", action="store_true")
    parser.add_argument("--rooms", action="store_true")
    args = parser.parse_args(argv)
    found = modules()
    arrows = {name: imports(name, path, set(found)) for name, path in found.items()}
    kinds = Counter(kind for v in arrows.values() for _, kind in v)
    print(f"{len(found)} files, {sum(kinds.values())} imports of project modules: " +
          ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) + " (the graph below leaves out the types)")
    for package in PACKAGES:
        for folder in sorted({p.parent for n, p in found.items() if n.startswith(package)}):
            loose = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
            size = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in loose)
            print(f"  {folder.relative_to(ROOT)}/: {len(loose)} modules loose, {size} lines")
    names = Counter(p.name for p in found.values() if p.name not in ("__init__.py", "__main__.py"))
    repeated = {n: sorted(str(p.relative_to(ROOT)) for p in found.values() if p.name == n)
                for n, c in names.items() if c > 1}
    print(f"file names used more than once: {len(repeated)}")
    for name, paths in sorted(repeated.items()):
        print(f"  {name}: {', '.join(paths)}")
    for granularity in ("rooms", "files"):
        if not (args.files or args.rooms) or getattr(args, granularity):
            report(granularity, found, arrows)


if __name__ == "__main__":
    main()
