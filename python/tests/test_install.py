"""`cmake --install` of the build tree under test puts the package where its python3 finds it, beside the library
the package then loads without HEURIST_LIBRARY or LD_LIBRARY_PATH."""
import ast
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import REPO


def test_the_installed_package_imports_and_loads_the_installed_library(tmp_path, table_model):
    lib = os.environ.get("HEURIST_LIBRARY")
    build = Path(lib).resolve().parent if lib else REPO / "build"
    cache = (build / "CMakeCache.txt").read_text()
    python_dir = re.search(r"^HEURIST_PYTHON_DIR:STRING=(.*)$", cache, re.M).group(1)
    prefix = tmp_path / "prefix"
    r = subprocess.run(["cmake", "--install", str(build), "--prefix", str(prefix)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("HEURIST_LIBRARY", "LD_LIBRARY_PATH", "PYTHONPATH")}
    env["PYTHONPATH"] = str(prefix / python_dir)
    r = subprocess.run([sys.executable, "-c", "import heurist, sys; m = heurist.Model.load(sys.argv[1]); "
                        "print(heurist.library_path); print(m.shortlist(sys.argv[2], 2))", table_model,
                        "M=128,N=4096,K=64,dtype=fp16"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    path, top = r.stdout.splitlines()
    assert path.startswith(str(prefix) + os.sep), path
    assert len(ast.literal_eval(top)) == 2
