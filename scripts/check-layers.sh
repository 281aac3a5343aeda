#!/usr/bin/env bash
# Checks the layering of docs/architecture.md: a target imports only the targets it declares in
# Package.swift (SwiftPM would let it import their dependencies too, which is how a use case
# quietly grows a PostgreSQL dependency). Prints each stray import; exits 1 when there is one.
set -euo pipefail
cd "$(dirname "$0")/.."
swift package dump-package | python3 -c '
import json, pathlib, re, sys
package = json.load(sys.stdin)
targets = {t["name"]: t for t in package["targets"]}
stray = []
for name, target in targets.items():
    if target["type"] not in ("regular", "executable") or target.get("path"):
        continue
    declared = {d.get("byName", [None])[0] for d in target["dependencies"]} - {None}
    for file in sorted(pathlib.Path("Sources", name).rglob("*.swift")):
        for imported in re.findall(r"^import (Ledger\w+)$", file.read_text(), re.M):
            if imported in targets and imported not in declared:
                stray.append(f"{file}: imports {imported}, which {name} does not declare")
print("\n".join(stray) or "layers: every import is a declared dependency")
sys.exit(1 if stray else 0)
'
