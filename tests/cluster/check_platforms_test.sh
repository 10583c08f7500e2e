#!/usr/bin/env bash
# The SimGrid platforms of tools/simgrid/ and the errors for bad ones
# (tools/simgrid/check_platform.py, run by smpirun.sh before SimGrid, which
# aborts on a bad file). Needs python3 only, not SimGrid:
#  1. every shipped platform parses and has node-0 .. node-1023;
#  2. smpirun.sh with a malformed file, a file without the hosts the run
#     needs, a missing file and this-machine.xml before calibration exits 2
#     with a message naming the file (and line or host) and what is valid.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tools=$here/../../tools/simgrid
failed=0
fail() { echo "FAILED: $*" >&2; failed=1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for p in gbe 10gbe ib-fattree torus; do
    out=$(python3 "$tools/check_platform.py" "$tools/$p.xml" 1024 2>&1) || fail "$p.xml rejected: $out"
done

# expect_error DESCRIPTION REGEX smpirun.sh-ARGS...
expect_error() {
    local what=$1 re=$2 out rc
    shift 2
    out=$(bash "$tools/smpirun.sh" "$@" true 2>&1)
    rc=$?
    if [[ $rc -ne 2 ]] || ! grep -Eq "$re" <<<"$out"; then
        fail "$what: exit $rc, expected 2 and /$re/: $out"
    fi
}
printf '<?xml version="1.0"?>\n<platform version="4.1">\n <zone id="z" routing="Full">\n  <host id="node-0" speed="1Gf"\n </zone>\n</platform>\n' > "$work/malformed.xml"
expect_error "malformed XML" "platform $work/malformed.xml:[0-9]+: not valid XML" -platform "$work/malformed.xml" -np 1
printf '<?xml version="1.0"?>\n<platform version="4.1">\n <zone id="z" routing="Full">\n  <cluster id="c" prefix="node-" suffix="" radical="0-3" speed="1Gf" bw="1GBps" lat="1us"/>\n </zone>\n</platform>\n' > "$work/four.xml"
python3 "$tools/check_platform.py" "$work/four.xml" 4 || fail "a 4-host cluster was rejected for 4 hosts"
expect_error "too few hosts" "has no host node-4 \(and 3 more\).*node-0 \.\. node-3" -platform "$work/four.xml" -np 8
expect_error "too few hosts, per host" "has no host node-4" -platform "$work/four.xml" -np 10 -per-host 2
python3 "$tools/check_platform.py" "$work/four.xml" 4 || fail "8 ranks, 2 per host, on 4 hosts was rejected"
expect_error "missing file" "platform 'nowhere' not found; valid: gbe, 10gbe, ib-fattree, torus" -platform nowhere -np 1
expect_error "bad eager limit" "eager-limit '64k' is not a byte count; valid: 0 or more" -platform gbe -np 2 -eager-limit 64k
expect_error "uncalibrated this-machine.xml" "this-machine.xml:[0-9]+: <cluster> bw=\"@BW@\" is a placeholder" -platform this-machine -np 2

if [[ $failed -eq 0 ]]; then echo passed; else echo FAILED; fi
exit $failed
