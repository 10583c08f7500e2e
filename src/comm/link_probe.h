/* comm/link_probe.h — which backend is faster between machines, measured.
 *
 * `--comm auto` on ranks spread over several machines uses shm within each
 * machine and, between machines, p2p or rma: whichever moves a typical
 * halo message faster on this network. The probe decides it at start-up:
 * every rank sends 64 KiB to the next rank (in rank order, cyclically) on
 * another machine, as a persistent exchange of each backend in turn, a few
 * executions to warm up and then kRounds timed; the slowest rank's time
 * per execution counts. Collective over the world; it runs once, before the
 * simulation, and costs a few milliseconds on a LAN.
 */
#pragma once

#include <string>

#include "comm/communicator.h"

namespace putmd::comm
{

struct LinkProbe
{
    Backend across     = Backend::P2p; // the faster of p2p and rma between machines
    double  p2pSeconds = 0;            // per execution, slowest rank
    double  rmaSeconds = 0;
    int     machines   = 1;            // machines the job spans
    std::string ranksPerMachine;       // e.g. "2, 2"
};

/* Collective over the world (parallel mode, more than one machine). */
LinkProbe probeLinksAcrossMachines();

} // namespace putmd::comm
