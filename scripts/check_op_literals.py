#!/usr/bin/env python3
"""Finds operator types spelled as string literals outside the op tables (issue 16: one operator, one place).

Every operator is declared once, in core/float_op_table.h (FloatOp) or core/op_table.h (Int8Op); other code names it
by id (IsFloatOp, IsInt8Op, FloatOpName, Int8OpName). ONNX op types the importer recognises without a float operator
of their own (Upsample, ...) are declared once too, in io/onnx/onnx_op_names.h. This scan reads the names from those
three headers, then lists each C/C++ string literal, outside comments, whose whole text is one of those names, as
file:line, and exits 1 when there is any. Tests, third_party and the three headers are not scanned.

  check_op_literals.py [SOURCE_ROOT]   (default: the tree this script sits in)
  check_op_literals.py --self-test     (the scanner finds planted literals and skips comments, on snippets)
"""

import os
import re
import sys

TABLES = ("core/float_op_table.h", "core/op_table.h", "io/onnx/onnx_op_names.h")
# Library, tool and benchmark sources; tests/ may spell op types (they are the inputs under test).
SCANNED_DIRS = ("bench", "core", "examples", "io", "numeric_suite", "observers", "ops", "python", "quant", "tools")
SOURCE_SUFFIXES = (".h", ".hh", ".hpp", ".cc", ".cpp", ".c", ".inc")
# Entries of the tables: {F::kConv, "Conv"} and {Int8Op::kQConv, "QConv", ...}.
ENTRY = re.compile(r'\{\s*(?:F|FloatOp|Int8Op)::k\w+\s*,\s*"([^"]+)"')
# ...and the ONNX-only names: inline constexpr std::string_view kUpsample = "Upsample";
ONNX_NAME = re.compile(r'constexpr\s+std::string_view\s+k\w+\s*=\s*"([^"]+)"')


def table_names(root):
    names = set()
    for table in TABLES:
        with open(os.path.join(root, table), encoding="utf-8") as f:
            text = f.read()
            found = (ONNX_NAME if table.endswith("onnx_op_names.h") else ENTRY).findall(text)
        if not found:
            sys.exit(f"check_op_literals: read no operator names from {table} (has its entry syntax changed?)")
        names.update(found)
    return names


def string_literals(text):
    """Yields (line, contents) of each string literal outside comments and character literals."""
    i, line, n = 0, 1, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += text.count("\n", i, end)
            i = end
        elif c == "'" and not (i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")):
            # A character literal ('"' must not open a string); a quote after a digit is a digit separator.
            j = i + 1
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif c == '"':
            m = re.compile(r'R"([^(\s]*)\(').match(text, i - 1) if i > 0 and text[i - 1] == "R" else None
            if m:  # raw string: R"delim( ... )delim"
                close = ")" + m.group(1) + '"'
                end = text.find(close, m.end())
                end = n if end < 0 else end
                yield line, text[m.end():end]
                line += text.count("\n", i, end)
                i = end + len(close)
                continue
            j, parts = i + 1, []
            while j < n and text[j] != '"' and text[j] != "\n":
                if text[j] == "\\":
                    parts.append(text[j:j + 2])
                    j += 2
                else:
                    parts.append(text[j])
                    j += 1
            yield line, "".join(parts)
            i = j + 1
        else:
            i += 1


def scan(root):
    names = table_names(root)
    tables = {os.path.normpath(t) for t in TABLES}
    findings = []
    for top in SCANNED_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(d for d in dirnames if d not in ("__pycache__", "third_party"))
            for name in sorted(filenames):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.normpath(os.path.relpath(path, root))
                if rel in tables:
                    continue
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for line, literal in string_literals(text):
                    if literal in names:
                        findings.append((rel, line, literal))
    return names, findings


def self_test(root):
    """Checks the scanner on snippets, so that a broken lexer cannot pass the tree vacuously."""
    names = table_names(root)
    failures = []
    if not {"Conv", "Relu", "QConv", "Quantize"} <= names or len(names) < 100:
        failures.append(f"read {len(names)} names from the tables, without Conv, Relu, QConv or Quantize")
    # (snippet, the literals the scan must report with their lines)
    cases = [
        ('if (n.op_type == "Conv") return;', [(1, "Conv")]),
        ('// op_type == "Conv"\nx = "Relu";', [(2, "Relu")]),
        ('/* "Conv"\n "Gemm" */ y = "QConv";', [(2, "QConv")]),
        ("char q = '\"'; s = \"Add\";", [(1, "Add")]),
        ('a.Set("activation", "axis");', []),
        ('s = "Conv node";', []),
        ('s = R"x(Conv)x"; t = "Mul";', [(1, "Conv"), (1, "Mul")]),
        ('s = "a \\" Conv"; t = "Sub";', [(1, "Sub")]),
        ("int k = 1'000; s = \"Tanh\";", [(1, "Tanh")]),
    ]
    for snippet, want in cases:
        got = [(line, lit) for line, lit in string_literals(snippet) if lit in names]
        if got != want:
            failures.append(f"on {snippet!r}: found {got}, expected {want}")
    for failure in failures:
        print(f"FAILED: {failure}")
    if not failures:
        print(f"the scanner finds planted operator literals and skips comments ({len(cases)} snippets)")
    return 1 if failures else 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--self-test":
        return self_test(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    names, findings = scan(root)
    for rel, line, literal in findings:
        print(f'{rel}:{line}: "{literal}" is an operator of the op tables: name it by id '
              f"(IsFloatOp/FloatOpName with FloatOp::k..., IsInt8Op/Int8OpName with Int8Op::k...)")
    if findings:
        files = len({rel for rel, _, _ in findings})
        print(f"FAILED: {len(findings)} operator-type literals in {files} files outside their declarations "
              f"({', '.join(TABLES)})")
        return 1
    print(f"no operator-type literals outside the op tables ({len(names)} operator names checked)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
