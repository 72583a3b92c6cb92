#!/usr/bin/env python3
"""Files of one folder that call each other in a circle: for each folder named (default: models data export
pipeline), the graph of its .c files in which a file points at another when it names a function or a global
that the other defines (not static), and the circles of that graph (its strongly connected components of two
files or more), each with the names that tie it. A circle means neither file can be read, tested or replaced
without the other: the shared part belongs in a third file both call, or the call belongs on one side.

    python3 tools/check_layers.py [FOLDER ...]      (from the repository root, or any folder: paths are the tree's)

Prints one line per folder and, for each circle, its files and every edge inside it; exits 1 when a circle is
found, 0 otherwise. Standard library only; it reads C as text (comments, strings and preprocessor lines set
aside), which is enough for this tree's style of one definition per top-level function or table."""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDERS = ["models", "data", "export", "pipeline"]
IDENT = re.compile(r"\b[A-Za-z_]\w*\b")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do", "else", "case", "goto"}


def strip(text):
    """The code of a C file without comments, string and character literals, and preprocessor lines."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    text = re.sub(r"'(?:\\.|[^'\\\n])*'", "''", text)
    return re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)


def top_level(code):
    """The statements at brace depth 0 (a definition's head, a declaration, a table's head), each with whether a
    brace follows it (a body or an initializer list)."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(code):
        if ch == "{":
            if depth == 0:
                out.append((code[start:i], True))
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                start = i + 1
        elif ch == ";" and depth == 0:
            out.append((code[start:i], False))
            start = i + 1
    return out


def definitions(code):
    """The names a file defines for other files: its non-static functions and globals."""
    names = set()
    for head, braced in top_level(code):
        head = head.strip()
        if not head or re.match(r"(static|extern|typedef)\b", head) or re.match(r"(struct|union|enum)\b[^=(]*$", head):
            continue
        if braced and "=" not in head:
            m = re.search(r"\b([A-Za-z_]\w*)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)\s*$", head)
            if m and m.group(1) not in KEYWORDS:
                names.add(m.group(1))  # a function
            continue
        m = re.search(r"\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*=", head) if braced or "=" in head else None
        if not m and not braced and "(" not in head:
            m = re.search(r"\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*$", head)
        if m:
            names.add(m.group(1))  # a global
    return names


def circles(edges):
    """Strongly connected components of two nodes or more (Tarjan's algorithm, iterative)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def check(folder):
    """Prints the folder's circles; returns how many."""
    path = os.path.join(ROOT, folder)
    files = sorted(f for f in os.listdir(path) if f.endswith(".c"))
    code = {f: strip(open(os.path.join(path, f), encoding="utf-8").read()) for f in files}
    owner = {}
    for f in files:
        for name in definitions(code[f]):
            owner.setdefault(name, f)
    uses = {f: {} for f in files}
    for f in files:
        for name in set(IDENT.findall(code[f])):
            o = owner.get(name)
            if o and o != f:
                uses[f].setdefault(o, set()).add(name)
    found = circles({f: set(uses[f]) for f in files})
    print("%s: %d files, %d circle%s" % (folder, len(files), len(found), "" if len(found) == 1 else "s"))
    for comp in found:
        print("  circle: " + " ".join(comp))
        for a in comp:
            for b in comp:
                if b in uses[a]:
                    print("    %s -> %s: %s" % (a, b, ", ".join(sorted(uses[a][b]))))
    return len(found)


def main(argv):
    folders = argv or FOLDERS
    bad = 0
    for folder in folders:
        if not os.path.isdir(os.path.join(ROOT, folder)):
            print("check_layers: no folder %s in %s" % (folder, ROOT), file=sys.stderr)
            return 2
        bad += check(folder)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
