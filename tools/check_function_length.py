#!/usr/bin/env python3
"""Fails when a C++ function in the given folders is longer than a limit (issue #16).

A function's length is counted from the line its declaration starts on (first token after the
previous declaration, comments excluded) to the line of its closing brace, both included.
Lambdas and local classes count toward the function that holds them. The parse is lexical:
comments, string and character literals (raw strings too) and preprocessor lines are blanked,
then braces are matched; a `{` opened at namespace or class scope whose header holds a
parameter list is a function body. Good enough for this tree's style; not a C++ parser.

Usage: tools/check_function_length.py [--max N] [--list] [DIR ...]
  default DIRs: coordinator worker exporter pipeline cli; default --max 80.
Prints one line per offending function (`path:line: Name is N lines`) and a last line
`N functions over M lines` (or, with --list, every function with its length). Exit 1 when any
function is over the limit.
"""
import argparse
import os
import re
import sys

DEFAULT_DIRS = ["coordinator", "worker", "exporter", "pipeline", "cli"]
SUFFIXES = (".cc", ".h", ".cpp", ".hpp")
SCOPE_WORDS = {"namespace", "class", "struct", "union", "enum"}


def blank(text):
    """The text with comments, literals and preprocessor lines replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            # Preprocessor line, with backslash continuations.
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        if c == "\n":
            out.append(c)
            at_line_start = True
            i += 1
            continue
        if not c.isspace():
            at_line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        m = re.match(r'(?:u8|u|U|L)?R"([^(\s]*)\(', text[i:i + 40])
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find(")" + m.group(1) + '"', i + m.end())
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c in "\"'":
            # A digit separator (1'000) is not a character literal.
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + (c if j - 1 > i else ""))
            i = j
            continue
        out.append(c)
        i += 1
    return "".join(out)


def function_name(header):
    """The name before the parameter list of a function header, or None when not a function."""
    h = re.sub(r"\s+", " ", header).strip()
    if not h or "(" not in h:
        return None
    first = h.split(" ", 1)[0]
    if first in SCOPE_WORDS or first in ("extern", "template"):
        # `template <...> class X {` or a namespace; a templated function still has `(`.
        if first == "template":
            rest = re.sub(r"^template ?<[^{]*?> ?", "", h)
            return function_name(rest) if rest != h else None
        if first != "extern":
            return None
    if re.search(r"(^|[^\w])=\s*$", h) or h.endswith("="):
        return None  # an initializer `x = {`
    # Strip a constructor's member-initializer list: the name is before the first `(`.
    depth = 0
    for k, ch in enumerate(h):
        if ch == "(":
            if depth == 0:
                m = re.search(r"([~\w:<>]+|operator\s*\S+)\s*$", h[:k])
                return m.group(1) if m else None
            depth += 1
    return None


def functions(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = blank(f.read())
    line_of = []
    line = 1
    for ch in text:
        line_of.append(line)
        if ch == "\n":
            line += 1
    stack = []  # ("scope" | "function" | "block", name, start_line)
    header_start = None  # index where the current declaration header starts
    results = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
            continue
        in_function = any(kind == "function" for kind, _, _ in stack)
        if c == "{":
            if in_function:
                stack.append(("block", None, None))
            else:
                header = text[header_start:i] if header_start is not None else ""
                name = function_name(header)
                start = line_of[header_start] if header_start is not None else line_of[i]
                if name:
                    stack.append(("function", name, start))
                else:
                    stack.append(("scope", None, None))
            header_start = None
            i += 1
            continue
        if c == "}":
            if stack:
                kind, name, start = stack.pop()
                if kind == "function":
                    results.append((start, name, line_of[i] - start + 1))
            header_start = None
            i += 1
            continue
        if c == ";" and not in_function:
            header_start = None
            i += 1
            continue
        if not in_function and header_start is None:
            header_start = i
            # Access specifiers are not part of the next declaration.
            m = re.match(r"(public|private|protected)\s*:(?!:)", text[i:])
            if m:
                header_start = None
                i += m.end()
                continue
        i += 1
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=80)
    parser.add_argument("--list", action="store_true", help="print every function")
    parser.add_argument("dirs", nargs="*", default=DEFAULT_DIRS)
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    over = 0
    for d in args.dirs:
        base = d if os.path.isabs(d) else os.path.join(root, d)
        for dirpath, _, files in sorted(os.walk(base)):
            for name in sorted(files):
                if not name.endswith(SUFFIXES):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                for start, fname, length in functions(path):
                    if length > args.max:
                        over += 1
                        print(f"{rel}:{start}: {fname} is {length} lines")
                    elif args.list:
                        print(f"{rel}:{start}: {fname} {length}")
    print(f"{over} functions over {args.max} lines in {', '.join(args.dirs)}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
