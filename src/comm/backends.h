/* comm/backends.h — the exchange backends' factories (one per file
 * backend_*.cpp) and the run-time checks that a backend can work here. */
#pragma once

#include <memory>

#include "comm/comm_impl.h"
#include "comm/exchange.h"

namespace putmd::comm
{

std::unique_ptr<Exchange> makeP2pExchange(Communicator::Impl& comm, Phase phase);
std::unique_ptr<Exchange> makeRmaExchange(Communicator::Impl& comm, Phase phase);
std::unique_ptr<Exchange> makeShmExchange(Communicator::Impl& comm, Phase phase);
std::unique_ptr<Exchange> makeShmemExchange(Communicator::Impl& comm, Phase phase);
/* shm+p2p, shm+rma: links to ranks of this machine through comm.machine's
 * shm exchange, the others through a p2p or rma exchange on comm. */
std::unique_ptr<Exchange> makeMixedExchange(Communicator::Impl& comm, Phase phase);

/* Called when a Communicator with the backend is made in parallel mode
 * (collective): stops the job with an explanation if the backend cannot
 * work in this job (shm across nodes, shmem without a usable OpenSHMEM). */
void checkShmUsable(Communicator::Impl& comm);
void checkShmemUsable(Communicator::Impl& comm);

} // namespace putmd::comm
