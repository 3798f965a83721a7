// Pre-tiling fusion (basteln, paper 001 Alg. 1): on a schedule computed
// without fusion (one nest per strongly connected component), consecutive
// nests of the top sequence are grouped greedily while every flow dependence
// from the group to the next nest is a quasi-identity relation (Def. 4.1:
// the coordinates both instances have are equal, and the extra coordinates of
// the longer one are constants, such as a reduction's last iteration). Such a
// dependence carries nothing along the shared coordinates and overlaps no
// accesses, so the group can share a band over them.
//
// Choices the paper leaves open:
// - A nest with no flow dependence on the group closes it, as a failed test
//   does. Independent nests are not Alg. 1's concern: `fuse-outer`, which
//   runs next, joins those that read the same data in the same outer
//   iteration (the independent-group fusion of §5.4).
// - The parallelism rule of Alg. 3 (d = 1 on CPU) applies here too: a nest
//   does not join when the shared band's outer loop would carry a dependence
//   while some nest of the group had an outer parallel loop of its own.
// - The group's band: isl schedules the group's instances alone, fusing
//   without losing outer parallelism; when that gives one band over every
//   statement of the group with at least the shared coordinates, it is kept
//   (it usually extends the shared band by the longer statements' extra
//   coordinates, the shorter ones placed at the constants: a matmul's init
//   at k = 0 and its bias at k = K - 1, so tiling sees all three loops).
//   Otherwise the band is the paper's: each statement's shared coordinates,
//   above a sequence of the nests' own subtrees.
// The grouped tree is checked against the dependences; a group that fails
// stays apart.
#pragma once

#include <isl/cpp.h>

#include <string>

#include "poly/Scop.h"
#include "schedule/Scheduler.h"
#include "support/Remarks.h"

namespace tessel::fuse {

// `scheduler` schedules each group, `groupScheduling` bounds its work (its
// fusion and instances are set here). Adds to `remarks` one applied remark
// per group (its band's "construction" and "loops") after one missed remark
// per nest that stayed out of a group (its "group" and "reason").
isl::schedule groupQuasiIdentityNests(const poly::Scop& scop, const isl::schedule& schedule,
                                      const schedule::Scheduler& scheduler,
                                      const schedule::SchedulerOptions& groupScheduling, Remarks& remarks);

// Def. 4.1 on one relation between two statements' instances.
bool isQuasiIdentity(const isl::map& relation);

}  // namespace tessel::fuse
