/* solver_ids.c -- MIOpen's registry ids of the solvers its TunaNet models
 * name. MIOpen assigns ids in registration order (src/solver.cpp, 0 is
 * "invalid"); the upstream TunaNet tests compare positions of these ids. */
#include <string.h>

#include "compat/miopen/miopen.h"

static const struct {
    const char *name;
    uint64_t id;
} ids[] = {
    {"fft", 34},
    {"ConvWinograd3x3MultipassWrW<3-4>", 35},
    {"ConvBinWinogradRxSf3x2", 37},
    {"ConvWinograd3x3MultipassWrW<3-5>", 38},
    {"ConvWinograd3x3MultipassWrW<3-6>", 39},
    {"ConvWinograd3x3MultipassWrW<3-2>", 40},
    {"ConvWinograd3x3MultipassWrW<5-4>", 49},
    {"ConvBinWinogradRxSf2x3", 53},
    {"ConvBinWinogradRxSf2x3g1", 84},
    {"ConvDirectNaiveConvFwd", 85},
    {"ConvDirectNaiveConvBwd", 86},
    {"ConvDirectNaiveConvWrw", 87},
    {"GemmFwd1x1_0_1", 88},
    {"GemmFwd1x1_0_2", 90},
    {"GemmFwdRest", 91},
    {"GemmBwd1x1_stride2", 95},
    {"GemmBwd1x1_stride1", 96},
    {"GemmBwdRest", 97},
    {"GemmWrw1x1_stride1", 101},
    {"GemmWrwUniversal", 102},
    {"ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC", 107},
    {"ConvAsmImplicitGemmGTCDynamicBwdXdlopsNHWC", 108},
    {"ConvAsmImplicitGemmGTCDynamicWrwXdlopsNHWC", 110},
    {"ConvCkIgemmFwdV6r1DlopsNchw", 114},
    {"ConvHipImplicitGemmGroupFwdXdlops", 137},
    {"ConvHipImplicitGemmGroupBwdXdlops", 155},
    {"ConvHipImplicitGemmGroupWrwXdlops", 156},
};

uint64_t miopen_solver_id(const char *name) {
    for (size_t i = 0; name && i < sizeof ids / sizeof ids[0]; i++)
        if (strcmp(ids[i].name, name) == 0)
            return ids[i].id;
    return 0;
}
