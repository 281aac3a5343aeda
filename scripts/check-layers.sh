#!/usr/bin/env bash
# Checks the layering of docs/architecture.md (scripts/check_layers.py): every import declared,
# every declared arrow pointing down a layer, the pure layers never reaching PostgreSQL; then
# checks that the checker itself catches forbidden arrows. Exits 1 naming what is wrong.
set -euo pipefail
cd "$(dirname "$0")/.."
package=$(swift package dump-package)
python3 scripts/check_layers.py <<<"$package"
python3 scripts/check_layers.py --self-test <<<"$package"
