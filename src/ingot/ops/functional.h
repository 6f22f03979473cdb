// The user-facing op API: free functions over Tensors, one header per area. Every
// function goes through the op registry (eager run, or recorded by the export tracer).
#pragma once

#include "ingot/ops/functional/arithmetic.h"
#include "ingot/ops/functional/linalg.h"
#include "ingot/ops/functional/views.h"
