#!/usr/bin/env python3
"""Everything putmd accepts is in the user guide (docs/*.md): every .mdp key
and old name of src/io/mdp.cpp's tables, every option that `putmd run -h`
and `putmd energy -h` list, and every PUTMD_ environment variable the
sources read. Exits non-zero naming each one the docs do not mention.

    docs_coverage_test.py --source SOURCE_TREE --putmd BUILD/bin/putmd
"""
import argparse
import glob
import os
import re
import subprocess
import sys

p = argparse.ArgumentParser()
p.add_argument("--source", required=True)
p.add_argument("--putmd", required=True)
args = p.parse_args()

docs = ""
for path in sorted(glob.glob(os.path.join(args.source, "docs", "*.md"))):
    with open(path) as f:
        docs += f.read() + "\n"


def documented(name, ignore_case=False):
    """The name as a word of its own in the docs (.mdp keys: in any case, as
    GROMACS reads them: DispCorr is dispcorr)."""
    return re.search(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", docs,
                     flags=re.I if ignore_case else 0) is not None


missing = []

# .mdp keys: the setter table and the old names (src/io/mdp.cpp)
with open(os.path.join(args.source, "src", "io", "mdp.cpp")) as f:
    mdp = f.read()
table = mdp[mdp.index("static const std::map<std::string, Setter> table"):]
table = table[:table.index("};")]
keys = re.findall(r'^\s*\{ "([a-z0-9-]+)", ', table, flags=re.M)
alias_block = mdp[mdp.index("aliases()"):]
alias_block = alias_block[:alias_block.index("};")]
aliases = re.findall(r'\{ "([a-z0-9-]+)", "[a-z0-9-]+" \}', alias_block)
if len(keys) < 50 or len(aliases) < 3:
    print(f"FAILED: read {len(keys)} mdp keys and {len(aliases)} old names from src/io/mdp.cpp; its tables changed shape")
    sys.exit(1)
missing += [f".mdp key {k}" for k in keys + aliases if not documented(k, ignore_case=True)]

# command-line options, as the help lists them
options = []
for command in ("run", "energy"):
    r = subprocess.run([args.putmd, command, "-h"], capture_output=True, text=True, timeout=60)
    found = re.findall(r"^\s+-{1,2}([A-Za-z][A-Za-z-]*)", r.stdout + r.stderr, flags=re.M)
    if len(found) < 5:
        print(f"FAILED: `putmd {command} -h` listed {len(found)} options:\n{r.stdout}{r.stderr}")
        sys.exit(1)
    options += [(command, o) for o in found]
for command, o in options:
    if not (documented("-" + o) or documented("--" + o)):
        missing.append(f"putmd {command} option -{o}")

# environment variables the sources read
env = set()
for path in glob.glob(os.path.join(args.source, "src", "**", "*.*"), recursive=True):
    with open(path, errors="replace") as f:
        env.update(re.findall(r'"(PUTMD_[A-Z0-9_]+)"', f.read()))
if len(env) < 5:
    print(f"FAILED: found {len(env)} PUTMD_ variables in src/")
    sys.exit(1)
missing += [f"environment variable {v}" for v in sorted(env) if not documented(v)]

if missing:
    print("FAILED: not in docs/*.md:\n  " + "\n  ".join(missing))
    sys.exit(1)
print(f"docs/*.md mention all {len(keys)} .mdp keys, {len(aliases)} old names, {len(options)} command-line options "
      f"and {len(env)} environment variables")
print("passed")
