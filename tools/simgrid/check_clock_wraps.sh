#!/usr/bin/env bash
# tools/simgrid/check_clock_wraps.sh PROGRAM — the SMPI program's clock
# (src/comm/smpi_clock.h) is exact only if every MPI call that ends and
# restarts SMPI's CPU timer goes through a wrapper. This lists the MPI
# functions PROGRAM (putmd_smpi_d, putmd_smpi, fft3d_bench_smpi) imports and
# fails, naming them, for any that is neither wrapped (a __wrap_ function
# defined in PROGRAM; the link fails when one is defined but not linked
# through) nor in the list below of functions that leave SMPI's timer alone
# in SimGrid 3.32 (their PMPI layer has no SmpiBenchGuard: queries and
# bookkeeping; MPI_Comm_dup is timed by putmd around it, through
# smpi_bench_end/begin; MPI_Win_sync is not implemented by SMPI). It also
# fails for a function in both lists.
set -u
prog=${1:?usage: check_clock_wraps.sh PROGRAM}
[[ -f $prog ]] || { echo "check_clock_wraps.sh: $prog not found" >&2; exit 2; }
timer_free="MPI_Comm_compare MPI_Comm_dup MPI_Comm_free MPI_Comm_group MPI_Comm_rank MPI_Comm_size
MPI_Finalized MPI_Get_count MPI_Group_free MPI_Group_translate_ranks MPI_Info_create MPI_Info_free
MPI_Info_set MPI_Initialized MPI_Request_get_status MPI_Type_size MPI_Win_shared_query MPI_Win_sync"
imported=$(nm -D --undefined-only "$prog" | awk '$2 ~ /^MPI_[A-Z][a-z]/ && ($1 == "U" || $1 == "w") {print $2}' | sort -u)
wrapped=$(nm --defined-only "$prog" | awk '$3 ~ /^__wrap_MPI_/ {sub(/^__wrap_/, "", $3); print $3}' | sort -u)
[[ -n $imported ]] || { echo "check_clock_wraps.sh: $prog imports no MPI function (not an SMPI program?)" >&2; exit 2; }
status=0
for f in $imported; do
    w=0 t=0
    grep -qx "$f" <<<"$wrapped" && w=1
    grep -qw "$f" <<<"$timer_free" && t=1
    if [[ $w == 0 && $t == 0 ]]; then
        echo "check_clock_wraps.sh: $prog calls $f, which has no wrapper in src/comm/smpi_clock.cpp and is not known to leave SMPI's timer alone: add PUTMD_SMPI_WRAP($f, ...) there if SMPI's PMPI_${f#MPI_} ends and restarts the timer, or add it to this script's list if not" >&2
        status=1
    elif [[ $w == 1 && $t == 1 ]]; then
        echo "check_clock_wraps.sh: $f is wrapped and listed as leaving SMPI's timer alone: one of the two is wrong" >&2
        status=1
    fi
done
[[ $status == 0 ]] && echo "check_clock_wraps.sh: $(wc -w <<<"$imported") MPI functions imported, $(wc -w <<<"$wrapped") wrapped, the others leave SMPI's timer alone"
exit $status
