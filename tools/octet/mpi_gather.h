// The little MPI that `octet calibrate --mpi` and `octet sensitivity --mpi` need: init, rank and size, gathering one
// byte string per rank to rank 0, sharing computed values among all ranks, finalize. Built against OpenMPI when CMake finds it (OCTET_WITH_MPI); without it every call fails saying so.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"

namespace octet::cli {

// This octet was built with MPI.
bool MpiBuilt();

// MPI_Init (once per process) and this process's place in the job.
struct MpiWorld {
  int rank = 0;
  int size = 1;
};
Result<MpiWorld> MpiStart();
void MpiStop();

// One rank's outcome: its result bytes, or an error message.
struct RankOutcome {
  bool ok = true;
  std::string bytes;
};
// Gathers every rank's outcome to rank 0 (a collective: every rank calls it). Rank 0 gets them in rank order; the
// others get an empty list.
Result<std::vector<RankOutcome>> MpiGatherToRoot(const RankOutcome& mine);

// Computes one(i) here for the indices i with i % size == rank, and gives every rank all `count` values in index
// order (a collective). Fails on every rank when one(i) failed on any: the failing rank returns its error.
Result<std::vector<double>> MpiSpread(size_t count, const std::function<Result<double>(size_t)>& one);

}  // namespace octet::cli
