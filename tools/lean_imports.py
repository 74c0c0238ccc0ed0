"""Skip one slow import that nothing in the course needs.

nbformat validates notebooks with jsonschema, and jsonschema loads every format checker it can
find when it is imported. One of them, `rfc3987_syntax` (the `iri` and `iri-reference`
formats), compiles some 40 Lark grammars at import: about 3 s on a 2-core machine, paid by
every process that reads a notebook (papermill, nbval, nbconvert). No notebook schema uses
those two formats (jsonschema issue 1428; opendatahub-io/notebooks issue 3532 measured the
same cost). Marking the module absent before jsonschema is imported makes jsonschema leave
those two formats unchecked, as it does when the package is not installed.

Imported by `tools/__init__.py`, so by every `python -m tools.…` command and by the recording
command's process for each notebook (it imports tools before papermill); loaded early by
pytest (`-p tools.lean_imports` in pyproject.toml), before nbval's plugin imports nbformat.
"""

from __future__ import annotations

import sys

SKIPPED = "rfc3987_syntax"

if SKIPPED not in sys.modules:  # already imported: too late to help, and nothing to undo
    sys.modules[SKIPPED] = None  # type: ignore[assignment]  # `import` now raises ImportError
