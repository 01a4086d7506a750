// The ONNX protobuf classes (onnx::ModelProto, ...) of Debian's libonnx-dev, as libonnx_proto was
// built: with ONNX_ML, the onnx-ml.proto variant (the ONNX-ML operator domains' fields). onnx_pb.h
// defines the ONNX_API export macro that the generated header needs.
#pragma once

#ifndef ONNX_ML
#define ONNX_ML 1
#endif
#include <onnx/onnx_pb.h>
