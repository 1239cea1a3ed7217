"""README's Python walk-through runs as written (from the source tree, as a reader would run it)."""

import contextlib
import io
import os
import re
import unittest

from _common import SOURCE_DIR


class ReadmeTest(unittest.TestCase):
    def test_walkthrough(self):
        with open(os.path.join(SOURCE_DIR, "README.md")) as f:
            text = f.read()
        block = re.search(r"<!-- walkthrough -->\n```python\n(.*?)```\n<!-- /walkthrough -->", text, re.S)
        self.assertIsNotNone(block, "README.md has no walk-through block")
        cwd = os.getcwd()
        out = io.StringIO()
        try:
            os.chdir(SOURCE_DIR)
            with contextlib.redirect_stdout(out):
                exec(compile(block.group(1), "README.md walk-through", "exec"), {})
        finally:
            os.chdir(cwd)
        printed = out.getvalue()
        self.assertIn("int8 accuracy", printed)
        self.assertIn("computed by hand equal octet's", printed)
        accuracy = dict(re.findall(r"^(float|int8) accuracy (\S+)$", printed, re.M))
        self.assertGreater(float(accuracy["int8"]), float(accuracy["float"]) - 0.03)


if __name__ == "__main__":
    unittest.main()
