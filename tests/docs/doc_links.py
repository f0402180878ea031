#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
"""Every link of the docs and every pointer to a docs page in the tree must lead somewhere.

Checks, from the repository root:
  1. each relative link `[text](target)` of README.md and docs/*.md, outside code blocks: the
     target file exists, and a `#section` names a heading of it (GitHub's anchors);
  2. each mention of `docs/NAME.md` in the repository's text files (code comments, scripts,
     tests, CMake): the page exists; where a quoted section follows (`docs/halo.md, "Deep
     halos"` or `docs/halo.md ("Deep halos")`), a heading of that page holds that text.
Exit status 0 when everything resolves, 1 otherwise (one line per broken link), 2 for bad usage.
"""
import argparse
import os
import re
import subprocess
import sys

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*```")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
# docs/NAME.md, optionally followed by a quoted section: `, "Section"`, `("Section")`, or the
# same with C++'s escaped quotes.
MENTION = re.compile(r"(?<![\w.-])docs/([A-Za-z0-9_.-]+\.md)"
                     r"(?:(?:\)?,\s*|\s+\()\\?\"([^\"\\]+)\\?\")?")
SKIP_DIRS = {".git", ".deps", "gpu-out", "__pycache__", "node_modules"}
TEXT_SUFFIXES = {".md", ".txt", ".cmake", ".in", ".cpp", ".hpp", ".cu", ".cuh", ".h", ".py",
                 ".sh", ".yml", ".yaml", ".toml", ""}


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|\*|_(?=\W)|(?<=\W)_", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def markdown(path):
    """(headings, [(line number, target)]) of a markdown file, code blocks left out."""
    headings, links, in_code = [], [], False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                in_code = not in_code
                continue
            if in_code:
                continue
            match = HEADING.match(line)
            if match:
                headings.append(match.group(2))
            line = re.sub(r"`[^`]*`", "", line)  # a link inside inline code is not a link
            for match in LINK.finditer(line):
                links.append((number, match.group(1) or match.group(2)))
    return headings, links


def anchors(headings):
    """Every anchor GitHub gives the headings (a repeated one gets -1, -2, ...)."""
    seen, out = {}, set()
    for heading in headings:
        base = slug(heading)
        count = seen.get(base, 0)
        out.add(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return out


def names_heading(text, headings):
    """Whether a quoted section name is a heading or part of one ("The client limit" names "The
    client limit and the refusal"; case is ignored)."""
    text = text.strip().lower()
    return any(text in heading.lower() for heading in headings)


def source_files(root):
    """The repository's files: git's list of tracked files, else a walk."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             check=True).stdout
        return [os.path.join(root, p) for p in out.splitlines()]
    except (OSError, subprocess.CalledProcessError):
        found = []
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith("build")]
            found += [os.path.join(folder, name) for name in files]
        return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."),
                        help="repository root (default: two folders up from this script)")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    docs = os.path.join(root, "docs")
    if not os.path.isdir(docs):
        print(f"doc_links: {docs} is not a folder")
        return 2
    pages = [os.path.join(root, "README.md")] + sorted(
        os.path.join(docs, name) for name in os.listdir(docs) if name.endswith(".md"))
    parsed = {path: markdown(path) for path in pages if os.path.isfile(path)}
    broken = []

    def headings_of(path):
        if path not in parsed:
            parsed[path] = markdown(path)
        return parsed[path][0]

    checked = 0
    for page in pages:
        if page not in parsed:
            continue
        for number, target in parsed[page][1]:
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            checked += 1
            where = f"{os.path.relpath(page, root)}:{number}"
            file_part, _, anchor = target.partition("#")
            path = os.path.normpath(os.path.join(os.path.dirname(page), file_part)) \
                if file_part else page
            if not os.path.exists(path):
                broken.append(f"{where}: link to {target}: no such file")
            elif anchor and path.endswith(".md") and anchor not in anchors(headings_of(path)):
                broken.append(f"{where}: link to {target}: {os.path.relpath(path, root)} has "
                              f"no heading with that anchor")

    mentions = 0
    for path in source_files(root):
        if os.path.splitext(path)[1] not in TEXT_SUFFIXES or not os.path.isfile(path):
            continue
        if os.path.relpath(path, root).startswith(("build", ".")) or \
                os.path.samefile(path, __file__):
            continue
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except (UnicodeDecodeError, OSError):
            continue
        for number, line in enumerate(lines, 1):
            for match in MENTION.finditer(line):
                mentions += 1
                page = os.path.join(docs, match.group(1))
                where = f"{os.path.relpath(path, root)}:{number}"
                if not os.path.isfile(page):
                    broken.append(f"{where}: docs/{match.group(1)}: no such page")
                elif match.group(2) and not names_heading(match.group(2), headings_of(page)):
                    broken.append(f"{where}: docs/{match.group(1)} has no heading "
                                  f"\"{match.group(2)}\"")
    for line in broken:
        print(f"doc_links: {line}")
    if broken:
        return 1
    print(f"doc_links: {checked} links of {len(pages)} pages and {mentions} mentions of docs "
          f"pages resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
