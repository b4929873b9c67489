#!/usr/bin/env python3
"""Structure check (issue 20), run by CTest as `structure`.

Fails on:
  (a) include cycles between core modules (a module is name.h + name.cpp: core/include/moe/**
      and core/src/**, keyed by file name without extension);
  (b) source files in core/, widgets/ and app/ over MAX_FILE_LINES lines;
  (c) functions in those folders over MAX_FUNCTION_LINES lines (a brace-matching heuristic on
      clang-formatted code: a definition is a header ending in ')' [qualifiers] '{').

Known exceptions are listed in tests/structure_allowlist.txt, one per line with a reason:
    file      <path>             # reason
    function  <path>:<name>      # reason
    cycle     <module> <module>  # reason
An entry that no longer violates is itself an error, so the list can only shrink.

Usage: check_structure.py SOURCE_DIR [--list]   (--list prints every violation, allowed or not)
"""

import os
import re
import sys

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 120
CHECKED_DIRS = ("core", "widgets", "app")
SOURCE_EXTENSIONS = (".h", ".hpp", ".cpp", ".cc")

CONTROL = re.compile(r"^\s*(if|else|for|while|switch|catch|do|try|namespace|class|struct|enum|"
                     r"union|extern|return|case|default)\b")
FUNCTION_END = re.compile(r"\)\s*(const\s*)?(noexcept\s*)?(override\s*)?(final\s*)?"
                          r"(->\s*[\w:<>,\s\*&]+)?\s*$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def source_files(root, folders):
    for folder in folders:
        for dirpath, _dirs, files in os.walk(os.path.join(root, folder)):
            for name in sorted(files):
                if name.endswith(SOURCE_EXTENSIONS):
                    yield os.path.relpath(os.path.join(dirpath, name), root)


def strip_code(text):
    """The text with comments, string and character literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum()):
            open_paren = text.find("(", i)
            delim = text[i + 2:open_paren]
            close = text.find(")" + delim + '"', open_paren)
            j = n if close < 0 else close + len(delim) + 2
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(code):
    """(name, first line, line count) of every outermost function body in `code`."""
    found = []
    depth = 0
    header = ""
    header_line = 0
    inside = None  # (name, start line, depth at which the body opened)
    for number, line in enumerate(code.split("\n"), start=1):
        for column, c in enumerate(line):
            if c == "{":
                if inside is None:
                    text = (header + " " + line[:column]).strip()
                    if (FUNCTION_END.search(text) and not CONTROL.match(text.split("\n")[-1])
                            and "=" not in text.split("(")[0] and "[" not in text.split("(")[0]):
                        name = re.findall(r"([~\w:]+|operator\S+)\s*\(", text)
                        inside = (name[0] if name else "?", header_line or number, depth)
                depth += 1
                header, header_line = "", 0
            elif c == "}":
                depth -= 1
                if inside is not None and depth == inside[2]:
                    found.append((inside[0], inside[1], number - inside[1] + 1))
                    inside = None
                header, header_line = "", 0
            elif c == ";":
                header, header_line = "", 0
        rest = line
        for sep in "{};":
            rest = rest.rsplit(sep, 1)[-1]
        if rest.strip():
            if not header:
                header_line = number
            header += " " + rest.strip()
    return found


def module_of(path):
    return os.path.splitext(os.path.basename(path))[0]


def include_cycles(root):
    edges = {}
    for path in source_files(root, ("core",)):
        module = module_of(path)
        with open(os.path.join(root, path), encoding="utf-8") as f:
            for line in f:
                m = INCLUDE.match(line)
                if m:
                    target = module_of(m.group(1))
                    if target != module:
                        edges.setdefault(module, set()).add(target)
    modules = set(edges) | {t for ts in edges.values() for t in ts}
    # Tarjan's strongly connected components; a component of two or more modules is a cycle.
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
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
                cycles.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(modules):
        if v not in index:
            visit(v)
    return cycles


def read_allowlist(path):
    entries = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            text = line.split("#", 1)[0].strip()
            if not text:
                continue
            if "#" not in line or not line.split("#", 1)[1].strip():
                entries.append(("error", f"{path}:{number}: an entry needs a reason after '#'"))
                continue
            kind, _, what = text.partition(" ")
            entries.append((kind, " ".join(what.split())))
    return entries


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    list_all = "--list" in sys.argv
    violations = set()
    details = {}
    for path in source_files(root, CHECKED_DIRS):
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        lines = text.count("\n")
        if lines > MAX_FILE_LINES:
            key = ("file", path)
            violations.add(key)
            details[key] = f"{path}: {lines} lines (limit {MAX_FILE_LINES})"
        for name, start, count in functions(strip_code(text)):
            if count > MAX_FUNCTION_LINES:
                key = ("function", f"{path}:{name}")
                violations.add(key)
                details[key] = f"{path}:{start}: function {name} has {count} lines " \
                               f"(limit {MAX_FUNCTION_LINES})"
    for cycle in include_cycles(root):
        key = ("cycle", " ".join(cycle))
        violations.add(key)
        details[key] = "include cycle between core modules: " + " <-> ".join(cycle)

    allow_path = os.path.join(root, "tests", "structure_allowlist.txt")
    allowed = read_allowlist(allow_path) if os.path.exists(allow_path) else []
    problems = [what for kind, what in allowed if kind == "error"]
    allowed_keys = {(kind, what) for kind, what in allowed if kind != "error"}
    for key in sorted(violations):
        if list_all or key not in allowed_keys:
            print(("allowed: " if key in allowed_keys else "") + details[key])
        if key not in allowed_keys:
            problems.append(details[key])
    for key in sorted(allowed_keys - violations):
        problems.append(f"stale allowlist entry (no longer violates; remove it): {key[0]} {key[1]}")
        print(problems[-1])
    if problems:
        print(f"{len(problems)} structure problem(s); see tests/check_structure.py")
        return 1
    print(f"structure ok ({len(allowed_keys)} allowlisted)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
