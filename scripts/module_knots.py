#!/usr/bin/env python3
"""Import knots in a module folder: the strongly connected components of its `super::` graph.

    python3 scripts/module_knots.py core/src/server            # print the knots
    python3 scripts/module_knots.py core/src/server --max 1    # fail if one is larger

A module's `use super::x` (outside its tests) is an arrow to sibling `x`. A knot is a set of
modules that all reach one another; `--max 1` asks for none, so that the folder's files form
layers, each using only those below it. CI checks `core/src/server` this way.
"""
import argparse
import os
import re
import sys


def modules(folder):
    names = {f[:-3] for f in os.listdir(folder) if f.endswith(".rs") and f != "mod.rs" and not f.startswith("tests")}
    names |= {d for d in os.listdir(folder) if os.path.exists(os.path.join(folder, d, "mod.rs"))}
    return names


def arrows(folder, names):
    graph = {}
    for name in names:
        path = os.path.join(folder, name + ".rs")
        if not os.path.exists(path):
            path = os.path.join(folder, name, "mod.rs")
        text = open(path, encoding="utf-8").read().split("#[cfg(test)]")[0]
        code = "\n".join(line for line in text.split("\n") if not line.lstrip().startswith("//"))
        graph[name] = {t for t in re.findall(r"super::([a-z_][a-z0-9_]*)", code) if t in names and t != name}
    return graph


def knots(graph):
    """Tarjan's strongly connected components, larger than one module."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--max", type=int, help="fail if a knot has more modules than this")
    args = parser.parse_args()
    names = modules(args.folder)
    found = knots(arrows(args.folder, names))
    for knot in found:
        print(f"knot of {len(knot)}: {' '.join(knot)}")
    largest = max((len(k) for k in found), default=1)
    print(f"{args.folder}: {len(names)} modules, largest knot {largest}")
    if args.max is not None and largest > args.max:
        sys.exit(f"{args.folder}: a knot of {largest} modules (at most {args.max} allowed)")


if __name__ == "__main__":
    main()
