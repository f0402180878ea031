#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
"""Every code block of docs/library.md must be a region of examples/advect or examples/kokkos.

A region is the text between a line holding `[porting:NAME]` and the next line holding
`[porting:end]` in any file of one of those examples (a NAME is unique within its example);
blocks and regions are compared after removing their common indentation and trailing blank
lines, so a region inside a function may be shown flush left. Exit status 0 when every block is
found, 1 otherwise (one line per block that is not), 2 for bad usage.
"""
import argparse
import os
import re
import sys
import textwrap

EXAMPLES = ("advect", "kokkos")  # folders of examples/ whose regions the guide may quote
START = re.compile(r"\[porting:([A-Za-z0-9_-]+)\]")
FENCE = re.compile(r"^(\s*)```")


def normalise(lines):
    text = textwrap.dedent("\n".join(line.rstrip() for line in lines))
    return text.strip("\n")


def regions(folder):
    """{name: (path, text)} of every marked region; raises ValueError for unbalanced markers."""
    found = {}
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        current = None
        body = []
        for number, line in enumerate(lines, 1):
            match = START.search(line)
            if match is None:
                if current is not None:
                    body.append(line)
                continue
            tag = match.group(1)
            if tag == "end":
                if current is None:
                    raise ValueError(f"{path}:{number}: [porting:end] without a region")
                if current in found:
                    raise ValueError(f"{path}:{number}: region '{current}' defined twice")
                found[current] = (path, normalise(body))
                current, body = None, []
            elif current is not None:
                raise ValueError(f"{path}:{number}: region '{tag}' opened inside '{current}'")
            else:
                current = tag
        if current is not None:
            raise ValueError(f"{path}: region '{current}' has no [porting:end]")
    return found


def blocks(doc):
    """[(line number, text)] of every fenced code block of `doc`."""
    with open(doc, encoding="utf-8") as f:
        lines = f.read().splitlines()
    out = []
    start = None
    body = []
    for number, line in enumerate(lines, 1):
        if FENCE.match(line):
            if start is None:
                start, body = number, []
            else:
                out.append((start, normalise(body)))
                start = None
        elif start is not None:
            body.append(line)
    if start is not None:
        raise ValueError(f"{doc}:{start}: code block never closed")
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."),
                        help="repository root (default: two folders up from this script)")
    args = parser.parse_args()
    doc = os.path.join(args.root, "docs", "library.md")
    try:
        marked = {}
        for example in EXAMPLES:
            found = regions(os.path.join(args.root, "examples", example))
            marked.update({f"{example}/{name}": region for name, region in found.items()})
        code = blocks(doc)
    except (OSError, ValueError) as e:
        print(f"porting_blocks: {e}")
        return 1
    if not code:
        print(f"porting_blocks: {doc} has no code block")
        return 1
    texts = {text: name for name, (_, text) in marked.items()}
    missing = [(line, text) for line, text in code if text not in texts]
    for line, text in missing:
        first = text.splitlines()[0] if text else "(empty)"
        print(f"porting_blocks: docs/library.md:{line}: code block not found verbatim in a "
              f"[porting:NAME] region of examples/{{{','.join(EXAMPLES)}}} "
              f"(first line: {first!r})")
    if missing:
        return 1
    used = sorted({texts[text] for _, text in code})
    print(f"porting_blocks: all {len(code)} code blocks of docs/library.md are regions of "
          f"the examples ({', '.join(used)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
