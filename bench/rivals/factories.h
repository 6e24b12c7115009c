/*
 * factories.h - one factory per rival (rivals/<file>.cu); the registry
 * (rivals/registry.cu) lists them. Each returns nullptr, with *why, where the
 * rival cannot sort the regime at all.
 */
#ifndef WSB_RIVALS_FACTORIES_H
#define WSB_RIVALS_FACTORIES_H

#include "rivals/rival.h"

namespace wsb {

using DeviceFactory = std::unique_ptr<DeviceRival>(const Regime &, const RivalEnv &, std::string *);
using HostFactory = std::unique_ptr<HostRival>(const Regime &, const RivalEnv &, std::string *);

DeviceFactory make_warpsort_cuda, make_cub_radix, make_cub_radix_i32, make_cub_merge,
    make_cub_segmented, make_cub_segmented_radix, make_thrust, make_seed_naive, make_seed_hybrid;
HostFactory make_warpsort_host, make_warpsort_cpu;

/* warpsort-host with a device list (config devices / device_count): host
 * arrays that go out of core are sorted on all those devices at once. */
std::unique_ptr<HostRival> make_warpsort_host_devices(const Regime &r, const RivalEnv &env,
                                                      const std::vector<int> &devices,
                                                      int device_count, std::string *why);

/* A device rival run on host arrays: synchronous copies in, the device sort
 * on env.stream, copies out (the host mode's "<rival>+copy" rows). */
std::unique_ptr<HostRival> make_copy_sort_copy(const RivalInfo &device_rival, const Regime &r,
                                               const RivalEnv &env, std::string *why);

} // namespace wsb

#endif /* WSB_RIVALS_FACTORIES_H */
