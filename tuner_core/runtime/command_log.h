// MIOPEN_ENABLE_LOGGING_CMD lines (research/MIOPEN_DB_FORMATS.md §5.5, convolution_api.cpp and
// driver_arguments.cpp::ConvArgsForMIOpenDriver):
//
//   MIOpen(<BACKEND>): Command [<function>] ./bin/MIOpenDriver <args>
//
// 2D <args>: <conv|convfp16|convbfp16|convint8> -n -c -H -W -k -y -x -p -q -u -v -l -j
//            [--in_layout L] [--fil_layout L] [--out_layout L] -m conv|trans -g -F 1|2|4 -t 1 [-S 0]
// 3D <args>: -n -c --in_d -H -W -k --fil_d -y -x --pad_d -p -q --conv_stride_d -u -v
//            --dilation_d -l -j --spatial_dim 3 [layouts] -m -g -F -t 1 [-S 0]
// Layout flags only when not NCHW (NCDHW for 3D). `-S 0` marks immediate-mode calls. The
// transposed-conv output padding is not printed (MIOpen does not print it either).
// Pure functions, thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "tuner_core/backend/backend.h"
#include "tuner_core/problem/problem.h"

namespace tuna::runtime {

// The driver arguments only (starting with "conv...").
std::string ConvArgsForDriver(const Problem& problem, bool immediate);
// The whole line without a trailing newline; function is "LogCmdConvolution" or
// "LogCmdFindConvolution".
std::string LogCmdLine(backend::BackendKind kind, std::string_view function, const Problem& problem,
                       bool immediate);

}  // namespace tuna::runtime
