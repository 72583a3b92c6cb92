#!/usr/bin/env bash
# Prints the Python interpreter that has the Debian packages tools/install-deps.sh installs (numpy, pytest):
# $PYTHON when set, else the first python3 on PATH that imports them, else the system's (a python3 of pyenv or
# a virtual environment ahead on PATH does not see Debian's packages).
set -euo pipefail
if [ -n "${PYTHON:-}" ]; then echo "$PYTHON"; exit 0; fi
for py in python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null && "$py" -c "import numpy, pytest" 2>/dev/null; then command -v "$py"; exit 0; fi
done
echo "heurist: no python3 with numpy and pytest (bash tools/install-deps.sh installs them)" >&2
exit 1
