// MPI for `octet calibrate --mpi` (see mpi_gather.h).
#include "tools/octet/mpi_gather.h"

#include <cstdint>
#include <limits>

#if OCTET_WITH_MPI
#include <mpi.h>
#endif

namespace octet::cli {

#if OCTET_WITH_MPI

bool MpiBuilt() { return true; }

Result<MpiWorld> MpiStart() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized && MPI_Init(nullptr, nullptr) != MPI_SUCCESS) return Internal("--mpi: MPI_Init failed");
  MpiWorld w;
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  return w;
}

void MpiStop() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

Result<std::vector<RankOutcome>> MpiGatherToRoot(const RankOutcome& mine) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // Sizes first (negative: an error message follows), then the bytes; states are far below 2 GiB.
  if (mine.bytes.size() > static_cast<size_t>(INT32_MAX)) return OutOfRange("--mpi: a state over 2 GiB");
  const int mine_len = static_cast<int>(mine.bytes.size());
  const int mine_tag = mine.ok ? mine_len : -mine_len - 1;
  std::vector<int> tags(rank == 0 ? static_cast<size_t>(size) : 0);
  if (MPI_Gather(&mine_tag, 1, MPI_INT, tags.data(), 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS) {
    return Internal("--mpi: MPI_Gather failed");
  }
  std::vector<int> lengths, offsets;
  std::string all;
  if (rank == 0) {
    int64_t total = 0;
    for (int t : tags) {
      const int len = t >= 0 ? t : -t - 1;
      offsets.push_back(static_cast<int>(total));
      lengths.push_back(len);
      total += len;
    }
    if (total > INT32_MAX) return OutOfRange("--mpi: the gathered states exceed 2 GiB");
    all.resize(static_cast<size_t>(total));
  }
  if (MPI_Gatherv(mine.bytes.data(), mine_len, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0,
                  MPI_COMM_WORLD) != MPI_SUCCESS) {
    return Internal("--mpi: MPI_Gatherv failed");
  }
  std::vector<RankOutcome> out;
  for (size_t r = 0; r < tags.size(); ++r) {
    out.push_back({tags[r] >= 0, all.substr(static_cast<size_t>(offsets[r]), static_cast<size_t>(lengths[r]))});
  }
  return out;
}

Result<std::vector<double>> MpiSpread(size_t count, const std::function<Result<double>(size_t)>& one) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // The other ranks' slots hold -inf, so a max over ranks picks each value unchanged (signed zeros included).
  std::vector<double> values(count, -std::numeric_limits<double>::infinity());
  Status failed;
  for (size_t i = static_cast<size_t>(rank); i < count && failed.ok(); i += static_cast<size_t>(size)) {
    Result<double> v = one(i);
    if (v.ok()) {
      values[i] = *v;
    } else {
      failed = v.status();
    }
  }
  int mine_failed = failed.ok() ? 0 : 1, any_failed = 0;
  MPI_Allreduce(&mine_failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (!failed.ok()) return failed;
  if (any_failed) return Internal("--mpi: an evaluation failed on another rank (its message is above)");
  std::vector<double> all(count);
  if (MPI_Allreduce(values.data(), all.data(), static_cast<int>(count), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD) !=
      MPI_SUCCESS) {
    return Internal("--mpi: MPI_Allreduce failed");
  }
  return all;
}

#else

bool MpiBuilt() { return false; }

Result<MpiWorld> MpiStart() {
  return FailedPrecondition(
      "--mpi needs a build of octet with MPI (install libopenmpi-dev and openmpi-bin, scripts/install_deps.sh, and "
      "configure again); without it, run shards with --shard I/N and join them with octet merge");
}

void MpiStop() {}

Result<std::vector<RankOutcome>> MpiGatherToRoot(const RankOutcome&) { return MpiStart().status(); }

Result<std::vector<double>> MpiSpread(size_t, const std::function<Result<double>(size_t)>&) {
  return MpiStart().status();
}

#endif

}  // namespace octet::cli
