#!/usr/bin/env python3
"""Counts quoted operator names (op-type string literals) outside their declarations.

An operator is declared once: float operators in core/float_op_table.h, int8 operators in core/op_table.h, the ONNX
operators octet only imports or exports in io/onnx/onnx_op_names.h. Elsewhere code names an operator by id or by the
declared constant; this script lists every quoted "Name" (comments included) that is one of those declared names.

  scripts/op_literals.py [--code-only] [--list] [DIR|FILE ...]   (default: the library folders; prints the count per file)

--code-only skips // comments. Exit status 1 when a literal is found, so the script can serve as a check.
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DECLARATIONS = ["core/float_op_table.h", "core/op_table.h", "io/onnx/onnx_op_names.h"]
ENTRY = re.compile(r'\{\s*(?:F|Int8Op)::k\w+,\s*"(\w+)"')
CONSTANT = re.compile(r'inline constexpr std::string_view k\w+ = "(\w+)"')


def DeclaredNames():
  names = set()
  for rel in DECLARATIONS:
    path = ROOT / rel
    if not path.exists():
      continue
    text = path.read_text()
    names.update(ENTRY.findall(text))
    if rel.startswith("io/"):
      names.update(CONSTANT.findall(text))
  return names


def StripComment(line):
  # A // outside a string literal starts a comment (good enough for this tree's code).
  in_string = False
  i = 0
  while i < len(line):
    c = line[i]
    if c == "\\" and in_string:
      i += 2
      continue
    if c == '"':
      in_string = not in_string
    elif not in_string and line.startswith("//", i):
      return line[:i]
    i += 1
  return line


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--code-only", action="store_true")
  parser.add_argument("--list", action="store_true")
  parser.add_argument("dirs", nargs="*", default=["io", "quant", "ops", "numeric_suite", "core", "bench", "tools"])
  args = parser.parse_args()
  names = DeclaredNames()
  literal = re.compile(r'"(' + "|".join(sorted(names, key=len, reverse=True)) + r')"')
  total = 0
  for d in args.dirs:
    top = ROOT / d
    for path in [top] if top.is_file() else sorted(top.rglob("*")):
      if path.suffix not in (".h", ".cc", ".inc") or str(path.relative_to(ROOT)) in DECLARATIONS:
        continue
      count = 0
      for number, line in enumerate(path.read_text().splitlines(), 1):
        text = StripComment(line) if args.code_only else line
        hits = literal.findall(text)
        count += len(hits)
        if hits and args.list:
          print(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
      if count:
        print(f"{count:5d} {path.relative_to(ROOT)}")
      total += count
  print(f"{total:5d} total")
  return 1 if total else 0


if __name__ == "__main__":
  sys.exit(main())
