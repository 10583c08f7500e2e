#!/usr/bin/env python3
"""Check a SimGrid platform file before smpirun reads it.

usage: check_platform.py FILE HOSTS

HOSTS: how many simulated hosts the run needs, node-0 .. node-(HOSTS-1)
(tools/simgrid/smpirun.sh writes its host file with these names).

SimGrid stops on a bad platform with an abort and a parser message; this
check says, before that, which file and line is wrong and what would be
valid: the XML must parse, every host the run needs must be in the file
(as a <host id=...> or inside a <cluster prefix= radical= suffix=>), and no
attribute may still hold a @PLACEHOLDER@ (this-machine.xml has them until
bench/smpi_validate.sh fills them in). Exit status 0 if the file is usable,
2 with a message on stderr otherwise.
"""
import re
import sys
import xml.etree.ElementTree as ET


def fail(msg):
    print(f"smpirun.sh: {msg}", file=sys.stderr)
    sys.exit(2)


def radical_numbers(radical, path, line):
    """The numbers of a cluster's radical: '0-1023' or '0-3,8,10-11'."""
    out = []
    for part in radical.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+))?\s*", part)
        if not m:
            fail(f"platform {path}:{line}: radical '{radical}' is not a list of numbers and "
                 "ranges; valid: e.g. 0-1023 or 0-3,8")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        out.extend(range(lo, hi + 1))
    return out


def main():
    if len(sys.argv) != 3 or not sys.argv[2].isdigit():
        fail("usage: check_platform.py FILE HOSTS")
    path, needed = sys.argv[1], int(sys.argv[2])
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        fail(f"platform {path}: cannot be read: {e.strerror}")
    # element start lines, for messages: ElementTree does not keep them
    parser = ET.XMLPullParser(events=("start",))
    lines = {}
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        fail(f"platform {path}: not UTF-8 text (byte {e.start})")
    elements = []
    for lineno, line in enumerate(text.splitlines(keepends=True), start=1):
        try:
            parser.feed(line)
            for _, el in parser.read_events():
                elements.append(el)
                lines[id(el)] = lineno
        except ET.ParseError as e:
            fail(f"platform {path}:{lineno}: not valid XML ({e.msg if hasattr(e, 'msg') else e}); "
                 "a SimGrid platform is <platform version=\"4.1\"> with zones, hosts and clusters "
                 "(see tools/simgrid/gbe.xml)")
    try:
        parser.close()
    except ET.ParseError as e:
        fail(f"platform {path}: the XML ends early ({e}); every element must be closed")
    if not elements or elements[0].tag != "platform":
        fail(f"platform {path}: the root element is <{elements[0].tag if elements else ''}>, "
             "not <platform version=\"4.1\">")
    hosts = set()
    for el in elements:
        line = lines[id(el)]
        for key, value in el.attrib.items():
            if re.search(r"@[A-Z_]+@", value):
                fail(f"platform {path}:{line}: <{el.tag}> {key}=\"{value}\" is a placeholder; "
                     "bench/smpi_validate.sh fills in this-machine.xml, or give a value")
        if el.tag == "host" and "id" in el.attrib:
            hosts.add(el.attrib["id"])
        elif el.tag == "cluster":
            for key in ("prefix", "radical"):
                if key not in el.attrib:
                    fail(f"platform {path}:{line}: <cluster> without {key}=; "
                         "valid: prefix=\"node-\" suffix=\"\" radical=\"0-1023\"")
            prefix, suffix = el.attrib["prefix"], el.attrib.get("suffix", "")
            hosts.update(f"{prefix}{n}{suffix}" for n in radical_numbers(el.attrib["radical"], path, line))
    missing = [f"node-{h}" for h in range(needed) if f"node-{h}" not in hosts]
    if missing:
        have = sorted((h for h in hosts if re.fullmatch(r"node-\d+", h)), key=lambda h: int(h[5:]))
        count = len(have)
        fail(f"platform {path} has no host {missing[0]}"
             + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
             + f": the run needs node-0 .. node-{needed - 1}, the file has {count} hosts named node-N"
             + (f" ({have[0]} .. {have[-1]})" if have else "")
             + "; give fewer ranks (-np), more per host (-per-host) or a larger platform")


if __name__ == "__main__":
    main()
